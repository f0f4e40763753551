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
  std::size_t added = 0;    ///< images new to the database
  std::size_t changed = 0;  ///< images whose stored row changed
  std::size_t removed = 0;  ///< images gone from Ceph, removed from the database
  std::size_t skipped = 0;  ///< images that vanished between listing and reading
  double seconds = 0.0;
};

/// Moves an inventory from a source to a sink: reads everything first, then writes
/// the difference in one sink transaction, so a failure anywhere leaves the sink as
/// it was.
class Syncer {
 public:
  /// Runs one sync. Errors from the source or the sink propagate as rbdsync::Error
  /// after the sink transaction has been rolled back.
  /// `progress`, when given, hears of every phase and image.
  SyncReport run(InventorySource& source, InventorySink& sink, const SyncOptions& options,
                 ProgressObserver* progress = nullptr);
};

}  // namespace rbdsync::sync
