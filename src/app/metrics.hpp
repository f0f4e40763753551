#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rbdsync::app {

/// What the Prometheus textfile says about the last run.
struct RunMetrics {
  int exit_code = 0;
  double ended_at = 0;  ///< Unix seconds
  double duration_seconds = 0;
  std::optional<double> last_success_at;  ///< Unix seconds
  std::optional<std::int64_t> images;     ///< in the inventory after the last success
  std::int64_t added = 0;
  std::int64_t changed = 0;
  std::int64_t removed = 0;
  std::int64_t stale = 0;  ///< unreadable images whose old rows were kept
};

/// The metrics in the Prometheus text exposition format (HELP, TYPE, samples).
std::string format_metrics(const RunMetrics& metrics);

/// A sample's value from metrics text written by format_metrics(), if present.
std::optional<double> metric_value(const std::string& text, const std::string& name);

/// Writes `metrics` to `path` for node_exporter's textfile collector: to a temporary
/// file in the same directory, then rename(2), so the collector never reads half a
/// file. A failed run keeps the last success time and image count of the file it
/// replaces. Throws Error(ExitCode::cant_create) when the file cannot be written.
void write_metrics_file(const std::string& path, RunMetrics metrics);

}  // namespace rbdsync::app
