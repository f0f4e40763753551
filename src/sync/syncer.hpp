#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "sync/progress.hpp"
#include "sync/report.hpp"
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
