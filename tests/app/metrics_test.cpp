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
