#include "db/history_retention.hpp"

#include "db/pqxx_compat.hpp"

namespace rbdsync::db {

namespace {

/// The rows of a history table recorded before the window, but the newest of each
/// series (`series`: the columns that name one), whose value still holds at its start.
std::string superseded_rows(const char* table, const char* series) {
  return std::string("DELETE FROM rbdsync.") + table +
         " WHERE id IN (SELECT id FROM (SELECT id, pg_catalog.row_number() OVER (PARTITION BY " +
         series + " ORDER BY recorded_at DESC, id DESC) AS newest_first FROM rbdsync." + table +
         " WHERE fsid = $1 AND recorded_at < pg_catalog.now() - "
         "pg_catalog.make_interval(days => $2)) AS before_window WHERE newest_first > 1)";
}

}  // namespace

PrunedRows prune_history(pqxx::work& work, const std::string& fsid, const std::string& run_id,
                         int days) {
  PrunedRows pruned;
  if (days <= 0) {
    return pruned;
  }
  // The usage rows of a deleted run keep their figures; their run_id becomes NULL.
  pruned.runs =
      static_cast<std::size_t>(exec(work,
                                    "DELETE FROM rbdsync.runs WHERE fsid = $1 AND run_id <> $2 AND "
                                    "status <> 'running' AND started_at < pg_catalog.now() - "
                                    "pg_catalog.make_interval(days => $3)",
                                    fsid, run_id, days)
                                   .affected_rows());
  pruned.pool_usage = static_cast<std::size_t>(
      exec(work, superseded_rows("pool_usage_history", "pool_id"), fsid, days).affected_rows());
  pruned.cluster_usage = static_cast<std::size_t>(
      exec(work, superseded_rows("cluster_usage_history", "fsid"), fsid, days).affected_rows());
  return pruned;
}

}  // namespace rbdsync::db
