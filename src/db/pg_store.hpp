#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sync/sink.hpp"

namespace rbdsync::db {

/// The PostgreSQL side: schema migrations and inventory writes, through libpqxx.
/// No libpqxx type appears in this header; its exceptions become rbdsync::Error here.
class PgStore : public sync::InventorySink {
 public:
  /// Connects with a libpq conninfo string or URI (passwords come from .pgpass,
  /// PGPASSFILE or a service file). Throws Error with ExitCode::unavailable (no server
  /// answered), ExitCode::no_permission (authentication refused) or ExitCode::config
  /// (unknown database, role or service).
  explicit PgStore(const std::string& conninfo, int statement_timeout_seconds = 300);
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  /// Applies, in one transaction, every migration newer than the database's schema.
  /// Returns the versions applied (empty when it was current). Throws
  /// Error(ExitCode::config) when the database is newer than this binary.
  std::vector<int> migrate();

  /// The schema version recorded in the database; 0 when it was never migrated.
  int schema_version();

  /// Throws Error(ExitCode::config) unless the schema is the one this binary writes.
  void require_current_schema();

  /// The run whose inventory the next transactions write: their usage history rows
  /// (rbdsync.pool_usage_history, cluster_usage_history) name it, so its row in
  /// rbdsync.runs must exist by then. Set it before begin().
  void set_run_id(const std::string& run_id);

  /// Nothing reaches the database before the transaction's store(). Its store() throws
  /// Error(ExitCode::internal) when no run id was set.
  std::unique_ptr<sync::SinkTransaction> begin(const std::string& fsid,
                                               const std::string& name) override;

  /// Asks the server to cancel the statement running on this connection, from another
  /// thread (e.g. on SIGTERM); the waiting call then fails and its transaction rolls
  /// back. Never throws.
  void cancel_running_statement() noexcept;

 private:
  struct Connection;
  std::unique_ptr<Connection> m_connection;
  std::string m_run_id;
};

}  // namespace rbdsync::db
