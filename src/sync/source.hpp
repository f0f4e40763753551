#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"

namespace rbdsync::sync {

/// An rbd pool this client may not read (its caps stop short of it), left out of a sync
/// of every pool. Its stored rows stay exactly as they were.
struct UnreadablePool {
  std::int64_t id = 0;
  std::string name;
  std::string error;  ///< one line, e.g. "Operation not permitted"
};

/// The pools a sync reads, and those it leaves out because it may not read them.
struct PoolSelection {
  std::vector<inventory::Pool> pools;
  std::vector<UnreadablePool> unreadable;
};

/// What a pool holds, as listed before any image is opened.
struct PoolListing {
  std::vector<inventory::Namespace> namespaces;  ///< named ones; "" is implied
  std::vector<inventory::ImageRef> images;       ///< in every namespace
  std::vector<inventory::TrashEntry> trash;      ///< in every namespace
};

/// The outcome of reading one listed image.
struct ImageRead {
  enum class Outcome {
    read,    ///< `image` holds it
    gone,    ///< deleted since it was listed; normal on a live cluster
    failed,  ///< this image could not be read; `error` says why. Not cluster-wide.
  };
  Outcome outcome = Outcome::read;
  inventory::Image image;
  /// When gone: the trash entry it moved to, if it is in the trash now (e.g. being
  /// removed by `rbd rm`, which goes through the trash).
  std::optional<inventory::TrashEntry> trashed;
  std::string error;  ///< when failed: one line, e.g. "cannot open: No such file or directory"
};

/// How a source read the images of a sync, for the report: images per way of reading
/// (e.g. "header", "librbd"), and why images were read another way than the one chosen
/// (reason -> images).
struct ReadMethods {
  std::map<std::string, std::size_t> images;
  std::map<std::string, std::size_t> fallbacks;
};

/// Where an inventory is read from. The real one is ceph::CephSource; tests use a fake.
/// Cluster- and pool-level failures (auth refused, timeouts, a pool gone) throw
/// rbdsync::Error; a failure confined to one image is an ImageRead, so that one bad
/// image does not stop the sync.
class InventorySource {
 public:
  virtual ~InventorySource() = default;

  /// The fsid of the cluster being read.
  virtual std::string cluster_fsid() = 0;

  /// The cluster's name ("ceph" unless configured otherwise).
  virtual std::string cluster_name() = 0;

  /// The pools to sync, with their usage figures: those named, or, when `names` is
  /// empty, every pool with the "rbd" application enabled that this client may read
  /// (the others go to `unreadable`). An unknown name throws Error(ExitCode::config); a
  /// named pool this client may not read, or no readable pool at all when there are
  /// some, Error(ExitCode::no_permission).
  virtual PoolSelection list_pools(const std::vector<std::string>& names) = 0;

  /// The namespaces, images and trash of `pool`.
  virtual PoolListing list_pool(const inventory::Pool& pool) = 0;

  /// Reads one listed image, with its snapshots, watchers and lockers.
  virtual ImageRead read_image(const inventory::Pool& pool, const inventory::ImageRef& ref) = 0;

  /// Called with the index into `refs` of an image and how reading it went.
  using OnRead = std::function<void(std::size_t index, ImageRead read)>;

  /// Reads the listed images `refs` of `pool`, as read_image() does each, and calls
  /// `on_read` once per image, in any order, on the calling thread. A source may keep
  /// many reads in flight; this default reads one after another. When `on_read` throws
  /// (an interruption) or a cluster-level Error is thrown, the source lets the reads in
  /// flight finish before the exception leaves this call.
  virtual void read_images(const inventory::Pool& pool,
                           const std::vector<inventory::ImageRef>& refs, const OnRead& on_read) {
    for (std::size_t i = 0; i < refs.size(); ++i) {
      on_read(i, read_image(pool, refs[i]));
    }
  }

  /// How the images read so far were read; a source with one way says nothing.
  virtual ReadMethods read_methods() const { return {}; }
};

}  // namespace rbdsync::sync
