#include "front/answers.hpp"
#include "core/sync_answer.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "common/error.hpp"
#include "support/sample_run.hpp"
#include "sync/report.hpp"

namespace rbdsync::front {
namespace {

using core::print_sync_report;
using core::sync_report_json;

// These pin the text that cron logs, the web backend and the Django console read
// (issue #20): a change here is a change others see, so the expected text is written
// out in full rather than rebuilt from the code under test.

/// A partial sync with a distinct value in every figure.
sync::SyncReport partial_report() {
  sync::SyncReport report;
  report.fsid = "6d4c7f3a-1b2c-4d5e-8f90-0123456789ab";
  report.pools = 2;
  report.images = 7;
  report.skipped = 1;
  report.usage_kept = 4;
  report.counts.pools = {1, 0, 0, 1};
  report.counts.namespaces = {0, 1, 0, 2};
  report.counts.images = {3, 2, 1, 4};
  report.counts.snapshots = {5, 0, 6, 7};
  report.counts.trash = {0, 0, 1, 0};
  sync::StaleImage stale;
  stale.key = {3, "tenant", "10ab2c"};
  stale.name = "db-1";
  stale.path = "rbd/tenant/db-1";
  stale.error = "Input/output error";
  report.stale.push_back(stale);
  report.read.images = {{"header", 6}, {"librbd", 1}};
  report.read.fallbacks = {{"clone: parent pool not readable", 1}};
  report.unreadable_pools.push_back({9, "secret", "Operation not permitted"});
  report.unknown.parents = 1;
  report.unknown.usage = 2;
  report.seconds = 1.25;
  return report;
}

/// Runs `print` with stdout captured; returns what it printed.
template <typename Print>
std::string stdout_of(Print print) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  print();
  (void)::testing::internal::GetCapturedStderr();
  return ::testing::internal::GetCapturedStdout();
}

TEST(Output, PlainLineOfAPartialSyncIsUnchanged) {
  cli::Config config;
  const std::string line =
      stdout_of([&] { print_sync_report(partial_report(), "run-0001", config); });
  EXPECT_EQ(line,
            "partial fsid=6d4c7f3a-1b2c-4d5e-8f90-0123456789ab pools=2 images=7 added=3 changed=2 "
            "removed=1 skipped=1 stale=1 unreadable_pools=1 unknown=3 seconds=1.250 "
            "pool_rows=+1/~0/-0/=1 namespace_rows=+0/~1/-0/=2 image_rows=+3/~2/-1/=4 "
            "snapshot_rows=+5/~0/-6/=7 trash_rows=+0/~0/-1/=0 run=run-0001\n");
}

TEST(Output, JsonOfAPartialSyncIsUnchanged) {
  EXPECT_EQ(
      sync_report_json(partial_report(), "run-0001", "cron").dump(),
      R"({"added":3,"changed":2,"counts":{"images":{"added":3,"changed":2,"removed":1,)"
      R"("unchanged":4},"namespaces":{"added":0,"changed":1,"removed":0,"unchanged":2},)"
      R"("pools":{"added":1,"changed":0,"removed":0,"unchanged":1},)"
      R"("snapshots":{"added":5,"changed":0,"removed":6,"unchanged":7},)"
      R"("trash":{"added":0,"changed":0,"removed":1,"unchanged":0}},"exit_code":3,)"
      R"("fsid":"6d4c7f3a-1b2c-4d5e-8f90-0123456789ab",)"
      R"("hint":"see 'stale' for each image's error; the next sync retries them",)"
      R"("images":7,"message":"synced,)"
      R"( but 1 image(s) could not be read; their previous rows were kept,)"
      R"( marked stale","pools":2,)"
      R"("read":{"fallbacks":{"clone: parent pool not readable":1},)"
      R"("images":{"header":6,"librbd":1}},"removed":1,"run_id":"run-0001",)"
      R"("seconds":1.25,"skipped":1,"stale":[{"error":"Input/output error",)"
      R"("image_id":"10ab2c","path":"rbd/tenant/db-1"}],"status":"partial",)"
      R"("trigger":"cron","unknown":{"children":0,"groups":0,"parents":1,"usage":2},)"
      R"("unreadable_pools":[{"damaged":false,"error":"Operation not permitted","pool":"secret",)"
      R"("pool_id":9}],"usage_kept":4})");
}

// An image id is an omap key and an error may carry a snapshot's name: bytes anyone who
// may write the pool chose. The stale image's stderr line is one line, escaped.
TEST(Output, AStaleImagesStderrLineEscapesItsIdAndError) {
  sync::SyncReport report = partial_report();
  report.stale.front().key.image_id = "10ab\n2c";
  report.stale.front().error = "cannot open of snapshot 'a\x1b[2Jb'";
  cli::Config config;
  config.quiet = true;
  ::testing::internal::CaptureStderr();
  print_sync_report(report, "run-0001", config);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(R"((id 10ab\x0a2c) could not be read)"), std::string::npos) << err;
  EXPECT_NE(err.find(R"(snapshot 'a\x1b[2Jb')"), std::string::npos) << err;
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
}

TEST(Output, JsonOfAnInterruptedRunSaysInterrupted) {
  const Error interrupted(ExitCode::interrupted_term, "interrupted by SIGTERM",
                          "nothing was committed");
  EXPECT_EQ(error_json(interrupted, "run-0001").dump(),
            R"({"exit_code":143,"hint":"nothing was committed",)"
            R"("message":"interrupted by SIGTERM","run_id":"run-0001","status":"interrupted"})");
  const Error failed(ExitCode::unavailable, "cannot reach the monitors", "check mon_host");
  EXPECT_EQ(error_json(failed, "").dump(),
            R"({"exit_code":69,"hint":"check mon_host","message":"cannot reach the monitors",)"
            R"("run_id":null,"status":"failed"})");
}

TEST(Output, BusyJsonNamesTheHolder) {
  // describe_holder() shows the start in local time: pin the zone.
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  BusyHolder holder;
  holder.guard = "cluster 6d4c7f3a-1b2c-4d5e-8f90-0123456789ab";
  RunRecord run = testing::sample_run();
  run.run_id = "run-0002";
  run.trigger = "web";
  run.requested_by = "alice";
  run.done = 31;
  run.total = 100;
  holder.run = run;
  EXPECT_EQ(busy_json(holder, 1764800252, 75).dump(),
            R"j({"exit_code":75,"guard":"cluster 6d4c7f3a-1b2c-4d5e-8f90-0123456789ab",)j"
            R"j("hint":"another sync is running; try again once it ends,)j"
            R"j( or queue with --wait SECONDS","holder":{"age_seconds":252,"done":31,)j"
            R"j("host":"web-1","phase":"reading","pid":4242,"requested_by":"alice",)j"
            R"j("run_id":"run-0002",)j"
            R"j("started_at":"2025-12-03T22:13:20+00:00","total":100,"trigger":"web"},)j"
            R"j("message":"already running: pid 4242 on web-1, trigger web (requested by alice),)j"
            R"j( started 22:13:20 (4m12s ago), images 31/100 (run run-0002,)j"
            R"j( cluster 6d4c7f3a-1b2c-4d5e-8f90-0123456789ab)","status":"already_running"})j");
  const BusyHolder unknown{"lock file /run/rbd-sync.lock", std::nullopt, 777};
  EXPECT_EQ(busy_json(unknown, 1764800252, 75).dump(),
            R"j({"exit_code":75,"guard":"lock file /run/rbd-sync.lock",)j"
            R"j("hint":"another sync is running; try again once it ends,)j"
            R"j( or queue with --wait SECONDS","holder":{"pid":777},)j"
            R"j("message":"already running: pid 777 holds the lock file /run/rbd-sync.lock)j"
            R"j( (no holder record)","status":"already_running"})j");
}

TEST(Output, ARunsTextFromTheLockFileIsEscapedWhereItIsShown) {
  // The holder record keeps text as written (any member of the lock file's group may
  // write it): a host name that clears the screen or forges a line is escaped here.
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  RunRecord run = testing::sample_run();
  run.host = "web\x1b[2J\nroot";
  run.trigger = "cron\r";
  run.phase = "reading\x07";
  run.requested_by = "eve\x1b]0;pwned\x07";
  const BusyHolder holder{"lock file /run/lock/rbd-sync/sync.lock", run, std::nullopt};
  const nlohmann::json busy = busy_json(holder, 1764800252, 75);
  EXPECT_EQ(busy["holder"]["host"], R"(web\x1b[2J\x0aroot)");
  EXPECT_EQ(busy["holder"]["trigger"], R"(cron\x0d)");
  EXPECT_EQ(busy["holder"]["phase"], R"(reading\x07)");
  EXPECT_EQ(busy["holder"]["requested_by"], R"(eve\x1b]0;pwned\x07)");
  const std::string line = describe_holder(holder, 1764800252);
  EXPECT_NE(line.find(R"(pid 4242 on web\x1b[2J\x0aroot, trigger cron\x0d (requested by )"
                      R"(eve\x1b]0;pwned\x07),)"),
            std::string::npos)
      << line;
  for (const char c : line) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(byte >= 0x20 && byte < 0x7f) << "byte " << static_cast<int>(byte) << " in " << line;
  }
}

}  // namespace
}  // namespace rbdsync::front
