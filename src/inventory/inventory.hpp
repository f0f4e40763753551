#pragma once

/// Plain data: the vocabulary that the Ceph source, the database sink and the syncer
/// share. No behaviour, no dependencies.

#include <cstdint>
#include <string>
#include <vector>

namespace rbdsync::inventory {

/// A RADOS pool that holds RBD images.
struct Pool {
  std::int64_t id = 0;
  std::string name;

  bool operator==(const Pool& other) const { return id == other.id && name == other.name; }
  bool operator!=(const Pool& other) const { return !(*this == other); }
};

/// Where an image lives and what identifies it for good: the image id survives renames.
struct ImageKey {
  std::int64_t pool_id = 0;
  std::string pool_namespace;  ///< "" is the pool's default namespace
  std::string image_id;

  bool operator<(const ImageKey& other) const {
    if (pool_id != other.pool_id) {
      return pool_id < other.pool_id;
    }
    if (pool_namespace != other.pool_namespace) {
      return pool_namespace < other.pool_namespace;
    }
    return image_id < other.image_id;
  }
  bool operator==(const ImageKey& other) const {
    return pool_id == other.pool_id && pool_namespace == other.pool_namespace &&
           image_id == other.image_id;
  }
};

/// An image as listed, before it is opened.
struct ImageRef {
  std::string pool_namespace;
  std::string image_id;
  std::string name;
};

/// What the inventory records of one RBD image.
struct Image {
  ImageKey key;
  std::string name;
  std::uint64_t size_bytes = 0;
  std::uint64_t object_size = 0;
  std::uint64_t features = 0;  ///< RBD_FEATURE_* bit mask

  bool operator==(const Image& other) const {
    return key == other.key && name == other.name && size_bytes == other.size_bytes &&
           object_size == other.object_size && features == other.features;
  }
  bool operator!=(const Image& other) const { return !(*this == other); }
};

/// Everything stored for one cluster: what the database held, or what Ceph showed.
struct ClusterInventory {
  std::string fsid;
  std::vector<Pool> pools;
  std::vector<Image> images;
};

}  // namespace rbdsync::inventory
