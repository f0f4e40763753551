#pragma once

#include <cstddef>
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

  /// How many days of run history and usage history the next transactions keep: each
  /// store() deletes what is older (db/history.hpp). 0 keeps everything, the
  /// default of a PgStore; `rbd-sync run` sets --history-days.
  void set_history_days(int days);

  /// The COPY text each kind of row collects before it is sent (k_batch_bytes unless
  /// set): tests set it tiny to force a COPY per row, or huge to send all at store().
  /// Applies to the transactions begun after.
  void set_batch_bytes(std::size_t bytes);

  /// Opens the database transaction the sync writes in, with its temporary staging
  /// tables, and holds it until commit() or the transaction's destruction. While Ceph is
  /// read, rows reach those temporary tables in batches (each COPY one statement,
  /// bounded by the statement timeout); no other session sees them, and nothing outside
  /// them changes before store(). Nothing is visible before commit(). A PostgreSQL
  /// failure while reading fails the next add_*() or store() with the Error of
  /// translated() (e.g. ExitCode::unavailable for a lost connection). The transaction's
  /// store() throws Error(ExitCode::internal) when no run id was set.
  std::unique_ptr<sync::SinkTransaction> begin(const std::string& fsid, const std::string& name,
                                               sync::UsageMarksWanted marks) override;

  /// Asks the server to cancel the statement running on this connection, from another
  /// thread (e.g. on SIGTERM); the waiting call then fails and its transaction rolls
  /// back. Never throws.
  void cancel_running_statement() noexcept;

 private:
  struct Connection;
  std::unique_ptr<Connection> m_connection;
  std::string m_run_id;
  int m_history_days = 0;
  std::size_t m_batch_bytes;
};

}  // namespace rbdsync::db
