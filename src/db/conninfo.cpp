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
  std::unique_ptr<char, MessageDeleter> message(raw_message);
  if (options) {
    return options;
  }
  // libpq quotes the offending fragment; leave it out if the string mentions a
  // password, so that no part of one can reach a log.
  std::string detail;
  if (message && conninfo.find("pass") == std::string::npos) {
    detail = std::string(": ") + message.get();
    while (!detail.empty() && detail.back() == '\n') {
      detail.pop_back();
    }
  }
  throw Error(ExitCode::config, "cannot parse --db connection string" + detail,
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
    if (std::string(option->keyword) == "password" && option->val != nullptr &&
        option->val[0] != '\0') {
      throw Error(ExitCode::usage, "--db must not contain a password (it would be visible in ps)",
                  "put the password in ~/.pgpass, the file named by PGPASSFILE, or a "
                  "pg_service.conf entry, and remove it from --db");
    }
  }
}

std::string describe_conninfo(const std::string& conninfo) {
  std::string text;
  for (const auto& [keyword, value] : settings(conninfo)) {
    if (keyword != "password") {
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
  std::string text;
  for (const auto& [keyword, value] : given) {
    text.append(text.empty() ? "" : " ").append(keyword).append("=").append(quote_value(value));
  }
  return text;
}

}  // namespace rbdsync::db
