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

TEST(Metrics, SuccessfulRunReportsItsCountsAndTimes) {
  RunMetrics metrics;
  metrics.ended_at = 1764800000;
  metrics.duration_seconds = 1.5;
  metrics.last_success_at = 1764800000;
  metrics.images = 9;
  metrics.added = 3;
  const std::string text = format_metrics(metrics);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_success"), 1.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_exit_code"), 0.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_images"), 9.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_duration_seconds"), 1.5);
  EXPECT_NE(text.find("rbd_sync_last_run_changes{kind=\"added\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE rbd_sync_images gauge\n"), std::string::npos);
}

TEST(Metrics, TextOfAPartialRunIsUnchanged) {
  // node_exporter and its alerts read these names and values: issue #20 pins the text.
  RunMetrics metrics;
  metrics.exit_code = 3;
  metrics.ended_at = 1764800100;
  metrics.duration_seconds = 12.5;
  metrics.last_success_at = 1764800100;
  metrics.images = 7;
  metrics.added = 3;
  metrics.changed = 2;
  metrics.removed = 1;
  metrics.stale = 1;
  EXPECT_EQ(
      format_metrics(metrics),
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
  RunMetrics good;
  good.ended_at = 1000;
  good.last_success_at = 1000;
  good.images = 42;
  write_metrics_file(path, good);

  RunMetrics bad;
  bad.exit_code = 69;
  bad.ended_at = 2000;
  write_metrics_file(path, bad);
  const std::string text = read(path);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_success"), 0.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_exit_code"), 69.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_timestamp_seconds"), 2000.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_success_timestamp_seconds"), 1000.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_images"), 42.0);
}

TEST(Metrics, UnwritableDirectoryIsACantCreateError) {
  RunMetrics metrics;
  try {
    write_metrics_file("/nonexistent-dir/rbd_sync.prom", metrics);
    FAIL() << "writing into a missing directory must fail";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::cant_create);
  }
}

}  // namespace
}  // namespace rbdsync::app
