#pragma once

#include <string>
#include <vector>

#include "cli/option_table.hpp"
#include "cli/options.hpp"

namespace rbdsync::cli {

/// `rbd-sync --help` and `rbd-sync help`: the usage line of every command, what each
/// does, and the options that every command takes.
std::string global_help();

/// `rbd-sync COMMAND --help` and `rbd-sync help COMMAND`: its usage line, what it does,
/// and every option it takes, grouped.
std::string command_help(Command command);

/// The options named in the usage line of `command`, in table order.
std::vector<const OptionSpec*> synopsis_options(Command command);

/// The usage line of `command`: "rbd-sync run [--lock-file PATH] ... [OPTIONS]".
std::string usage_line(const CommandSpec& command);

}  // namespace rbdsync::cli
