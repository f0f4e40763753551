// rbdsync.runs and the claim on a cluster, through db::RunHistory, against the real test
// server; no Ceph cluster is needed. Label `postgres`: these run in every root the suite
// builds in (Debian 12 and 13), so each libpqxx's statements with parameters, its row
// checks and its session-level locks are exercised there.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "common/run_record.hpp"
#include "common/run_status.hpp"
#include "common/uuid.hpp"
#include "db/pg_store.hpp"
#include "db/run_history.hpp"
#include "integration/harness.hpp"
#include "support/poll.hpp"
#include "sync/report.hpp"

namespace rbdsync::testing {
namespace {

constexpr int k_timeout_seconds = 30;

class RunHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override { db::PgStore(database.conninfo()).migrate(); }

  RunRecord new_run(const std::string& fsid) const {
    RunRecord run;
    run.run_id = random_uuid();
    run.fsid = fsid;
    run.trigger = "manual";
    run.host = "host-a";
    run.pid = 4242;
    run.started_at = 1'700'000'000;
    run.phase = "connecting";
    return run;
  }

  /// status|exit_code|error|phase|done|total|images|started_at (Unix seconds) of the run.
  std::string row_of(const std::string& run_id) const {
    const auto rows = database.rows(
        "SELECT status, exit_code, coalesce(error, '-'), phase, done, total, images, "
        "extract(epoch FROM started_at)::bigint FROM rbdsync.runs WHERE run_id = '" +
        run_id + "'");
    return rows.size() == 1 ? rows[0] : "rows: " + std::to_string(rows.size());
  }

  TestDatabase database;
  const std::string fsid = random_uuid();
};

TEST_F(RunHistoryTest, TheClaimIsExclusivePerClusterAndEndsWithItsSession) {
  const std::string other_fsid = random_uuid();
  auto first = std::make_unique<db::RunHistory>(database.conninfo(), k_timeout_seconds);
  db::RunHistory second(database.conninfo(), k_timeout_seconds);
  ASSERT_TRUE(first->try_claim_cluster(fsid));
  EXPECT_FALSE(second.try_claim_cluster(fsid)) << "two sessions claimed one cluster";
  EXPECT_TRUE(second.try_claim_cluster(other_fsid)) << "one cluster's claim blocked another";
  // Its session ends, and the claim with it: once the server has seen the connection
  // close and ended the backend, which it does after the client has gone on. So this
  // waits for that event (the claim coming free), for at most 30 s.
  first.reset();
  testing::wait_for("the claim to outlive its session no longer",
                    [&] { return second.try_claim_cluster(fsid); });
}

TEST_F(RunHistoryTest, ARunIsRecordedFromItsStartThroughProgressToItsEnd) {
  db::RunHistory history(database.conninfo(), k_timeout_seconds);
  ASSERT_TRUE(history.try_claim_cluster(fsid));
  RunRecord run = new_run(fsid);
  history.start(run);
  EXPECT_EQ(row_of(run.run_id), "running|NULL|-|connecting|NULL|NULL|NULL|1700000000");

  history.progress(run.run_id, "reading", 3, 7);
  const std::optional<RunRecord> running = history.running_run(fsid);
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->run_id, run.run_id);
  EXPECT_EQ(running->host, "host-a");
  EXPECT_EQ(running->pid, 4242);
  EXPECT_EQ(running->started_at, 1'700'000'000);
  EXPECT_EQ(running->phase, "reading");
  EXPECT_EQ(running->done, 3U);
  EXPECT_EQ(running->total, 7U);

  sync::SyncReport report;
  report.pools = 2;
  report.images = 7;
  run.status = RunStatus::succeeded;
  run.phase = "done";
  run.duration_seconds = 1.5;
  const db::CommittedRun committed{report, "{}", "", "", 400};
  history.finish(run, &committed);
  EXPECT_FALSE(history.running_run(fsid).has_value());
  EXPECT_EQ(row_of(run.run_id), "succeeded|0|-|done|7|7|7|1700000000");
}

TEST_F(RunHistoryTest, AFailedRunKeepsWhereItStoppedAndItsMessage) {
  db::RunHistory history(database.conninfo(), k_timeout_seconds);
  RunRecord run = new_run(fsid);
  history.start(run);
  history.progress(run.run_id, "reading", 2, 9);
  run.status = RunStatus::failed;
  run.exit_code = 69;
  run.message = "lost the cluster\nin the middle";
  history.finish(run);
  // Control characters are escaped: the message is one line in the console.
  EXPECT_EQ(row_of(run.run_id),
            "failed|69|lost the cluster\\x0ain the middle|reading|2|9|0|1700000000");
}

TEST_F(RunHistoryTest, ALeftoverRunningRowOfTheClusterAloneIsMarkedAbandoned) {
  const std::string other_fsid = random_uuid();
  db::RunHistory history(database.conninfo(), k_timeout_seconds);
  // One running row per cluster (runs_one_running): the one a dead sync left, and
  // another cluster's.
  const RunRecord dead = new_run(fsid);
  const RunRecord elsewhere = new_run(other_fsid);
  history.start(dead);
  history.start(elsewhere);
  EXPECT_EQ(history.mark_abandoned(fsid), 1);
  EXPECT_EQ(history.mark_abandoned(fsid), 0) << "a second pass found a row still running";
  EXPECT_EQ(row_of(dead.run_id).substr(0, 10), "abandoned|");
  EXPECT_EQ(row_of(elsewhere.run_id).substr(0, 8), "running|");
  // The cluster may run again.
  EXPECT_NO_THROW(history.start(new_run(fsid)));
}

}  // namespace
}  // namespace rbdsync::testing
