#include "db/conninfo.hpp"

#include <libpq-fe.h>

#include <map>
#include <memory>

#include "common/error.hpp"

namespace rbdsync::db {

namespace {

struct OptionsDeleter {
  void operator()(PQconninfoOption* options) const { PQconninfoFree(options); }
};
using Options = std::unique_ptr<PQconninfoOption, OptionsDeleter>;

struct MessageDeleter {
  void operator()(char* message) const { PQfreemem(message); }
};

Options parse(const std::string& conninfo) {
  char* raw_message = nullptr;
  Options options(PQconninfoParse(conninfo.c_str(), &raw_message));
  const std::unique_ptr<char, MessageDeleter> message(raw_message);
  if (options) {
    return options;
  }
  // libpq's message quotes the offending fragment, which may be (part of) a password,
  // even a percent-encoded one in a URI; so it is not repeated.
  throw Error(ExitCode::config, "cannot parse the --db connection string",
              "give a libpq conninfo such as 'host=db1 dbname=console user=rbdsync' or "
              "'service=NAME'");
}

/// The non-empty settings of `conninfo`, by keyword.
std::map<std::string, std::string> settings(const std::string& conninfo) {
  const Options options = parse(conninfo);
  std::map<std::string, std::string> result;
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (option->val != nullptr && option->val[0] != '\0') {
      result.emplace(option->keyword, option->val);
    }
  }
  return result;
}

/// A conninfo value in single quotes, with \ and ' escaped as libpq expects.
std::string quote_value(const std::string& value) {
  std::string quoted = "'";
  for (const char c : value) {
    if (c == '\\' || c == '\'') {
      quoted += '\\';
    }
    quoted += c;
  }
  return quoted + "'";
}

}  // namespace

void check_conninfo(const std::string& conninfo) {
  const Options options = parse(conninfo);
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    // dispchar "*" marks what libpq itself treats as a secret: password, sslpassword.
    const bool secret = option->dispchar != nullptr && std::string(option->dispchar) == "*";
    if (secret && option->val != nullptr && option->val[0] != '\0') {
      throw Error(ExitCode::usage,
                  std::string("--db must not contain a ") + option->keyword +
                      " (it would be visible in ps)",
                  "put the password in ~/.pgpass, the file named by PGPASSFILE, or a "
                  "pg_service.conf entry, and remove it from --db");
    }
  }
}

std::string describe_conninfo(const std::string& conninfo) {
  std::string text;
  for (const auto& [keyword, value] : settings(conninfo)) {
    if (keyword.find("password") == std::string::npos) {
      text.append(text.empty() ? "" : " ").append(keyword).append("=").append(value);
    }
  }
  return text.empty() ? "(libpq defaults)" : text;
}

std::string effective_conninfo(const std::string& conninfo) {
  auto given = settings(conninfo);
  // Without a connect timeout libpq waits for the kernel's TCP timeout (minutes) on
  // an unreachable host; the application name shows in pg_stat_activity.
  given.emplace("connect_timeout", "10");
  given.emplace("application_name", "rbd-sync");
  // statement_timeout runs on the server; these notice a server or network that went
  // silent under an open connection (else the kernel takes ~15 minutes to give up).
  given.emplace("keepalives_idle", "30");
  given.emplace("keepalives_interval", "10");
  given.emplace("keepalives_count", "3");
  std::string text;
  for (const auto& [keyword, value] : given) {
    text.append(text.empty() ? "" : " ").append(keyword).append("=").append(quote_value(value));
  }
  return text;
}

}  // namespace rbdsync::db
