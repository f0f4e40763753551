#include "db/conninfo.hpp"

#include <libpq-fe.h>

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
  const Options options = parse(conninfo);
  std::string text;
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    const std::string keyword = option->keyword;
    if (option->val == nullptr || option->val[0] == '\0' || keyword == "password") {
      continue;
    }
    if (!text.empty()) {
      text += ' ';
    }
    text += keyword + "=" + option->val;
  }
  return text.empty() ? "(libpq defaults)" : text;
}

}  // namespace rbdsync::db
