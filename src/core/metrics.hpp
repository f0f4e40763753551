#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli/options.hpp"
#include "common/run_record.hpp"
#include "sync/report.hpp"

namespace rbdsync::core {

/// What a run that did not commit keeps of the metrics file it replaces.
struct LastSuccess {
  std::optional<double> at;            ///< Unix seconds
  std::optional<std::int64_t> images;  ///< in the inventory after it
};

/// The metrics of the ended run `run` of cluster `cluster` (the --cluster name: letters,
/// digits, '-' and '_', nothing a label value must escape) in the Prometheus text
/// exposition format (HELP, TYPE, samples). Every sample carries the label
/// cluster="NAME", so that the files of several clusters on one host are one set of
/// series to node_exporter. A run that committed (succeeded or partial) is its own last
/// success and gives its counts from `report`; any other gives `last`, and no counts.
std::string format_metrics(const RunRecord& run, const std::string& cluster,
                           const sync::SyncReport* report, const LastSuccess& last = {});

/// The value of metric `name` for cluster `cluster` in metrics text written by
/// format_metrics() (or, for the default cluster, unlabelled as before the label), if
/// present.
std::optional<double> metric_value(const std::string& text, const std::string& name,
                                   const std::string& cluster = cli::k_default_cluster);

/// Writes the metrics of `run` (and `report`, when it committed) to `path` for
/// node_exporter's textfile collector: to a temporary file in the same directory, then
/// rename(2), so the collector never reads half a file. A run that did not commit keeps
/// the last success time and image count of the file it replaces. Throws
/// Error(ExitCode::cant_create) when the file cannot be written.
void write_metrics_file(const std::string& path, const std::string& cluster, const RunRecord& run,
                        const sync::SyncReport* report);

}  // namespace rbdsync::core
