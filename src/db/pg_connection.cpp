#include "db/pg_connection.hpp"

#include <spdlog/spdlog.h>

#include "db/conninfo.hpp"

namespace rbdsync::db {

// libpq messages span lines ("connection to server ... failed: \n FATAL: ..."); our
// errors are one line.
std::string one_line(const std::string& text) {
  std::string line;
  for (char c : text) {
    if (c == '\t') {
      c = ' ';
    }
    if (c == '\n') {
      if (!line.empty() && line.back() != ' ') {
        line += "; ";
      }
      continue;
    }
    line += c;
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == ';')) {
    line.pop_back();
  }
  return line;
}

bool lost_the_server(const std::string& state) {
  return state.rfind("08", 0) == 0 || state == "57P01" || state == "57P02" || state == "57P03";
}

namespace {

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

[[noreturn]] void throw_connect_error(const std::string& where, const std::string& detail) {
  const std::string message = "cannot connect to PostgreSQL (" + where + "): " + one_line(detail);
  if (contains(detail, "password authentication failed") ||
      contains(detail, "no password supplied") || contains(detail, "authentication failed")) {
    throw Error(ExitCode::no_permission, message,
                "check the password for this user in ~/.pgpass or PGPASSFILE (mode 0600)");
  }
  if (contains(detail, "does not exist") || contains(detail, "definition of service") ||
      contains(detail, "invalid connection option")) {
    throw Error(ExitCode::config, message, "check --db: the database, user or service name");
  }
  // A setting libpq refused ('invalid sslmode value: "x"', a mode this libpq was built
  // without), or SSL the server does not offer: retrying will not help. Not GSSAPI's
  // "encryption required but ...": a Kerberos ticket that has run out comes back.
  for (const char* refusal :
       {"invalid integer value", " value: \"", "not compiled in", "could not parse network address",
        "could not match ", "but SSL was required"}) {
    if (contains(detail, refusal)) {
      throw Error(ExitCode::config, message,
                  "check the settings of --db (or of the service it names): libpq refused one, "
                  "or the server cannot meet it");
    }
  }
  throw Error(ExitCode::unavailable, message,
              "check that the server is running and reachable (pg_isready with the same "
              "settings)");
}

}  // namespace

std::unique_ptr<PgConnection> open_connection(const std::string& conninfo,
                                              int statement_timeout_seconds) {
  check_conninfo(conninfo);
  const std::string where = describe_conninfo(conninfo);
  std::unique_ptr<PgConnection> connection;
  try {
    connection = std::make_unique<PgConnection>(effective_conninfo(conninfo));
  } catch (const std::exception& e) {
    throw_connect_error(where, e.what());
  }
  translated("preparing the session", [&] {
    pqxx::nontransaction work(connection->pqxx(), "rbd-sync session");
    // Names resolve in the system catalog and our own temporary tables only. Another
    // role that may create objects in a schema on the default path ("$user", public:
    // every role on PostgreSQL <= 14, the database owner on 15+) could otherwise plant
    // a function that matches an argument list better than pg_catalog's (say
    // public.hashtextextended(text, integer) for a literal 0) and have it run as this
    // role. pg_temp is never searched for functions or operators. Set here, after the
    // server applied the role's and the database's settings, so that those cannot
    // widen it. Statements still qualify what they name (pg_catalog., rbdsync.,
    // pg_temp.); operators rely on this path.
    work.exec("SET search_path = pg_catalog, pg_temp");
    // Names and errors are UTF-8 in every column we write, whatever the server's or
    // the service file's default encoding for clients.
    work.exec("SET client_encoding = 'UTF8'");
    // Bounds every statement, including one stuck behind another session's lock.
    work.exec("SET statement_timeout = " + std::to_string(statement_timeout_seconds * 1000));
  });
  spdlog::debug("connected to PostgreSQL ({})", where);
  return connection;
}

}  // namespace rbdsync::db
