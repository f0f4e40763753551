#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "common/exit_code.hpp"
#include "db/run_history.hpp"
#include "sync/report.hpp"

namespace rbdsync::core {

/// A finished sync's answer, as front/answers.hpp's answers are printed: its plain line,
/// its --json object, and what the run history records of it. Apart from the front's
/// answers because it belongs to the core (librbdsync-core.so): only a run that synced
/// has one.

/// How a committed sync ends: ok, or partial when some images were kept stale. The
/// exit code, the run's status and the plain line's word all follow from it.
ExitCode committed_outcome(const sync::SyncReport& report);

/// The one-line plain summary of a sync: `key=value` pairs, the same keys as JSON.
std::string format_plain(const sync::SyncReport& report);

/// {"pools": {"added", "changed", "removed", "unchanged"}, "namespaces": ..., "images": ...,
/// "snapshots": ..., "trash": ...}: for --json and the run history.
nlohmann::json counts_json(const sync::StoreCounts& counts);

/// [{"path", "image_id", "error"}] of the images kept stale.
nlohmann::json stale_json(const std::vector<sync::StaleImage>& stale);

/// How the images were read, for --json: {"images": {"header": 9960, "librbd": 40},
/// "fallbacks": {"clone: parent image not found": 20, ...}} (every reason's text is in
/// ceph/fallback_reason.hpp; "clone: " marks one carried up from the parent).
nlohmann::json read_json(const sync::ReadMethods& read);

/// [{"pool", "pool_id", "error"}] of the pools left out because this client may not read
/// them: for --json and the run history.
nlohmann::json unreadable_pools_json(const std::vector<sync::UnreadablePool>& pools);

/// {"parents", "children", "groups", "usage"}: values stored as unknown to this client.
nlohmann::json unknown_json(const sync::UnknownCounts& unknown);

/// What the run history records of a committed sync: the report, and the JSON of
/// its counts, stale images (when partial) and unreadable pools (when any), as --json
/// writes them.
db::CommittedRun committed_run(const sync::SyncReport& report, int history_days);

/// The --json object of a finished sync (what print_sync_report prints).
nlohmann::json sync_report_json(const sync::SyncReport& report, const std::string& run_id,
                                const std::string& trigger);

/// A finished sync.
void print_sync_report(const sync::SyncReport& report, const std::string& run_id,
                       const cli::Config& config);

}  // namespace rbdsync::core
