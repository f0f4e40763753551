#include "db/pqxx_compat.hpp"

#include <libpq-fe.h>

#if PQXX_VERSION_MAJOR < 7
#include <pqxx/tablewriter>
#endif

namespace rbdsync::db {

namespace {

#if PQXX_VERSION_MAJOR >= 7
/// Frees a PGresult when it goes out of scope.
struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgResult = std::unique_ptr<PGresult, ResultDeleter>;

/// Throws the libpqxx exception a statement failing with `result` would have thrown,
/// so that translated() classifies a failed COPY as it does any statement: a lost
/// session, a cancel (57014), missing rights, or a refusal with its SQLSTATE.
[[noreturn]] void throw_copy_error(PGconn* raw, const PGresult* result, const std::string& query) {
  const char* field = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_SQLSTATE);
  const std::string message =
      result == nullptr ? PQerrorMessage(raw) : PQresultErrorMessage(result);
  if (field == nullptr || PQstatus(raw) == CONNECTION_BAD) {
    throw pqxx::broken_connection(message.empty() ? "the COPY lost its connection" : message);
  }
  const std::string sqlstate = field;
  if (sqlstate == "42501") {
    throw pqxx::insufficient_privilege(message, query, sqlstate.c_str());
  }
  if (sqlstate == "42P01") {
    throw pqxx::undefined_table(message, query, sqlstate.c_str());
  }
  throw pqxx::sql_error(message, query, sqlstate.c_str());
}
#endif

}  // namespace

PgConnection::PgConnection(const std::string& conninfo) {
#if PQXX_VERSION_MAJOR >= 7
  // libpqxx opens the connection (its errors stay its own), then lends us the PGconn
  // and takes it back: both sides use the same session, libpqxx still closes it.
  pqxx::connection opened{conninfo};
  // A void* in libpqxx 8, PGconn* in 7.
  auto* raw = static_cast<PGconn*>(std::move(opened).release_raw_connection());
  m_raw = raw;
  m_connection = std::make_unique<pqxx::connection>(pqxx::connection::seize_raw_connection(raw));
#else
  m_connection = std::make_unique<pqxx::connection>(conninfo);
  // libpqxx 6 silently reconnects a broken connection. That would drop the session
  // advisory lock (the cross-host guard) in the middle of a run, so it is switched off;
  // libpqxx 7 removed the feature, hence the deprecation.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  m_connection->inhibit_reactivation(true);
#pragma GCC diagnostic pop
#endif
}

PgConnection::~PgConnection() = default;

#if PQXX_VERSION_MAJOR >= 7
void PgConnection::copy_lines(pqxx::transaction_base& /*work*/, const std::string& table,
                              const std::vector<std::string>& quoted_columns,
                              const std::string& lines) {
  // The statement runs in the transaction `work` holds open on this very session; no
  // libpqxx statement runs meanwhile (the caller holds the session for the COPY).
  auto* raw = static_cast<PGconn*>(m_raw);
  std::string query = "COPY " + table + " (";
  for (std::size_t i = 0; i < quoted_columns.size(); ++i) {
    query += (i == 0 ? "" : ", ") + quoted_columns[i];
  }
  query += ") FROM STDIN";
  PgResult started{PQexec(raw, query.c_str())};
  if (started == nullptr || PQresultStatus(started.get()) != PGRES_COPY_IN) {
    throw_copy_error(raw, started.get(), query);
  }
  // The whole batch in one message, then the row end the batch leaves off.
  bool sent =
      lines.empty() || PQputCopyData(raw, lines.data(), static_cast<int>(lines.size())) == 1;
  sent = sent && (lines.empty() || PQputCopyData(raw, "\n", 1) == 1);
  const int ended = PQputCopyEnd(raw, sent ? nullptr : "rbd-sync could not send its rows");
  // Every result of the COPY is read, so the session is ready for the next statement.
  PgResult failed;
  while (PgResult result{PQgetResult(raw)}) {
    if (PQresultStatus(result.get()) != PGRES_COMMAND_OK && failed == nullptr) {
      failed = std::move(result);
    }
  }
  if (failed != nullptr || !sent || ended != 1) {
    throw_copy_error(raw, failed.get(), query);
  }
}
#else
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void PgConnection::copy_lines(pqxx::transaction_base& work, const std::string& table,
                              const std::vector<std::string>& quoted_columns,
                              const std::string& lines) {
  // tablewriter is deprecated in 6.4 in favour of stream_to, but stream_to only writes
  // fixed-size tuples there and has no NULL for std::optional; our rows are built at run
  // time. write_raw_line() sends the text as it is, in one PQputCopyData.
  pqxx::tablewriter writer(work, table, quoted_columns.begin(), quoted_columns.end());
  writer.write_raw_line(lines);
  writer.complete();
}
#pragma GCC diagnostic pop
#endif

}  // namespace rbdsync::db
