#include "app/metrics.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "support/scoped_temp_dir.hpp"

namespace rbdsync::app {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A run that ended at `ended_at` with `status` and its exit code.
RunRecord ended_run(RunStatus status, ExitCode code, std::int64_t ended_at) {
  RunRecord run;
  run.status = status;
  run.exit_code = to_int(code);
  run.ended_at = ended_at;
  return run;
}

TEST(Metrics, SuccessfulRunReportsItsCountsAndTimes) {
  RunRecord run = ended_run(RunStatus::succeeded, ExitCode::ok, 1764800000);
  run.duration_seconds = 1.5;
  sync::SyncReport report;
  report.images = 9;
  report.counts.images.added = 3;
  const std::string text = format_metrics(run, &report);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_success"), 1.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_exit_code"), 0.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_images"), 9.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_duration_seconds"), 1.5);
  EXPECT_NE(text.find("rbd_sync_last_run_changes{kind=\"added\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE rbd_sync_images gauge\n"), std::string::npos);
}

TEST(Metrics, TextOfAPartialRunIsUnchanged) {
  // node_exporter and its alerts read these names and values: issue #20 pins the text.
  RunRecord run = ended_run(RunStatus::partial, ExitCode::partial, 1764800100);
  run.duration_seconds = 12.5;
  sync::SyncReport report;
  report.images = 7;
  report.counts.images = {3, 2, 1, 4};
  report.stale.resize(1);
  // A committed run is its own last success: what the previous file said is not used.
  const LastSuccess earlier{1764700000, 5};
  EXPECT_EQ(
      format_metrics(run, &report, earlier),
      "# HELP rbd_sync_last_run_success Whether the last sync run succeeded (1) or not (0).\n"
      "# TYPE rbd_sync_last_run_success gauge\n"
      "rbd_sync_last_run_success 0\n"
      "# HELP rbd_sync_last_run_exit_code Exit code of the last sync run.\n"
      "# TYPE rbd_sync_last_run_exit_code gauge\n"
      "rbd_sync_last_run_exit_code 3\n"
      "# HELP rbd_sync_last_run_timestamp_seconds When the last sync run ended.\n"
      "# TYPE rbd_sync_last_run_timestamp_seconds gauge\n"
      "rbd_sync_last_run_timestamp_seconds 1764800100\n"
      "# HELP rbd_sync_last_run_duration_seconds How long the last sync run took.\n"
      "# TYPE rbd_sync_last_run_duration_seconds gauge\n"
      "rbd_sync_last_run_duration_seconds 12.5\n"
      "# HELP rbd_sync_last_success_timestamp_seconds When a sync run last succeeded.\n"
      "# TYPE rbd_sync_last_success_timestamp_seconds gauge\n"
      "rbd_sync_last_success_timestamp_seconds 1764800100\n"
      "# HELP rbd_sync_images Images in the inventory after the last successful run.\n"
      "# TYPE rbd_sync_images gauge\n"
      "rbd_sync_images 7\n"
      "# HELP rbd_sync_last_run_stale_images Images the last sync run could not read; their rows "
      "were kept, marked stale.\n"
      "# TYPE rbd_sync_last_run_stale_images gauge\n"
      "rbd_sync_last_run_stale_images 1\n"
      "# HELP rbd_sync_last_run_changes Image rows the last sync run added, changed or removed.\n"
      "# TYPE rbd_sync_last_run_changes gauge\n"
      "rbd_sync_last_run_changes{kind=\"added\"} 3\n"
      "rbd_sync_last_run_changes{kind=\"changed\"} 2\n"
      "rbd_sync_last_run_changes{kind=\"removed\"} 1\n");
}

TEST(Metrics, FailedRunKeepsTheLastSuccessOfThePreviousFile) {
  testing::ScopedTempDir dir;
  const std::string path = dir.file("rbd_sync.prom");
  sync::SyncReport report;
  report.images = 42;
  write_metrics_file(path, ended_run(RunStatus::succeeded, ExitCode::ok, 1000), &report);

  write_metrics_file(path, ended_run(RunStatus::failed, ExitCode::unavailable, 2000), nullptr);
  const std::string text = read(path);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_success"), 0.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_exit_code"), 69.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_timestamp_seconds"), 2000.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_success_timestamp_seconds"), 1000.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_images"), 42.0);
}

TEST(Metrics, UnwritableDirectoryIsACantCreateError) {
  try {
    write_metrics_file("/nonexistent-dir/rbd_sync.prom",
                       ended_run(RunStatus::failed, ExitCode::internal, 1000), nullptr);
    FAIL() << "writing into a missing directory must fail";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::cant_create);
  }
}

}  // namespace
}  // namespace rbdsync::app
