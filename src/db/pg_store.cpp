#include "db/pg_store.hpp"

#include <limits>
#include <utility>

#include <spdlog/spdlog.h>
#include <pqxx/pqxx>

#include "common/error.hpp"
#include "db/migrations.hpp"
#include "db/pg_connection.hpp"
#include "inventory/features.hpp"

namespace rbdsync::db {

using inventory::ClusterInventory;
using inventory::Image;
using inventory::ImageKey;
using inventory::Pool;

namespace {
std::int64_t to_bigint(std::uint64_t value, const std::string& what) {
  if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw Error(ExitCode::data, what + " (" + std::to_string(value) + ") does not fit a bigint",
                "report this image to the Ceph administrators; it cannot be stored");
  }
  return static_cast<std::int64_t>(value);
}

// text[] literal for the feature names; they are [a-z0-9-] only, so no quoting needed.
std::string feature_array(std::uint64_t features) {
  std::string literal = "{";
  for (const std::string& name : inventory::feature_names(features)) {
    if (literal.size() > 1) {
      literal += ',';
    }
    literal += name;
  }
  return literal + "}";
}

constexpr const char* k_schema_table = "rbdsync.schema_migrations";

void prepare_statements(pqxx::connection& connection) {
  connection.prepare("upsert_cluster",
                     "INSERT INTO rbdsync.clusters (fsid) VALUES ($1) "
                     "ON CONFLICT (fsid) DO UPDATE SET last_synced_at = now()");
  connection.prepare("upsert_pool",
                     "INSERT INTO rbdsync.pools (fsid, pool_id, name) VALUES ($1, $2, $3) "
                     "ON CONFLICT (fsid, pool_id) DO UPDATE SET name = EXCLUDED.name, "
                     "updated_at = now()");
  connection.prepare("delete_pool", "DELETE FROM rbdsync.pools WHERE fsid = $1 AND pool_id = $2");
  connection.prepare("insert_image",
                     "INSERT INTO rbdsync.images (fsid, pool_id, namespace, image_id, name, "
                     "size_bytes, object_size, features, feature_names) "
                     "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)");
  connection.prepare("update_image",
                     "UPDATE rbdsync.images SET name = $5, size_bytes = $6, object_size = $7, "
                     "features = $8, feature_names = $9, updated_at = now() "
                     "WHERE fsid = $1 AND pool_id = $2 AND namespace = $3 AND image_id = $4");
  connection.prepare("delete_image",
                     "DELETE FROM rbdsync.images "
                     "WHERE fsid = $1 AND pool_id = $2 AND namespace = $3 AND image_id = $4");
}

/// One sync's transaction. pqxx::work rolls back in its destructor unless committed.
class PgTransaction : public sync::SinkTransaction {
 public:
  explicit PgTransaction(pqxx::connection& connection) : m_work(connection, "rbd-sync") {}

  ClusterInventory load(const std::string& fsid) override {
    return translated("reading the stored inventory", [&] {
      // Serialises writers of the same cluster's rows until this transaction ends, as
      // a second line behind the run's claim. Its own key: the claim ('rbd-sync:' ||
      // fsid) is held by the run-history session, and waiting on it here would wait
      // on ourselves.
      m_work.exec_params(
          "SELECT pg_advisory_xact_lock(hashtextextended('rbd-sync-write:' || $1, 0))", fsid);
      ClusterInventory stored;
      stored.fsid = fsid;
      for (const auto& row :
           m_work.exec_params("SELECT pool_id, name FROM rbdsync.pools WHERE fsid = $1", fsid)) {
        stored.pools.push_back(Pool{row[0].as<std::int64_t>(), row[1].as<std::string>()});
      }
      for (const auto& row : m_work.exec_params(
               "SELECT pool_id, namespace, image_id, name, size_bytes, object_size, features "
               "FROM rbdsync.images WHERE fsid = $1",
               fsid)) {
        Image image;
        image.key =
            ImageKey{row[0].as<std::int64_t>(), row[1].as<std::string>(), row[2].as<std::string>()};
        image.name = row[3].as<std::string>();
        image.size_bytes = static_cast<std::uint64_t>(row[4].as<std::int64_t>());
        image.object_size = static_cast<std::uint64_t>(row[5].as<std::int64_t>());
        image.features = static_cast<std::uint64_t>(row[6].as<std::int64_t>());
        stored.images.push_back(std::move(image));
      }
      return stored;
    });
  }

  void apply(const sync::ChangeSet& changes) override {
    translated("writing the inventory", [&] {
      const std::string& fsid = changes.fsid;
      m_work.exec_prepared("upsert_cluster", fsid);
      for (const Pool& pool : changes.upserted_pools) {
        m_work.exec_prepared("upsert_pool", fsid, pool.id, pool.name);
      }
      // Images first: removed pools' images are listed in removed_images too.
      for (const ImageKey& key : changes.removed_images) {
        m_work.exec_prepared("delete_image", fsid, key.pool_id, key.pool_namespace, key.image_id);
      }
      for (const std::int64_t pool_id : changes.removed_pools) {
        m_work.exec_prepared("delete_pool", fsid, pool_id);
      }
      for (const Image& image : changes.added_images) {
        write_image("insert_image", fsid, image);
      }
      for (const Image& image : changes.changed_images) {
        write_image("update_image", fsid, image);
      }
    });
  }

  void commit() override {
    translated("committing the inventory", [&] { m_work.commit(); });
  }

 private:
  void write_image(const char* statement, const std::string& fsid, const Image& image) {
    const std::string what = "image id " + image.key.image_id;
    m_work.exec_prepared(statement, fsid, image.key.pool_id, image.key.pool_namespace,
                         image.key.image_id, image.name,
                         to_bigint(image.size_bytes, what + " size"),
                         to_bigint(image.object_size, what + " object size"),
                         static_cast<std::int64_t>(image.features), feature_array(image.features));
  }

  pqxx::work m_work;
};

}  // namespace

struct PgStore::Connection {
  std::unique_ptr<pqxx::connection> owned;
  pqxx::connection& connection;
  bool statements_prepared = false;

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

std::unique_ptr<sync::SinkTransaction> PgStore::begin() {
  return translated("starting the inventory transaction", [&] {
    if (!m_connection->statements_prepared) {
      prepare_statements(m_connection->connection);
      m_connection->statements_prepared = true;
    }
    return std::unique_ptr<sync::SinkTransaction>(
        std::make_unique<PgTransaction>(m_connection->connection));
  });
}

}  // namespace rbdsync::db
