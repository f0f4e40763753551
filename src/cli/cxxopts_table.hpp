#pragma once

#include <string>

#include <cxxopts.hpp>

#include "cli/option_table.hpp"

// Inside src/cli only: the one place where the option table becomes cxxopts options, so
// that the parser and the help cannot describe an option differently.

namespace rbdsync::cli {

/// What the cxxopts options are built for.
enum class Purpose {
  /// Parsing argv: an option whose default is a value gets it as cxxopts' default.
  parse,
  /// Printing help: the default is told once, by the description, and cxxopts is given
  /// none (it would add a second "(default: ...)").
  help,
};

/// Adds `option` to `options` under the heading `group`.
void add_table_option(cxxopts::Options& options, const OptionSpec& option, Purpose purpose,
                      const std::string& group);

}  // namespace rbdsync::cli
