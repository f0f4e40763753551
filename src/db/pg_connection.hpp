#pragma once

/// Inside db/ only: the libpqxx connection and the one place libpqxx errors become
/// rbdsync::Error. No header outside src/db includes this.

#include <memory>
#include <string>

#include <pqxx/pqxx>

#include "common/error.hpp"
#include "db/pqxx_compat.hpp"

namespace rbdsync::db {

/// `text` (a libpq message, several lines) as one line.
std::string one_line(const std::string& text);

/// Connects with `conninfo` (checked: no password in it) and prepares the session:
/// no silent reconnects (PgConnection), `search_path` pinned to `pg_catalog, pg_temp` (nothing
/// another role planted in a schema is ever resolved), `client_encoding` UTF8, and a
/// `statement_timeout` of `statement_timeout_seconds`.
/// Throws Error: unavailable, no_permission or config, naming the server.
std::unique_ptr<PgConnection> open_connection(const std::string& conninfo,
                                              int statement_timeout_seconds);

/// Whether SQLSTATE `state` says the session is gone: a connection exception (class
/// 08), or the server ending it (57P01 admin shutdown, as a fast shutdown or
/// pg_terminate_backend() does; 57P02 crash shutdown; 57P03 cannot connect now). With
/// the transaction open while Ceph is read, the server can end the session between two
/// statements; the next one then reports it as an SQL error.
bool lost_the_server(const std::string& state);

/// Runs `body`, turning libpqxx exceptions into Error. `what` names the operation.
template <typename Body>
auto translated(const std::string& what, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const pqxx::broken_connection& e) {
    throw Error(ExitCode::unavailable,
                what + ": lost the connection to PostgreSQL (server stopped or network cut): " +
                    one_line(e.what()),
                "check the server's state and log; the database is unchanged");
  } catch (const pqxx::in_doubt_error& e) {
    throw Error(ExitCode::unavailable,
                what + ": the connection broke while committing: " + one_line(e.what()),
                "run the sync again; it rewrites whatever the database holds");
  } catch (const pqxx::insufficient_privilege& e) {
    throw Error(ExitCode::no_permission, what + ": " + one_line(e.what()),
                "grant the rbd-sync database user rights on schema rbdsync (it should own it)");
  } catch (const pqxx::undefined_table& e) {
    throw Error(ExitCode::config, what + ": " + one_line(e.what()),
                "run 'rbd-sync migrate' against this database first");
  } catch (const pqxx::sql_error& e) {
    const std::string sqlstate = sqlstate_of(e);
    if (lost_the_server(sqlstate)) {
      throw Error(ExitCode::unavailable,
                  what + ": lost the connection to PostgreSQL (server stopped or session ended): " +
                      one_line(e.what()),
                  "check the server's state and log; the database is unchanged");
    }
    if (sqlstate == "57014") {  // query_canceled: statement_timeout or a cancel
      throw Error(ExitCode::unavailable,
                  what + ": PostgreSQL cancelled the statement: " + one_line(e.what()),
                  "look for sessions holding locks on the rbdsync tables, or raise --db-timeout");
    }
    throw Error(ExitCode::internal,
                what + ": PostgreSQL refused a statement (SQLSTATE " + sqlstate +
                    "): " + one_line(e.what()),
                "report this as a bug with the log; the database is unchanged");
  } catch (const std::exception& e) {
    throw Error(ExitCode::internal, what + ": " + one_line(e.what()),
                "report this as a bug with the log");
  }
}

}  // namespace rbdsync::db
