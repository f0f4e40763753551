#include "db/conninfo.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace rbdsync::db {
namespace {

ExitCode failure_of(const std::string& conninfo) {
  try {
    check_conninfo(conninfo);
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).find("hunter2"), std::string::npos)
        << "an error must never repeat the password";
    return error.code();
  }
  return ExitCode::ok;
}

TEST(Conninfo, KeyValueAndServiceAndUriFormsAreAccepted) {
  EXPECT_EQ(failure_of("host=127.0.0.1 port=5432 dbname=console user=rbdsync"), ExitCode::ok);
  EXPECT_EQ(failure_of("service=rbd-sync"), ExitCode::ok);
  EXPECT_EQ(failure_of("postgresql://rbdsync@db1:5433/console"), ExitCode::ok);
}

TEST(Conninfo, PasswordInKeyValueFormIsRefusedAsUsage) {
  EXPECT_EQ(failure_of("host=db1 password=hunter2"), ExitCode::usage);
}

TEST(Conninfo, PasswordInUriIsRefusedAsUsage) {
  EXPECT_EQ(failure_of("postgresql://rbdsync:hunter2@db1/console"), ExitCode::usage);
  EXPECT_EQ(failure_of("postgresql://db1/console?password=hunter2"), ExitCode::usage);
}

TEST(Conninfo, SslKeyPasswordIsRefusedToo) {
  EXPECT_EQ(failure_of("host=db1 sslpassword=hunter2"), ExitCode::usage);
}

TEST(Conninfo, ParseErrorsNeverQuoteTheString) {
  try {
    check_conninfo("postgresql://u:p%zzhunter2@db/x");
    FAIL() << "a bad percent-escape must not parse";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::config);
    EXPECT_EQ(std::string(error.what()).find("zz"), std::string::npos) << error.what();
  }
}

TEST(Conninfo, UnparseableStringIsAConfigError) {
  EXPECT_EQ(failure_of("host=db1 nonsense"), ExitCode::config);
  EXPECT_EQ(failure_of("bogus_key=1"), ExitCode::config);
}

TEST(Conninfo, UnparseableStringMentioningAPasswordDoesNotEchoIt) {
  EXPECT_EQ(failure_of("password='hunter2"), ExitCode::config);
}

TEST(Conninfo, DescriptionListsTheSettingsGiven) {
  const std::string text = describe_conninfo("host=db1 port=5433 dbname=console");
  EXPECT_NE(text.find("host=db1"), std::string::npos);
  EXPECT_NE(text.find("port=5433"), std::string::npos);
  EXPECT_NE(text.find("dbname=console"), std::string::npos);
}

TEST(Conninfo, EffectiveConninfoAddsATimeoutAndApplicationName) {
  const std::string text = effective_conninfo("host=db1 dbname=console");
  EXPECT_NE(text.find("connect_timeout='10'"), std::string::npos) << text;
  EXPECT_NE(text.find("application_name='rbd-sync'"), std::string::npos) << text;
  EXPECT_NE(text.find("host='db1'"), std::string::npos) << text;
}

TEST(Conninfo, EffectiveConninfoKeepsATimeoutThatWasGiven) {
  const std::string text = effective_conninfo("host=db1 connect_timeout=3");
  EXPECT_NE(text.find("connect_timeout='3'"), std::string::npos) << text;
  EXPECT_EQ(text.find("connect_timeout='10'"), std::string::npos) << text;
}

TEST(Conninfo, EffectiveConninfoTurnsAUriIntoSettings) {
  const std::string text = effective_conninfo("postgresql://rbdsync@db1:5433/console");
  EXPECT_NE(text.find("user='rbdsync'"), std::string::npos) << text;
  EXPECT_NE(text.find("port='5433'"), std::string::npos) << text;
  EXPECT_NE(text.find("dbname='console'"), std::string::npos) << text;
}

TEST(Conninfo, EffectiveConninfoQuotesValuesSoTheyParseBackUnchanged) {
  // The value is: it's a \ path
  const std::string text = effective_conninfo(R"(dbname='it\'s a \\ path')");
  EXPECT_NE(describe_conninfo(text).find(R"(dbname=it's a \ path)"), std::string::npos) << text;
}

}  // namespace
}  // namespace rbdsync::db
