#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"

namespace rbdsync::cli {

/// The commands an option applies to: one bit per command.
using CommandSet = unsigned;

/// The bit of `command` in a CommandSet; 0 for help and version, which are not commands
/// that take options.
constexpr CommandSet bit(Command command) {
  switch (command) {
    case Command::run:
      return 1U;
    case Command::migrate:
      return 2U;
    case Command::status:
      return 4U;
    case Command::serve:
      return 8U;
    case Command::help:
    case Command::version:
      return 0U;
  }
  return 0U;
}

/// The commands an admin runs, which take the common options (output, logging, help).
inline constexpr CommandSet k_admin_commands =
    bit(Command::run) | bit(Command::migrate) | bit(Command::status);
/// ... and `serve`, which the trigger unit runs: its run's options come from the settings.
inline constexpr CommandSet k_all_commands = k_admin_commands | bit(Command::serve);

/// What an option takes after its name.
enum class ValueKind {
  none,      ///< a switch
  text,      ///< one string
  number,    ///< one integer
  repeated,  ///< one string per use; the option may be given again
};

/// The sections of the help and of the man page's OPTIONS, in the order shown.
enum class OptionGroup { guard, ceph, database, output, general };

/// One option, as the parser, `--help` and the man page all take it.
struct OptionSpec {
  const char* long_name = "";   ///< a flag::k_* constant
  const char* short_name = "";  ///< one letter, or "" for none
  ValueKind kind = ValueKind::none;
  /// What follows the option (PATH, SECONDS, plain|json); "" for switches.
  const char* value_name = "";
  /// One sentence without its final period; names no default, nor a number's range
  /// (help_sentence() adds them).
  const char* help = "";
  /// Told once, as "(default: ...)" or, after a number's range, "(1 to 3600; default: 30)";
  /// "" when there is nothing to tell.
  const char* default_text = "";
  /// Whether default_text is also the value the parser assumes when the option is absent
  /// (otherwise it describes what happens, as "$CEPH_CONF, then /etc/ceph/NAME.conf ...").
  bool default_is_value = false;
  OptionGroup group = OptionGroup::general;
  CommandSet commands = 0;   ///< where it is accepted; anywhere else it is a usage error
  bool in_synopsis = false;  ///< named in the command's usage line
  /// A ValueKind::number takes `low` to `high`: the parser refuses others, the help tells
  /// them.
  int low = 0;
  int high = 0;
  /// An older long name that still works (kept for the scripts that use it), or "".
  const char* alias = "";
};

/// One command, as `--help` and the man page list it.
struct CommandSpec {
  Command command;
  const char* name;
  const char* summary;      ///< one line without its final period, for the list of commands
  const char* description;  ///< a paragraph for `rbd-sync help COMMAND`
};

/// Every option, in the order the help lists them within a group.
const std::vector<OptionSpec>& option_table();

/// run, migrate, status and serve, in the order the help lists them.
const std::vector<CommandSpec>& command_table();

/// The command called `name`, or nullptr.
const CommandSpec* find_command(const std::string& name);

/// The option called `long_name`, or nullptr.
const OptionSpec* find_option(const std::string& long_name);

/// What `--help` and the man page say of `option`: its help, then in parentheses its
/// older name, its range and its default: "... (1 to 3600; default: 30)".
std::string help_sentence(const OptionSpec& option);

/// Whether `option` is accepted by `command`.
bool applies_to(const OptionSpec& option, Command command);

/// The heading of `group` ("Guard", "Ceph", ...).
const char* group_name(OptionGroup group);

/// Every group, in the order shown.
const std::vector<OptionGroup>& option_groups();

/// The names of the commands in `commands`, quoted and joined for a sentence:
/// "'run'", "'run' and 'status'", "'run', 'migrate' and 'status'"; each name after
/// `before` ("'rbd-sync run'"), the last two joined by `last_joiner`.
std::string quoted_command_names(CommandSet commands, const std::string& before = "",
                                 const char* last_joiner = " and ");

}  // namespace rbdsync::cli
