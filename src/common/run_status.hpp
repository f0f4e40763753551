#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "common/exit_code.hpp"

namespace rbdsync {

/// How a run stands or how it ended: one status for rbdsync.runs, the holder record,
/// --json and the metrics. Keep k_run_statuses and sql/003's CHECK on runs.status in step.
enum class RunStatus { running, succeeded, partial, failed, interrupted, abandoned };

/// One status as each output spells it.
struct RunStatusInfo {
  RunStatus status;
  const char* name;        ///< in rbdsync.runs, the holder record and --json
  const char* plain_word;  ///< first word of the plain summary line (cron logs grep it)
  bool committed;          ///< the run committed the inventory it read
};

/// Every RunStatus, in the enum's order. Succeeded's plain word stays "synced": the
/// README and cron logs read that line (issue #20, decision B1).
inline constexpr std::array<RunStatusInfo, 6> k_run_statuses{{
    {RunStatus::running, "running", "running", false},
    {RunStatus::succeeded, "succeeded", "synced", true},
    {RunStatus::partial, "partial", "partial", true},
    {RunStatus::failed, "failed", "failed", false},
    {RunStatus::interrupted, "interrupted", "interrupted", false},
    {RunStatus::abandoned, "abandoned", "abandoned", false},
}};

/// What the record of an abandoned run says (the holder record, rbdsync.runs.error): it
/// ended without recording how (SIGKILL, power loss).
inline constexpr const char* k_abandoned_message = "the run ended without recording how (killed?)";

/// The status's name, e.g. "succeeded".
const char* run_status_name(RunStatus status);

/// The first word of the plain summary line: "synced" for succeeded, else the name.
const char* run_status_plain_word(RunStatus status);

/// The status named `name`; std::nullopt for a word that names none.
std::optional<RunStatus> run_status_named(std::string_view name);

/// Whether a run that ended so committed its inventory (succeeded or partial).
bool committed(RunStatus status);

/// How a run that exits with `code` ended: ok → succeeded, partial → partial,
/// interrupted_* → interrupted, anything else → failed.
RunStatus run_status_of(ExitCode code);

}  // namespace rbdsync
