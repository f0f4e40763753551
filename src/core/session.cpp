#include "core/session.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "ceph/ceph_source.hpp"
#include "common/interrupts.hpp"
#include "common/run_record.hpp"
#include "common/run_status.hpp"
#include "common/stopwatch.hpp"
#include "common/uuid.hpp"
#include "core/holder_keeper.hpp"
#include "core/metrics.hpp"
#include "core/progress_observers.hpp"
#include "core/sync_answer.hpp"
#include "db/migrations.hpp"
#include "db/pg_store.hpp"
#include "db/run_history.hpp"
#include "front/answers.hpp"
#include "lock/file_lock.hpp"
#include "lock/holder_record.hpp"
#include "sync/syncer.hpp"

namespace rbdsync::core {

using front::BusyHolder;
using front::OnGuarded;
using front::print_already_running;
using front::print_error;
using front::print_migrations;

namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) {
    return "unknown";
  }
  return name;
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
    write_metrics_file(config.metrics_file, config.ceph_cluster, run, report);
  } catch (const Error& error) {
    spdlog::warn("{}", error.what());
  }
}

/// This process's run, as it starts: who it is, and that it is connecting.
RunRecord new_run(const cli::Config& config) {
  RunRecord run;
  run.run_id = random_uuid();
  run.pid = ::getpid();
  run.host = host_name();
  run.trigger = config.trigger;
  run.requested_by = config.requested_by;
  run.started_at = static_cast<std::int64_t>(std::time(nullptr));
  run.phase = phase_name(Phase::connecting);
  return run;
}

ceph::CephConfig ceph_config(const cli::Config& config) {
  const ceph::ReaderKind reader = config.reader == cli::ImageReader::direct
                                      ? ceph::ReaderKind::direct
                                      : ceph::ReaderKind::librbd;
  // By name, not by position: three of these are strings, which a reordered
  // CephConfig would swap without a compile error.
  ceph::CephConfig ceph;
  ceph.cluster = config.ceph_cluster;
  ceph.conf_path = config.ceph_conf;
  ceph.client_name = config.ceph_client;
  ceph.keyring_path = config.keyring;
  ceph.mon_host = config.mon_host;
  ceph.keyfile_path = config.keyfile;
  ceph.timeout_seconds = config.ceph_timeout_seconds;
  ceph.exact_usage = config.exact_usage;
  ceph.reader = reader;
  return ceph;
}

/// One run, from the moment it holds the lock file to its end: it connects, claims the
/// cluster, syncs, and records how it ended in the holder record, the runs row, the
/// metrics file and the log, whichever way it ends.
class RunSession {
 public:
  /// `start`: when the run began waiting for the lock file, for its duration.
  RunSession(const cli::Config& config, const lock::FileLock& lock_file,
             std::chrono::steady_clock::time_point start)
      : m_config(config), m_start(start), m_run(new_run(config)), m_keeper(lock_file.fd(), m_run) {
    spdlog::info("run {} started (trigger {}{}, lock {})", m_run.run_id, m_run.trigger,
                 m_run.requested_by.empty() ? "" : ", requested by " + m_run.requested_by,
                 lock_file.path());
  }

  /// Runs the sync and ends the run; returns its exit code (75 when another host
  /// holds the cluster).
  ExitCode sync(const OnGuarded& on_guarded);

 private:
  /// Connects, claims the cluster and syncs; std::nullopt when the cluster is busy.
  /// Throws what the sync threw: nothing is committed then.
  std::optional<sync::SyncReport> connect_and_sync(const OnGuarded& on_guarded);
  /// The guard across hosts, and the run's row once it holds it.
  bool claim_cluster(ceph::CephSource& source);
  sync::SyncReport read_and_write(db::PgStore& store, ceph::CephSource& source);
  /// Every way out of a failed run goes through here.
  ExitCode end_failed(const Error& caught);
  /// The one ending: the run record, holder record, runs row, metrics and log line.
  /// `report` is the committed sync's, or null when nothing was committed.
  ExitCode end(ExitCode code, const std::string& message, const sync::SyncReport* report);
  /// The runs row's end, once the row exists; a failure to write it is only logged.
  void record_end_in_history(const sync::SyncReport* report);

  const cli::Config& m_config;
  std::chrono::steady_clock::time_point m_start;
  RunRecord m_run;
  HolderKeeper m_keeper;
  std::unique_ptr<db::RunHistory> m_history;
  bool m_row_recorded = false;
  /// The --history-days this run applies: given, or what the cluster's last run kept.
  int m_history_days = cli::k_default_history_days;
};

ExitCode RunSession::sync(const OnGuarded& on_guarded) {
  std::optional<sync::SyncReport> report;
  try {
    report = connect_and_sync(on_guarded);
  } catch (...) {
    // An exception that is not an rbdsync::Error is a bug (exit 70), but the run still
    // ends as one.
    return end_failed(error_of(std::current_exception()));
  }
  if (!report) {
    return ExitCode::already_running;
  }
  // Committed. Nothing below may turn that into a failure: bookkeeping that fails now
  // is logged, and the run still reports its outcome (exit 0, or 3 when partial).
  m_run.phase = phase_name(Phase::done);
  const ExitCode outcome = end(committed_outcome(*report), "", &*report);
  print_sync_report(*report, m_run.run_id, m_config);
  return outcome;
}

std::optional<sync::SyncReport> RunSession::connect_and_sync(const OnGuarded& on_guarded) {
  // The history's session connects while the store's does: each connection costs
  // round trips and authentication (#18). Should the store fail, its error is the
  // one reported, and the future's destructor first waits for this connection (or its
  // failure: a wrong password or an unreachable server fails both alike).
  std::future<std::unique_ptr<db::RunHistory>> history =
      std::async(std::launch::async, [&config = m_config] {
        return std::make_unique<db::RunHistory>(config.db, config.db_timeout_seconds);
      });
  // PostgreSQL before Ceph: a missing schema, a wrong password or a server out of
  // connections should fail in milliseconds, not after reading the whole cluster.
  db::PgStore store(m_config.db, m_config.db_timeout_seconds);
  // Declared after the store, so it is cleared before the store goes.
  const interrupts::ScopedAction cancel_on_signal([&store] { store.cancel_running_statement(); });
  store.require_current_schema();
  m_history = history.get();
  ceph::CephSource source(ceph_config(m_config));
  if (!claim_cluster(source)) {
    return std::nullopt;
  }
  store.set_run_id(m_run.run_id);
  m_history_days =
      m_config.history_days != cli::k_history_days_unset
          ? m_config.history_days
          : m_history->last_history_days(m_run.fsid).value_or(cli::k_default_history_days);
  store.set_history_days(m_history_days);
  if (on_guarded) {
    on_guarded(m_run.run_id);
  }
  return read_and_write(store, source);
}

bool RunSession::claim_cluster(ceph::CephSource& source) {
  m_run.fsid = source.cluster_fsid();
  // This cluster's advisory lock, held by the history's session until the end of the run.
  if (!m_history->try_claim_cluster(m_run.fsid)) {
    m_keeper.withdraw();
    print_already_running(remote_holder(*m_history, m_run.fsid), m_config);
    return false;
  }
  if (const int abandoned = m_history->mark_abandoned(m_run.fsid); abandoned > 0) {
    spdlog::warn("marked {} earlier run(s) of cluster {} abandoned", abandoned, m_run.fsid);
  }
  m_run.phase = phase_name(Phase::listing);
  m_history->start(m_run);
  m_row_recorded = true;
  return true;
}

sync::SyncReport RunSession::read_and_write(db::PgStore& store, ceph::CephSource& source) {
  ProgressFanOut progress;
  progress.add(&m_keeper);
  DatabaseProgress database_progress(*m_history, m_run.run_id);
  progress.add(&database_progress);
  std::optional<TerminalProgress> terminal;
  if (m_config.format == cli::OutputFormat::plain && !m_config.quiet && ::isatty(STDERR_FILENO)) {
    terminal.emplace(stderr);
    progress.add(&*terminal);
  }
  sync::SyncOptions options;
  options.pool_names = m_config.pools;
  options.check_interrupted = interrupts::check;
  return sync::Syncer().run(source, store, options, &progress);
}

ExitCode RunSession::end_failed(const Error& caught) {
  // A signal makes the call it interrupted fail; report the signal, not that failure.
  const int signal_number = interrupts::received();
  const Error error = signal_number != 0 ? interrupts::interrupted_by(signal_number) : caught;
  end(error.code(), error.what(), nullptr);
  print_error(error, m_config.format, m_row_recorded ? m_run.run_id : std::string());
  return error.code();
}

void RunSession::record_end_in_history(const sync::SyncReport* report) {
  if (!m_row_recorded) {
    return;
  }
  try {
    const std::optional<db::CommittedRun> figures =
        report ? std::optional(committed_run(*report, m_history_days)) : std::nullopt;
    m_history->finish(m_run, figures ? &*figures : nullptr);
  } catch (const std::exception& error) {
    if (report) {
      spdlog::warn("run {} committed, but its history row was not updated: {}", m_run.run_id,
                   error.what());
    } else {
      // The database may be what failed; the next run marks the row abandoned.
      spdlog::warn("could not record the end of run {}: {}", m_run.run_id, error.what());
    }
  }
}

ExitCode RunSession::end(ExitCode code, const std::string& message,
                         const sync::SyncReport* report) {
  m_run.status = run_status_of(code);
  m_run.exit_code = to_int(code);
  m_run.message = message;
  m_run.duration_seconds = seconds_since(m_start);
  m_run.ended_at = static_cast<std::int64_t>(std::time(nullptr));
  if (report) {
    // Committed: the row first, so that while it is written (up to --db-timeout) the
    // holder record still describes the run to `status` and to a busy answer.
    record_end_in_history(report);
    m_keeper.finish(m_run);
  } else {
    // Failed: the database may be what failed, so the holder record first.
    m_keeper.finish(m_run);
    record_end_in_history(report);
  }
  record_metrics(m_config, m_run, report);
  if (report) {
    spdlog::info("run {} of {} {} in {:.3f}s", m_run.run_id, m_run.fsid,
                 run_status_name(m_run.status), report->seconds);
  } else {
    spdlog::info("run {} {} with exit code {}", m_run.run_id, run_status_name(m_run.status),
                 m_run.exit_code);
  }
  return code;
}

}  // namespace

ExitCode sync_holding_lock(const cli::Config& config, const lock::FileLock& lock_file,
                           std::chrono::steady_clock::time_point start,
                           const OnGuarded& on_guarded) {
  RunSession session(config, lock_file, start);
  return session.sync(on_guarded);
}

ExitCode migrate_schema(const cli::Config& config) {
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

}  // namespace rbdsync::core
