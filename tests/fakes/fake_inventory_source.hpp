#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "sync/source.hpp"

namespace rbdsync::testing {

/// An in-memory cluster. Images can be made to vanish between listing and reading,
/// or to fail when read.
class FakeInventorySource : public sync::InventorySource {
 public:
  std::string fsid = "00000000-0000-4000-8000-000000000001";
  std::vector<inventory::Pool> pools;    ///< every pool has the rbd application
  std::vector<inventory::Image> images;  ///< keyed by pool id
  std::set<std::string> vanish_on_read;  ///< image ids listed but gone when read
  std::set<std::string> fail_on_read;    ///< image ids whose read throws
  int reads = 0;

  void add_pool(std::int64_t id, const std::string& name) { pools.push_back({id, name}); }

  inventory::Image& add_image(std::int64_t pool_id, const std::string& id, const std::string& name,
                              std::uint64_t size = 1 << 30) {
    inventory::Image image;
    image.key = {pool_id, "", id};
    image.name = name;
    image.size_bytes = size;
    image.object_size = 4 << 20;
    image.features = 0x3d;
    images.push_back(image);
    return images.back();
  }

  std::string cluster_fsid() override { return fsid; }

  std::vector<inventory::Pool> list_pools(const std::vector<std::string>& names) override {
    if (names.empty()) {
      return pools;
    }
    std::vector<inventory::Pool> chosen;
    for (const auto& name : names) {
      bool found = false;
      for (const auto& pool : pools) {
        if (pool.name == name) {
          chosen.push_back(pool);
          found = true;
        }
      }
      if (!found) {
        throw Error(ExitCode::config, "pool '" + name + "' does not exist");
      }
    }
    return chosen;
  }

  std::vector<inventory::ImageRef> list_images(const inventory::Pool& pool) override {
    std::vector<inventory::ImageRef> refs;
    for (const auto& image : images) {
      if (image.key.pool_id == pool.id) {
        refs.push_back({image.key.pool_namespace, image.key.image_id, image.name});
      }
    }
    return refs;
  }

  std::optional<inventory::Image> read_image(const inventory::Pool& pool,
                                             const inventory::ImageRef& ref) override {
    ++reads;
    if (fail_on_read.count(ref.image_id) != 0) {
      throw Error(ExitCode::unavailable, "cannot open image '" + ref.name + "': timed out");
    }
    if (vanish_on_read.count(ref.image_id) != 0) {
      return std::nullopt;
    }
    for (const auto& image : images) {
      if (image.key.pool_id == pool.id && image.key.image_id == ref.image_id) {
        return image;
      }
    }
    return std::nullopt;
  }
};

}  // namespace rbdsync::testing
