#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sync/sink.hpp"
#include "sync/source.hpp"

/// What a sync did, as plain data: the syncer fills it, the database records it, and
/// core/sync_answer.hpp prints it.
namespace rbdsync::sync {

/// Values this client may not read (its caps stop short of the pool that holds them),
/// stored as unknown with a reason starting inventory::k_not_permitted.
struct UnknownCounts {
  std::size_t parents = 0;   ///< clones whose parent's names are unknown
  std::size_t children = 0;  ///< snapshots whose clone count is unknown
  std::size_t groups = 0;    ///< images whose group's name is unknown
  std::size_t usage = 0;     ///< images and snapshots whose usage is unknown for it
  std::size_t total() const { return parents + children + groups + usage; }
};

/// What one sync did.
struct SyncReport {
  std::string fsid;
  std::size_t pools = 0;    ///< pools read
  std::size_t images = 0;   ///< images read and stored
  std::size_t skipped = 0;  ///< images that vanished between listing and reading
  /// Images whose stored usage was kept rather than their object maps read again: idle
  /// since the last read (sync/usage_marks.hpp).
  std::size_t usage_kept = 0;
  StoreCounts counts;  ///< per kind of row: added, changed, removed, unchanged
  /// Images that could not be read even on a retry; their rows were kept, marked
  /// stale. Non-empty makes the run "partial".
  std::vector<StaleImage> stale;
  ReadMethods read;  ///< how the source read the images
  /// rbd pools left out: this client may not read them (in a sync of every pool; not a
  /// partial run: the client read all it may), or what lists their images is damaged
  /// (a partial run). Their stored rows were kept as they were.
  std::vector<UnreadablePool> unreadable_pools;
  UnknownCounts unknown;  ///< values stored as unknown to this client
  double seconds = 0.0;

  /// Pools left out because they are damaged.
  std::size_t damaged_pools() const {
    std::size_t count = 0;
    for (const UnreadablePool& pool : unreadable_pools) {
      count += pool.damaged ? 1 : 0;
    }
    return count;
  }
  bool partial() const { return !stale.empty() || damaged_pools() > 0; }
};

}  // namespace rbdsync::sync
