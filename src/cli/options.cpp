#include "cli/options.hpp"

#include <algorithm>

#include <cxxopts.hpp>

#include "common/error.hpp"

namespace rbdsync::cli {

namespace {

constexpr const char* k_usage_hint = "see 'rbd-sync --help'";

cxxopts::Options make_options() {
  cxxopts::Options options("rbd-sync",
                           "Keeps a PostgreSQL inventory of Ceph RBD images up to date.\n");
  options.custom_help("[OPTIONS]");
  options.positional_help("run|migrate|status");
  // clang-format off
  options.add_options()
      ("command", "run | migrate | status", cxxopts::value<std::string>())
      ("h,help", "print this help and exit")
      ("version", "print the version and exit");
  options.add_options("Database")
      (flag::k_db, "libpq conninfo or URI, without password (passwords come from "
                   "~/.pgpass, PGPASSFILE or pg_service.conf)",
       cxxopts::value<std::string>()->default_value(k_default_db))
      (flag::k_db_timeout, "seconds any one database statement may take",
       cxxopts::value<int>()->default_value("300"));
  options.add_options("Guard")
      (flag::k_lock_file, "the lock file every caller shares",
       cxxopts::value<std::string>()->default_value(k_default_lock_file))
      (flag::k_wait, "wait up to this many seconds for a running sync to finish "
                     "(default 0: exit 75 at once)",
       cxxopts::value<int>()->default_value("0"))
      (flag::k_trigger, "who started this run: cron | web | manual",
       cxxopts::value<std::string>()->default_value("manual"))
      (flag::k_detach, "run: return once this run holds both guards ('started', exit 0) or "
                       "found one busy (exit 75); the sync goes on in the background, "
                       "logging to --log-file (default: detached.log beside the lock file)");
  options.add_options("Ceph")
      (flag::k_ceph_conf, "ceph.conf path (default: $CEPH_CONF, /etc/ceph/ceph.conf)",
       cxxopts::value<std::string>())
      (flag::k_id, "client id, as in 'rbd --id' (default: admin)", cxxopts::value<std::string>())
      ("n,name", "client name, as in 'rbd --name client.ID'", cxxopts::value<std::string>())
      (flag::k_keyring, "keyring path (default: 'keyring' from ceph.conf)",
       cxxopts::value<std::string>())
      ("p,pool", "pool to sync; repeatable (default: every pool with the rbd application)",
       cxxopts::value<std::vector<std::string>>())
      (flag::k_ceph_timeout, "seconds to wait for a mon or OSD before failing",
       cxxopts::value<int>()->default_value("30"))
      (flag::k_exact_usage,
       "compute used bytes of images without a valid fast-diff map too (reads every object: slow)")
      (flag::k_reader, "how images are read: direct (decode header objects, librbd for what it "
                       "does not understand) | librbd (open each)",
       cxxopts::value<std::string>()->default_value("direct"));
  options.add_options("Output")
      (flag::k_format, "result on stdout: plain | json", cxxopts::value<std::string>()->default_value("plain"))
      (flag::k_json, "same as --format json")
      ("v,verbose", "log debug messages on stderr")
      ("q,quiet", "print no result line; errors still go to stderr")
      (flag::k_log_file, "append logs to this file instead of stderr",
       cxxopts::value<std::string>())
      (flag::k_metrics_file, "write Prometheus textfile metrics of the run here",
       cxxopts::value<std::string>())
      (flag::k_log_level, "trace | debug | info | warn | error | off",
       cxxopts::value<std::string>()->default_value("warn"));
  // clang-format on
  options.parse_positional({"command"});
  return options;
}

Command parse_command(const std::string& name) {
  if (name == "run") {
    return Command::run;
  }
  if (name == "migrate") {
    return Command::migrate;
  }
  if (name == "status") {
    return Command::status;
  }
  throw Error(ExitCode::usage, "unknown command '" + name + "'",
              "use 'rbd-sync run', 'rbd-sync migrate' or 'rbd-sync status'");
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
    if (result.count(flag::k_help) != 0) {
      config.command = Command::help;
      config.help_text = options.help({"", "Guard", "Ceph", "Database", "Output"});
      return config;
    }
    if (result.count(flag::k_version) != 0) {
      config.command = Command::version;
      return config;
    }
    if (result.count("command") == 0) {
      throw Error(ExitCode::usage, "no command given",
                  "use 'rbd-sync run', 'rbd-sync migrate' or 'rbd-sync status'");
    }
    config.command = parse_command(result["command"].as<std::string>());

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
    if (config.detach && config.command != Command::run) {
      throw Error(ExitCode::usage, "--detach applies to 'run' only", k_usage_hint);
    }
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
