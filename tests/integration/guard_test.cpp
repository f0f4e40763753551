// The guard under contention, on the real cluster and database: many runs at once,
// a killed holder, two "hosts" (two lock files) on one database, waiting, status.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "integration/harness.hpp"
#include "support/poll.hpp"

namespace rbdsync::testing {
namespace {

// Enough images that runs started at once really collide with the one that wins. The
// direct reader reads them in a fraction of a second, so the tests that need a sync
// in the middle of its run stop it there (stop_when_reading_starts).
constexpr int k_images = 400;

class GuardTest : public IntegrationTest {
 protected:
  void SetUp() override {
    pool = migrate_and_create_pool("guard");
    ceph.create_images(pool, "img", k_images, 16ULL << 20);
  }

  std::vector<std::string> args_with_lock(const std::string& lock,
                                          const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = run_args({"--pool", pool});
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--lock-file") {
        args[i + 1] = lock;
      }
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  nlohmann::json status(const std::string& lock) const { return lock_status(lock); }

  std::string pool;
};

TEST_F(GuardTest, FiftyRunsAtOnceGiveExactlyOneSyncAndFortyNineNamingItsPid) {
  constexpr int k_runs = 50;
  // The winner is held in its write phase until every other run has answered: fifty
  // processes take seconds to start on two cores, and the direct reader finishes a
  // sync of this pool sooner, so a late starter would otherwise find the guard free
  // again and make a second, legitimate, sync.
  // Declared first, destroyed last: if the wait below throws, the blocker lets the
  // winner go before the futures' destructors wait for it.
  std::vector<std::future<RunResult>> runs;
  BlockingSession blocker(db);
  for (int i = 0; i < k_runs; ++i) {
    runs.push_back(std::async(std::launch::async, [this] { return sync({"--pool", pool}); }));
  }
  testing::wait_for(
      "all runs but the winner to answer",
      [&] {
        return std::count_if(runs.begin(), runs.end(), [](const auto& run) {
                 return run.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
               }) >= k_runs - 1;
      },
      std::chrono::seconds(90), std::chrono::milliseconds(50));
  blocker.release();  // rolls back: the winner's write goes on
  std::vector<RunResult> results;
  for (auto& run : runs) {
    results.push_back(run.get());
  }

  int succeeded = 0;
  int busy = 0;
  for (const auto& result : results) {
    succeeded += result.exit_code == 0 ? 1 : 0;
    busy += result.exit_code == 75 ? 1 : 0;
  }
  ASSERT_EQ(succeeded, 1);
  ASSERT_EQ(busy, k_runs - 1);

  const auto winner = db.rows("SELECT pid FROM rbdsync.runs WHERE status = 'succeeded'");
  ASSERT_EQ(winner.size(), 1U);
  double slowest_busy = 0.0;
  double sync_seconds = 0.0;
  for (const auto& result : results) {
    if (result.exit_code == 75) {
      EXPECT_NE(result.err.find("already running: pid " + winner[0] + " "), std::string::npos)
          << result.err;
      slowest_busy = std::max(slowest_busy, result.seconds);
    } else {
      sync_seconds = result.seconds;
    }
  }
  // Fifty processes loading librados at once on two cores take a while to start, so
  // no latency bound here (the single busy run has one); but none waited for the sync,
  // which was held until all of them had answered.
  EXPECT_LT(slowest_busy, sync_seconds);
  std::cout << "[guard] 50 runs at once: slowest busy exit " << slowest_busy << "s, the sync "
            << sync_seconds << "s" << std::endl;
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs"), std::vector<std::string>{"1"})
      << "busy runs must not have touched the database";

  // The inventory is a single sync's: a second sync finds nothing to change.
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.images"),
            std::vector<std::string>{std::to_string(k_images)});
  const RunResult again = sync({"--pool", pool});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("added=0 changed=0 removed=0"), std::string::npos) << again.out;
}

TEST_F(GuardTest, KilledHolderLeavesNoLockAndTheNextRunOverwritesItsRecord) {
  BackgroundRun victim(run_args({"--pool", pool}));
  stop_when_reading_starts(victim.pid(), lock_file);
  const auto during = status(lock_file);
  EXPECT_EQ(during["holder"]["pid"], victim.pid());
  const std::string victim_run = during["holder"]["run_id"];

  ::kill(victim.pid(), SIGKILL);
  EXPECT_EQ(victim.wait().exit_code, 128 + SIGKILL);
  const auto after_kill = status(lock_file);
  EXPECT_FALSE(after_kill["running"].get<bool>());

  const RunResult next = sync({"--pool", pool, "--json"});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  const std::string next_run = nlohmann::json::parse(next.out)["run_id"];
  EXPECT_NE(next.err.find("previous run " + victim_run), std::string::npos) << next.err;

  const auto record = status(lock_file);
  EXPECT_TRUE(record["holder"].is_null());
  EXPECT_EQ(record["last_run"]["run_id"], next_run);
  EXPECT_EQ(record["last_run"]["status"], "succeeded");
  EXPECT_EQ(db.rows("SELECT status FROM rbdsync.runs WHERE run_id = '" + victim_run + "'"),
            std::vector<std::string>{"abandoned"});
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.images"),
            std::vector<std::string>{std::to_string(k_images)});
}

TEST_F(GuardTest, RunOnAnotherHostExitsBusyNamingTheHolderFromTheDatabase) {
  // Two lock files stand in for two hosts sharing one database.
  BackgroundRun first(args_with_lock(dir.file("host-a.lock")));
  stop_when_reading_starts(first.pid(), dir.file("host-a.lock"));

  const RunResult second = run_rbd_sync(args_with_lock(dir.file("host-b.lock"), {"--json"}));
  EXPECT_EQ(second.exit_code, 75) << second.err;
  EXPECT_NE(second.err.find("already running: pid " + std::to_string(first.pid()) + " on "),
            std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("cluster " + ceph.fsid()), std::string::npos) << second.err;
  const auto json = nlohmann::json::parse(second.out);
  EXPECT_EQ(json["holder"]["pid"], first.pid());
  // Busy in the database, not in the lock file: --conflict-exit-code applies there too.
  const RunResult third = run_rbd_sync(
      args_with_lock(dir.file("host-c.lock"), {"--json", "--conflict-exit-code", "0"}));
  EXPECT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(nlohmann::json::parse(third.out).at("status"), "already_running");

  ::kill(first.pid(), SIGCONT);
  const RunResult first_result = first.wait();
  EXPECT_EQ(first_result.exit_code, 0) << first_result.err;
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs"), std::vector<std::string>{"1"});
  EXPECT_FALSE(status(dir.file("host-b.lock"))["running"].get<bool>());
}

TEST_F(GuardTest, WaitingRunStartsOnceTheHolderFinishes) {
  BackgroundRun first(run_args({"--pool", pool}));
  stop_when_reading_starts(first.pid(), lock_file);
  BackgroundRun waiting(run_args({"--pool", pool, "--wait", "120"}));
  // It opens the lock file first thing and then keeps trying it: once it has it open,
  // nothing but the lock keeps it from its runs row.
  wait_until_open(waiting.pid(), lock_file);
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs"), std::vector<std::string>{"1"})
      << "the waiting run must not start while the first holds the lock";
  ::kill(first.pid(), SIGCONT);
  EXPECT_EQ(first.wait().exit_code, 0);
  const RunResult waited = waiting.wait();
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs WHERE status = 'succeeded'"),
            std::vector<std::string>{"2"});
}

TEST_F(GuardTest, StatusShowsTheRunningSyncThenTheLastRun) {
  BackgroundRun running(run_args({"--pool", pool, "--trigger", "web"}));
  stop_when_reading_starts(running.pid(), lock_file);
  const RunResult during = run_rbd_sync({"status", "--lock-file", lock_file});
  EXPECT_EQ(during.exit_code, 75);
  EXPECT_NE(during.out.find("running: pid " + std::to_string(running.pid())), std::string::npos)
      << during.out;
  EXPECT_NE(during.out.find("trigger web"), std::string::npos) << during.out;
  ::kill(running.pid(), SIGCONT);
  ASSERT_EQ(running.wait().exit_code, 0);

  const RunResult after = run_rbd_sync({"status", "--lock-file", lock_file});
  EXPECT_EQ(after.exit_code, 0) << after.out;
  EXPECT_NE(after.out.find("idle"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("succeeded"), std::string::npos) << after.out;
}

}  // namespace
}  // namespace rbdsync::testing
