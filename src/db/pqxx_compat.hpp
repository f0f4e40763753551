#pragma once

/// Inside db/ (and the tests that talk to PostgreSQL) only: the one place that knows
/// which libpqxx it is built against. Debian 12 ships 6.4, Debian 13 7.10, sid 8.0 (whose
/// headers need C++20); Ubuntu 24.04 7.8. What differs between them and matters here:
///   - statements with parameters: exec_params() until 7.9, deprecated from 7.10 in
///     favour of exec(query, params);
///   - exactly one row: exec1()/exec_params1() until 7.9, deprecated from 7.10;
///   - COPY of text we escaped ourselves: tablewriter::write_raw_line() in 6.4, gone in
///     7.0 (stream_to::write_raw_line() is private), so from 7.8 the COPY goes through
///     libpq on the connection's own PGconn, which libpqxx hands over;
///   - silent reconnection: on in 6.4 and switched off here, gone in 7.0.
/// Everything else in db/ is written once, against these.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

// 7.8 and not 7.7: release_raw_connection() and seize_raw_connection() came in 7.7.1.
#if PQXX_VERSION_MAJOR < 6 || (PQXX_VERSION_MAJOR == 6 && PQXX_VERSION_MINOR < 4) || \
    (PQXX_VERSION_MAJOR == 7 && PQXX_VERSION_MINOR < 8)
#error "rbd-sync needs libpqxx 6.4, 7.8 or later (Debian 12: 6.4, Debian 13: 7.10, sid: 8.0)"
#endif

/// libpqxx 7.10 or later: exec(query, params) and result::one_row(), without the
/// deprecated forms.
#define RBDSYNC_PQXX_7_10 \
  (PQXX_VERSION_MAJOR > 7 || (PQXX_VERSION_MAJOR == 7 && PQXX_VERSION_MINOR >= 10))

namespace rbdsync::db {

/// Runs `sql` with `args` as its $1, $2, ... parameters.
template <typename... Args>
pqxx::result exec(pqxx::transaction_base& work, const std::string& sql, Args&&... args) {
#if RBDSYNC_PQXX_7_10
  return work.exec(sql, pqxx::params{std::forward<Args>(args)...});
#else
  return work.exec_params(sql, std::forward<Args>(args)...);
#endif
}

/// Runs `sql` with `arguments`, a list known only at run time, as its parameters.
inline pqxx::result exec_with(pqxx::transaction_base& work, const std::string& sql,
                              const std::vector<std::string>& arguments) {
#if RBDSYNC_PQXX_7_10
  pqxx::params params;
  for (const std::string& argument : arguments) {
    params.append(argument);
  }
  return work.exec(sql, params);
#else
  // Deprecated in 7.7-7.9 (not in 6.4); exec(query, params) comes only in 7.10.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return work.exec_params(sql, pqxx::prepare::make_dynamic_params(arguments));
#pragma GCC diagnostic pop
#endif
}

/// Runs `sql` with `args` and returns its only row; throws pqxx::unexpected_rows when it
/// returns none or more than one, as exec1() did.
template <typename... Args>
pqxx::row exec_one_row(pqxx::transaction_base& work, const std::string& sql, Args&&... args) {
#if RBDSYNC_PQXX_7_10
  // Indexing a result gives a row_ref in libpqxx 8, which must not outlive the result.
  return exec(work, sql, std::forward<Args>(args)...).one_row();
#else
  const pqxx::result result = exec(work, sql, std::forward<Args>(args)...);
  if (result.size() != 1) {
    throw pqxx::unexpected_rows("expected 1 row from a statement, got " +
                                std::to_string(result.size()));
  }
  return result[0];
#endif
}

/// The SQLSTATE of `error`: a std::string in libpqxx 6 and 7, a std::string_view in 8.
inline std::string sqlstate_of(const pqxx::sql_error& error) {
  std::string state(error.sqlstate());  // explicit from a string_view: no braced return
  return state;
}

/// A libpqxx connection that never reconnects behind our back, and that takes COPY text
/// whatever the libpqxx version.
class PgConnection {
 public:
  /// Connects; throws what libpqxx throws (pqxx::broken_connection and friends).
  explicit PgConnection(const std::string& conninfo);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  pqxx::connection& pqxx() { return *m_connection; }

  /// Sends `lines` (rows of COPY text, separated but not ended by newlines, escaped by
  /// the caller) into `table`'s `quoted_columns` in one COPY, inside `work`. Throws
  /// pqxx::sql_error (with its SQLSTATE) or pqxx::broken_connection, as a statement
  /// would.
  void copy_lines(pqxx::transaction_base& work, const std::string& table,
                  const std::vector<std::string>& quoted_columns, const std::string& lines);

 private:
  std::unique_ptr<pqxx::connection> m_connection;
  /// libpq's handle under m_connection, which still owns it (libpqxx >= 7 only).
  void* m_raw = nullptr;
};

}  // namespace rbdsync::db
