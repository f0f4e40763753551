#include "cli/help.hpp"

#include <cstddef>
#include <sstream>

#include "cli/cxxopts_table.hpp"

namespace rbdsync::cli {

namespace {

/// The width cxxopts wraps option descriptions at; the rest of the help follows it.
constexpr std::size_t k_width = 76;
constexpr const char* k_common_group = "Common";

/// `text` broken into lines of at most k_width columns, each starting with `indent`.
std::string wrapped(const std::string& text, const std::string& indent) {
  std::istringstream words(text);
  std::string word;
  std::string result;
  std::string line;
  while (words >> word) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > k_width) {
      result += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) {
    result += indent + line + "\n";
  }
  return result;
}

/// cxxopts options with nothing but option lines in their help: the usage and the
/// description around them are written here.
cxxopts::Options help_options(const std::string& program) {
  cxxopts::Options options(program);
  options.custom_help("");
  return options;
}

/// The option lines cxxopts prints for `groups` of `options`.
std::string option_lines(const cxxopts::Options& options, const std::vector<std::string>& groups) {
  std::istringstream lines(options.help(groups, /*print_usage=*/false));
  std::string text;
  std::string line;
  // cxxopts starts with the blank line that would follow a usage line, and leaves a
  // space at the end of each line it wraps.
  bool started = false;
  while (std::getline(lines, line)) {
    started = started || !line.empty();
    if (started) {
      line.erase(line.find_last_not_of(' ') + 1);
      text += line + "\n";
    }
  }
  return text;
}

}  // namespace

std::vector<const OptionSpec*> synopsis_options(Command command) {
  std::vector<const OptionSpec*> options;
  for (const OptionSpec& option : option_table()) {
    if (option.in_synopsis && applies_to(option, command)) {
      options.push_back(&option);
    }
  }
  return options;
}

std::string usage_line(const CommandSpec& command) {
  std::string line = std::string("rbd-sync ") + command.name;
  for (const OptionSpec* option : synopsis_options(command.command)) {
    line += std::string(" [--") + option->long_name;
    if (option->kind != ValueKind::none) {
      line += std::string(" ") + option->value_name;
    }
    line += option->kind == ValueKind::repeated ? "]..." : "]";
  }
  return line + " [OPTIONS]";
}

std::string global_help() {
  std::string text = "rbd-sync keeps a PostgreSQL inventory of Ceph RBD images up to date.\n\n";
  text += "Usage:\n";
  for (const CommandSpec& command : command_table()) {
    text += "  " + usage_line(command) + "\n";
  }
  text += "  rbd-sync help [COMMAND]\n\nCommands:\n";
  for (const CommandSpec& command : command_table()) {
    text += "  " + std::string(command.name) +
            std::string(9 - std::string(command.name).size(), ' ') + command.summary + "\n";
  }
  text += "  help     print this help, or every option of COMMAND\n\n";

  cxxopts::Options options = help_options("rbd-sync");
  for (const OptionSpec& option : option_table()) {
    if ((option.commands & k_admin_commands) == k_admin_commands) {
      add_table_option(options, option, Purpose::help, k_common_group);
    }
  }
  text += option_lines(options, {k_common_group});
  text += "\n'rbd-sync help COMMAND' lists every option of COMMAND (as COMMAND --help).\n";
  return text;
}

std::string command_help(Command command) {
  const CommandSpec* spec = nullptr;
  for (const CommandSpec& candidate : command_table()) {
    if (candidate.command == command) {
      spec = &candidate;
    }
  }
  if (spec == nullptr) {
    return global_help();
  }
  std::string text = "rbd-sync " + std::string(spec->name) + ": " + spec->summary + ".\n\n";
  text += "Usage:\n  " + usage_line(*spec) + "\n\n";
  text += wrapped(spec->description, "") + "\n";

  cxxopts::Options options = help_options("rbd-sync " + std::string(spec->name));
  std::vector<std::string> groups;
  for (const OptionGroup group : option_groups()) {
    for (const OptionSpec& option : option_table()) {
      if (option.group == group && applies_to(option, command)) {
        add_table_option(options, option, Purpose::help, group_name(group));
        if (groups.empty() || groups.back() != group_name(group)) {
          groups.emplace_back(group_name(group));
        }
      }
    }
  }
  text += option_lines(options, groups);
  text += "\n'rbd-sync help' lists the other commands.\n";
  return text;
}

}  // namespace rbdsync::cli
