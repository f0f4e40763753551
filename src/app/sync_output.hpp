#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "sync/report.hpp"

namespace rbdsync::app {

/// A finished sync's answer, as app/output.hpp's answers are printed. Apart from them
/// because it belongs to the core (librbdsync-core.so): only a run that synced has one.

/// The --json object of a finished sync (what print_sync_report prints).
nlohmann::json sync_report_json(const sync::SyncReport& report, const std::string& run_id,
                                const std::string& trigger);

/// A finished sync.
void print_sync_report(const sync::SyncReport& report, const std::string& run_id,
                       const cli::Config& config);

}  // namespace rbdsync::app
