#include "app/metrics.hpp"

#include <sstream>

#include <fmt/format.h>

#include "common/files.hpp"

namespace rbdsync::app {

namespace {

void gauge(std::string& text, const char* name, const char* help, double value) {
  text += fmt::format("# HELP {} {}\n# TYPE {} gauge\n{} {}\n", name, help, name, name, value);
}

}  // namespace

std::string format_metrics(const RunRecord& run, const sync::SyncReport* report,
                           const LastSuccess& last) {
  // A partial run committed everything it could read: the inventory is fresh but for
  // the stale images, which the exit code and the stale gauge tell.
  const sync::SyncReport* counted = committed(run.status) ? report : nullptr;
  const sync::SyncReport none;
  const sync::SyncReport& figures = counted ? *counted : none;
  const auto ended_at = static_cast<double>(run.ended_at);
  const std::optional<double> last_success_at = counted ? ended_at : last.at;
  const std::optional<std::int64_t> images =
      counted ? static_cast<std::int64_t>(counted->images) : last.images;
  std::string text;
  gauge(text, "rbd_sync_last_run_success", "Whether the last sync run succeeded (1) or not (0).",
        run.status == RunStatus::succeeded ? 1 : 0);
  gauge(text, "rbd_sync_last_run_exit_code", "Exit code of the last sync run.", run.exit_code);
  gauge(text, "rbd_sync_last_run_timestamp_seconds", "When the last sync run ended.", ended_at);
  gauge(text, "rbd_sync_last_run_duration_seconds", "How long the last sync run took.",
        run.duration_seconds);
  if (last_success_at) {
    gauge(text, "rbd_sync_last_success_timestamp_seconds", "When a sync run last succeeded.",
          *last_success_at);
  }
  if (images) {
    gauge(text, "rbd_sync_images", "Images in the inventory after the last successful run.",
          static_cast<double>(*images));
  }
  gauge(text, "rbd_sync_last_run_stale_images",
        "Images the last sync run could not read; their rows were kept, marked stale.",
        static_cast<double>(figures.stale.size()));
  text +=
      "# HELP rbd_sync_last_run_changes Image rows the last sync run added, changed or "
      "removed.\n# TYPE rbd_sync_last_run_changes gauge\n";
  const sync::KindCounts& changes = figures.counts.images;
  text += fmt::format("rbd_sync_last_run_changes{{kind=\"added\"}} {}\n", changes.added);
  text += fmt::format("rbd_sync_last_run_changes{{kind=\"changed\"}} {}\n", changes.changed);
  text += fmt::format("rbd_sync_last_run_changes{{kind=\"removed\"}} {}\n", changes.removed);
  return text;
}

std::optional<double> metric_value(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(name + " ", 0) == 0) {
      try {
        return std::stod(line.substr(name.size() + 1));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

void write_metrics_file(const std::string& path, const RunRecord& run,
                        const sync::SyncReport* report) {
  constexpr const char* k_hint = "check --metrics-file's directory and permissions";
  // A metrics file is a few kilobytes; more is not one of ours.
  constexpr std::size_t k_largest_previous = std::size_t{1} << 20;
  LastSuccess last;
  if (!committed(run.status)) {
    const std::string previous = read_regular_file(path, k_largest_previous).value_or("");
    last.at = metric_value(previous, "rbd_sync_last_success_timestamp_seconds");
    if (const auto images = metric_value(previous, "rbd_sync_images")) {
      last.images = static_cast<std::int64_t>(*images);
    }
  }
  // 0644: node_exporter, another user, reads it; the figures are no secret.
  replace_file(path, format_metrics(run, report, last), 0644, k_hint);
}

}  // namespace rbdsync::app
