#include "app/output.hpp"

#include <iostream>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/logging.hpp"
#include "app/report_format.hpp"
#include "common/run_status.hpp"
#include "common/text.hpp"

namespace rbdsync::app {

namespace {

// The "status" of answers that are not how a run ended: a run went on in the
// background, or another run holds the guard (exit 75).
constexpr const char* k_answer_started = "started";
constexpr const char* k_answer_already_running = "already_running";

void print_json(const nlohmann::json& object) {
  std::cout << object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

/// RFC 3339 in UTC, with the offset written as +00:00 (not +0000, which RFC 3339,
/// JavaScript's Date and Python's fromisoformat before 3.11 refuse).
std::string iso_time(std::int64_t unix_seconds) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}+00:00",
                     fmt::gmtime(static_cast<std::time_t>(unix_seconds)));
}

std::string age(std::int64_t seconds) {
  if (seconds < 0) {
    seconds = 0;
  }
  if (seconds < 60) {
    return fmt::format("{}s", seconds);
  }
  if (seconds < 3600) {
    return fmt::format("{}m{:02}s", seconds / 60, seconds % 60);
  }
  return fmt::format("{}h{:02}m", seconds / 3600, seconds % 3600 / 60);
}

nlohmann::json run_json(const RunRecord& run, std::time_t now) {
  nlohmann::json object = {{"run_id", run.run_id},
                           {"pid", run.pid},
                           {"host", run.host},
                           {"trigger", run.trigger},
                           {"started_at", iso_time(run.started_at)},
                           {"age_seconds", now - run.started_at},
                           {"phase", run.phase},
                           {"done", run.done},
                           {"total", run.total}};
  if (run.status != RunStatus::running) {
    object["status"] = run_status_name(run.status);
    object["ended_at"] = iso_time(run.ended_at);
    object["exit_code"] = run.exit_code;
    object["message"] = run.message;
  }
  return object;
}

std::string describe_last_run(const RunRecord& run) {
  std::string text = fmt::format("last run {} {} at {}, pid {} on {}, trigger {}, exit {}",
                                 run.run_id, run_status_name(run.status), iso_time(run.ended_at),
                                 run.pid, run.host, run.trigger, run.exit_code);
  if (!run.message.empty()) {
    text += ": " + run.message;
  }
  return text;
}

}  // namespace

std::string describe_holder(const BusyHolder& holder, std::time_t now) {
  if (!holder.run) {
    return holder.pid
               ? fmt::format("pid {} holds the {} (no holder record)", *holder.pid, holder.guard)
               : fmt::format("another process holds the {}", holder.guard);
  }
  const RunRecord& run = *holder.run;
  std::string text = fmt::format(
      "pid {} on {}, trigger {}, started {:%H:%M:%S} ({} ago)", run.pid, run.host, run.trigger,
      fmt::localtime(static_cast<std::time_t>(run.started_at)), age(now - run.started_at));
  if (run.phase == "reading" || run.total > 0) {
    text += fmt::format(", images {}/{}", run.done, run.total);
  } else if (!run.phase.empty()) {
    text += ", " + run.phase;
  }
  return text + fmt::format(" (run {}, {})", run.run_id, holder.guard);
}

nlohmann::json sync_report_json(const sync::SyncReport& report, const std::string& run_id,
                                const std::string& trigger) {
  // message and hint in every result object, so that a caller never has to guess.
  const std::string message =
      report.partial() ? fmt::format(
                             "synced, but {} image(s) could not be read; their previous rows "
                             "were kept, marked stale",
                             report.stale.size())
                       : fmt::format("synced {} images", report.images);
  const std::string hint =
      report.partial() ? "see 'stale' for each image's error; the next sync retries them" : "";
  const ExitCode outcome = committed_outcome(report);
  return {{"status", run_status_name(run_status_of(outcome))},
          {"exit_code", to_int(outcome)},
          {"message", message},
          {"hint", hint},
          {"run_id", run_id},
          {"trigger", trigger},
          {"fsid", report.fsid},
          {"pools", report.pools},
          {"images", report.images},
          {"added", report.counts.images.added},
          {"changed", report.counts.images.changed},
          {"removed", report.counts.images.removed},
          {"skipped", report.skipped},
          {"stale", stale_json(report.stale)},
          {"unreadable_pools", unreadable_pools_json(report.unreadable_pools)},
          {"unknown", unknown_json(report.unknown)},
          {"counts", counts_json(report.counts)},
          {"read", read_json(report.read)},
          {"seconds", report.seconds}};
}

void print_sync_report(const sync::SyncReport& report, const std::string& run_id,
                       const cli::Config& config) {
  if (config.format == cli::OutputFormat::json) {
    print_json(sync_report_json(report, run_id, config.trigger));
    return;
  }
  // Unreadable images are worth a line each on stderr even with --quiet: cron mails it.
  for (const sync::StaleImage& image : report.stale) {
    std::cerr << stderr_prefix(Priority::warning) << "rbd-sync: warning: image " << image.path
              << " (id " << image.key.image_id
              << ") could not be read, kept its previous rows, marked stale: " << image.error
              << std::endl;
  }
  if (!config.quiet) {
    std::cout << format_plain(report) << " run=" << run_id << std::endl;
  }
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
                {"started_at", iso_time(now)},
                {"lock_file", config.lock_file},
                {"log_file", log_path},
                {"message", fmt::format("started run {} (pid {})", run_id, pid)},
                {"hint", "follow it in rbdsync.runs or with 'rbd-sync status'"}});
    return;
  }
  if (!config.quiet) {
    std::cout << fmt::format("started run {} pid {} trigger {} log {}", run_id, pid, config.trigger,
                             log_path)
              << std::endl;
  }
}

nlohmann::json busy_json(const BusyHolder& holder, std::time_t now) {
  nlohmann::json object = {{"status", k_answer_already_running},
                           {"exit_code", to_int(ExitCode::already_running)},
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
    print_json(busy_json(holder, now));
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
  std::optional<RunRecord> holder;
  // The record names the holder only if it is the process /proc/locks names.
  if (running && state.record && state.record->holder &&
      state.record->holder->pid == *state.holder_pid) {
    holder = state.record->holder;
  }
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

}  // namespace rbdsync::app
