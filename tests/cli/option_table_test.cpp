#include "cli/option_table.hpp"

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/options.hpp"
#include "common/run_record.hpp"
#include "support/source_file.hpp"

namespace rbdsync::cli {
namespace {

TEST(OptionTable, NamesAreUnique) {
  std::set<std::string> long_names;
  std::set<std::string> short_names;
  for (const OptionSpec& option : option_table()) {
    EXPECT_TRUE(long_names.insert(option.long_name).second) << option.long_name;
    if (*option.short_name != '\0') {
      EXPECT_TRUE(short_names.insert(option.short_name).second) << option.short_name;
      EXPECT_EQ(std::string(option.short_name).size(), 1U) << option.long_name;
    }
  }
}

TEST(OptionTable, EveryFlagConstantIsInTheTable) {
  for (const char* name :
       {flag::k_db,        flag::k_lock_file,  flag::k_wait,         flag::k_trigger,
        flag::k_detach,    flag::k_conf,       flag::k_id,           flag::k_name,
        flag::k_keyring,   flag::k_pool,       flag::k_ceph_timeout, flag::k_exact_usage,
        flag::k_reader,    flag::k_db_timeout, flag::k_log_file,     flag::k_metrics_file,
        flag::k_format,    flag::k_json,       flag::k_verbose,      flag::k_quiet,
        flag::k_log_level, flag::k_help,       flag::k_version,      flag::k_cluster,
        flag::k_mon_host,  flag::k_keyfile,    flag::k_history_days}) {
    EXPECT_NE(find_option(name), nullptr) << name;
  }
}

TEST(OptionTable, AnAliasIsNoOtherOptionsName) {
  for (const OptionSpec& option : option_table()) {
    if (*option.alias != '\0') {
      EXPECT_EQ(find_option(option.alias), nullptr) << option.alias;
    }
  }
  EXPECT_STREQ(find_option(flag::k_conf)->alias, flag::k_ceph_conf);
}

TEST(OptionTable, SwitchesTakeNoValueAndTheOthersNameTheirs) {
  for (const OptionSpec& option : option_table()) {
    const std::string value_name = option.value_name;
    EXPECT_EQ(value_name.empty(), option.kind == ValueKind::none) << option.long_name;
    if (option.kind == ValueKind::none) {
      EXPECT_STREQ(option.default_text, "") << option.long_name;
    }
  }
}

// The help and the man page add the alias, a number's range and "default: ..." themselves
// (help_sentence()), so a help text tells neither a default nor a number's range again.
TEST(OptionTable, HelpTextsAreOneSentenceThatNamesNoDefaultNorRange) {
  const std::regex range("[0-9]+ to [0-9]+|at most [0-9]+");
  for (const OptionSpec& option : option_table()) {
    const std::string help = option.help;
    EXPECT_EQ(help.find("default"), std::string::npos) << option.long_name << ": " << help;
    if (option.kind == ValueKind::number) {
      EXPECT_FALSE(std::regex_search(help, range)) << option.long_name << ": " << help;
    }
    EXPECT_EQ(help.find('\n'), std::string::npos) << option.long_name;
    EXPECT_NE(help.back(), '.') << option.long_name;
  }
}

// The parser refuses a number outside its range and the help tells the range: both read
// it here.
TEST(OptionTable, NumbersHaveARangeThatHoldsTheirDefault) {
  for (const OptionSpec& option : option_table()) {
    if (option.kind != ValueKind::number) {
      EXPECT_EQ(option.low, 0) << option.long_name;
      EXPECT_EQ(option.high, 0) << option.long_name;
      continue;
    }
    EXPECT_LT(option.low, option.high) << option.long_name;
    if (option.default_is_value) {
      const int value = std::stoi(option.default_text);
      EXPECT_GE(value, option.low) << option.long_name;
      EXPECT_LE(value, option.high) << option.long_name;
    }
  }
}

TEST(OptionTable, TheHelpSentenceTellsAliasRangeAndDefault) {
  for (const char* name : {flag::k_ceph_timeout, flag::k_conf, flag::k_json}) {
    ASSERT_NE(find_option(name), nullptr) << name;
  }
  EXPECT_EQ(help_sentence(*find_option(flag::k_ceph_timeout)),
            "how many seconds to wait for a mon or an OSD before failing (1 to 3600; default: 30)");
  EXPECT_EQ(
      help_sentence(*find_option(flag::k_conf))
          .rfind("the ceph.conf to read, as in 'rbd -c' (also --ceph-conf) (default: $CEPH_CONF",
                 0),
      0U);
  EXPECT_EQ(help_sentence(*find_option(flag::k_json)), "same as --format json");
}

// A text's length is not a number's range, so --requested-by's help says its limit in
// words; this keeps those words and the parser's limit in step.
TEST(OptionTable, RequestedByTellsTheLengthTheParserTakes) {
  const OptionSpec* option = find_option(flag::k_requested_by);
  ASSERT_NE(option, nullptr);
  const std::string limit = "at most " + std::to_string(k_max_requested_by) + " bytes";
  EXPECT_NE(std::string(option->help).find(limit), std::string::npos) << option->help;
}

TEST(OptionTable, EveryOptionAppliesToSomeCommand) {
  for (const OptionSpec& option : option_table()) {
    EXPECT_NE(option.commands & k_all_commands, 0U) << option.long_name;
    EXPECT_EQ(option.commands & ~k_all_commands, 0U) << option.long_name;
  }
}

TEST(OptionTable, CommandNamesReadAsASentence) {
  EXPECT_EQ(quoted_command_names(bit(Command::run)), "'run'");
  EXPECT_EQ(quoted_command_names(bit(Command::run) | bit(Command::status)), "'run' and 'status'");
  EXPECT_EQ(quoted_command_names(k_admin_commands), "'run', 'migrate' and 'status'");
}

TEST(OptionTable, CommandsAreFoundByName) {
  ASSERT_NE(find_command("migrate"), nullptr);
  EXPECT_EQ(find_command("migrate")->command, Command::migrate);
  EXPECT_EQ(find_command("help"), nullptr);
  EXPECT_EQ(find_command("sync"), nullptr);
}

/// One option as docs/usage.md's table shows it.
struct ReadmeOption {
  std::string short_name;
  std::string value_name;
  CommandSet commands = 0;
};

/// The cells of a Markdown table row, split at the '|' that are not escaped.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> result;
  std::string cell;
  for (std::size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '|' && row[i - 1] != '\\') {
      result.push_back(cell);
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return result;
}

CommandSet readme_commands(const std::string& cell) {
  CommandSet commands = 0;
  std::istringstream names(cell);
  for (std::string name; std::getline(names >> std::ws, name, ',');) {
    name.erase(name.find_last_not_of(' ') + 1);
    const CommandSpec* command = find_command(name);
    EXPECT_NE(command, nullptr) << "docs/usage.md names no command '" << name << "'";
    commands |= command != nullptr ? bit(command->command) : 0U;
  }
  return commands;
}

/// The options of docs/usage.md's table in "## Options": option column `-p, --pool NAME`
/// (spans separated by ", "), then the commands, "run, status" or "all".
std::map<std::string, ReadmeOption> readme_options() {
  const std::string readme = testing::read_source_file("docs/usage.md");
  const auto start = readme.find("\n## Options");
  const auto end = readme.find("\n#", start + 1);
  std::istringstream lines(readme.substr(start, end - start));
  std::map<std::string, ReadmeOption> options;
  const std::regex span("`([^`]*)`");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) {
      continue;
    }
    const std::vector<std::string> row = cells(line);
    const CommandSet commands = readme_commands(row.at(1));
    for (std::sregex_iterator it(row[0].begin(), row[0].end(), span), last; it != last; ++it) {
      std::string text = std::regex_replace((*it)[1].str(), std::regex(R"(\\\|)"), "|");
      ReadmeOption option;
      option.commands = commands;
      if (text.size() > 4 && text[0] == '-' && text[1] != '-' && text[2] == ',') {
        option.short_name = text.substr(1, 1);
        text.erase(0, 4);
      }
      const auto space = text.find(' ');
      if (space != std::string::npos) {
        option.value_name = text.substr(space + 1);
      }
      options[text.substr(2, space == std::string::npos ? std::string::npos : space - 2)] = option;
    }
  }
  return options;
}

TEST(OptionTable, ReadmeUsageTableListsExactlyTheTableOptions) {
  const std::map<std::string, ReadmeOption> readme = readme_options();
  for (const OptionSpec& option : option_table()) {
    const auto found = readme.find(option.long_name);
    if (found == readme.end()) {
      ADD_FAILURE() << "docs/usage.md's option table lacks --" << option.long_name;
      continue;
    }
    EXPECT_EQ(found->second.short_name, option.short_name) << option.long_name;
    EXPECT_EQ(found->second.value_name, option.value_name) << option.long_name;
    EXPECT_EQ(found->second.commands, option.commands) << option.long_name;
  }
  for (const auto& [name, unused] : readme) {
    EXPECT_NE(find_option(name), nullptr)
        << "docs/usage.md's option table lists --" << name << ", which is not in the option table";
  }
}

}  // namespace
}  // namespace rbdsync::cli
