#pragma once

/// Inside db/ only: the usage history the console draws its capacity charts from
/// (rbdsync.pool_usage_history, rbdsync.cluster_usage_history; docs/schema.md).

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

}  // namespace rbdsync::db
