#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"

namespace rbdsync::sync {

/// What a sync did to the stored rows of one kind.
struct KindCounts {
  std::size_t added = 0;
  std::size_t changed = 0;
  std::size_t removed = 0;
  std::size_t unchanged = 0;

  bool operator==(const KindCounts& other) const {
    return added == other.added && changed == other.changed && removed == other.removed &&
           unchanged == other.unchanged;
  }
};

/// Per kind of row: what the console's tables gained, lost and kept.
struct StoreCounts {
  KindCounts pools;
  KindCounts namespaces;
  KindCounts images;
  KindCounts snapshots;
  KindCounts trash;
};

/// An image that was listed but could not be read (after one retry). Its stored rows
/// are kept as they were and marked stale with the error.
struct StaleImage {
  inventory::ImageKey key;
  std::string path;  ///< pool[/namespace]/name, for people
  std::string error;
};

/// Which stored rows a sync speaks for. A sync of every rbd pool speaks for all of the
/// cluster's stored pools (a pool gone from Ceph is removed with everything in it); a
/// sync of named pools speaks only for the pools it read.
struct SyncScope {
  bool all_pools = true;
};

/// One transaction on the sink: everything a sync writes becomes visible at commit()
/// or not at all. Destroying it without commit() rolls back.
class SinkTransaction {
 public:
  virtual ~SinkTransaction() = default;

  /// Makes the stored inventory of `seen.fsid`, within `scope`, equal to `seen`:
  /// adds what is new, rewrites only rows that differ, removes what Ceph no longer
  /// shows. The rows of `stale` images stay as they were, marked stale.
  virtual StoreCounts store(const inventory::ClusterInventory& seen, const SyncScope& scope,
                            const std::vector<StaleImage>& stale) = 0;

  /// Makes everything stored visible at once.
  virtual void commit() = 0;
};

/// Where an inventory is written. The real one is db::PgStore; tests use a fake.
class InventorySink {
 public:
  virtual ~InventorySink() = default;

  /// Starts the one transaction a sync writes in.
  virtual std::unique_ptr<SinkTransaction> begin() = 0;
};

}  // namespace rbdsync::sync
