#include "db/history.hpp"

#include "common/run_status.hpp"
#include "db/pqxx_compat.hpp"

namespace rbdsync::db {

namespace {

/// What the usage history keeps of the images of cluster $1: grouped by pool for the
/// pools' rows, over all for the cluster's. Sums are NULL over no image.
constexpr const char* k_image_figures =
    "pg_catalog.count(*) AS images, "
    "pg_catalog.sum(size_bytes) AS provisioned_bytes, "
    "pg_catalog.sum(used_bytes) AS images_used_bytes, "
    "pg_catalog.count(*) FILTER (WHERE used_bytes IS NULL) AS images_usage_unknown, "
    "pg_catalog.count(*) FILTER (WHERE stale_error IS NOT NULL) AS stale_images "
    "FROM rbdsync.images WHERE fsid = $1";

/// The pools' figures now, as the rows of pool_usage_history would hold them.
std::string pool_figures() {
  return std::string(
             "SELECT p.fsid, p.pool_id, p.stored_bytes, p.objects, p.used_bytes, "
             "p.max_avail_bytes, "
             "coalesce(i.images, 0)::integer AS images, "
             "coalesce(i.provisioned_bytes, 0)::bigint AS provisioned_bytes, "
             "coalesce(i.images_used_bytes, 0)::bigint AS images_used_bytes, "
             "coalesce(i.images_usage_unknown, 0)::integer AS images_usage_unknown, "
             "coalesce(i.stale_images, 0)::integer AS stale_images "
             "FROM rbdsync.pools AS p LEFT JOIN (SELECT pool_id, ") +
         k_image_figures +
         " GROUP BY pool_id) AS i ON i.pool_id = p.pool_id "
         "WHERE p.fsid = $1 AND p.pool_id = ANY($3::bigint[])";
}

/// Each pool's latest history row. DISTINCT ON rather than a LATERAL LIMIT 1: the
/// sync's transaction turns nested loops off (pg_store.cpp).
constexpr const char* k_latest_pool_rows =
    "SELECT DISTINCT ON (pool_id) * FROM rbdsync.pool_usage_history WHERE fsid = $1 "
    "ORDER BY pool_id, recorded_at DESC, id DESC";

/// The cluster's totals now, in the column order of cluster_usage_history.
std::string cluster_totals() {
  return std::string(
             "SELECT (SELECT pg_catalog.count(*) FROM rbdsync.pools WHERE fsid = $1)::integer AS "
             "pools, i.images::integer AS images, "
             "(SELECT pg_catalog.count(*) FROM rbdsync.snapshots WHERE fsid = $1)::integer AS "
             "snapshots, "
             "(SELECT pg_catalog.count(*) FROM rbdsync.trash WHERE fsid = $1)::integer AS trash, "
             "i.stale_images::integer AS stale_images, "
             "coalesce(i.provisioned_bytes, 0)::bigint AS provisioned_bytes, "
             "coalesce(i.images_used_bytes, 0)::bigint AS images_used_bytes, "
             "i.images_usage_unknown::integer AS images_usage_unknown, p.stored_bytes, "
             "p.used_bytes, p.objects "
             "FROM (SELECT ") +
         k_image_figures +
         ") AS i, "
         "(SELECT coalesce(pg_catalog.sum(stored_bytes), 0)::bigint AS stored_bytes, "
         "coalesce(pg_catalog.sum(used_bytes), 0)::bigint AS used_bytes, "
         "coalesce(pg_catalog.sum(objects), 0)::bigint AS objects "
         "FROM rbdsync.pools WHERE fsid = $1) AS p";
}

constexpr const char* k_totals_columns =
    "pools, images, snapshots, trash, stale_images, provisioned_bytes, images_used_bytes, "
    "images_usage_unknown, stored_bytes, used_bytes, objects";

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

std::size_t record_usage_history(pqxx::work& work, const std::string& fsid,
                                 const std::string& run_id,
                                 const std::vector<std::int64_t>& pool_ids) {
  std::string ids;
  for (const std::int64_t id : pool_ids) {
    ids += (ids.empty() ? "" : ",") + std::to_string(id);
  }
  const pqxx::result pools = exec(
      work,
      std::string("INSERT INTO rbdsync.pool_usage_history (fsid, pool_id, run_id, stored_bytes, "
                  "objects, used_bytes, max_avail_bytes, images, provisioned_bytes, "
                  "images_used_bytes, images_usage_unknown, stale_images) "
                  "SELECT n.fsid, n.pool_id, $2, n.stored_bytes, n.objects, n.used_bytes, "
                  "n.max_avail_bytes, n.images, n.provisioned_bytes, n.images_used_bytes, "
                  "n.images_usage_unknown, n.stale_images FROM (") +
          pool_figures() + ") AS n LEFT JOIN (" + k_latest_pool_rows +
          ") AS h ON h.pool_id = n.pool_id WHERE (h.stored_bytes, h.objects, h.used_bytes, "
          "h.max_avail_bytes, h.images, h.provisioned_bytes, h.images_used_bytes, "
          "h.images_usage_unknown, h.stale_images) IS DISTINCT FROM (n.stored_bytes, "
          "n.objects, n.used_bytes, n.max_avail_bytes, n.images, n.provisioned_bytes, "
          "n.images_used_bytes, n.images_usage_unknown, n.stale_images)",
      fsid, run_id, "{" + ids + "}");
  exec(work,
       std::string("INSERT INTO rbdsync.cluster_usage_history (fsid, run_id, ") + k_totals_columns +
           ") SELECT $1, $2, n.* FROM (" + cluster_totals() +
           ") AS n WHERE NOT EXISTS (SELECT 1 FROM (SELECT " + k_totals_columns +
           " FROM rbdsync.cluster_usage_history WHERE fsid = $1 "
           "ORDER BY recorded_at DESC, id DESC LIMIT 1) AS h WHERE h = n)",
       fsid, run_id);
  return pools.affected_rows();
}

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
                                    "status <> $4 AND started_at < pg_catalog.now() - "
                                    "pg_catalog.make_interval(days => $3)",
                                    fsid, run_id, days, run_status_name(RunStatus::running))
                                   .affected_rows());
  pruned.pool_usage = static_cast<std::size_t>(
      exec(work, superseded_rows("pool_usage_history", "pool_id"), fsid, days).affected_rows());
  pruned.cluster_usage = static_cast<std::size_t>(
      exec(work, superseded_rows("cluster_usage_history", "fsid"), fsid, days).affected_rows());
  return pruned;
}

}  // namespace rbdsync::db
