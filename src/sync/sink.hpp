#pragma once

#include <memory>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"

namespace rbdsync::sync {

/// The rows one sync adds, changes and removes, for one cluster.
struct ChangeSet {
  std::string fsid;
  std::vector<inventory::Pool> upserted_pools;  ///< new or renamed pools
  std::vector<std::int64_t> removed_pools;      ///< their images are in removed_images
  std::vector<inventory::Image> added_images;
  std::vector<inventory::Image> changed_images;
  std::vector<inventory::ImageKey> removed_images;

  bool empty() const {
    return upserted_pools.empty() && removed_pools.empty() && added_images.empty() &&
           changed_images.empty() && removed_images.empty();
  }
};

/// One transaction on the sink: everything a sync writes becomes visible at commit()
/// or not at all. Destroying it without commit() rolls back.
class SinkTransaction {
 public:
  virtual ~SinkTransaction() = default;

  /// What the sink holds for cluster `fsid` (empty when it never saw it).
  virtual inventory::ClusterInventory load(const std::string& fsid) = 0;

  /// Writes `changes`; visible to others only after commit().
  virtual void apply(const ChangeSet& changes) = 0;

  /// Makes everything applied visible at once.
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
