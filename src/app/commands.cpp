#include "app/commands.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "app/holder_keeper.hpp"
#include "app/metrics.hpp"
#include "app/output.hpp"
#include "app/progress.hpp"
#include "app/report_format.hpp"
#include "ceph/ceph_source.hpp"
#include "common/interrupts.hpp"
#include "common/run_record.hpp"
#include "common/run_status.hpp"
#include "common/stopwatch.hpp"
#include "common/uuid.hpp"
#include "db/migrations.hpp"
#include "db/pg_store.hpp"
#include "db/run_history.hpp"
#include "lock/file_lock.hpp"
#include "lock/holder_record.hpp"
#include "sync/syncer.hpp"

namespace rbdsync::app {

namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) {
    return "unknown";
  }
  return name;
}

/// Who holds the lock file, from its record and /proc/locks.
BusyHolder local_holder(const lock::FileLock& lock_file) {
  BusyHolder holder;
  holder.guard = "lock file " + lock_file.path();
  const auto pid = lock::flock_holder_pid(lock_file.fd());
  const auto record = lock::read_record(lock_file.fd());
  if (record && record->holder && (!pid || record->holder->pid == *pid)) {
    holder.run = record->holder;
  } else if (pid) {
    // No record yet (the holder has only just taken the lock), or the lock is held by
    // something that is not rbd-sync, e.g. an admin's flock(1).
    holder.pid = *pid;
  }
  return holder;
}

/// Who holds the cluster on another host, from the database.
BusyHolder remote_holder(db::RunHistory& history, const std::string& fsid) {
  BusyHolder holder;
  holder.guard = "cluster " + fsid;
  holder.run = history.running_run(fsid);
  return holder;
}

/// The Prometheus textfile, when --metrics-file asks for one. A file that cannot be
/// written is logged, not fatal: the run's outcome is decided by then.
void record_metrics(const cli::Config& config, const RunRecord& run,
                    const sync::SyncReport* report) {
  if (config.metrics_file.empty()) {
    return;
  }
  try {
    write_metrics_file(config.metrics_file, run, report);
  } catch (const Error& error) {
    spdlog::warn("{}", error.what());
  }
}

}  // namespace

ExitCode run_sync(const cli::Config& config,
                  const std::function<void(const std::string& run_id)>& on_guarded) {
  const auto start = std::chrono::steady_clock::now();
  // The lock file comes first: a busy guard must answer at once, without touching
  // Ceph or PostgreSQL.
  lock::FileLock lock_file(config.lock_file);
  const auto held = lock::ScopedLock::acquire(lock_file, std::chrono::seconds(config.wait_seconds));
  if (!held) {
    print_already_running(local_holder(lock_file), config);
    return ExitCode::already_running;
  }

  RunRecord run;
  run.run_id = random_uuid();
  run.pid = ::getpid();
  run.host = host_name();
  run.trigger = config.trigger;
  run.started_at = static_cast<std::int64_t>(std::time(nullptr));
  run.phase = "connecting";
  HolderKeeper keeper(lock_file.fd(), run);
  spdlog::info("run {} started (trigger {}, lock {})", run.run_id, run.trigger, lock_file.path());

  std::unique_ptr<db::RunHistory> history;
  bool row_recorded = false;
  std::optional<sync::SyncReport> report;
  // Every way out of a failed run goes through here, so that the runs row, the holder
  // record and the metrics file always say how it ended.
  const auto end_failed = [&](const Error& caught) {
    // A signal makes the call it interrupted fail; report the signal, not that failure.
    const int signal_number = interrupts::received();
    const bool interrupted = signal_number != 0;
    const Error error = interrupted ? interrupts::interrupted_by(signal_number) : caught;
    run.status = run_status_of(error.code());
    run.exit_code = to_int(error.code());
    run.message = error.what();
    run.duration_seconds = seconds_since(start);
    run.ended_at = static_cast<std::int64_t>(std::time(nullptr));
    keeper.finish(run);
    if (row_recorded) {
      try {
        history->finish(run);
      } catch (const std::exception& also) {
        // The database may be what failed; the next run marks the row abandoned.
        spdlog::warn("could not record the end of run {}: {}", run.run_id, also.what());
      }
    }
    record_metrics(config, run, nullptr);
    spdlog::info("run {} {} with exit code {}", run.run_id, run_status_name(run.status),
                 run.exit_code);
    print_error(error, config.format, row_recorded ? run.run_id : std::string());
    return error.code();
  };
  try {
    // PostgreSQL before Ceph: a missing schema or a wrong password should fail in
    // milliseconds, not after reading the whole cluster.
    db::PgStore store(config.db, config.db_timeout_seconds);
    // Declared after the store, so it is cleared before the store goes.
    const interrupts::ScopedAction cancel_on_signal([&store] { store.cancel_running_statement(); });
    store.require_current_schema();
    history = std::make_unique<db::RunHistory>(config.db, config.db_timeout_seconds);

    ceph::CephConfig ceph_config;
    ceph_config.conf_path = config.ceph_conf;
    ceph_config.client_name = config.ceph_client;
    ceph_config.keyring_path = config.keyring;
    ceph_config.timeout_seconds = config.ceph_timeout_seconds;
    ceph_config.exact_usage = config.exact_usage;
    ceph_config.reader = config.reader == cli::ImageReader::direct ? ceph::ImageReader::direct
                                                                   : ceph::ImageReader::librbd;
    ceph::CephSource source(ceph_config);
    run.fsid = source.cluster_fsid();

    // The guard across hosts: this cluster's advisory lock, held by the history's
    // session until the end of the run.
    if (!history->try_claim_cluster(run.fsid)) {
      keeper.withdraw();
      print_already_running(remote_holder(*history, run.fsid), config);
      return ExitCode::already_running;
    }
    if (const int abandoned = history->mark_abandoned(run.fsid); abandoned > 0) {
      spdlog::warn("marked {} earlier run(s) of cluster {} abandoned", abandoned, run.fsid);
    }
    run.phase = "listing";
    history->start(run);
    row_recorded = true;
    store.set_run_id(run.run_id);
    if (on_guarded) {
      on_guarded(run.run_id);
    }

    ProgressFanOut progress;
    progress.add(&keeper);
    DatabaseProgress database_progress(*history, run.run_id);
    progress.add(&database_progress);
    std::optional<TerminalProgress> terminal;
    if (config.format == cli::OutputFormat::plain && !config.quiet && ::isatty(STDERR_FILENO)) {
      terminal.emplace(stderr);
      progress.add(&*terminal);
    }

    sync::SyncOptions options;
    options.pool_names = config.pools;
    options.check_interrupted = interrupts::check;
    report = sync::Syncer().run(source, store, options, &progress);
  } catch (const Error& caught) {
    return end_failed(caught);
  } catch (const std::exception& caught) {
    // Not an rbdsync::Error: a bug (exit 70), but the run still ends as one.
    return end_failed(Error(ExitCode::internal, std::string("unexpected: ") + caught.what(),
                            "report this as a bug with the log"));
  } catch (...) {
    return end_failed(Error(ExitCode::internal, "unexpected non-standard exception",
                            "report this as a bug with the log"));
  }

  // Committed. Nothing below may turn that into a failure: bookkeeping that fails now
  // is logged, and the run still reports its outcome (exit 0, or 3 when partial).
  const ExitCode outcome = report->partial() ? ExitCode::partial : ExitCode::ok;
  run.status = run_status_of(outcome);
  run.exit_code = to_int(outcome);
  run.phase = "done";
  run.duration_seconds = seconds_since(start);
  run.ended_at = static_cast<std::int64_t>(std::time(nullptr));
  try {
    const db::CommittedRun figures = committed_run(*report);
    history->finish(run, &figures);
  } catch (const std::exception& error) {
    spdlog::warn("run {} committed, but its history row was not updated: {}", run.run_id,
                 error.what());
  }
  keeper.finish(run);
  record_metrics(config, run, &*report);
  spdlog::info("run {} of {} {} in {:.3f}s", run.run_id, run.fsid, run_status_name(run.status),
               report->seconds);
  print_sync_report(*report, run.run_id, config);
  return outcome;
}

ExitCode run_migrate(const cli::Config& config) {
  // Under the same statement_timeout as a run, raised with --db-timeout: a migration
  // that rewrites a large table, or waits for another migrate, may need longer.
  db::PgStore store(config.db, config.db_timeout_seconds);
  std::string applied;
  for (const int version : store.migrate()) {
    applied += (applied.empty() ? "" : ",") + std::to_string(version);
  }
  print_migrations(applied, db::latest_schema_version(), config);
  return ExitCode::ok;
}

ExitCode run_status(const cli::Config& config) {
  const lock::LockState state = lock::inspect_lock_file(config.lock_file);
  print_status(state, config);
  return state.holder_pid ? ExitCode::already_running : ExitCode::ok;
}

}  // namespace rbdsync::app
