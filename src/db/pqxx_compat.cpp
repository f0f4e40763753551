#include "db/pqxx_compat.hpp"

#include <algorithm>

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
/// session, a cancel (57014), missing rights, or a refusal with its SQLSTATE. Without
/// a result, or with one libpq made itself (no SQLSTATE), `message` (libpq's own) says
/// what happened: a broken connection when the session is gone.
[[noreturn]] void throw_copy_error(PGconn* raw, const PGresult* result, const std::string& query,
                                   std::string message = {}) {
  const char* field = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_SQLSTATE);
  if (message.empty()) {
    message = result == nullptr ? PQerrorMessage(raw) : PQresultErrorMessage(result);
  }
  if (PQstatus(raw) == CONNECTION_BAD) {
    throw pqxx::broken_connection(message.empty() ? "the COPY lost its connection" : message);
  }
  if (field == nullptr) {
    throw pqxx::failure(message.empty() ? "the COPY failed without a reason" : message);
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

/// Sends `bytes` as COPY data, in pieces libpq's int length can hold. False when libpq
/// could not (its error message says why).
bool put_copy_data(PGconn* raw, const char* bytes, std::size_t size) {
  constexpr std::size_t k_max_piece = std::size_t{1} << 30U;
  while (size > 0) {
    const std::size_t piece = std::min(size, k_max_piece);
    if (PQputCopyData(raw, bytes, static_cast<int>(piece)) != 1) {
      return false;
    }
    bytes += piece;
    size -= piece;
  }
  return true;
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
  bool sent = lines.empty() ||
              (put_copy_data(raw, lines.data(), lines.size()) && put_copy_data(raw, "\n", 1));
  // libpq's reason for a send that failed, before the COPY's own end replaces it: the
  // server answers an aborted COPY with 57014, which would read as a cancel.
  const std::string send_error = sent ? std::string() : std::string(PQerrorMessage(raw));
  const int ended = PQputCopyEnd(raw, sent ? nullptr : "rbd-sync could not send its rows");
  if (ended != 1) {
    // libpq is still in COPY_IN (PQgetResult would keep answering that): the session
    // cannot go on, and the transaction fails with it.
    throw_copy_error(raw, nullptr, query, send_error);
  }
  // Every result of the COPY is read, so the session is ready for the next statement.
  PgResult failed;
  while (PgResult result{PQgetResult(raw)}) {
    const ExecStatusType status = PQresultStatus(result.get());
    if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH) {
      throw_copy_error(raw, nullptr, query, "the COPY did not end: " + send_error);
    }
    if (status != PGRES_COMMAND_OK && failed == nullptr) {
      failed = std::move(result);
    }
  }
  if (!sent) {
    throw_copy_error(raw, nullptr, query, send_error);
  }
  if (failed != nullptr) {
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
