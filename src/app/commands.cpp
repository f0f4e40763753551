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
  if (const auto row = history.running_run(fsid)) {
    lock::RunInfo run;
    run.run_id = row->run_id;
    run.pid = row->pid;
    run.host = row->host;
    run.trigger = row->trigger;
    run.started_at = row->started_at;
    run.phase = row->phase;
    run.done = static_cast<std::uint64_t>(row->done);
    run.total = static_cast<std::uint64_t>(row->total);
    holder.run = run;
  }
  return holder;
}

/// The end of a run, as the run history records it.
void fill_counts(db::RunRow& row, const sync::SyncReport& report) {
  row.pools = static_cast<std::int64_t>(report.pools);
  row.images = static_cast<std::int64_t>(report.images);
  row.added = static_cast<std::int64_t>(report.counts.images.added);
  row.changed = static_cast<std::int64_t>(report.counts.images.changed);
  row.removed = static_cast<std::int64_t>(report.counts.images.removed);
  row.skipped = static_cast<std::int64_t>(report.skipped);
  row.stale = static_cast<std::int64_t>(report.stale.size());
  // Names in there are display text already; the handler is the last line of defence.
  constexpr auto k_replace = nlohmann::json::error_handler_t::replace;
  row.counts_json = counts_json(report.counts).dump(-1, ' ', false, k_replace);
  row.stale_images_json =
      report.partial() ? stale_json(report.stale).dump(-1, ' ', false, k_replace) : "";
  row.unreadable_pools_json =
      report.unreadable_pools.empty()
          ? ""
          : unreadable_pools_json(report.unreadable_pools).dump(-1, ' ', false, k_replace);
  row.done = row.images + row.skipped + row.stale;
  row.total = row.done;
}

/// The Prometheus textfile, when --metrics-file asks for one. A file that cannot be
/// written is logged, not fatal: the run's outcome is decided by then.
void record_metrics(const cli::Config& config, const db::RunRow& row) {
  if (config.metrics_file.empty()) {
    return;
  }
  RunMetrics metrics;
  metrics.exit_code = row.exit_code;
  metrics.ended_at = static_cast<double>(std::time(nullptr));
  metrics.duration_seconds = row.duration_seconds;
  // A partial run committed everything it could read: the inventory is fresh but for
  // the stale images, which the exit code and the stale gauge tell.
  if (row.exit_code == 0 || row.exit_code == to_int(ExitCode::partial)) {
    metrics.last_success_at = metrics.ended_at;
    metrics.stale = row.stale;
    metrics.images = row.images;
    metrics.added = row.added;
    metrics.changed = row.changed;
    metrics.removed = row.removed;
  }
  try {
    write_metrics_file(config.metrics_file, metrics);
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

  lock::RunInfo me;
  me.run_id = random_uuid();
  me.pid = ::getpid();
  me.host = host_name();
  me.trigger = config.trigger;
  me.started_at = static_cast<std::int64_t>(std::time(nullptr));
  me.phase = "connecting";
  HolderKeeper keeper(lock_file.fd(), me);
  spdlog::info("run {} started (trigger {}, lock {})", me.run_id, me.trigger, lock_file.path());

  db::RunRow row;
  row.run_id = me.run_id;
  row.trigger = me.trigger;
  row.host = me.host;
  row.pid = me.pid;
  row.started_at = me.started_at;
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
    row.status = run_status_of(error.code());
    row.exit_code = to_int(error.code());
    row.error = error.what();
    row.duration_seconds = seconds_since(start);
    keeper.finish(row.status, row.exit_code, row.error);
    if (row_recorded) {
      try {
        history->finish(row);
      } catch (const std::exception& also) {
        // The database may be what failed; the next run marks the row abandoned.
        spdlog::warn("could not record the end of run {}: {}", row.run_id, also.what());
      }
    }
    record_metrics(config, row);
    spdlog::info("run {} {} with exit code {}", row.run_id, run_status_name(row.status),
                 row.exit_code);
    print_error(error, config.format, row_recorded ? row.run_id : std::string());
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
    row.fsid = source.cluster_fsid();

    // The guard across hosts: this cluster's advisory lock, held by the history's
    // session until the end of the run.
    if (!history->try_claim_cluster(row.fsid)) {
      keeper.withdraw();
      print_already_running(remote_holder(*history, row.fsid), config);
      return ExitCode::already_running;
    }
    if (const int abandoned = history->mark_abandoned(row.fsid); abandoned > 0) {
      spdlog::warn("marked {} earlier run(s) of cluster {} abandoned", abandoned, row.fsid);
    }
    row.phase = "listing";
    history->start(row);
    row_recorded = true;
    store.set_run_id(row.run_id);
    if (on_guarded) {
      on_guarded(row.run_id);
    }

    ProgressFanOut progress;
    progress.add(&keeper);
    DatabaseProgress database_progress(*history, row.run_id);
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
  row.status = run_status_of(outcome);
  row.exit_code = to_int(outcome);
  row.phase = "done";
  fill_counts(row, *report);
  row.duration_seconds = seconds_since(start);
  try {
    history->finish(row);
  } catch (const std::exception& error) {
    spdlog::warn("run {} committed, but its history row was not updated: {}", row.run_id,
                 error.what());
  }
  keeper.finish(row.status, row.exit_code, "");
  record_metrics(config, row);
  spdlog::info("run {} of {} {} in {:.3f}s", me.run_id, row.fsid, run_status_name(row.status),
               report->seconds);
  print_sync_report(*report, me.run_id, config);
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
