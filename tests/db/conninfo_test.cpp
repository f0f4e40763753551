#include "db/conninfo.hpp"

#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

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

/// Conninfo strings and the exit code check_conninfo gives each, as a named case.
struct Case {
  const char* name;
  std::vector<std::string> conninfos;
  ExitCode code;
};

/// Shown by the case's name, as gtest prints a parameter.
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

class ConninfoCheck : public ::testing::TestWithParam<Case> {};

TEST_P(ConninfoCheck, GivesItsExitCode) {
  for (const std::string& conninfo : GetParam().conninfos) {
    EXPECT_EQ(failure_of(conninfo), GetParam().code) << conninfo;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Conninfo, ConninfoCheck,
    ::testing::Values(
        Case{"KeyValueAndServiceAndUriFormsAreAccepted",
             {"host=127.0.0.1 port=5432 dbname=console user=rbdsync", "service=rbd-sync",
              "postgresql://rbdsync@db1:5433/console"},
             ExitCode::ok},
        Case{"PasswordInKeyValueFormIsRefusedAsUsage",
             {"host=db1 password=hunter2"},
             ExitCode::usage},
        Case{"PasswordInUriIsRefusedAsUsage",
             {"postgresql://rbdsync:hunter2@db1/console",
              "postgresql://db1/console?password=hunter2"},
             ExitCode::usage},
        Case{"SslKeyPasswordIsRefusedToo", {"host=db1 sslpassword=hunter2"}, ExitCode::usage},
        Case{"UnparseableStringIsAConfigError",
             {"host=db1 nonsense", "bogus_key=1"},
             ExitCode::config},
        Case{"UnparseableStringMentioningAPasswordDoesNotEchoIt",
             {"password='hunter2"},
             ExitCode::config}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(Conninfo, ParseErrorsNeverQuoteTheString) {
  try {
    check_conninfo("postgresql://u:p%zzhunter2@db/x");
    FAIL() << "a bad percent-escape must not parse";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::config);
    EXPECT_EQ(std::string(error.what()).find("zz"), std::string::npos) << error.what();
  }
}

/// Expects each of `settings` in `text`, a conninfo string or its description.
void expect_settings(const std::string& text, std::initializer_list<const char*> settings) {
  for (const char* setting : settings) {
    EXPECT_NE(text.find(setting), std::string::npos) << setting << " in " << text;
  }
}

TEST(Conninfo, DescriptionListsTheSettingsGiven) {
  expect_settings(describe_conninfo("host=db1 port=5433 dbname=console"),
                  {"host=db1", "port=5433", "dbname=console"});
}

TEST(Conninfo, EffectiveConninfoAddsATimeoutAndApplicationName) {
  expect_settings(effective_conninfo("host=db1 dbname=console"),
                  {"connect_timeout='10'", "application_name='rbd-sync'", "host='db1'"});
}

TEST(Conninfo, EffectiveConninfoKeepsATimeoutThatWasGiven) {
  const std::string text = effective_conninfo("host=db1 connect_timeout=3");
  expect_settings(text, {"connect_timeout='3'"});
  EXPECT_EQ(text.find("connect_timeout='10'"), std::string::npos) << text;
}

TEST(Conninfo, EffectiveConninfoTurnsAUriIntoSettings) {
  expect_settings(effective_conninfo("postgresql://rbdsync@db1:5433/console"),
                  {"user='rbdsync'", "port='5433'", "dbname='console'"});
}

TEST(Conninfo, EffectiveConninfoQuotesValuesSoTheyParseBackUnchanged) {
  // The value is: it's a \ path
  const std::string text = effective_conninfo(R"(dbname='it\'s a \\ path')");
  EXPECT_NE(describe_conninfo(text).find(R"(dbname=it's a \ path)"), std::string::npos) << text;
}

}  // namespace
}  // namespace rbdsync::db
