#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "inventory/inventory.hpp"
#include "sync/usage_marks.hpp"

namespace rbdsync::sync {

/// An rbd pool left out of a sync: this client may not read it (its caps stop short of
/// it; only in a sync of every pool), or what lists its images is damaged. Its stored
/// rows of images, snapshots, namespaces and trash stay exactly as they were.
struct UnreadablePool {
  std::int64_t id = 0;
  std::string name;
  std::string error;     ///< one line, e.g. "Operation not permitted"
  bool damaged = false;  ///< a fault (PoolDamaged), not the client's caps: the run is partial
};

/// Thrown by list_pool() and read_pool_images() when what lists a pool's images is
/// damaged, e.g. a format 1 rbd_directory whose data does not decode: which images the
/// pool holds cannot be told, yet it is neither the cluster's fault nor one image's.
/// Any tenant with write caps on the pool can do it, so it must not stop the sync of
/// the other pools: the syncer leaves that pool out (UnreadablePool::damaged).
class PoolDamaged : public Error {
 public:
  using Error::Error;
};

/// The pools a sync reads, and those it leaves out because it may not read them.
struct PoolSelection {
  std::vector<inventory::Pool> pools;
  std::vector<UnreadablePool> unreadable;
};

/// What a pool holds, as listed before any image is opened. The images themselves are
/// not held: read_pool_images() lists them again page by page, so that memory does not
/// grow with the pool.
struct PoolListing {
  std::vector<inventory::Namespace> namespaces;  ///< named ones; "" is implied
  std::vector<inventory::TrashEntry> trash;      ///< in every namespace, as list_trash() lists
  /// The images in every namespace, as counted now: for progress only. Images created
  /// or removed before read_pool_images() reaches them make it meet more or fewer.
  std::size_t image_count = 0;
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
  /// When failed: whether reading it again may help. Not when what names the image is
  /// itself damaged (its directory entry), which a second read would meet again.
  bool retriable = true;
};

/// How a source read the images of a sync, for the report: images per way of reading
/// (e.g. "header", "librbd"), and why images were read another way than the one chosen
/// (reason -> images).
struct ReadMethods {
  std::map<std::string, std::size_t> images;
  std::map<std::string, std::size_t> fallbacks;

  /// Adds `more`'s counts to these (a way or reason only `more` has is added, at its count).
  void add(const ReadMethods& more) {
    for (const auto& [way, count] : more.images) {
      images[way] += count;
    }
    for (const auto& [reason, count] : more.fallbacks) {
      fallbacks[reason] += count;
    }
  }
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

  /// The namespaces and trash of `pool`, and how many images it holds now. Throws
  /// PoolDamaged when what lists its images cannot be decoded.
  virtual PoolListing list_pool(const inventory::Pool& pool) = 0;

  /// The trash entries of `pool`, in every namespace, as they are now. The syncer lists
  /// the trash before and again after reading a pool's images: an image moved to the
  /// trash in between, before the directory page that would have held it was read, is
  /// then met in the second listing rather than in neither.
  virtual std::vector<inventory::TrashEntry> list_trash(const inventory::Pool& pool) = 0;

  /// Reads one image, with its snapshots, watchers and lockers: the syncer's retry of
  /// an image whose read failed.
  virtual ImageRead read_image(const inventory::Pool& pool, const inventory::ImageRef& ref) = 0;

  /// Called with an image and how reading it went; the reference travels with the read.
  using OnRead = std::function<void(const inventory::ImageRef& ref, ImageRead read)>;

  /// Lists the images of `pool` (every namespace) a page at a time and reads each, as
  /// read_image() does, calling `on_read` once per listed image, in any order, on the
  /// calling thread. Memory holds a page and the reads in flight, never the pool. An
  /// image created or removed while this runs may be met or not, as with any listing;
  /// a rename never makes one met twice or missed. When `on_read` throws (an
  /// interruption) or a cluster-level Error is thrown, the source lets the reads in
  /// flight finish before the exception leaves this call. An image of `marks` whose
  /// header has not changed since and whose lock no one holds may come with
  /// usage_carried rather than its object maps read again (sync/usage_marks.hpp).
  virtual void read_pool_images(const inventory::Pool& pool, const UsageMarks& marks,
                                const OnRead& on_read) = 0;

  /// Whether read_pool_images() may carry stored usage, and so wants the marks.
  virtual bool keeps_stored_usage() const { return false; }

  /// How the images read so far were read; a source with one way says nothing.
  virtual ReadMethods read_methods() const { return {}; }
};

}  // namespace rbdsync::sync
