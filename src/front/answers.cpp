#include "front/answers.hpp"

#include <iostream>

#include <nlohmann/json.hpp>

#include "common/run_record.hpp"
#include "common/run_status.hpp"
#include "common/text.hpp"
#include "front/journal.hpp"

namespace rbdsync::front {

namespace {

// The "status" of answers that are not how a run ended: a run went on in the
// background, or another run holds the guard (exit 75).
constexpr const char* k_answer_started = "started";
constexpr const char* k_answer_already_running = "already_running";

// The busy answer is the front's (librbdsync-core.so is not loaded for it), which links
// neither fmt nor spdlog: times and numbers are formatted with the standard library.

/// `time` in `format` (strftime), in UTC or in local time.
std::string time_text(std::int64_t unix_seconds, const char* format, bool utc) {
  const auto time = static_cast<std::time_t>(unix_seconds);
  std::tm parts{};
  if ((utc ? ::gmtime_r(&time, &parts) : ::localtime_r(&time, &parts)) == nullptr) {
    return "?";
  }
  char text[64];
  return {text, std::strftime(text, sizeof text, format, &parts)};
}

/// RFC 3339 in UTC, with the offset written as +00:00 (not +0000, which RFC 3339,
/// JavaScript's Date and Python's fromisoformat before 3.11 refuse).
std::string iso_time(std::int64_t unix_seconds) {
  return time_text(unix_seconds, "%Y-%m-%dT%H:%M:%S", true) + "+00:00";
}

std::string two_digits(std::int64_t number) {
  return (number < 10 ? "0" : "") + std::to_string(number);
}

/// "12s", "4m05s", "3h07m".
std::string age(std::int64_t seconds) {
  const std::int64_t whole = seconds < 0 ? 0 : seconds;
  if (whole < 60) {
    return std::to_string(whole) + "s";
  }
  if (whole < 3600) {
    return std::to_string(whole / 60) + "m" + two_digits(whole % 60) + "s";
  }
  return std::to_string(whole / 3600) + "h" + two_digits(whole % 3600 / 60) + "m";
}

/// A run's text as shown: its host, message and the rest may come from the lock file's
/// record, which any member of its group can write; a host name that clears the screen
/// or a message that forges a second line reaches no terminal and no log.
std::string shown(const std::string& text) {
  return display_text(text, Controls::escape);
}

/// "trigger web (requested by alice)", "trigger cron".
std::string trigger_text(const RunRecord& run) {
  return "trigger " + shown(run.trigger) +
         (run.requested_by.empty() ? "" : " (requested by " + shown(run.requested_by) + ")");
}

nlohmann::json run_json(const RunRecord& run, std::time_t now) {
  nlohmann::json object = {{"run_id", shown(run.run_id)},
                           {"pid", run.pid},
                           {"host", shown(run.host)},
                           {"trigger", shown(run.trigger)},
                           {"requested_by", requested_by_json(run.requested_by)},
                           {"started_at", iso_time(run.started_at)},
                           {"age_seconds", now - run.started_at},
                           {"phase", shown(run.phase)},
                           {"done", run.done},
                           {"total", run.total}};
  if (run.status != RunStatus::running) {
    object["status"] = run_status_name(run.status);
    object["ended_at"] = iso_time(run.ended_at);
    object["exit_code"] = run.exit_code;
    object["message"] = shown(run.message);
  }
  return object;
}

std::string describe_last_run(const RunRecord& run) {
  std::string text = "last run " + shown(run.run_id) + " " + run_status_name(run.status) + " at " +
                     iso_time(run.ended_at) + ", pid " + std::to_string(run.pid) + " on " +
                     shown(run.host) + ", " + trigger_text(run) + ", exit " +
                     std::to_string(run.exit_code);
  if (!run.message.empty()) {
    text += ": " + shown(run.message);
  }
  return text;
}

}  // namespace

nlohmann::json requested_by_json(const std::string& requested_by) {
  return requested_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(shown(requested_by));
}

void print_json(const nlohmann::json& object) {
  std::cout << object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

std::string describe_holder(const BusyHolder& holder, std::time_t now) {
  if (!holder.run) {
    return holder.pid ? "pid " + std::to_string(*holder.pid) + " holds the " + holder.guard +
                            " (no holder record)"
                      : "another process holds the " + holder.guard;
  }
  const RunRecord& run = *holder.run;
  std::string text = "pid " + std::to_string(run.pid) + " on " + shown(run.host) + ", " +
                     trigger_text(run) + ", started " +
                     time_text(run.started_at, "%H:%M:%S", false) + " (" +
                     age(now - run.started_at) + " ago)";
  if (run.phase == phase_name(Phase::reading) || run.total > 0) {
    text += ", images " + std::to_string(run.done) + "/" + std::to_string(run.total);
  } else if (!run.phase.empty()) {
    text += ", " + shown(run.phase);
  }
  return text + " (run " + shown(run.run_id) + ", " + holder.guard + ")";
}

void print_started(const std::string& run_id, int pid, const std::string& log_path,
                   const cli::Config& config) {
  const std::time_t now = std::time(nullptr);
  if (config.format == cli::OutputFormat::json) {
    print_json({{"status", k_answer_started},
                {"exit_code", to_int(ExitCode::ok)},
                {"run_id", run_id},
                {"pid", pid},
                {"trigger", config.trigger},
                {"requested_by", requested_by_json(config.requested_by)},
                {"started_at", iso_time(now)},
                {"lock_file", config.lock_file},
                {"log_file", log_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(log_path)},
                {"message", "started run " + run_id + " (pid " + std::to_string(pid) + ")"},
                {"hint", "follow it in rbdsync.runs or with 'rbd-sync status'"}});
    return;
  }
  if (!config.quiet) {
    std::cout << "started run " << run_id << " pid " << pid << " trigger " << config.trigger
              << " log " << log_path << std::endl;
  }
}

nlohmann::json busy_json(const BusyHolder& holder, std::time_t now, int exit_code) {
  nlohmann::json object = {{"status", k_answer_already_running},
                           {"exit_code", exit_code},
                           {"message", "already running: " + describe_holder(holder, now)},
                           {"hint",
                            "another sync is running; try again once it ends, or "
                            "queue with --wait SECONDS"},
                           {"guard", holder.guard},
                           {"holder", nullptr}};
  if (holder.run) {
    object["holder"] = run_json(*holder.run, now);
  } else if (holder.pid) {
    object["holder"] = {{"pid", *holder.pid}};
  }
  return object;
}

void print_already_running(const BusyHolder& holder, const cli::Config& config) {
  const std::time_t now = std::time(nullptr);
  if (config.format == cli::OutputFormat::json) {
    print_json(busy_json(holder, now, config.conflict_exit_code));
  }
  if (!config.quiet) {
    // Not a failure (the guard did its job), but worth a look if it happens every night.
    std::cerr << stderr_prefix(Priority::notice)
              << "rbd-sync: already running: " << describe_holder(holder, now) << std::endl;
  }
}

nlohmann::json error_json(const Error& error, const std::string& run_id) {
  return {{"status", run_status_name(run_status_of(error.code()))},
          {"exit_code", to_int(error.code())},
          {"run_id", run_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(run_id)},
          {"message", display_text(error.what(), Controls::escape)},
          {"hint", display_text(error.hint(), Controls::escape)}};
}

void print_error(const Error& error, cli::OutputFormat format, const std::string& run_id) {
  // Messages may name pools and images, whose names are any bytes: one line of text.
  const std::string message = display_text(error.what(), Controls::escape);
  const std::string hint = display_text(error.hint(), Controls::escape);
  std::string line = "rbd-sync: error: " + message;
  if (!hint.empty()) {
    line += " (hint: " + hint + ")";
  }
  std::cerr << stderr_prefix(Priority::err) << line << std::endl;
  if (format == cli::OutputFormat::json) {
    print_json(error_json(error, run_id));
  }
}

int print_caught(const std::exception_ptr& caught, cli::OutputFormat format) {
  const Error error = error_of(caught);
  print_error(error, format);
  return to_int(error.code());
}

void print_migrations(const std::string& applied, int version, const cli::Config& config) {
  if (config.format == cli::OutputFormat::json) {
    print_json({{"status", run_status_name(RunStatus::succeeded)},
                {"exit_code", to_int(ExitCode::ok)},
                {"applied", applied},
                {"schema_version", version}});
    return;
  }
  if (!config.quiet) {
    std::cout << "migrated applied=" << (applied.empty() ? "none" : applied)
              << " schema_version=" << version << std::endl;
  }
}

void print_status(const lock::LockState& state, const cli::Config& config) {
  const std::time_t now = std::time(nullptr);
  const bool running = state.holder_pid.has_value();
  // Running is what /proc/locks tells: the record alone may outlive a SIGKILLed holder.
  const std::optional<RunRecord> holder =
      running ? lock::recorded_holder(state.record, state.holder_pid) : std::nullopt;
  const std::optional<RunRecord> last_run = state.record ? state.record->last_run : std::nullopt;

  if (config.format == cli::OutputFormat::json) {
    nlohmann::json object = {{"running", running},
                             {"lock_file", config.lock_file},
                             {"holder", nullptr},
                             {"last_run", nullptr}};
    if (holder) {
      object["holder"] = run_json(*holder, now);
    } else if (running) {
      object["holder"] = {{"pid", *state.holder_pid}};
    }
    if (last_run) {
      object["last_run"] = run_json(*last_run, now);
    }
    print_json(object);
    return;
  }
  if (running) {
    std::cout << "running: "
              << describe_holder(
                     BusyHolder{"lock file " + config.lock_file, holder, *state.holder_pid}, now)
              << "\n";
  } else {
    std::cout << "idle: no sync holds " << config.lock_file << "\n";
  }
  if (last_run) {
    std::cout << describe_last_run(*last_run) << "\n";
  } else if (!state.exists) {
    std::cout << "no sync has run with this lock file\n";
  }
  std::cout.flush();
}

}  // namespace rbdsync::front
