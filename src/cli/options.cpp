#include "cli/options.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

#include <cxxopts.hpp>

#include "cli/ceph_args.hpp"
#include "cli/cxxopts_table.hpp"
#include "cli/help.hpp"
#include "cli/option_table.hpp"
#include "common/error.hpp"
#include "common/run_record.hpp"
#include "common/text.hpp"

namespace rbdsync::cli {

namespace {

constexpr const char* k_usage_hint = "see 'rbd-sync --help'";
constexpr std::size_t k_max_cluster_name = 64;
/// A named cluster's lock file is PREFIX NAME SUFFIX (sync@NAME.lock).
constexpr std::string_view k_cluster_lock_prefix = "sync@";
constexpr std::string_view k_lock_suffix = ".lock";
/// "use 'rbd-sync run', 'rbd-sync migrate' or 'rbd-sync status'" (`before` "rbd-sync "):
/// the commands an admin runs; serve is the trigger unit's.
std::string command_hint(const std::string& before) {
  return "use " + quoted_command_names(k_admin_commands, before, " or ");
}
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
                      command_hint("rbd-sync help "));
        }
        operands.erase(operands.begin());
      }
    } else {
      line.command = find_command(name);
      if (line.command == nullptr) {
        throw Error(ExitCode::usage, "unknown command '" + name + "'", command_hint("rbd-sync "));
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

/// `value` as a client name, given by --id (`from_id`) or --name; `where` says where it
/// was given, for the error.
std::string checked_client_name(const std::string& value, bool from_id, const std::string& where) {
  if (from_id) {
    if (value.empty() || value.rfind("client.", 0) == 0) {
      throw Error(ExitCode::usage,
                  "--id" + where + " takes the id without 'client.', not '" + value + "'",
                  "e.g. --id rbdsync");
    }
    return "client." + value;
  }
  if (value.rfind("client.", 0) != 0 || value.size() == 7) {
    throw Error(ExitCode::usage,
                "--name" + where + " must look like client.ID, not '" + value + "'",
                "or give --id ID");
  }
  return value;
}

/// The client from --id or --name, else from CEPH_ARGS, else client.admin.
std::string client_name(const cxxopts::ParseResult& result, const EarlyCephArgs& env) {
  if (result.count(flag::k_id) != 0 && result.count(flag::k_name) != 0) {
    throw Error(ExitCode::usage, "--id and --name both name the Ceph client", "give one of them");
  }
  if (result.count(flag::k_name) != 0) {
    return checked_client_name(result[flag::k_name].as<std::string>(), false, "");
  }
  if (result.count(flag::k_id) != 0) {
    return checked_client_name(result[flag::k_id].as<std::string>(), true, "");
  }
  if (env.client_value) {
    return checked_client_name(*env.client_value, env.client_from_id, " in CEPH_ARGS");
  }
  return "client.admin";
}

/// Ceph puts the cluster name into file names ($cluster.conf, $cluster.$name.keyring)
/// and so does rbd-sync (the lock file): no path separators, no leading dot or dash.
std::string checked_cluster(const std::string& name, const std::string& where) {
  if (!is_cluster_name(name)) {
    throw Error(ExitCode::usage,
                "--cluster" + where + " must be " + cluster_name_rule() + ", not '" + name + "'",
                "give the name of /etc/ceph/NAME.conf, e.g. --cluster backup");
  }
  return name;
}

void require_non_empty(const std::string& value, const char* name) {
  if (value.empty()) {
    throw Error(ExitCode::usage, std::string("--") + name + " must not be empty", k_usage_hint);
  }
}

/// The value of the option `name` when given, refused when empty; std::nullopt when
/// not given.
std::optional<std::string> non_empty_value(const cxxopts::ParseResult& result, const char* name) {
  if (result.count(name) == 0) {
    return std::nullopt;
  }
  auto value = result[name].as<std::string>();
  require_non_empty(value, name);
  return value;
}

/// The number of `unit` the option `name` gives, refused unless in its range (the option
/// table's low to high).
int number_in(const cxxopts::ParseResult& result, const char* name, const char* unit) {
  const OptionSpec* option = find_option(name);
  if (option == nullptr || option->kind != ValueKind::number) {
    throw Error(ExitCode::internal, std::string("--") + name + " is no number option of the table",
                "a bug: name a ValueKind::number option of cli/option_table.cpp");
  }
  const int number = result[name].as<int>();
  if (number < option->low || number > option->high) {
    throw Error(ExitCode::usage,
                std::string("--") + name + " must be " + std::to_string(option->low) + " to " +
                    std::to_string(option->high) + " " + unit + ", not " + std::to_string(number),
                k_usage_hint);
  }
  return number;
}

int seconds_in(const cxxopts::ParseResult& result, const char* name) {
  return number_in(result, name, "seconds");
}

/// --requested-by goes into the holder record, the run history and log lines, and is
/// shown on a page: one printable line of bounded length, or a usage error.
std::string checked_requester(const std::string& name) {
  if (!is_requester_name(name)) {
    throw Error(ExitCode::usage,
                "--requested-by must be " + requester_name_rule() + ", not '" +
                    display_text(name.substr(0, 64), Controls::escape) +
                    (name.size() > 64 ? "...'" : "'"),
                "pass the signed-in user's name, e.g. --requested-by alice");
  }
  return name;
}

void read_guard_options(const cxxopts::ParseResult& result, Config& config) {
  // The cluster's own lock file unless one is named: read_ceph_options() has the cluster.
  config.lock_file = non_empty_value(result, flag::k_lock_file).value_or("");
  config.wait_seconds = seconds_in(result, flag::k_wait);
  config.conflict_exit_code = number_in(result, flag::k_conflict_exit_code, "(an exit status)");
  config.detach = result.count(flag::k_detach) != 0;
  if (config.detach && config.wait_seconds > 0) {
    throw Error(ExitCode::usage, "--detach and --wait exclude each other",
                "a detached run answers at once; drop --wait (the button retries, not waits)");
  }
  config.trigger = result[flag::k_trigger].as<std::string>();
  if (!is_trigger_name(config.trigger)) {
    throw Error(ExitCode::usage,
                "--trigger must be cron, web or manual, not '" + config.trigger + "'",
                k_usage_hint);
  }
  if (result.count(flag::k_requested_by) != 0) {
    config.requested_by = checked_requester(result[flag::k_requested_by].as<std::string>());
  }
}

ImageReader parse_reader(const std::string& name) {
  if (name == "librbd") {
    return ImageReader::librbd;
  }
  if (name == "direct") {
    return ImageReader::direct;
  }
  throw Error(ExitCode::usage, "--reader must be librbd or direct, not '" + name + "'",
              k_usage_hint);
}

/// The mons as librados takes them. Rook keeps a cluster's mons in the ConfigMap
/// rook-ceph-mon-endpoints as `a=10.0.0.1:6789,b=10.0.0.2:6789`, which a pod gets as an
/// environment variable; librados refuses the `NAME=` prefixes ("unable to parse
/// addrs"), so they are dropped: a pod passes the value as it is.
std::string mon_addresses(const std::string& value) {
  const auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  };
  std::string addresses;
  std::size_t start = 0;
  int brackets = 0;  // `[v2:...,v1:...]` is one address with commas inside
  for (std::size_t i = 0; i <= value.size(); ++i) {
    if (i < value.size() && value[i] == '[') {
      ++brackets;
    } else if (i < value.size() && value[i] == ']') {
      --brackets;
    }
    if (i < value.size() && !(value[i] == ',' && brackets == 0)) {
      continue;
    }
    std::string_view entry(value.data() + start, i - start);
    const std::size_t equals = entry.find('=');
    if (equals != std::string_view::npos && equals > 0 &&
        std::all_of(entry.begin(), entry.begin() + static_cast<std::ptrdiff_t>(equals),
                    is_name_char)) {
      entry.remove_prefix(equals + 1);
    }
    if (!addresses.empty()) {
      addresses += ',';
    }
    addresses += entry;
    start = i + 1;
  }
  return addresses;
}

/// Refuses CEPH_ARGS on which Ceph would end the process, where `command` reads it: rbd's
/// early options where their cluster or client is used (run, status), and librados' own
/// where librados reads them (run).
void refuse_what_ceph_would_exit_on(Command command, const EarlyCephArgs& early,
                                    std::string_view ceph_args) {
  std::optional<std::string> problem;
  if (command == Command::run || command == Command::status) {
    problem = early.problem;
  }
  if (!problem && command == Command::run) {
    problem = librados_ceph_args_problem(ceph_args);
  }
  if (problem) {
    throw Error(ExitCode::usage, *problem,
                "complete or remove it in CEPH_ARGS, which rbd-sync reads as rbd does");
  }
}

/// The Ceph options of argv, with CEPH_ARGS's early ones (`env`) where argv has none;
/// librados reads CEPH_ARGS's other options itself, below those of argv.
void read_ceph_options(const cxxopts::ParseResult& result, const EarlyCephArgs& env,
                       Config& config) {
  if (auto cluster = non_empty_value(result, flag::k_cluster)) {
    config.ceph_cluster = checked_cluster(*cluster, "");
  } else if (env.cluster) {
    config.ceph_cluster = checked_cluster(*env.cluster, " in CEPH_ARGS");
  }
  if (config.lock_file.empty()) {
    config.lock_file = default_lock_file(config.ceph_cluster);
  }
  if (auto conf = non_empty_value(result, flag::k_conf)) {
    config.ceph_conf = std::move(*conf);
  } else if (env.conf) {
    config.ceph_conf = *env.conf;
  }
  config.ceph_client = client_name(result, env);
  if (auto keyring = non_empty_value(result, flag::k_keyring)) {
    config.keyring = std::move(*keyring);
  }
  if (auto keyfile = non_empty_value(result, flag::k_keyfile)) {
    config.keyfile = std::move(*keyfile);
  }
  if (auto mon_host = non_empty_value(result, flag::k_mon_host)) {
    config.mon_host = mon_addresses(*mon_host);
  }
  if (result.count(flag::k_pool) != 0) {
    config.pools = result[flag::k_pool].as<std::vector<std::string>>();
    for (const std::string& pool : config.pools) {
      require_non_empty(pool, flag::k_pool);
    }
    std::sort(config.pools.begin(), config.pools.end());
    config.pools.erase(std::unique(config.pools.begin(), config.pools.end()), config.pools.end());
  }
  config.exact_usage = result.count(flag::k_exact_usage) != 0;
  config.reader = parse_reader(result[flag::k_reader].as<std::string>());
  config.ceph_timeout_seconds = seconds_in(result, flag::k_ceph_timeout);
}

void read_database_options(const cxxopts::ParseResult& result, Config& config) {
  config.db = result[flag::k_db].as<std::string>();
  config.db_timeout_seconds = seconds_in(result, flag::k_db_timeout);
  if (result.count(flag::k_history_days) != 0) {
    config.history_days = number_in(result, flag::k_history_days, "days");
  }
}

void read_output_options(const cxxopts::ParseResult& result, Config& config) {
  if (auto metrics_file = non_empty_value(result, flag::k_metrics_file)) {
    config.metrics_file = std::move(*metrics_file);
  }
  if (auto log_file = non_empty_value(result, flag::k_log_file)) {
    config.log_file = std::move(*log_file);
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
}

}  // namespace

bool is_cluster_name(const std::string& name) {
  return !name.empty() && name.size() <= k_max_cluster_name && name.front() != '-' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
         });
}

std::string cluster_name_rule() {
  return "1 to " + std::to_string(k_max_cluster_name) + " letters, digits, '-' or '_'";
}

bool is_trigger_name(const std::string& name) {
  return name == "cron" || name == "web" || name == "manual";
}

bool is_requester_name(const std::string& name) {
  return !name.empty() && name.size() <= k_max_requested_by && is_printable_line(name);
}

std::string requester_name_rule() {
  return "1 to " + std::to_string(k_max_requested_by) + " bytes of printable UTF-8";
}

std::string default_lock_file(const std::string& cluster) {
  if (cluster == k_default_cluster) {
    return k_default_lock_file;
  }
  std::string path = std::string(k_lock_directory) + "/";
  path.append(k_cluster_lock_prefix).append(cluster).append(k_lock_suffix);
  return path;
}

std::optional<std::string> cluster_of_lock_file_name(const std::string& file_name) {
  const std::string_view name = file_name;
  const std::size_t affixes = k_cluster_lock_prefix.size() + k_lock_suffix.size();
  if (name.size() <= affixes ||
      name.substr(0, k_cluster_lock_prefix.size()) != k_cluster_lock_prefix ||
      name.substr(name.size() - k_lock_suffix.size()) != k_lock_suffix) {
    return std::nullopt;
  }
  return std::string(name.substr(k_cluster_lock_prefix.size(), name.size() - affixes));
}

Config parse(int argc, const char* const argv[], const char* ceph_args) {
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
      throw Error(ExitCode::usage, "no command given", command_hint("rbd-sync "));
    }
    config.command = line.command->command;
    refuse_foreign_options(result, *line.command);
    if (config.command == Command::serve) {
      // The run's options come from the settings files, once the request has named the
      // cluster (front/serve.cpp); the answer is for a program: always JSON.
      config.settings_dir = non_empty_value(result, flag::k_settings_dir)
                                .value_or(std::string(k_default_settings_dir));
      config.connection = non_empty_value(result, flag::k_connection).value_or("");
      config.format = OutputFormat::json;
      return config;
    }
    // In the order of the help's groups, which is the order the checks were made in.
    read_guard_options(result, config);
    const std::string_view environment_args = ceph_args != nullptr ? ceph_args : "";
    const EarlyCephArgs early = early_ceph_args(environment_args);
    refuse_what_ceph_would_exit_on(config.command, early, environment_args);
    read_ceph_options(result, early, config);
    read_database_options(result, config);
    read_output_options(result, config);
  } catch (const cxxopts::exceptions::exception& e) {
    throw Error(ExitCode::usage, e.what(), k_usage_hint);
  }
  return config;
}

}  // namespace rbdsync::cli
