// The usage history the console's charts draw (sql/006_usage_history.sql): written by the
// real binary in the sync's transaction, a row only when the figures changed.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/migrations.hpp"
#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

class UsageHistoryTest : public IntegrationTest {
 protected:
  void SetUp() override {
    pool = migrate_and_create_pool("usage");
    pool_id = std::to_string(ceph.pool_id(pool));
  }

  /// The pool's history rows, oldest first: "run_id|images|provisioned_bytes".
  std::vector<std::string> pool_rows() const {
    return db.rows(
        "SELECT to_char(id, 'FM0000') || '|' || run_id || '|' || images || '|' || "
        "provisioned_bytes FROM rbdsync.pool_usage_history WHERE pool_id = " +
        pool_id);
  }

  std::vector<std::string> latest_totals() const {
    return db.rows(
        "SELECT run_id || '|' || pools || '|' || images || '|' || provisioned_bytes "
        "FROM rbdsync.cluster_usage_history ORDER BY id DESC LIMIT 1");
  }

  std::string pool;
  std::string pool_id;
};

/// "0001|run|1|8388608" without the leading id that orders the rows.
std::string without_id(const std::string& row) {
  return row.substr(row.find('|') + 1);
}

TEST_F(UsageHistoryTest, FiguresAreRecordedWhenTheyChangeNamingTheRunThatSawThem) {
  ceph.create_image(pool, "a", 8 * k_mib);
  const auto [first_code, first] = sync_json({"--pool", pool});
  ASSERT_EQ(first_code, 0) << first;
  const std::string first_run = first.at("run_id");
  auto rows = pool_rows();
  ASSERT_EQ(rows.size(), 1U) << "the first sync of a pool records its figures";
  EXPECT_EQ(without_id(rows[0]), first_run + "|1|" + std::to_string(8 * k_mib));
  EXPECT_EQ(latest_totals(),
            std::vector<std::string>{first_run + "|1|1|" + std::to_string(8 * k_mib)});

  // Nothing changed in Ceph: a run adds no row, unless the mgr's figures of the pool
  // still move (they follow the writes above by a few seconds); then it is tried again.
  bool quiet_run_seen = false;
  for (int attempt = 1; attempt <= 12 && !quiet_run_seen; ++attempt) {
    SCOPED_TRACE("unchanged resync, attempt " + std::to_string(attempt));
    const std::size_t before = pool_rows().size();
    const auto totals_before = db.rows("SELECT count(*) FROM rbdsync.cluster_usage_history");
    const auto [code, noop] = sync_json({"--pool", pool});
    ASSERT_EQ(code, 0) << noop;
    if (noop.at("counts").at("pools").at("changed") == 0) {
      quiet_run_seen = true;
      EXPECT_EQ(pool_rows().size(), before) << "figures unchanged, yet a pool row was added";
      EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.cluster_usage_history"), totals_before);
    }
  }
  EXPECT_TRUE(quiet_run_seen) << "the pool's figures never settled";

  ceph.create_image(pool, "b", 16 * k_mib);
  const auto [second_code, second] = sync_json({"--pool", pool});
  ASSERT_EQ(second_code, 0) << second;
  const std::string second_run = second.at("run_id");
  rows = pool_rows();
  EXPECT_EQ(without_id(rows.back()), second_run + "|2|" + std::to_string(24 * k_mib));
  EXPECT_EQ(latest_totals(),
            std::vector<std::string>{second_run + "|1|2|" + std::to_string(24 * k_mib)});

  // The pool cards' image figures (011) are the pool's images' as this run left them.
  EXPECT_EQ(db.rows("SELECT h.images_used_bytes || '|' || h.images_usage_unknown || '|' || "
                    "h.stale_images FROM rbdsync.pool_usage_history AS h WHERE h.pool_id = " +
                    pool_id + " ORDER BY h.id DESC LIMIT 1"),
            db.rows("SELECT coalesce(sum(used_bytes), 0) || '|' || count(*) FILTER (WHERE "
                    "used_bytes IS NULL) || '|' || count(*) FILTER (WHERE stale_error IS NOT "
                    "NULL) FROM rbdsync.images WHERE pool_id = " +
                    pool_id));
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.images WHERE pool_id = " + pool_id +
                    " AND used_bytes IS NOT NULL"),
            std::vector<std::string>{"2"})
      << "both images' usage is read, so the figure above is a sum, not a default";

  // No row repeats the one before it: every row is a change.
  EXPECT_EQ(db.rows("SELECT count(*) FROM (SELECT (stored_bytes, objects, used_bytes, "
                    "max_avail_bytes, images, provisioned_bytes, images_used_bytes, "
                    "images_usage_unknown, stale_images) AS figures, lag((stored_bytes, "
                    "objects, used_bytes, max_avail_bytes, images, provisioned_bytes, "
                    "images_used_bytes, images_usage_unknown, stale_images)) OVER "
                    "(ORDER BY id) AS previous FROM rbdsync.pool_usage_history WHERE pool_id = " +
                    pool_id + ") AS h WHERE figures IS NOT DISTINCT FROM previous"),
            std::vector<std::string>{"0"});
}

TEST_F(UsageHistoryTest, HistoryGoesWithItsPoolInAnEveryPoolSyncAndOutlivesItsRuns) {
  ceph.create_image(pool, "a", 8 * k_mib);
  ASSERT_EQ(sync({"--pool", pool}).exit_code, 0);
  ASSERT_EQ(pool_rows().size(), 1U);

  // Deleting old runs keeps the figures: they stay the baseline until the next change.
  auto connection = db.connect();
  pqxx::nontransaction work(*connection);
  work.exec("DELETE FROM rbdsync.runs");
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.pool_usage_history WHERE run_id IS NULL AND "
                    "pool_id = " +
                    pool_id),
            std::vector<std::string>{"1"});
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.cluster_usage_history WHERE run_id IS NULL"),
            std::vector<std::string>{"1"});

  ceph.delete_pool(pool);
  ASSERT_EQ(sync().exit_code, 0) << "a sync of every pool removes the deleted pool";
  EXPECT_TRUE(pool_rows().empty());
}

// --history-days: a run deletes its cluster's older history in its own transaction, but
// keeps the usage row that still holds at the window's start.
TEST_F(UsageHistoryTest, HistoryOlderThanTheWindowIsPrunedButTheValueAtItsStartStays) {
  ceph.create_image(pool, "a", 8 * k_mib);
  const auto [code, first] = sync_json({"--pool", pool});
  ASSERT_EQ(code, 0) << first;
  const std::string first_run = first.at("run_id");
  const auto history_days_of = [&](const nlohmann::json& run) {
    return db.rows("SELECT history_days FROM rbdsync.runs WHERE run_id = '" +
                   run.at("run_id").get<std::string>() + "'");
  };
  EXPECT_EQ(history_days_of(first), std::vector<std::string>{"400"}) << "the default";
  // Age the first run and its rows by 100 days, and add two older pool rows and a
  // cluster row as a long-lived cluster would have them.
  db.rows("UPDATE rbdsync.runs SET started_at = started_at - interval '100 days'");
  db.rows("UPDATE rbdsync.pool_usage_history SET recorded_at = recorded_at - interval '100 days'");
  db.rows(
      "UPDATE rbdsync.cluster_usage_history SET recorded_at = recorded_at - interval '100 days'");
  db.rows(
      "INSERT INTO rbdsync.pool_usage_history (fsid, pool_id, recorded_at, stored_bytes, "
      "objects, used_bytes, max_avail_bytes, images, provisioned_bytes) "
      "SELECT fsid, pool_id, recorded_at - (n || ' days')::interval, 0, 0, 0, 0, 0, 0 "
      "FROM rbdsync.pool_usage_history, generate_series(1, 2) AS n");
  db.rows(
      "INSERT INTO rbdsync.cluster_usage_history (fsid, recorded_at, pools, images, snapshots, "
      "trash, stale_images, provisioned_bytes, images_used_bytes, images_usage_unknown, "
      "stored_bytes, used_bytes, objects) SELECT fsid, recorded_at - interval '1 day', 0, 0, 0, "
      "0, 0, 0, 0, 0, 0, 0, 0 FROM rbdsync.cluster_usage_history");
  ASSERT_EQ(pool_rows().size(), 3U);

  // A window wider than that deletes nothing; --history-days 0 neither.
  for (const char* days : {"0", "365"}) {
    ceph.create_image(pool, std::string("keep-") + days, 8 * k_mib);
    const auto [kept_code, kept] = sync_json({"--pool", pool, "--history-days", days});
    ASSERT_EQ(kept_code, 0) << kept;
    EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs WHERE run_id = '" + first_run + "'"),
              std::vector<std::string>{"1"})
        << days;
    EXPECT_EQ(db.rows("SELECT history_days FROM rbdsync.runs WHERE run_id = '" +
                      kept.at("run_id").get<std::string>() + "'"),
              std::vector<std::string>{days})
        << "the retention the run applied, for the console";
  }
  const std::size_t pool_rows_before = pool_rows().size();
  ASSERT_EQ(pool_rows_before, 5U) << "the two new images added a row each";

  ceph.create_image(pool, "b", 8 * k_mib);
  const auto [pruned_code, pruned] = sync_json({"--pool", pool, "--history-days", "30"});
  ASSERT_EQ(pruned_code, 0) << pruned;
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs WHERE run_id = '" + first_run + "'"),
            std::vector<std::string>{"0"})
      << "the 100-day-old run";
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs"), std::vector<std::string>{"3"});
  // Of the three rows before the window, the newest stays, now without its run.
  const std::vector<std::string> old_rows = db.rows(
      "SELECT coalesce(run_id::text, 'none') || '|' || images FROM rbdsync.pool_usage_history "
      "WHERE recorded_at < now() - interval '30 days'");
  EXPECT_EQ(old_rows, std::vector<std::string>{"none|1"});
  EXPECT_EQ(pool_rows().size(), pool_rows_before + 1 - 2);
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.cluster_usage_history "
                    "WHERE recorded_at < now() - interval '30 days'"),
            std::vector<std::string>{"1"});

  // A run that does not say (the console's button, an admin by hand) keeps what the
  // last run kept: it never prunes more than the schedule chose.
  const auto [unsaid_code, unsaid] = sync_json({"--pool", pool});
  ASSERT_EQ(unsaid_code, 0) << unsaid;
  EXPECT_EQ(history_days_of(unsaid), std::vector<std::string>{"30"});
}

}  // namespace

// Migration 011 on a database a rbd-sync of schema 010 filled: each pool's latest history
// row gets the figures of its images as they stand (what the console's pool card shows);
// older rows stay NULL, since nobody measured them.
class UsageHistoryUpgradeTest : public IntegrationTest {};

TEST_F(UsageHistoryUpgradeTest, Migration011FillsEachPoolsLatestRowFromItsImages) {
  {
    auto connection = db.connect();
    pqxx::work work(*connection);
    work.exec("SET LOCAL search_path = pg_catalog, pg_temp");
    work.exec("CREATE SCHEMA rbdsync");
    work.exec(
        "CREATE TABLE rbdsync.schema_migrations (version integer PRIMARY KEY, name text NOT "
        "NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    for (const db::Migration& migration : db::migrations()) {
      if (migration.version <= 10) {
        work.exec(migration.sql);
        work.exec("INSERT INTO rbdsync.schema_migrations (version, name) VALUES (" +
                  std::to_string(migration.version) + ", " + work.quote(migration.name) + ")");
      }
    }
    const std::string fsid = "'0bbd9a41-0000-4000-8000-00000000000b'";
    work.exec("INSERT INTO rbdsync.clusters (fsid, name) VALUES (" + fsid + ", 'ceph')");
    work.exec(
        "INSERT INTO rbdsync.pools (fsid, pool_id, name, pool_type, replica_size, min_size, "
        "pg_num, "
        "stored_bytes, objects, used_bytes, max_avail_bytes, mirror_mode) SELECT " +
        fsid +
        ", id, 'p' || id, 'replicated', 3, 2, 32, 0, 0, 0, 0, 'disabled' FROM "
        "generate_series(1, 2) AS id");
    const std::string image =
        "INSERT INTO rbdsync.images (fsid, pool_id, image_id, name, format, size_bytes, "
        "object_size, features, feature_names, used_bytes, used_unknown_reason, stale_error, "
        "stale_since) VALUES (" +
        fsid + ", 1, ";
    work.exec(image + "'i1', 'one', 2, 1000, 4194304, 1, '{}', 100, NULL, NULL, NULL)");
    work.exec(image +
              "'i2', 'two', 2, 1000, 4194304, 1, '{}', NULL, 'fast-diff disabled', "
              "NULL, NULL)");
    work.exec(image + "'i3', 'three', 2, 1000, 4194304, 1, '{}', 5, NULL, 'cannot open', now())");
    const std::string history =
        "INSERT INTO rbdsync.pool_usage_history (fsid, pool_id, recorded_at, stored_bytes, "
        "objects, used_bytes, max_avail_bytes, images, provisioned_bytes) VALUES (" +
        fsid + ", ";
    work.exec(history + "1, now() - interval '2 days', 1, 1, 1, 1, 2, 2000)");
    work.exec(history + "1, now() - interval '1 day', 2, 2, 2, 2, 3, 3000)");
    work.exec(history + "2, now() - interval '1 day', 0, 0, 0, 0, 0, 0)");
    work.commit();
  }
  const RunResult migrated = migrate();
  ASSERT_EQ(migrated.exit_code, 0) << migrated.err;
  EXPECT_NE(migrated.out.find("applied=11"), std::string::npos) << migrated.out;
  EXPECT_EQ(db.rows("SELECT pool_id || ':' || images || '|' || coalesce(images_used_bytes::text, "
                    "'-') || '|' || coalesce(images_usage_unknown::text, '-') || '|' || "
                    "coalesce(stale_images::text, '-') FROM rbdsync.pool_usage_history "
                    "ORDER BY pool_id, recorded_at"),
            (std::vector<std::string>{"1:2|-|-|-", "1:3|105|1|1", "2:0|0|0|0"}));
}

}  // namespace rbdsync::testing
