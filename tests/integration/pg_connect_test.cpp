// How a failed connection to PostgreSQL is told, against the real test server: a setting
// that can never work is configuration (78), which a cron wrapper or the console does
// not retry; a server that may come back is unavailable (69). Label `postgres`: these
// run against Debian 12's and 13's libpq, whose messages the classification reads.

#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "db/pg_store.hpp"
#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

ExitCode code_of_connecting(const std::string& conninfo) {
  try {
    const db::PgStore store(conninfo);
  } catch (const Error& error) {
    return error.code();
  }
  ADD_FAILURE() << "connected with " << conninfo;
  return ExitCode::ok;
}

// The test server (scripts/pg-server.sh) listens on TCP without SSL; over a Unix socket
// libpq would not ask for SSL.
TEST(PgConnectTest, ASettingThatCanNeverWorkIsConfiguration) {
  const TestDatabase database;
  for (const char* setting : {"sslmode=require", "sslmode=bogus", "connect_timeout=abc", "port=abc",
                              "target_session_attrs=x", "hostaddr=not-an-address"}) {
    EXPECT_EQ(code_of_connecting(database.conninfo() + " " + setting), ExitCode::config) << setting;
  }
}

TEST(PgConnectTest, AServerThatMayComeBackIsUnavailable) {
  const TestDatabase database;
  EXPECT_EQ(code_of_connecting(database.conninfo() + " port=1"), ExitCode::unavailable);
}

}  // namespace
}  // namespace rbdsync::testing
