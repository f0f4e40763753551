#pragma once

#include <ctime>
#include <exception>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "common/error.hpp"
#include "lock/holder_record.hpp"

namespace rbdsync::front {

/// Results go to stdout (one line, or one JSON object); diagnostics go to stderr.
/// Every outcome of a command prints through here, so plain and JSON keep the same facts.

/// One JSON object on one line of stdout.
void print_json(const nlohmann::json& object);

/// Who asked for a run (escaped as shown text), or null when nobody said (cron, an admin
/// without --requested-by): the "requested_by" of every answer that names a run.
nlohmann::json requested_by_json(const std::string& requested_by);

/// Who holds a busy guard, as far as can be told.
struct BusyHolder {
  std::string guard;                ///< "lock file PATH" or "cluster FSID"
  std::optional<RunRecord> run;     ///< from the holder record or the running row
  std::optional<std::int64_t> pid;  ///< from /proc/locks, when no record describes it
};

/// "pid 4242 on web-1, trigger cron, started 22:10:03 (4m12s ago), reading images
/// 3120/10000": the facts known about the holder, in one phrase.
std::string describe_holder(const BusyHolder& holder, std::time_t now);

/// The --json object of a busy guard at time `now` (what print_already_running prints).
/// `exit_code`: what the run exits with (75, or --conflict-exit-code).
nlohmann::json busy_json(const BusyHolder& holder, std::time_t now, int exit_code);

/// The --json object of a failure (what print_error prints); `run_id` "" gives null.
nlohmann::json error_json(const Error& error, const std::string& run_id);

/// `run --detach`: the run `run_id` (process `pid`) holds both guards and goes on in the
/// background, logging to `log_path`.
void print_started(const std::string& run_id, int pid, const std::string& log_path,
                   const cli::Config& config);

/// The guard was busy: `rbd-sync: already running: <holder>` on stderr, and with
/// --format json one object on stdout with the same facts.
void print_already_running(const BusyHolder& holder, const cli::Config& config);

/// A failure: `rbd-sync: error: <message> (hint: <hint>)` on stderr, and with --format
/// json one object on stdout carrying the same exit code and message (and the run id
/// when the run got that far).
void print_error(const Error& error, cli::OutputFormat format, const std::string& run_id = {});

/// The failure `caught` stands for, printed as print_error does (an exception that is not
/// an rbdsync::Error is a bug: exit 70). Returns its exit code.
int print_caught(const std::exception_ptr& caught, cli::OutputFormat format);

/// `rbd-sync migrate`'s result.
void print_migrations(const std::string& applied, int version, const cli::Config& config);

/// `rbd-sync status`: whether a sync holds the lock file, and the last run.
void print_status(const lock::LockState& state, const cli::Config& config);

}  // namespace rbdsync::front
