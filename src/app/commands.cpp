#include "app/commands.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <string>

#include <spdlog/spdlog.h>

#include "app/holder_keeper.hpp"
#include "app/output.hpp"
#include "ceph/ceph_source.hpp"
#include "common/interrupts.hpp"
#include "common/uuid.hpp"
#include "db/migrations.hpp"
#include "db/pg_store.hpp"
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
BusyHolder remote_holder(db::PgStore& store, const std::string& fsid) {
  BusyHolder holder;
  holder.guard = "cluster " + fsid;
  if (const auto row = store.running_run(fsid)) {
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
  row.added = static_cast<std::int64_t>(report.added);
  row.changed = static_cast<std::int64_t>(report.changed);
  row.removed = static_cast<std::int64_t>(report.removed);
  row.skipped = static_cast<std::int64_t>(report.skipped);
  row.done = row.images + row.skipped;
  row.total = row.done;
}

/// The Error that interrupts::check() throws, for a signal that arrived meanwhile.
Error interrupted_error() {
  try {
    interrupts::check();
  } catch (const Error& error) {
    return error;
  }
  return Error(ExitCode::internal, "no interruption");
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

ExitCode run_sync(const cli::Config& config) {
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
  bool row_recorded = false;
  std::unique_ptr<db::PgStore> store;
  try {
    // PostgreSQL before Ceph: a missing schema or a wrong password should fail in
    // milliseconds, not after reading the whole cluster.
    store = std::make_unique<db::PgStore>(config.db, config.db_timeout_seconds);
    db::PgStore* const cancellable = store.get();
    // Declared after the store, so it is cleared before the store goes.
    const interrupts::ScopedAction cancel_on_signal(
        [cancellable] { cancellable->cancel_running_statement(); });
    store->require_current_schema();

    ceph::CephConfig ceph_config;
    ceph_config.conf_path = config.ceph_conf;
    ceph_config.client_name = config.ceph_client;
    ceph_config.keyring_path = config.keyring;
    ceph_config.timeout_seconds = config.ceph_timeout_seconds;
    ceph::CephSource source(ceph_config);
    const std::string fsid = source.cluster_fsid();

    // The guard across hosts: this cluster's advisory lock, held by our session until
    // the store is destroyed.
    if (!store->try_claim_cluster(fsid)) {
      keeper.withdraw();
      print_already_running(remote_holder(*store, fsid), config);
      return ExitCode::already_running;
    }
    if (const int abandoned = store->mark_abandoned_runs(fsid); abandoned > 0) {
      spdlog::warn("marked {} earlier run(s) of cluster {} abandoned", abandoned, fsid);
    }
    row.run_id = me.run_id;
    row.fsid = fsid;
    row.trigger = me.trigger;
    row.host = me.host;
    row.pid = me.pid;
    row.started_at = me.started_at;
    row.phase = "listing";
    store->record_run_start(row);
    row_recorded = true;

    sync::SyncOptions options;
    options.pool_names = config.pools;
    options.check_interrupted = interrupts::check;
    const sync::SyncReport report = sync::Syncer().run(source, *store, options, &keeper);

    row.status = "succeeded";
    row.phase = "done";
    fill_counts(row, report);
    row.duration_seconds = seconds_since(start);
    store->record_run_end(row);
    keeper.finish("succeeded", to_int(ExitCode::ok), "");
    spdlog::info("run {} of {} succeeded in {:.3f}s", me.run_id, fsid, report.seconds);
    print_sync_report(report, me.run_id, config);
    return ExitCode::ok;
  } catch (const Error& caught) {
    // A signal makes the call it interrupted fail; report the signal, not that failure.
    const bool interrupted = interrupts::received() != 0;
    const Error error = interrupted ? interrupted_error() : caught;
    keeper.finish(interrupted ? "interrupted" : "failed", to_int(error.code()), error.what());
    if (row_recorded) {
      row.status = interrupted ? "interrupted" : "failed";
      row.exit_code = to_int(error.code());
      row.error = error.what();
      row.duration_seconds = seconds_since(start);
      try {
        store->record_run_end(row);
      } catch (const Error& also) {
        // The connection may be what failed; the next run marks the row abandoned.
        spdlog::warn("could not record the failure of run {}: {}", row.run_id, also.what());
      }
    }
    throw error;
  }
}

ExitCode run_migrate(const cli::Config& config) {
  db::PgStore store(config.db);
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
