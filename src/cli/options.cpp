#include "cli/options.hpp"

#include <algorithm>

#include <cxxopts.hpp>

#include "cli/cxxopts_table.hpp"
#include "cli/help.hpp"
#include "cli/option_table.hpp"
#include "common/error.hpp"

namespace rbdsync::cli {

namespace {

constexpr const char* k_usage_hint = "see 'rbd-sync --help'";
constexpr const char* k_command_hint =
    "use 'rbd-sync run', 'rbd-sync migrate' or 'rbd-sync status'";
/// The positional arguments: the command, and what follows it (a topic for `help`).
constexpr const char* k_command = "command";
constexpr const char* k_operands = "operands";

/// One parser for every command, built from the option table: which command an option
/// belongs to is checked after parsing, so that the error can say where it applies.
cxxopts::Options make_options() {
  cxxopts::Options options("rbd-sync");
  for (const OptionSpec& option : option_table()) {
    add_table_option(options, option, Purpose::parse, group_name(option.group));
  }
  options.add_options()(k_command, "", cxxopts::value<std::string>())(
      k_operands, "", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({k_command, k_operands});
  return options;
}

/// The command named on the command line; for `help`, the command asked about.
struct CommandLine {
  const CommandSpec* command = nullptr;  ///< nullptr: none named
  bool help = false;                     ///< `help` or --help
};

CommandLine read_command(const cxxopts::ParseResult& result) {
  CommandLine line;
  line.help = result.count(flag::k_help) != 0;
  std::vector<std::string> operands;
  if (result.count(k_operands) != 0) {
    operands = result[k_operands].as<std::vector<std::string>>();
  }
  if (result.count(k_command) != 0) {
    const auto name = result[k_command].as<std::string>();
    if (name == "help") {
      line.help = true;
      if (!operands.empty()) {
        line.command = find_command(operands.front());
        if (line.command == nullptr) {
          throw Error(ExitCode::usage, "unknown command '" + operands.front() + "'",
                      "use 'rbd-sync help run', 'rbd-sync help migrate' or "
                      "'rbd-sync help status'");
        }
        operands.erase(operands.begin());
      }
    } else {
      line.command = find_command(name);
      if (line.command == nullptr) {
        throw Error(ExitCode::usage, "unknown command '" + name + "'", k_command_hint);
      }
    }
  }
  if (!operands.empty()) {
    throw Error(ExitCode::usage, "unexpected argument '" + operands.front() + "'", k_usage_hint);
  }
  return line;
}

/// Refuses an option given to a command that would ignore it.
void refuse_foreign_options(const cxxopts::ParseResult& result, const CommandSpec& command) {
  for (const OptionSpec& option : option_table()) {
    if (result.count(option.long_name) != 0 && !applies_to(option, command.command)) {
      throw Error(ExitCode::usage,
                  std::string("--") + option.long_name + " applies to " +
                      quoted_command_names(option.commands) + " only",
                  std::string("'rbd-sync help ") + command.name + "' lists the options of '" +
                      command.name + "'");
    }
  }
}

OutputFormat parse_format(const std::string& name) {
  if (name == "plain") {
    return OutputFormat::plain;
  }
  if (name == "json") {
    return OutputFormat::json;
  }
  throw Error(ExitCode::usage, "--format must be plain or json, not '" + name + "'", k_usage_hint);
}

std::string client_name(const cxxopts::ParseResult& result) {
  if (result.count(flag::k_id) != 0 && result.count(flag::k_name) != 0) {
    throw Error(ExitCode::usage, "--id and --name both name the Ceph client", "give one of them");
  }
  if (result.count(flag::k_name) != 0) {
    auto name = result[flag::k_name].as<std::string>();
    if (name.rfind("client.", 0) != 0 || name.size() == 7) {
      throw Error(ExitCode::usage, "--name must look like client.ID, not '" + name + "'",
                  "or give --id ID");
    }
    return name;
  }
  if (result.count(flag::k_id) != 0) {
    const auto id = result[flag::k_id].as<std::string>();
    if (id.empty() || id.rfind("client.", 0) == 0) {
      throw Error(ExitCode::usage, "--id takes the id without 'client.', not '" + id + "'",
                  "e.g. --id rbdsync");
    }
    return "client." + id;
  }
  return "client.admin";
}

void require_non_empty(const std::string& value, const char* name) {
  if (value.empty()) {
    throw Error(ExitCode::usage, std::string("--") + name + " must not be empty", k_usage_hint);
  }
}

}  // namespace

Config parse(int argc, const char* const argv[]) {
  cxxopts::Options options = make_options();
  Config config;
  try {
    const cxxopts::ParseResult result = options.parse(argc, argv);
    if (!result.unmatched().empty()) {
      throw Error(ExitCode::usage, "unexpected argument '" + result.unmatched().front() + "'",
                  k_usage_hint);
    }
    const CommandLine line = read_command(result);
    if (line.help) {
      config.command = Command::help;
      config.help_text =
          line.command != nullptr ? command_help(line.command->command) : global_help();
      return config;
    }
    if (result.count(flag::k_version) != 0) {
      config.command = Command::version;
      return config;
    }
    if (line.command == nullptr) {
      throw Error(ExitCode::usage, "no command given", k_command_hint);
    }
    config.command = line.command->command;
    refuse_foreign_options(result, *line.command);

    config.db = result[flag::k_db].as<std::string>();
    config.lock_file = result[flag::k_lock_file].as<std::string>();
    require_non_empty(config.lock_file, flag::k_lock_file);
    config.wait_seconds = result[flag::k_wait].as<int>();
    if (config.wait_seconds < 0 || config.wait_seconds > 86400) {
      throw Error(ExitCode::usage,
                  "--wait must be 0 to 86400 seconds, not " + std::to_string(config.wait_seconds),
                  k_usage_hint);
    }
    config.detach = result.count(flag::k_detach) != 0;
    if (config.detach && config.wait_seconds > 0) {
      throw Error(ExitCode::usage, "--detach and --wait exclude each other",
                  "a detached run answers at once; drop --wait (the button retries, not waits)");
    }
    config.trigger = result[flag::k_trigger].as<std::string>();
    if (config.trigger != "cron" && config.trigger != "web" && config.trigger != "manual") {
      throw Error(ExitCode::usage,
                  "--trigger must be cron, web or manual, not '" + config.trigger + "'",
                  k_usage_hint);
    }
    if (result.count(flag::k_ceph_conf) != 0) {
      config.ceph_conf = result[flag::k_ceph_conf].as<std::string>();
      require_non_empty(config.ceph_conf, flag::k_ceph_conf);
    }
    config.ceph_client = client_name(result);
    if (result.count(flag::k_keyring) != 0) {
      config.keyring = result[flag::k_keyring].as<std::string>();
      require_non_empty(config.keyring, flag::k_keyring);
    }
    if (result.count(flag::k_pool) != 0) {
      config.pools = result[flag::k_pool].as<std::vector<std::string>>();
      for (const std::string& pool : config.pools) {
        require_non_empty(pool, flag::k_pool);
      }
      std::sort(config.pools.begin(), config.pools.end());
      config.pools.erase(std::unique(config.pools.begin(), config.pools.end()), config.pools.end());
    }
    config.ceph_timeout_seconds = result[flag::k_ceph_timeout].as<int>();
    config.exact_usage = result.count(flag::k_exact_usage) != 0;
    const std::string reader = result[flag::k_reader].as<std::string>();
    if (reader == "librbd") {
      config.reader = ImageReader::librbd;
    } else if (reader == "direct") {
      config.reader = ImageReader::direct;
    } else {
      throw Error(ExitCode::usage, "--reader must be librbd or direct, not '" + reader + "'",
                  k_usage_hint);
    }
    if (config.ceph_timeout_seconds < 1 || config.ceph_timeout_seconds > 3600) {
      throw Error(ExitCode::usage,
                  "--ceph-timeout must be 1 to 3600 seconds, not " +
                      std::to_string(config.ceph_timeout_seconds),
                  k_usage_hint);
    }
    config.db_timeout_seconds = result[flag::k_db_timeout].as<int>();
    if (config.db_timeout_seconds < 1 || config.db_timeout_seconds > 86400) {
      throw Error(ExitCode::usage,
                  "--db-timeout must be 1 to 86400 seconds, not " +
                      std::to_string(config.db_timeout_seconds),
                  k_usage_hint);
    }
    if (result.count(flag::k_metrics_file) != 0) {
      config.metrics_file = result[flag::k_metrics_file].as<std::string>();
      require_non_empty(config.metrics_file, flag::k_metrics_file);
    }
    if (result.count(flag::k_log_file) != 0) {
      config.log_file = result[flag::k_log_file].as<std::string>();
      require_non_empty(config.log_file, flag::k_log_file);
    }
    config.format = result.count(flag::k_json) != 0
                        ? OutputFormat::json
                        : parse_format(result[flag::k_format].as<std::string>());
    config.quiet = result.count(flag::k_quiet) != 0;
    config.log_level =
        result.count(flag::k_verbose) != 0 ? "debug" : result[flag::k_log_level].as<std::string>();
    static const std::vector<std::string> k_levels = {"trace", "debug",    "info", "warn",
                                                      "error", "critical", "off"};
    if (std::find(k_levels.begin(), k_levels.end(), config.log_level) == k_levels.end()) {
      throw Error(ExitCode::usage, "unknown --log-level '" + config.log_level + "'",
                  "use trace, debug, info, warn, error, critical or off");
    }
  } catch (const cxxopts::exceptions::exception& e) {
    throw Error(ExitCode::usage, e.what(), k_usage_hint);
  }
  return config;
}

}  // namespace rbdsync::cli
