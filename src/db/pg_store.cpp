#include "db/pg_store.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <pqxx/pqxx>

#include "common/error.hpp"
#include "common/text.hpp"
#include "db/history.hpp"
#include "db/migrations.hpp"
#include "db/pg_connection.hpp"
#include "db/rows/inventory_rows.hpp"
#include "db/rows/staging.hpp"
#include "db/rows/table_sync.hpp"
#include "sync/usage_marks.hpp"

namespace rbdsync::db {

namespace {

constexpr const char* k_schema_table = "rbdsync.schema_migrations";

/// Fault injection for the integration tests (as Ceph's own inject options): with
/// RBDSYNC_INJECT_FAULT=sink-exception, adding an image throws a plain std::exception,
/// as a bug would, to prove that every run is finished anyway. Compiled only into a
/// build with the tests (RBDSYNC_TEST_HOOKS): a release core does not read the variable.
void throw_injected_fault() {
#ifdef RBDSYNC_TEST_HOOKS
  static const bool inject = [] {
    // Read once; rbd-sync never changes its environment. NOLINTNEXTLINE(concurrency-mt-unsafe)
    const char* fault = std::getenv("RBDSYNC_INJECT_FAULT");
    return fault != nullptr && std::string(fault) == "sink-exception";
  }();
  if (inject) {
    throw std::runtime_error("injected fault: sink-exception");
  }
#endif
}

/// The schema version recorded in the database; 0 when it was never migrated.
int current_version(pqxx::work& work) {
  const auto exists = exec_one_row(
      work, "SELECT pg_catalog.to_regclass($1::pg_catalog.text) IS NOT NULL", k_schema_table);
  if (!exists[0].as<bool>()) {
    return 0;
  }
  return exec_one_row(
             work, "SELECT coalesce(pg_catalog.max(version), 0) FROM rbdsync.schema_migrations")[0]
      .as<int>();
}

/// The error of a database migrated by a newer rbd-sync than this one (to `found`).
Error newer_schema(int found) {
  return {ExitCode::config,
          "database schema version " + std::to_string(found) + " is newer than this rbd-sync (" +
              std::to_string(latest_schema_version()) + ")",
          "upgrade rbd-sync to the version that migrated this database"};
}

/// Throws Error(config) when schema rbdsync exists and belongs to another role than the
/// one migrating. Its owner may drop, replace or add objects in it (a table the sync
/// writes, a view the console reads): migrating into it would hand that role what the
/// migration makes. Membership of the owner role is not enough: the schema must be ours.
void refuse_schema_of_another_role(pqxx::work& work) {
  const pqxx::result owner = work.exec(
      "SELECT pg_catalog.pg_get_userbyid(n.nspowner), CURRENT_USER "
      "FROM pg_catalog.pg_namespace AS n WHERE n.nspname = 'rbdsync'::pg_catalog.name "
      "AND n.nspowner <> "
      "(SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname = CURRENT_USER)");
  if (owner.empty()) {
    return;
  }
  const auto owner_name = owner[0][0].as<std::string>();
  const auto me = owner[0][1].as<std::string>();
  throw Error(ExitCode::config,
              "schema rbdsync belongs to role '" + display_text(owner_name, Controls::escape) +
                  "', not to '" + display_text(me, Controls::escape) + "', which migrates it",
              "migrate as the schema's owner, or have a superuser make '" +
                  display_text(me, Controls::escape) +
                  "' its owner (ALTER SCHEMA rbdsync OWNER TO ...) after checking what the "
                  "other role put in it");
}

/// The staging tables of one sync, created empty in its transaction, in StagedKind order.
std::array<StagingTable, k_staged_kinds> create_staging_tables(pqxx::work& work) {
  // The session idles in this transaction between batches for as long as Ceph is read
  // (long, for a large cluster): a server's idle_in_transaction_session_timeout must
  // not end it. Each statement stays bounded by statement_timeout (--db-timeout).
  work.exec("SET LOCAL idle_in_transaction_session_timeout = 0");
  // Nor PostgreSQL 17's transaction_timeout, which would end any sync longer than it.
  work.exec(
      "SELECT pg_catalog.set_config('transaction_timeout', '0', true) FROM pg_catalog.pg_settings "
      "WHERE name = 'transaction_timeout'");
  std::array<StagingTable, k_staged_kinds> tables;
  const std::array<const Table*, k_staged_kinds> kinds{
      &pools_table(), &namespaces_table(), &images_table(), &snapshots_table(), &trash_table()};
  for (std::size_t k = 0; k < k_staged_kinds; ++k) {
    tables[k] = StagingTable{staging_name(*kinds[k]), staging_types(*kinds[k])};
    create_staging_table(work, tables[k].name, tables[k].columns);
  }
  create_staging_table(work, k_stale_images_table, stale_image_types());
  return tables;
}

/// The marks of the cluster's stored images whose usage was read from their object maps
/// (sync/usage_marks.hpp), as `work` sees them. Through a cursor, a chunk at a time: the
/// whole result at once in libpq would take far more memory than the marks made from
/// it. Stops early (the marks then incomplete) once `abandoned` says the sync is being
/// given up: a large cluster's load is long enough for that to matter.
sync::UsageMarks load_usage_marks(pqxx::work& work, const std::string& fsid,
                                  const RowStager::Abandoned& abandoned) {
  constexpr int k_chunk_rows = 20000;
  sync::UsageMarks marks;
  work.exec(
      "DECLARE usage_marks NO SCROLL CURSOR FOR SELECT pool_id, namespace, image_id, usage_mark "
      "FROM rbdsync.images WHERE fsid = " +
      work.quote(fsid) + " AND usage_mark IS NOT NULL");
  const std::string fetch = "FETCH " + std::to_string(k_chunk_rows) + " FROM usage_marks";
  for (;;) {
    const pqxx::result chunk = work.exec(fetch);
    for (const auto& row : chunk) {
      // Stored as the signed bigint with the same 64 bits (inventory_rows.cpp).
      marks.add(row[0].as<std::int64_t>(), row[1].as<std::string>(), row[2].as<std::string>(),
                static_cast<std::uint64_t>(row[3].as<std::int64_t>()));
    }
    // result::size_type is unsigned in libpqxx 6 and int from 7.
    if (static_cast<std::size_t>(chunk.size()) < static_cast<std::size_t>(k_chunk_rows)) {
      break;
    }
    if (abandoned()) {
      return marks;  // the transaction rolls back, the cursor with it
    }
  }
  work.exec("CLOSE usage_marks");
  marks.seal();
  spdlog::debug("usage marks: {} stored image(s) may keep their usage", marks.size());
  return marks;
}

/// One sync's transaction, open from begin() to commit() or destruction. Rows go to its
/// temporary staging tables as they are added, a batch at a time, so memory holds what
/// is in flight and not the inventory; no other session sees them, and store() turns
/// them into the inventory in a few set-based statements. pqxx::work rolls back in its
/// destructor unless committed, and the staging tables go with it.
class PgTransaction : public sync::SinkTransaction {
 public:
  PgTransaction(PgConnection& connection, std::string fsid, std::string name, std::string run_id,
                int history_days, std::size_t batch_bytes, sync::UsageMarksWanted marks)
      : m_fsid(std::move(fsid)),
        m_name(std::move(name)),
        m_run_id(std::move(run_id)),
        m_history_days(history_days),
        m_connection(connection),
        m_work(connection.pqxx(), "rbd-sync"),
        m_stager(connection, m_work, create_staging_tables(m_work), batch_bytes,
                 marks_loader(marks)) {}

  const sync::UsageMarks& usage_marks() override {
    // Loaded by the stager's writer while the sync listed the pools, so that the
    // listing hides their load; written before the job counted done.
    m_stager.wait_for_first_job();
    return m_usage_marks;
  }

  void add_pools(const std::vector<inventory::Pool>& pools) override {
    for (const inventory::Pool& pool : pools) {
      m_stager.add(StagedKind::pools, pool_row(m_fsid, pool));
      m_pool_ids.push_back(pool.id);
    }
  }

  void add_namespace(const inventory::Namespace& ns) override {
    m_stager.add(StagedKind::namespaces, namespace_row(m_fsid, ns));
  }

  void add_image(const inventory::Image& image) override {
    throw_injected_fault();
    // Every row is built before any is added: a value that cannot be stored leaves
    // nothing of the image behind.
    const Row image_line = image_row(m_fsid, image);
    const std::vector<Row> snapshot_lines = snapshot_rows(m_fsid, image);
    m_stager.add(StagedKind::images, image_line);
    for (const Row& row : snapshot_lines) {
      m_stager.add(StagedKind::snapshots, row);
    }
  }

  void add_trash(const inventory::TrashEntry& entry) override {
    m_stager.add(StagedKind::trash, trash_row(m_fsid, entry));
  }

  sync::StoreCounts store(const sync::SyncScope& scope,
                          const std::vector<sync::StaleImage>& stale) override {
    if (m_run_id.empty()) {
      throw Error(ExitCode::internal, "storing an inventory without a run id",
                  "report this as a bug: PgStore::set_run_id() comes before begin()");
    }
    return translated("writing the inventory", [&] {
      m_stager.finish();
      begin_writing();
      InventoryTables tables(m_work, m_stager);
      stage_stale_images(stale);
      write_all(tables, scope);
      const std::size_t unreadable_added = mark_stale();
      // With every inventory row final: the figures the console's charts draw.
      const std::size_t usage_rows = record_usage_history(m_work, m_fsid, m_run_id, m_pool_ids);
      spdlog::debug("usage history: {} pool row(s) added", usage_rows);
      const PrunedRows pruned = prune_history(m_work, m_fsid, m_run_id, m_history_days);
      spdlog::info(
          "history older than {} days pruned: {} run(s), {} pool and {} cluster usage row(s)",
          m_history_days, pruned.runs, pruned.pool_usage, pruned.cluster_usage);
      m_stored = true;
      return counts(tables, unreadable_added);
    });
  }

  void commit() override {
    if (!m_stored) {
      throw Error(ExitCode::internal, "commit() without store()");
    }
    translated("committing the inventory", [&] { m_work.commit(); });
  }

 private:
  /// The stager's first job: the usage marks, when wanted, read in the transaction
  /// before any row is staged.
  RowStager::FirstJob marks_loader(sync::UsageMarksWanted marks) {
    if (marks == sync::UsageMarksWanted::no) {
      return {};
    }
    return [this](pqxx::work& work, const RowStager::Abandoned& abandoned) {
      m_usage_marks = translated("reading the usage marks",
                                 [&] { return load_usage_marks(work, m_fsid, abandoned); });
    };
  }

  /// The five inventory tables of one store(), their rows staged.
  struct InventoryTables {
    InventoryTables(pqxx::work& work, const RowStager& stager)
        : pools(work, pools_table(), stager.staged(StagedKind::pools)),
          namespaces(work, namespaces_table(), stager.staged(StagedKind::namespaces)),
          images(work, images_table(), stager.staged(StagedKind::images)),
          snapshots(work, snapshots_table(), stager.staged(StagedKind::snapshots)),
          trash(work, trash_table(), stager.staged(StagedKind::trash)) {
      for (TableSync* table : {&pools, &namespaces, &images, &snapshots, &trash}) {
        table->analyze_staged();
      }
      // An image moving to or from the trash while the sync read it is stored as the
      // image it was read as (sync::SinkTransaction::add_trash).
      const std::size_t unstaged = trash.unstage_keys_staged_in(images);
      if (unstaged > 0) {
        spdlog::debug("{} trash entr{} also read as images: stored as images", unstaged,
                      unstaged == 1 ? "y" : "ies");
      }
    }

    TableSync pools;
    TableSync namespaces;
    TableSync images;
    TableSync snapshots;
    TableSync trash;
  };

  /// Starts the set-based part: serialised with other writers of the cluster, planned
  /// for whole-table joins, and with the cluster recorded.
  void begin_writing() {
    // Serialises writers of the same cluster's rows until this transaction ends, as
    // a second line behind the run's claim. Its own key: the claim ('rbd-sync:' ||
    // fsid) is held by the run-history session, and waiting on it here would wait
    // on ourselves. Taken here and not at begin(): until now the transaction touched
    // only its own temporary tables.
    exec(m_work,
         "SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended("
         "'rbd-sync-write:'::pg_catalog.text || $1::pg_catalog.text, 0::pg_catalog.int8))",
         m_fsid);
    // Every statement below joins a whole table with a whole staged one, which hash
    // joins do in linear time. The planner picks a nested loop instead when it thinks
    // a table is small, and it does exactly when it matters: after the first sync of
    // a large cluster (the table was empty at the last ANALYZE, or was just filled in
    // this transaction). A nested anti join over unindexed staged rows is quadratic
    // (docs/performance.md, PostgreSQL; bench/scale.sh shows it).
    m_work.exec("SET LOCAL enable_nestloop = off");
    // Hash joins of a million rows on each side: the server's default 4 MB makes them
    // spill in many batches. Raised for this transaction only, never lowered. And no
    // JIT: with nested loops off, a plan that still needs one costs 1e10, far above
    // jit_above_cost, and compiling it is paid for statements that run once, which
    // never earn it back (it showed in the cluster_usage_history INSERT).
    m_work.exec(
        "SELECT pg_catalog.set_config('work_mem', '64MB', true) FROM pg_catalog.pg_settings "
        "WHERE name = 'work_mem' AND setting::bigint < 65536");
    m_work.exec("SET LOCAL jit = off");
    // Written only when new or renamed: a no-op sync writes no inventory row.
    exec(m_work,
         "INSERT INTO rbdsync.clusters (fsid, name) VALUES ($1, $2) ON CONFLICT (fsid) DO NOTHING",
         m_fsid, m_name);
    exec(m_work,
         "UPDATE rbdsync.clusters SET name = $2 WHERE fsid = $1 AND name IS DISTINCT FROM $2",
         m_fsid, m_name);
  }

  /// COPYs the images that could not be read into their staging table: as many as
  /// reads failed, so one batch.
  void stage_stale_images(const std::vector<sync::StaleImage>& stale) {
    if (stale.empty()) {
      return;
    }
    CopyBatch batch;
    for (const sync::StaleImage& image : stale) {
      batch.add(stale_row(image));
    }
    copy_into(m_connection, m_work, k_stale_images_table, stale_image_types(), batch.lines());
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
  std::size_t mark_stale() {
    // Kept rows of unreadable images say so; the same error again writes nothing.
    m_work.exec(
        "UPDATE rbdsync.images AS t SET stale_error = x.error, "
        "stale_since = coalesce(t.stale_since, pg_catalog.now()) FROM " +
        std::string(k_stale_images_table) + " AS x WHERE t.fsid = " + m_work.quote(m_fsid) +
        " AND t.pool_id = x.pool_id AND t.namespace = x.namespace AND t.image_id = x.image_id "
        "AND t.stale_error IS DISTINCT FROM x.error");
    // An image unreadable on its very first sync still gets a row: what the listing
    // knew, and why it could not be read, so that the console shows it. Once per key,
    // whatever the listing held (format 1 images all have the empty id).
    return m_work
        .exec(
            "INSERT INTO rbdsync.images (fsid, pool_id, namespace, image_id, name, "
            "name_bytes, used_unknown_reason, stale_error, stale_since) "
            "SELECT DISTINCT ON (x.pool_id, x.namespace, x.image_id) " +
            m_work.quote(m_fsid) +
            ", x.pool_id, x.namespace, x.image_id, x.name, x.name_bytes, 'not read yet', "
            "x.error, pg_catalog.now() FROM " +
            k_stale_images_table +
            " AS x WHERE NOT EXISTS (SELECT 1 FROM "
            "rbdsync.images AS t WHERE t.fsid = " +
            m_work.quote(m_fsid) +
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

  std::string m_fsid;
  std::string m_name;
  std::string m_run_id;
  int m_history_days;  ///< 0: keep all history
  std::vector<std::int64_t> m_pool_ids;
  PgConnection& m_connection;
  pqxx::work m_work;
  // Before the stager: its writer fills them in its first job.
  sync::UsageMarks m_usage_marks;
  // After m_work: destroyed first, while the transaction is still there.
  RowStager m_stager;
  bool m_stored = false;
};

}  // namespace

struct PgStore::Connection {
  std::unique_ptr<PgConnection> owned;
  PgConnection& connection;

  explicit Connection(std::unique_ptr<PgConnection> opened)
      : owned(std::move(opened)), connection(*owned) {}
};

PgStore::PgStore(const std::string& conninfo, int statement_timeout_seconds)
    : m_connection(
          std::make_unique<Connection>(open_connection(conninfo, statement_timeout_seconds))),
      m_batch_bytes(k_batch_bytes) {
  translated("preparing the session", [&] {
    // The staging tables live in the session's local buffers: at a million images, far
    // more than the default 8 MB, which would push them to temporary files block by block.
    // Settable only before the session's first temporary table, hence here. A ceiling,
    // allocated as used; never lowered.
    pqxx::nontransaction work(m_connection->connection.pqxx(), "rbd-sync session");
    work.exec(
        "SELECT pg_catalog.set_config('temp_buffers', '64MB', false) FROM pg_catalog.pg_settings "
        "WHERE name = 'temp_buffers' AND setting::bigint < 8192");
  });
}

void PgStore::cancel_running_statement() noexcept {
  try {
    // PQcancel reads only what was fixed when the connection was made, so it may run
    // on another thread while this one waits for the statement (libpq's own advice).
    m_connection->connection.pqxx().cancel_query();
  } catch (const std::exception& e) {
    spdlog::debug("cancelling the running statement failed: {}", e.what());
  }
}

PgStore::~PgStore() = default;

int PgStore::schema_version() {
  return translated("reading the schema version", [&] {
    pqxx::work work(m_connection->connection.pqxx(), "rbd-sync schema version");
    return current_version(work);
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
    throw newer_schema(found);
  }
}

std::vector<int> PgStore::migrate() {
  return translated("migrating the schema", [&] {
    pqxx::work work(m_connection->connection.pqxx(), "rbd-sync migrate");
    // Two migrate runs at once would both see the old version; the second waits here.
    work.exec(
        "SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended("
        "'rbd-sync:migrate'::pg_catalog.text, 0::pg_catalog.int8))");
    // A current schema needs nothing, not even its owner: the units run `migrate` before
    // every sync, with the writer's role unless the admin gave them the owner's.
    if (current_version(work) == latest_schema_version()) {
      work.commit();
      return std::vector<int>{};
    }
    refuse_schema_of_another_role(work);
    // CREATE SCHEMA IF NOT EXISTS would ask for CREATE on the database even when the
    // schema is there: sql/roles.sql makes it the owner's and grants no more.
    if (!exec_one_row(work, "SELECT pg_catalog.to_regnamespace('rbdsync') IS NOT NULL")[0]
             .as<bool>()) {
      work.exec("CREATE SCHEMA rbdsync");
    }
    work.exec(
        "CREATE TABLE IF NOT EXISTS rbdsync.schema_migrations ("
        "version integer PRIMARY KEY, name text NOT NULL, "
        "applied_at timestamptz NOT NULL DEFAULT pg_catalog.now())");
    const int current = current_version(work);
    if (current > latest_schema_version()) {
      throw newer_schema(current);
    }
    std::vector<int> applied;
    for (const Migration& migration : migrations()) {
      if (migration.version <= current) {
        continue;
      }
      spdlog::debug("applying migration {:03}_{}", migration.version, migration.name);
      work.exec(migration.sql);
      exec(work, "INSERT INTO rbdsync.schema_migrations (version, name) VALUES ($1, $2)",
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

void PgStore::set_history_days(int days) {
  m_history_days = days;
}

void PgStore::set_batch_bytes(std::size_t bytes) {
  m_batch_bytes = bytes;
}

std::unique_ptr<sync::SinkTransaction> PgStore::begin(const std::string& fsid,
                                                      const std::string& name,
                                                      sync::UsageMarksWanted marks) {
  return translated("starting the inventory transaction", [&] {
    return std::unique_ptr<sync::SinkTransaction>(std::make_unique<PgTransaction>(
        m_connection->connection, fsid, name, m_run_id, m_history_days, m_batch_bytes, marks));
  });
}

}  // namespace rbdsync::db
