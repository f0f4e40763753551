#pragma once

/// Inside db/ only: how long the run history and the usage history are kept
/// (rbdsync.runs, pool_usage_history, cluster_usage_history; docs/schema.md).

#include <cstddef>
#include <string>

#include <pqxx/pqxx>

namespace rbdsync::db {

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
