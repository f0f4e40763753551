#include "app/commands.hpp"

#include <string>

#include <spdlog/spdlog.h>

#include "app/output.hpp"
#include "ceph/ceph_source.hpp"
#include "db/migrations.hpp"
#include "db/pg_store.hpp"
#include "lock/flock_guard.hpp"
#include "sync/syncer.hpp"

namespace rbdsync::app {

ExitCode run_sync(const cli::Config& config) {
  // The guard comes first: a busy guard must answer at once, without touching Ceph
  // or PostgreSQL.
  const auto guard = lock::FlockGuard::try_acquire(config.lock_file);
  if (!guard) {
    print_already_running(config.lock_file, config);
    return ExitCode::already_running;
  }
  spdlog::debug("holding {}", guard->path());

  // PostgreSQL before Ceph: a missing schema or a wrong password should fail in
  // milliseconds, not after reading the whole cluster.
  db::PgStore store(config.db);
  store.require_current_schema();

  ceph::CephConfig ceph_config;
  ceph_config.conf_path = config.ceph_conf;
  ceph_config.client_name = config.ceph_client;
  ceph_config.keyring_path = config.keyring;
  ceph_config.timeout_seconds = config.ceph_timeout_seconds;
  ceph::CephSource source(ceph_config);

  sync::SyncOptions options;
  options.pool_names = config.pools;
  const sync::SyncReport report = sync::Syncer().run(source, store, options);
  spdlog::info("sync of {} finished in {:.3f}s", report.fsid, report.seconds);
  print_sync_report(report, config);
  return ExitCode::ok;
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

}  // namespace rbdsync::app
