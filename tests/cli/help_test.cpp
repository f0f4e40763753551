#include "cli/help.hpp"

#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/option_table.hpp"
#include "cli/options.hpp"
#include "support/source_file.hpp"

namespace rbdsync::cli {
namespace {

using testing::names_option;

constexpr Command k_commands[] = {Command::run, Command::migrate, Command::status};

std::string help_of(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"rbd-sync"};
  argv.insert(argv.end(), args.begin(), args.end());
  const Config config = parse(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(config.command, Command::help);
  return config.help_text;
}

/// `text` with every run of white space made one space, so that a phrase cxxopts
/// wrapped onto two lines is still found.
std::string one_line(const std::string& text) {
  std::istringstream words(text);
  std::string result;
  for (std::string word; words >> word;) {
    result += (result.empty() ? "" : " ") + word;
  }
  return result;
}

/// "--pool NAME" or, for a switch, "--detach": the option as its help line starts.
std::string shown_as(const OptionSpec& option) {
  std::string text = std::string("--") + option.long_name;
  return option.kind == ValueKind::none ? text : text + " " + option.value_name;
}

TEST(Help, EveryOptionIsInTheHelpOfItsCommandsWithItsValueName) {
  for (const Command command : k_commands) {
    const std::string help = command_help(command);
    for (const OptionSpec& option : option_table()) {
      if (applies_to(option, command)) {
        EXPECT_NE(help.find(shown_as(option)), std::string::npos)
            << shown_as(option) << " missing from\n"
            << help;
      }
    }
  }
}

TEST(Help, NoOptionIsInTheHelpOfACommandThatRefusesIt) {
  for (const Command command : k_commands) {
    const std::string help = command_help(command);
    for (const OptionSpec& option : option_table()) {
      if (!applies_to(option, command)) {
        EXPECT_FALSE(names_option(help, option.long_name)) << "--" << option.long_name << " in\n"
                                                           << help;
      }
    }
  }
}

// Options of some commands only are named in their usage lines, nowhere else.
TEST(Help, GlobalHelpListsTheOptionsOfEveryCommand) {
  const std::string help = global_help();
  std::string outside_usage;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  rbd-sync ", 0) != 0) {
      outside_usage += line + "\n";
    }
  }
  for (const OptionSpec& option : option_table()) {
    if ((option.commands & k_admin_commands) == k_admin_commands) {
      EXPECT_NE(help.find(shown_as(option)), std::string::npos) << shown_as(option);
    } else {
      EXPECT_FALSE(names_option(outside_usage, option.long_name)) << option.long_name;
    }
  }
  for (const CommandSpec& command : command_table()) {
    EXPECT_NE(help.find(usage_line(command)), std::string::npos) << command.name;
    EXPECT_NE(help.find(command.summary), std::string::npos) << command.name;
  }
  EXPECT_NE(help.find("rbd-sync help COMMAND"), std::string::npos);
}

/// Every line of the global help and of each command's.
std::vector<std::string> every_help_line() {
  std::vector<std::string> helps = {global_help()};
  for (const Command command : k_commands) {
    helps.push_back(command_help(command));
  }
  std::vector<std::string> result;
  for (const std::string& help : helps) {
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);) {
      result.push_back(line);
    }
  }
  return result;
}

TEST(Help, NoLineSaysDefaultTwice) {
  for (const std::string& line : every_help_line()) {
    const auto first = line.find("default");
    EXPECT_TRUE(first == std::string::npos || line.find("default", first + 1) == std::string::npos)
        << line;
  }
}

// "(default: X)", or a number's "(LOW to HIGH; default: X)", follows the option's own
// description, once: neither cxxopts nor the description adds a second one.
TEST(Help, EachDefaultIsToldOnceAfterItsOption) {
  for (const Command command : k_commands) {
    const std::string help = one_line(command_help(command));
    for (const OptionSpec& option : option_table()) {
      if (!applies_to(option, command) || *option.default_text == '\0') {
        continue;
      }
      // The option's own line, not the usage line.
      const auto start = help.find(shown_as(option), help.find(" options:"));
      ASSERT_NE(start, std::string::npos) << option.long_name;
      const std::string opening =
          option.kind == ValueKind::number
              ? "(" + std::to_string(option.low) + " to " + std::to_string(option.high) + "; "
              : "(";
      const std::string told =
          one_line(opening + std::string("default: ") + option.default_text + ")");
      const auto at = help.find(told, start);
      ASSERT_NE(at, std::string::npos) << told << " for --" << option.long_name;
      EXPECT_EQ(at + opening.size(), help.find("default: ", start)) << told;
      EXPECT_EQ(help.find(told, at + 1), std::string::npos) << told;
    }
  }
}

TEST(Help, NoLineIsWiderThan80Columns) {
  for (const std::string& line : every_help_line()) {
    EXPECT_LE(line.size(), 80U) << line;
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "trailing space: '" << line << "'";
  }
}

TEST(Help, CommandDashDashHelpIsHelpCommand) {
  for (const char* command : {"run", "migrate", "status"}) {
    const std::string by_option = help_of({command, "--help"});
    EXPECT_EQ(by_option, help_of({"help", command})) << command;
    EXPECT_EQ(by_option, help_of({command, "-h"})) << command;
    EXPECT_NE(by_option, help_of({"--help"})) << command;
    EXPECT_EQ(by_option.rfind(std::string("rbd-sync ") + command + ":", 0), 0U) << by_option;
  }
}

TEST(Help, HelpWithoutCommandIsTheGlobalHelp) {
  EXPECT_EQ(help_of({"help"}), help_of({"--help"}));
  EXPECT_EQ(help_of({"-h"}), global_help());
}

TEST(Help, UsageLineNamesTheSynopsisOptions) {
  EXPECT_EQ(usage_line(*find_command("run")),
            "rbd-sync run [--lock-file PATH] [--pool NAME]... [--db CONNINFO] [OPTIONS]");
  EXPECT_EQ(usage_line(*find_command("migrate")), "rbd-sync migrate [--db CONNINFO] [OPTIONS]");
  EXPECT_EQ(usage_line(*find_command("status")), "rbd-sync status [--lock-file PATH] [OPTIONS]");
}

}  // namespace
}  // namespace rbdsync::cli
