#pragma once

/// Inside db/ only: the history the console draws its run list and capacity charts from
/// (rbdsync.runs, pool_usage_history, cluster_usage_history; docs/schema.md): what a
/// sync adds to it and what falls out of its window, both in the sync's transaction.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace rbdsync::db {

/// In the sync's transaction, after the inventory rows are written: adds a row for each
/// pool of `pool_ids` whose figures (ceph df; its images, their provisioned and used
/// bytes, how many have usage unknown or are stale) differ from its latest history row, and a row
/// of the cluster's totals when they differ from its latest one, all naming run `run_id` (its row
/// in rbdsync.runs must exist). Returns how many pool rows it added. libpqxx exceptions propagate
/// to the caller.
std::size_t record_usage_history(pqxx::work& work, const std::string& fsid,
                                 const std::string& run_id,
                                 const std::vector<std::int64_t>& pool_ids);

/// What prune_history() deleted.
struct PrunedRows {
  std::size_t runs = 0;
  std::size_t pool_usage = 0;
  std::size_t cluster_usage = 0;
};

/// In the sync's transaction: deletes cluster `fsid`'s runs that started more than
/// `days` days ago (but `run_id`, and any still running), and its usage history rows
/// recorded before then, except each pool's and the cluster's newest such row: a
/// history row holds its value until the next one, so that row is the value at the
/// start of the window the charts draw. `days` 0 keeps everything. libpqxx exceptions
/// propagate to the caller. The run's own row is not touched here: RunHistory updates it
/// from its own connection, which a lock taken in this transaction would block.
PrunedRows prune_history(pqxx::work& work, const std::string& fsid, const std::string& run_id,
                         int days);

}  // namespace rbdsync::db
