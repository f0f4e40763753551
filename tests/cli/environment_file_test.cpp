// The settings files are read as systemd's EnvironmentFile= reads them: `rbd-sync serve`
// must run with what the cluster's timer unit runs with.
#include "cli/environment_file.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "support/scoped_temp_dir.hpp"

namespace rbdsync::cli {
namespace {

Assignments parsed(const std::string& text) {
  return parse_environment_file(text, "settings");
}

std::string error_of(const std::string& text) {
  try {
    parsed(text);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::config);
    return error.what();
  }
  ADD_FAILURE() << "no error for: " << text;
  return "";
}

TEST(EnvironmentFile, TheShippedFormsAreReadAsSystemdReadsThem) {
  const Assignments expected{
      {"RBDSYNC_ARGS", "--id rbdsync --db service=rbd-sync --log-level info"},
      {"RBDSYNC_CRON", "no"},
      {"PGPASSFILE", "/etc/rbd-sync/pgpass"},
      {"EMPTY", ""},
  };
  EXPECT_EQ(parsed("# a comment\n"
                   "; another\n"
                   "\n"
                   "RBDSYNC_ARGS=\"--id rbdsync --db service=rbd-sync --log-level info\"\n"
                   "  RBDSYNC_CRON=no   \n"
                   "PGPASSFILE='/etc/rbd-sync/pgpass'\n"
                   "a line without an equals sign is skipped\n"
                   "EMPTY=\n"),
            expected);
}

TEST(EnvironmentFile, QuotesAndBackslashesFollowSystemdsRules) {
  // Double quotes: \" \\ \` \$ and a backslash-newline are escapes, any other backslash
  // stays with what follows it.
  EXPECT_EQ(parsed(R"(A="say \"hi\" \\ \$HOME \n")"),
            (Assignments{{"A", R"(say "hi" \ $HOME \n)"}}));
  EXPECT_EQ(parsed("A=\"one \\\ntwo\"\n"), (Assignments{{"A", "one two"}}));
  EXPECT_EQ(parsed("A=\"two\nlines\"\n"), (Assignments{{"A", "two\nlines"}}));
  // Single quotes: verbatim.
  EXPECT_EQ(parsed(R"(A='a\b "c"')"), (Assignments{{"A", R"(a\b "c")"}}));
  // Unquoted: a backslash keeps the next character; at the end of a line it continues.
  EXPECT_EQ(parsed("A=a\\ b\\\\c \\\n d  \n"), (Assignments{{"A", "a b\\c  d"}}));
  EXPECT_EQ(parsed("A=x\\ \n"), (Assignments{{"A", "x "}})) << "an escaped blank stays";
  // Interior blanks and later quotes of an unquoted value are kept.
  EXPECT_EQ(parsed("A=a  'b'\n"), (Assignments{{"A", "a  'b'"}}));
  EXPECT_EQ(parsed("A=1\nA=2\n"), (Assignments{{"A", "1"}, {"A", "2"}}));
}

TEST(EnvironmentFile, WhatSystemdWouldReadOtherwiseIsRefusedNamingTheLine) {
  EXPECT_EQ(error_of("A=1\nB=\"open\n"), "settings, line 3: the value has no closing \"");
  EXPECT_EQ(error_of("A='x' y\n"), "settings, line 1: text after the closing quote of a value");
}

TEST(EnvironmentFile, WhatSystemdSkipsIsSkippedWithAWarning) {
  std::vector<std::string> warnings;
  EXPECT_EQ(parse_environment_file("\n\n9LIVES=1\nexport A=1\nB=2\n", "settings", &warnings),
            (Assignments{{"B", "2"}}));
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "settings, line 3: '9LIVES' is not a variable name; the line is "
                          "skipped, as systemd skips it",
                          "settings, line 4: 'export A' is not a variable name; the line is "
                          "skipped, as systemd skips it"}));
  // A comment that ends in a backslash goes on over the next line, as systemd reads it.
  EXPECT_EQ(parsed("# a comment \\\nA=hidden\nB=shown\n"), (Assignments{{"B", "shown"}}));
}

TEST(EnvironmentFile, AMissingFileHasNoAssignmentsAndAnUnreadableOneIsAnError) {
  testing::ScopedTempDir dir;
  EXPECT_TRUE(read_environment_file(dir.file("none")).empty());
  EXPECT_THROW(read_environment_file(dir.path()), Error) << "a directory";
}

TEST(EnvironmentFile, WordsAreSplitAtBlanksAsAnUnbracedVariableIs) {
  EXPECT_EQ(split_words("  --id rbdsync\t--db  service=x\r\n"),
            (std::vector<std::string>{"--id", "rbdsync", "--db", "service=x"}));
  EXPECT_TRUE(split_words(" \t ").empty());
  EXPECT_EQ(split_words("one"), (std::vector<std::string>{"one"}));
}

}  // namespace
}  // namespace rbdsync::cli
