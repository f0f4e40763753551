#pragma once

#include <string>
#include <vector>

#include "inventory/inventory.hpp"
#include "sync/sink.hpp"

namespace rbdsync::sync {

/// Which stored pools a sync speaks for. A sync of every rbd pool speaks for all of
/// the cluster's stored pools (a pool gone from Ceph is removed); a sync of named
/// pools speaks only for those, so the other pools' rows are left alone.
struct SyncScope {
  bool all_pools = true;
  std::vector<std::string> pool_names;  ///< when !all_pools
};

/// The changes that turn `stored` into `seen` within `scope`. Pure; no I/O.
ChangeSet diff_inventories(const inventory::ClusterInventory& stored,
                           const inventory::ClusterInventory& seen, const SyncScope& scope);

}  // namespace rbdsync::sync
