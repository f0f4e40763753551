#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "sync/progress.hpp"
#include "sync/sink.hpp"
#include "sync/source.hpp"

namespace rbdsync::sync {

/// What to sync.
struct SyncOptions {
  std::vector<std::string> pool_names;  ///< empty: every pool with the rbd application
  /// Called between images and just before commit; throws to stop the sync (e.g. on
  /// SIGTERM). Nothing is committed after it threw.
  std::function<void()> check_interrupted;
};

/// What one sync did.
struct SyncReport {
  std::string fsid;
  std::size_t pools = 0;    ///< pools read
  std::size_t images = 0;   ///< images read and stored
  std::size_t skipped = 0;  ///< images that vanished between listing and reading
  StoreCounts counts;       ///< per kind of row: added, changed, removed, unchanged
  /// Images that could not be read even on a retry; their rows were kept, marked
  /// stale. Non-empty makes the run "partial".
  std::vector<StaleImage> stale;
  ReadMethods read;  ///< how the source read the images
  double seconds = 0.0;

  bool partial() const { return !stale.empty(); }
};

/// Moves an inventory from a source to a sink: hands each image to the sink's
/// transaction as it is read (so memory holds one image, not the inventory), then
/// stores and commits it at once, so a failure anywhere leaves the sink as it was. An image
/// that fails to read is retried once; if it still fails, its stored rows are kept
/// (marked stale) and the sync goes on.
class Syncer {
 public:
  /// Runs one sync. Errors from the source or the sink propagate as rbdsync::Error
  /// after the sink transaction has been rolled back.
  /// `progress`, when given, hears of every phase and image.
  SyncReport run(InventorySource& source, InventorySink& sink, const SyncOptions& options,
                 ProgressObserver* progress = nullptr);
};

}  // namespace rbdsync::sync
