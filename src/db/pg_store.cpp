#include "db/pg_store.hpp"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <pqxx/pqxx>

#include "common/error.hpp"
#include "db/inventory_rows.hpp"
#include "db/migrations.hpp"
#include "db/pg_connection.hpp"
#include "db/table_sync.hpp"
#include "db/usage_history.hpp"

namespace rbdsync::db {

namespace {

constexpr const char* k_schema_table = "rbdsync.schema_migrations";

/// Fault injection for the integration tests (as Ceph's own inject options): with
/// RBDSYNC_INJECT_FAULT=sink-exception, adding an image throws a plain std::exception,
/// as a bug would, to prove that every run is finished anyway.
void throw_injected_fault() {
  static const bool inject = [] {
    // Read once; rbd-sync never changes its environment. NOLINTNEXTLINE(concurrency-mt-unsafe)
    const char* fault = std::getenv("RBDSYNC_INJECT_FAULT");
    return fault != nullptr && std::string(fault) == "sink-exception";
  }();
  if (inject) {
    throw std::runtime_error("injected fault: sink-exception");
  }
}

/// One sync's transaction. Until store(), it only turns what the sync adds into COPY
/// lines in memory; the database transaction runs from store() to commit(), so that
/// it is not held open while Ceph is read. pqxx::work rolls back in its destructor
/// unless committed.
class PgTransaction : public sync::SinkTransaction {
 public:
  PgTransaction(pqxx::connection& connection, std::string fsid, std::string name,
                std::string run_id)
      : m_connection(connection),
        m_fsid(std::move(fsid)),
        m_name(std::move(name)),
        m_run_id(std::move(run_id)) {}

  void add_pools(const std::vector<inventory::Pool>& pools) override {
    for (const inventory::Pool& pool : pools) {
      m_pools.add(pool_row(m_fsid, pool));
      m_pool_ids.push_back(pool.id);
    }
  }

  void add_namespace(const inventory::Namespace& ns) override {
    m_namespaces.add(namespace_row(m_fsid, ns));
  }

  void add_image(const inventory::Image& image) override {
    throw_injected_fault();
    // Every row is built before any is added: a value that cannot be stored leaves
    // nothing of the image behind.
    Row image_line = image_row(m_fsid, image);
    const std::vector<Row> snapshot_lines = snapshot_rows(m_fsid, image);
    m_images.add(image_line);
    for (const Row& row : snapshot_lines) {
      m_snapshots.add(row);
    }
  }

  void add_trash(const inventory::TrashEntry& entry) override {
    m_trash.add(trash_row(m_fsid, entry));
  }

  sync::StoreCounts store(const sync::SyncScope& scope,
                          const std::vector<sync::StaleImage>& stale) override {
    if (m_run_id.empty()) {
      throw Error(ExitCode::internal, "storing an inventory without a run id",
                  "report this as a bug: PgStore::set_run_id() comes before begin()");
    }
    return translated("writing the inventory", [&] {
      pqxx::work& work = begin_writing();
      InventoryTables tables(work);
      stage_all(tables, stale);
      write_all(tables, scope);
      const std::size_t unreadable_added = mark_stale(work);
      // With every inventory row final: the figures the console's charts draw.
      const std::size_t usage_rows = record_usage_history(work, m_fsid, m_run_id, m_pool_ids);
      spdlog::debug("usage history: {} pool row(s) added", usage_rows);
      return counts(tables, unreadable_added);
    });
  }

  void commit() override {
    if (!m_work) {
      throw Error(ExitCode::internal, "commit() without store()");
    }
    translated("committing the inventory", [&] { m_work->commit(); });
  }

 private:
  /// The five inventory tables of one store().
  struct InventoryTables {
    explicit InventoryTables(pqxx::work& work)
        : pools(work, pools_table()),
          namespaces(work, namespaces_table()),
          images(work, images_table()),
          snapshots(work, snapshots_table()),
          trash(work, trash_table()) {}

    TableSync pools;
    TableSync namespaces;
    TableSync images;
    TableSync snapshots;
    TableSync trash;
  };

  /// Opens the database transaction, serialised with other writers of the cluster, and
  /// records the cluster.
  pqxx::work& begin_writing() {
    m_work.emplace(m_connection, "rbd-sync");
    pqxx::work& work = *m_work;
    // Serialises writers of the same cluster's rows until this transaction ends, as
    // a second line behind the run's claim. Its own key: the claim ('rbd-sync:' ||
    // fsid) is held by the run-history session, and waiting on it here would wait
    // on ourselves.
    work.exec_params("SELECT pg_advisory_xact_lock(hashtextextended('rbd-sync-write:' || $1, 0))",
                     m_fsid);
    // Every statement below joins a whole table with a whole staged one, which hash
    // joins do in linear time. The planner picks a nested loop instead when it thinks
    // a table is small, and it does exactly when it matters: after the first sync of
    // a large cluster (the table was empty at the last ANALYZE, or was just filled in
    // this transaction). A nested anti join over unindexed staged rows is quadratic:
    // 30,000 images took 190 s instead of ~10 (bench/scale.sh --images 30000).
    work.exec("SET LOCAL enable_nestloop = off");
    // A join the planner must still run as a nested loop (the usage totals' one-row
    // cross joins) now costs over 10^10, far past jit_above_cost, so PostgreSQL compiled
    // and inlined it with LLVM: ~1 s of a 2,000-image no-op sync went to compiling one
    // INSERT of one row. Nothing here runs long enough per row for JIT to pay.
    work.exec("SET LOCAL jit = off");
    // Written only when new or renamed: a no-op sync writes no inventory row.
    work.exec_params(
        "INSERT INTO rbdsync.clusters (fsid, name) VALUES ($1, $2) ON CONFLICT (fsid) DO NOTHING",
        m_fsid, m_name);
    work.exec_params(
        "UPDATE rbdsync.clusters SET name = $2 WHERE fsid = $1 AND name IS DISTINCT FROM $2",
        m_fsid, m_name);
    return work;
  }

  /// COPYs every row added, and the images that could not be read, into staging tables.
  void stage_all(InventoryTables& tables, const std::vector<sync::StaleImage>& stale) {
    tables.pools.stage(m_pools);
    tables.namespaces.stage(m_namespaces);
    tables.images.stage(m_images);
    tables.snapshots.stage(m_snapshots);
    tables.trash.stage(m_trash);
    CopyRows stale_images;
    for (const sync::StaleImage& image : stale) {
      stale_images.add(stale_row(image));
    }
    stage_stale_images(*m_work, stale_image_types(), stale_images);
  }

  /// Upserts the staged rows, then removes the stored rows not staged within `scope`.
  void write_all(InventoryTables& tables, const sync::SyncScope& scope) {
    // Parents first for the foreign keys...
    for (TableSync* table :
         {&tables.pools, &tables.namespaces, &tables.images, &tables.snapshots, &tables.trash}) {
      table->upsert();
    }
    // ...and children first for the deletes, so that each kind counts its own rows
    // instead of losing them to ON DELETE CASCADE.
    DeleteScope delete_scope;
    delete_scope.fsid = m_fsid;
    delete_scope.all_pools = scope.all_pools;
    delete_scope.pool_ids = m_pool_ids;
    delete_scope.kept_pool_ids = scope.unread_pool_ids;
    for (TableSync* table :
         {&tables.snapshots, &tables.images, &tables.namespaces, &tables.trash}) {
      table->remove(delete_scope);
    }
    // A sync of named pools cannot tell a deleted pool from one renamed away, so
    // only a sync of every pool removes pools.
    if (scope.all_pools) {
      tables.pools.remove(delete_scope);
    }
  }

  /// Marks the kept rows of unreadable images stale, and gives an image unreadable on
  /// its very first sync a row. Returns how many such rows were added.
  std::size_t mark_stale(pqxx::work& work) {
    // Kept rows of unreadable images say so; the same error again writes nothing.
    work.exec(
        "UPDATE rbdsync.images AS t SET stale_error = x.error, "
        "stale_since = coalesce(t.stale_since, now()) FROM stale_images AS x "
        "WHERE t.fsid = " +
        work.quote(m_fsid) +
        " AND t.pool_id = x.pool_id AND t.namespace = x.namespace AND t.image_id = x.image_id "
        "AND t.stale_error IS DISTINCT FROM x.error");
    // An image unreadable on its very first sync still gets a row: what the listing
    // knew, and why it could not be read, so that the console shows it. Once per key,
    // whatever the listing held (format 1 images all have the empty id).
    return work
        .exec(
            "INSERT INTO rbdsync.images (fsid, pool_id, namespace, image_id, name, "
            "name_bytes, used_unknown_reason, stale_error, stale_since) "
            "SELECT DISTINCT ON (x.pool_id, x.namespace, x.image_id) " +
            work.quote(m_fsid) +
            ", x.pool_id, x.namespace, x.image_id, x.name, x.name_bytes, 'not read yet', "
            "x.error, now() FROM stale_images AS x WHERE NOT EXISTS (SELECT 1 FROM "
            "rbdsync.images AS t WHERE t.fsid = " +
            work.quote(m_fsid) +
            " AND t.pool_id = x.pool_id AND t.namespace = x.namespace AND "
            "t.image_id = x.image_id)")
        .affected_rows();
  }

  static sync::StoreCounts counts(const InventoryTables& tables, std::size_t unreadable_added) {
    sync::StoreCounts counts;
    counts.pools = tables.pools.counts();
    counts.namespaces = tables.namespaces.counts();
    counts.images = tables.images.counts();
    counts.images.added += unreadable_added;
    counts.snapshots = tables.snapshots.counts();
    counts.trash = tables.trash.counts();
    return counts;
  }

  pqxx::connection& m_connection;
  std::string m_fsid;
  std::string m_name;
  std::string m_run_id;
  std::vector<std::int64_t> m_pool_ids;
  CopyRows m_pools;
  CopyRows m_namespaces;
  CopyRows m_images;
  CopyRows m_snapshots;
  CopyRows m_trash;
  std::optional<pqxx::work> m_work;
};

}  // namespace

struct PgStore::Connection {
  std::unique_ptr<pqxx::connection> owned;
  pqxx::connection& connection;

  explicit Connection(std::unique_ptr<pqxx::connection> opened)
      : owned(std::move(opened)), connection(*owned) {}
};

PgStore::PgStore(const std::string& conninfo, int statement_timeout_seconds)
    : m_connection(
          std::make_unique<Connection>(open_connection(conninfo, statement_timeout_seconds))) {}

void PgStore::cancel_running_statement() noexcept {
  try {
    // PQcancel reads only what was fixed when the connection was made, so it may run
    // on another thread while this one waits for the statement (libpq's own advice).
    m_connection->connection.cancel_query();
  } catch (const std::exception& e) {
    spdlog::debug("cancelling the running statement failed: {}", e.what());
  }
}

PgStore::~PgStore() = default;

int PgStore::schema_version() {
  return translated("reading the schema version", [&] {
    pqxx::work work(m_connection->connection, "rbd-sync schema version");
    const auto exists = work.exec_params1("SELECT to_regclass($1) IS NOT NULL", k_schema_table);
    if (!exists[0].as<bool>()) {
      return 0;
    }
    return work.exec1("SELECT coalesce(max(version), 0) FROM rbdsync.schema_migrations")[0]
        .as<int>();
  });
}

void PgStore::require_current_schema() {
  const int found = schema_version();
  const int wanted = latest_schema_version();
  if (found < wanted) {
    throw Error(ExitCode::config,
                "database schema is at version " + std::to_string(found) +
                    ", this rbd-sync needs " + std::to_string(wanted),
                "run 'rbd-sync migrate' with the same --db");
  }
  if (found > wanted) {
    throw Error(ExitCode::config,
                "database schema version " + std::to_string(found) +
                    " is newer than this rbd-sync (" + std::to_string(wanted) + ")",
                "upgrade rbd-sync to the version that migrated this database");
  }
}

std::vector<int> PgStore::migrate() {
  return translated("migrating the schema", [&] {
    pqxx::work work(m_connection->connection, "rbd-sync migrate");
    // Two migrate runs at once would both see the old version; the second waits here.
    work.exec("SELECT pg_advisory_xact_lock(hashtextextended('rbd-sync:migrate', 0))");
    work.exec("CREATE SCHEMA IF NOT EXISTS rbdsync");
    work.exec(
        "CREATE TABLE IF NOT EXISTS rbdsync.schema_migrations ("
        "version integer PRIMARY KEY, name text NOT NULL, "
        "applied_at timestamptz NOT NULL DEFAULT now())");
    const int current =
        work.exec1("SELECT coalesce(max(version), 0) FROM rbdsync.schema_migrations")[0].as<int>();
    if (current > latest_schema_version()) {
      throw Error(ExitCode::config,
                  "database schema version " + std::to_string(current) +
                      " is newer than this rbd-sync (" + std::to_string(latest_schema_version()) +
                      ")",
                  "upgrade rbd-sync to the version that migrated this database");
    }
    std::vector<int> applied;
    for (const Migration& migration : migrations()) {
      if (migration.version <= current) {
        continue;
      }
      spdlog::debug("applying migration {:03}_{}", migration.version, migration.name);
      work.exec(migration.sql);
      work.exec_params("INSERT INTO rbdsync.schema_migrations (version, name) VALUES ($1, $2)",
                       migration.version, std::string(migration.name));
      applied.push_back(migration.version);
    }
    work.commit();
    return applied;
  });
}

void PgStore::set_run_id(const std::string& run_id) {
  m_run_id = run_id;
}

std::unique_ptr<sync::SinkTransaction> PgStore::begin(const std::string& fsid,
                                                      const std::string& name) {
  return std::make_unique<PgTransaction>(m_connection->connection, fsid, name, m_run_id);
}

}  // namespace rbdsync::db
