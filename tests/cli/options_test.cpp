#include "cli/options.hpp"

#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/option_table.hpp"
#include "common/error.hpp"
#include "common/run_record.hpp"

namespace rbdsync::cli {
namespace {

Config parse_args(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"rbd-sync"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse(static_cast<int>(argv.size()), argv.data());
}

ExitCode failure_of(std::initializer_list<const char*> args) {
  try {
    parse_args(args);
  } catch (const Error& error) {
    return error.code();
  }
  return ExitCode::ok;
}

/// The error parsing `args` throws; fails the test when it throws none.
Error error_of(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"rbd-sync"};
  for (const std::string& arg : args) {
    argv.push_back(arg.c_str());
  }
  try {
    parse(static_cast<int>(argv.size()), argv.data());
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "no error for " << args.front() << " " << args.back();
  return Error(ExitCode::ok, "");
}

/// A value `option` accepts: the first of its choices, or one of the right kind.
std::string valid_value(const OptionSpec& option) {
  const std::string value_name = option.value_name;
  if (option.kind == ValueKind::number) {
    return "10";
  }
  if (value_name.find('|') != std::string::npos) {
    return value_name.substr(0, value_name.find('|'));
  }
  if (value_name == "client.ID") {
    return "client.x";
  }
  if (value_name == "LEVEL") {
    return "info";
  }
  return "x";
}

TEST(CliOptions, RunWithoutOptionsUsesTheDocumentedDefaults) {
  const Config config = parse_args({"run"});
  EXPECT_EQ(config.command, Command::run);
  EXPECT_EQ(config.lock_file, "/run/lock/rbd-sync/sync.lock");
  EXPECT_EQ(config.db, "service=rbd-sync");
  EXPECT_EQ(config.ceph_client, "client.admin");
  EXPECT_TRUE(config.ceph_conf.empty());
  EXPECT_TRUE(config.pools.empty());
  EXPECT_EQ(config.ceph_timeout_seconds, 30);
  EXPECT_EQ(config.format, OutputFormat::plain);
}

TEST(CliOptions, IdBecomesTheClientNameAsInTheRbdCli) {
  EXPECT_EQ(parse_args({"run", "--id", "rbdsync"}).ceph_client, "client.rbdsync");
  EXPECT_EQ(parse_args({"run", "--name", "client.x"}).ceph_client, "client.x");
  EXPECT_EQ(parse_args({"run", "-n", "client.y"}).ceph_client, "client.y");
}

TEST(CliOptions, DetachIsARunOptionAndExcludesWaiting) {
  EXPECT_TRUE(parse_args({"run", "--detach"}).detach);
  EXPECT_FALSE(parse_args({"run"}).detach);
  EXPECT_EQ(failure_of({"migrate", "--detach"}), ExitCode::usage);
  EXPECT_EQ(failure_of({"status", "--detach"}), ExitCode::usage);
  EXPECT_EQ(failure_of({"run", "--detach", "--wait", "10"}), ExitCode::usage);
}

TEST(CliOptions, IdAndNameTogetherAreRejected) {
  EXPECT_EQ(failure_of({"run", "--id", "a", "--name", "client.b"}), ExitCode::usage);
}

TEST(CliOptions, NameWithoutClientPrefixIsRejected) {
  EXPECT_EQ(failure_of({"run", "--name", "admin"}), ExitCode::usage);
  EXPECT_EQ(failure_of({"run", "--id", "client.admin"}), ExitCode::usage);
}

TEST(CliOptions, RepeatedPoolsAreCollectedOnce) {
  const Config config = parse_args({"run", "-p", "vms", "--pool", "rbd", "--pool", "vms"});
  EXPECT_EQ(config.pools, (std::vector<std::string>{"rbd", "vms"}));
}

TEST(CliOptions, JsonFlagSelectsJsonFormat) {
  EXPECT_EQ(parse_args({"run", "--json"}).format, OutputFormat::json);
  EXPECT_EQ(parse_args({"run", "--format", "json"}).format, OutputFormat::json);
  EXPECT_EQ(failure_of({"run", "--format", "xml"}), ExitCode::usage);
}

TEST(CliOptions, UnknownOptionIsAUsageError) {
  EXPECT_EQ(failure_of({"run", "--frobnicate"}), ExitCode::usage);
}

TEST(CliOptions, MissingValueIsAUsageError) {
  EXPECT_EQ(failure_of({"run", "--lock-file"}), ExitCode::usage);
}

TEST(CliOptions, NonNumericTimeoutIsAUsageError) {
  EXPECT_EQ(failure_of({"run", "--ceph-timeout", "soon"}), ExitCode::usage);
  EXPECT_EQ(failure_of({"run", "--ceph-timeout", "0"}), ExitCode::usage);
}

TEST(CliOptions, UnknownOrMissingCommandIsAUsageError) {
  EXPECT_EQ(failure_of({"sync"}), ExitCode::usage);
  EXPECT_EQ(failure_of({}), ExitCode::usage);
  EXPECT_EQ(failure_of({"run", "extra"}), ExitCode::usage);
}

TEST(CliOptions, EmptyLockFileIsAUsageError) {
  EXPECT_EQ(failure_of({"run", "--lock-file", ""}), ExitCode::usage);
}

TEST(CliOptions, UnknownLogLevelIsAUsageError) {
  EXPECT_EQ(failure_of({"run", "--log-level", "loud"}), ExitCode::usage);
  EXPECT_EQ(parse_args({"run", "-v"}).log_level, "debug");
}

TEST(CliOptions, WaitAndTriggerDefaultToNoWaitAndManual) {
  const Config config = parse_args({"run"});
  EXPECT_EQ(config.wait_seconds, 0);
  EXPECT_EQ(config.trigger, "manual");
  EXPECT_EQ(parse_args({"run", "--wait", "30"}).wait_seconds, 30);
  EXPECT_EQ(parse_args({"run", "--trigger", "cron"}).trigger, "cron");
}

TEST(CliOptions, BadWaitOrTriggerIsAUsageError) {
  EXPECT_EQ(failure_of({"run", "--wait", "-1"}), ExitCode::usage);
  EXPECT_EQ(failure_of({"run", "--wait", "soon"}), ExitCode::usage);
  EXPECT_EQ(failure_of({"run", "--trigger", "button"}), ExitCode::usage);
}

TEST(CliOptions, RequestedByIsOnePrintableBoundedLine) {
  EXPECT_EQ(parse_args({"run"}).requested_by, "");
  EXPECT_EQ(parse_args({"run", "--trigger", "web", "--requested-by", "alice"}).requested_by,
            "alice");
  EXPECT_EQ(parse_args({"run", "--requested-by", "Jos\xc3\xa9 O'Neil"}).requested_by,
            "Jos\xc3\xa9 O'Neil");
  const std::string longest(k_max_requested_by, 'a');
  EXPECT_EQ(parse_args({"run", "--requested-by", longest.c_str()}).requested_by, longest);
  const std::string too_long = longest + "a";
  for (const char* bad : {"", "ali\nce", "bell\x07", "caf\xe9", too_long.c_str()}) {
    EXPECT_EQ(failure_of({"run", "--requested-by", bad}), ExitCode::usage) << bad;
  }
  EXPECT_EQ(failure_of({"status", "--requested-by", "alice"}), ExitCode::usage);
}

TEST(CliOptions, ReaderDefaultsToDirectAndAcceptsLibrbd) {
  EXPECT_EQ(parse_args({"run"}).reader, ImageReader::direct);
  EXPECT_EQ(parse_args({"run", "--reader", "direct"}).reader, ImageReader::direct);
  EXPECT_EQ(parse_args({"run", "--reader", "librbd"}).reader, ImageReader::librbd);
}

TEST(CliOptions, UnknownReaderIsAUsageError) {
  EXPECT_EQ(failure_of({"run", "--reader", "fast"}), ExitCode::usage);
}

TEST(CliOptions, StatusIsACommand) {
  EXPECT_EQ(parse_args({"status", "--lock-file", "/tmp/x.lock"}).command, Command::status);
}

TEST(CliOptions, HelpNeedsNoCommand) {
  const Config config = parse_args({"--help"});
  EXPECT_EQ(config.command, Command::help);
  EXPECT_NE(config.help_text.find("--lock-file"), std::string::npos);
}

TEST(CliOptions, EveryOptionIsAcceptedByItsCommandsAndRefusedByTheOthers) {
  for (const CommandSpec& command : command_table()) {
    for (const OptionSpec& option : option_table()) {
      std::vector<std::string> args = {command.name, std::string("--") + option.long_name};
      if (option.kind != ValueKind::none) {
        args.push_back(valid_value(option));
      }
      std::vector<const char*> argv{"rbd-sync"};
      for (const std::string& arg : args) {
        argv.push_back(arg.c_str());
      }
      if (applies_to(option, command.command)) {
        EXPECT_NO_THROW(parse(static_cast<int>(argv.size()), argv.data()))
            << command.name << " --" << option.long_name;
        continue;
      }
      const Error error = error_of(args);
      EXPECT_EQ(error.code(), ExitCode::usage);
      EXPECT_EQ(std::string(error.what()), std::string("--") + option.long_name + " applies to " +
                                               quoted_command_names(option.commands) + " only");
      EXPECT_NE(error.hint().find(std::string("rbd-sync help ") + command.name), std::string::npos)
          << error.hint();
    }
  }
}

TEST(CliOptions, MigrateRefusesPoolNamingItAndRun) {
  const Error error = error_of({"migrate", "--pool", "x"});
  EXPECT_EQ(error.code(), ExitCode::usage);
  EXPECT_STREQ(error.what(), "--pool applies to 'run' only");
  EXPECT_EQ(error_of({"migrate", "-p", "x"}).what(), std::string("--pool applies to 'run' only"));
}

TEST(CliOptions, StatusRefusesTheDatabaseAndQuiet) {
  EXPECT_STREQ(error_of({"status", "--db", "service=x"}).what(),
               "--db applies to 'run' and 'migrate' only");
  EXPECT_EQ(failure_of({"status", "-q"}), ExitCode::usage);
  EXPECT_EQ(failure_of({"migrate", "--lock-file", "/tmp/x.lock"}), ExitCode::usage);
}

// What the tests, the examples and the schedules pass stays accepted.
TEST(CliOptions, CallsOfTheSuiteAndTheSchedulesAreAccepted) {
  EXPECT_EQ(parse_args({"migrate", "--db", "service=x"}).command, Command::migrate);
  EXPECT_EQ(parse_args({"status", "--json", "--lock-file", "/tmp/x.lock"}).command,
            Command::status);
  EXPECT_EQ(parse_args({"run", "--detach", "--trigger", "web", "--json"}).command, Command::run);
  EXPECT_EQ(parse_args({"run", "--trigger", "cron", "--id", "rbdsync", "--db", "service=rbd-sync",
                        "--log-level", "info", "--metrics-file", "/tmp/m.prom"})
                .command,
            Command::run);
}

TEST(CliOptions, MigrateTakesTheStatementTimeout) {
  EXPECT_EQ(parse_args({"migrate", "--db-timeout", "900"}).db_timeout_seconds, 900);
}

TEST(CliOptions, DefaultsAreTheOnesTheHelpTells) {
  const Config config = parse_args({"run"});
  const auto told = [](const char* name) { return std::string(find_option(name)->default_text); };
  EXPECT_EQ(config.db, told(flag::k_db));
  EXPECT_EQ(told(flag::k_lock_file).rfind(config.lock_file + ", ", 0), 0U)
      << told(flag::k_lock_file);
  EXPECT_EQ(config.ceph_cluster, told(flag::k_cluster));
  EXPECT_EQ(std::to_string(config.wait_seconds), told(flag::k_wait));
  EXPECT_EQ(config.trigger, told(flag::k_trigger));
  EXPECT_EQ(std::to_string(config.ceph_timeout_seconds), told(flag::k_ceph_timeout));
  EXPECT_EQ(std::to_string(config.db_timeout_seconds), told(flag::k_db_timeout));
  EXPECT_EQ(config.log_level, told(flag::k_log_level));
  EXPECT_EQ(config.ceph_client, "client." + told(flag::k_id));
  EXPECT_EQ(told(flag::k_reader), "direct");
  EXPECT_EQ(config.reader, ImageReader::direct);
  EXPECT_EQ(told(flag::k_format), "plain");
  EXPECT_EQ(config.format, OutputFormat::plain);
}

TEST(CliOptions, HelpOnAnUnknownCommandIsAUsageError) {
  const Error error = error_of({"help", "nosuch"});
  EXPECT_EQ(error.code(), ExitCode::usage);
  EXPECT_NE(std::string(error.what()).find("'nosuch'"), std::string::npos);
  EXPECT_NE(error.hint().find("rbd-sync help run"), std::string::npos);
  EXPECT_EQ(failure_of({"help", "run", "extra"}), ExitCode::usage);
}

TEST(CliOptions, CephOptionsAreSpelledAsRbdSpellsThem) {
  const Config config =
      parse_args({"run", "-c", "/etc/ceph/b.conf", "-m", "10.0.0.1,10.0.0.2:3300", "-i", "sync",
                  "-k", "/etc/ceph/b.keyring", "--keyfile", "/run/secrets/key"});
  EXPECT_EQ(config.ceph_conf, "/etc/ceph/b.conf");
  EXPECT_EQ(config.mon_host, "10.0.0.1,10.0.0.2:3300");
  EXPECT_EQ(config.ceph_client, "client.sync");
  EXPECT_EQ(config.keyring, "/etc/ceph/b.keyring");
  EXPECT_EQ(config.keyfile, "/run/secrets/key");
  EXPECT_EQ(parse_args({"run", "--conf", "/a.conf", "--mon-host", "m"}).ceph_conf, "/a.conf");
  EXPECT_EQ(parse_args({"run", "--keyring", "/k"}).keyring, "/k");
}

// A pod gets Rook's mon endpoints ConfigMap as it is: `NAME=ADDR` entries, which
// librados refuses; the names go, the addresses (bracketed ones too) stay.
TEST(CliOptions, MonHostTakesRooksMonEndpointsForm) {
  EXPECT_EQ(parse_args({"run", "-m", "a=10.0.0.1:6789,b=10.0.0.2:6789,c=10.0.0.3:6789"}).mon_host,
            "10.0.0.1:6789,10.0.0.2:6789,10.0.0.3:6789");
  EXPECT_EQ(
      parse_args({"run", "-m", "a=[v2:10.0.0.1:3300,v1:10.0.0.1:6789],mon-b_2=h:3300"}).mon_host,
      "[v2:10.0.0.1:3300,v1:10.0.0.1:6789],h:3300");
  // Not a name before the '=': left for librados to judge.
  EXPECT_EQ(parse_args({"run", "-m", "a b=1.2.3.4"}).mon_host, "a b=1.2.3.4");
  EXPECT_EQ(parse_args({"run", "-m", "=1.2.3.4,x"}).mon_host, "=1.2.3.4,x");
  EXPECT_EQ(parse_args({"run", "-m", "a=[::1]:6789,b=[v2:[::2]:3300]"}).mon_host,
            "[::1]:6789,[v2:[::2]:3300]");
  // Blanks are librados' to judge too: only a name directly before '=' goes.
  EXPECT_EQ(parse_args({"run", "-m", "a=1.2.3.4, b=1.2.3.5"}).mon_host, "1.2.3.4, b=1.2.3.5");
}

TEST(CliOptions, ConflictExitCodeIsFlocksAndDefaultsTo75) {
  EXPECT_EQ(parse_args({"run"}).conflict_exit_code, 75);
  EXPECT_EQ(parse_args({"run", "--conflict-exit-code", "0"}).conflict_exit_code, 0);
  EXPECT_EQ(failure_of({"run", "--conflict-exit-code", "256"}), ExitCode::usage);
  EXPECT_EQ(failure_of({"run", "--conflict-exit-code", "-1"}), ExitCode::usage);
  EXPECT_EQ(failure_of({"status", "--conflict-exit-code", "0"}), ExitCode::usage);
}

// Scripts written before rbd-sync took rbd's spelling pass --ceph-conf.
TEST(CliOptions, TheOldSpellingOfConfStillWorks) {
  EXPECT_EQ(parse_args({"run", "--ceph-conf", "/old.conf"}).ceph_conf, "/old.conf");
  EXPECT_EQ(failure_of({"status", "--ceph-conf", "/old.conf"}), ExitCode::usage);
}

TEST(CliOptions, EachClusterHasItsOwnLockFile) {
  EXPECT_EQ(parse_args({"run", "--cluster", "ceph"}).lock_file, "/run/lock/rbd-sync/sync.lock");
  const Config backup = parse_args({"run", "--cluster", "backup"});
  EXPECT_EQ(backup.ceph_cluster, "backup");
  EXPECT_EQ(backup.lock_file, "/run/lock/rbd-sync/sync@backup.lock");
  EXPECT_EQ(parse_args({"status", "--cluster", "backup"}).lock_file,
            "/run/lock/rbd-sync/sync@backup.lock");
  EXPECT_EQ(parse_args({"run", "--cluster", "backup", "--lock-file", "/tmp/x.lock"}).lock_file,
            "/tmp/x.lock");
  EXPECT_EQ(default_lock_file("dc-2_b"), "/run/lock/rbd-sync/sync@dc-2_b.lock");
}

// The detached run's log is named after the cluster its lock file names: the name read
// back is the one default_lock_file() wrote, and no other file name gives one.
TEST(CliOptions, ALockFileNameGivesBackTheClusterItWasMadeFor) {
  for (const std::string cluster : {"backup", "dc-2_b", "s"}) {
    const std::string path = default_lock_file(cluster);
    EXPECT_EQ(cluster_of_lock_file_name(path.substr(path.rfind('/') + 1)), cluster);
  }
  for (const std::string name :
       {"sync.lock", "sync@.lock", "sync@b.log", "x@b.lock", "host-a.lock"}) {
    EXPECT_EQ(cluster_of_lock_file_name(name), std::nullopt) << name;
  }
}

TEST(CliOptions, AClusterNameThatIsNoFileNameIsAUsageError) {
  for (const std::string& name : std::vector<std::string>{"../etc", "a/b", "", "-x", ".hidden",
                                                          "a b", std::string(65, 'c')}) {
    const Error error = error_of({"run", "--cluster", name});
    EXPECT_EQ(error.code(), ExitCode::usage) << name;
    EXPECT_NE(std::string(error.what()).find("--cluster"), std::string::npos) << error.what();
  }
  EXPECT_EQ(parse_args({"run", "--cluster", std::string(64, 'c').c_str()}).ceph_cluster.size(),
            64U);
}

Config parse_with_ceph_args(std::initializer_list<const char*> args, const char* ceph_args) {
  std::vector<const char*> argv{"rbd-sync"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse(static_cast<int>(argv.size()), argv.data(), ceph_args);
}

TEST(CliOptions, CephArgsGiveTheClusterConfAndClientWhereArgvGivesNone) {
  const Config config =
      parse_with_ceph_args({"run"}, "--cluster=backup  -c /etc/ceph/x.conf --id sync -m h");
  EXPECT_EQ(config.ceph_cluster, "backup");
  EXPECT_EQ(config.lock_file, "/run/lock/rbd-sync/sync@backup.lock");
  EXPECT_EQ(config.ceph_conf, "/etc/ceph/x.conf");
  EXPECT_EQ(config.ceph_client, "client.sync");
  // -m and everything else is librados' to read from CEPH_ARGS, below argv.
  EXPECT_EQ(config.mon_host, "");
  EXPECT_EQ(parse_with_ceph_args({"status"}, "--cluster backup").lock_file,
            "/run/lock/rbd-sync/sync@backup.lock");
}

// As `rbd`: measured with rbd 16.2, CEPH_ARGS="--id nosuch" rbd --id admin ls is admin's.
TEST(CliOptions, ArgvWinsOverCephArgs) {
  const Config config = parse_with_ceph_args(
      {"run", "--cluster", "main", "--conf", "/a.conf", "--name", "client.mine"},
      "--cluster backup --conf /b.conf --id theirs");
  EXPECT_EQ(config.ceph_cluster, "main");
  EXPECT_EQ(config.ceph_conf, "/a.conf");
  EXPECT_EQ(config.ceph_client, "client.mine");
}

TEST(CliOptions, ABadValueInCephArgsIsNamedAsComingFromThere) {
  for (const char* ceph_args : {"--id client.x", "--name x", "--cluster ../x"}) {
    try {
      parse_with_ceph_args({"run"}, ceph_args);
      ADD_FAILURE() << "no error for CEPH_ARGS=" << ceph_args;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::usage);
      EXPECT_NE(std::string(error.what()).find("in CEPH_ARGS"), std::string::npos) << error.what();
    }
  }
}

/// The usage error parse gives `command` with `ceph_args`; "" when it gives none.
std::string ceph_args_error(const char* command, const char* ceph_args) {
  try {
    parse_with_ceph_args({command}, ceph_args);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::usage);
    EXPECT_NE(error.hint().find("CEPH_ARGS"), std::string::npos) << error.hint();
    return error.what();
  }
  return "";
}

// Each command is refused only what would end it: librados' options where librados is
// loaded (run), the cluster and client where they are used (run, status).
TEST(CliOptions, CephArgsOnWhichCephWouldExitAreRefusedWhereTheyWould) {
  const std::string librados_exits = "CEPH_ARGS ends in --keyring, an option that takes a value";
  EXPECT_EQ(ceph_args_error("run", "--id sync --keyring"), librados_exits);
  EXPECT_EQ(ceph_args_error("status", "--id sync --keyring"), "");
  EXPECT_EQ(ceph_args_error("migrate", "--id sync --keyring"), "");

  const std::string rbd_exits = "CEPH_ARGS ends in --cluster, an option that takes a value";
  EXPECT_EQ(ceph_args_error("run", "-m h --cluster"), rbd_exits);
  EXPECT_EQ(ceph_args_error("status", "-m h --cluster"), rbd_exits);
  EXPECT_EQ(ceph_args_error("migrate", "-m h --cluster"), "");
  EXPECT_EQ(parse_with_ceph_args({"help"}, "--keyring").command, Command::help);
}

TEST(CliOptions, VersionNeedsNoCommand) {
  EXPECT_EQ(parse_args({"--version"}).command, Command::version);
  EXPECT_EQ(parse_args({"run", "--version"}).command, Command::version);
}

}  // namespace
}  // namespace rbdsync::cli
