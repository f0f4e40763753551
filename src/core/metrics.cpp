#include "core/metrics.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "common/files.hpp"

namespace rbdsync::core {

namespace {

/// One gauge with one sample, whose labels are `labels` ("{cluster=\"ceph\"}").
void gauge(std::string& text, const char* name, const char* help, const std::string& labels,
           double value) {
  text += fmt::format("# HELP {} {}\n# TYPE {} gauge\n{}{} {}\n", name, help, name, name, labels,
                      value);
}

}  // namespace

std::string format_metrics(const RunRecord& run, const std::string& cluster,
                           const sync::SyncReport* report, const LastSuccess& last) {
  const std::string label = fmt::format("cluster=\"{}\"", cluster);
  const std::string labels = "{" + label + "}";
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
        labels, run.status == RunStatus::succeeded ? 1 : 0);
  gauge(text, "rbd_sync_last_run_exit_code", "Exit code of the last sync run.", labels,
        run.exit_code);
  gauge(text, "rbd_sync_last_run_timestamp_seconds", "When the last sync run ended.", labels,
        ended_at);
  gauge(text, "rbd_sync_last_run_duration_seconds", "How long the last sync run took.", labels,
        run.duration_seconds);
  if (last_success_at) {
    gauge(text, "rbd_sync_last_success_timestamp_seconds", "When a sync run last succeeded.",
          labels, *last_success_at);
  }
  if (images) {
    gauge(text, "rbd_sync_images", "Images in the inventory after the last successful run.", labels,
          static_cast<double>(*images));
  }
  gauge(text, "rbd_sync_last_run_stale_images",
        "Images the last sync run could not read; their rows were kept, marked stale.", labels,
        static_cast<double>(figures.stale.size()));
  text +=
      "# HELP rbd_sync_last_run_changes Image rows the last sync run added, changed or "
      "removed.\n# TYPE rbd_sync_last_run_changes gauge\n";
  const sync::KindCounts& changes = figures.counts.images;
  const auto change = [&](const char* kind, std::uint64_t count) {
    text += fmt::format("rbd_sync_last_run_changes{{{},kind=\"{}\"}} {}\n", label, kind, count);
  };
  change("added", changes.added);
  change("changed", changes.changed);
  change("removed", changes.removed);
  return text;
}

std::optional<double> metric_value(const std::string& text, const std::string& name,
                                   const std::string& cluster) {
  const std::string labelled = name + "{cluster=\"" + cluster + "\"";
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // Unlabelled samples are what versions before the cluster label wrote, for the one
    // cluster a host had then: the default one. Another cluster's samples are not ours.
    std::size_t value_at = std::string::npos;
    if (cluster == cli::k_default_cluster && line.rfind(name + " ", 0) == 0) {
      value_at = name.size() + 1;
    } else if (line.rfind(labelled, 0) == 0) {
      const std::size_t close = line.find("} ", labelled.size());
      value_at = close == std::string::npos ? close : close + 2;
    }
    if (value_at != std::string::npos) {
      try {
        const double value = std::stod(line.substr(value_at));
        return std::isfinite(value) ? std::optional(value) : std::nullopt;
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

void write_metrics_file(const std::string& path, const std::string& cluster, const RunRecord& run,
                        const sync::SyncReport* report) {
  constexpr const char* k_hint = "check --metrics-file's directory and permissions";
  // A metrics file is a few kilobytes; more is not one of ours.
  constexpr std::size_t k_largest_previous = std::size_t{1} << 20;
  LastSuccess last;
  if (!committed(run.status)) {
    const std::string previous = read_regular_file(path, k_largest_previous).value_or("");
    last.at = metric_value(previous, "rbd_sync_last_success_timestamp_seconds", cluster);
    // The previous file is not trusted (its directory may be group-writable): a count out
    // of int64's range, or not a number, is no count; converting it would be undefined.
    const auto images = metric_value(previous, "rbd_sync_images", cluster);
    if (images && *images >= 0 &&
        *images < static_cast<double>(std::numeric_limits<std::int64_t>::max())) {
      last.images = static_cast<std::int64_t>(*images);
    }
  }
  // 0644: node_exporter, another user, reads it; the figures are no secret.
  replace_file(path, format_metrics(run, cluster, report, last), 0644, k_hint);
}

}  // namespace rbdsync::core
