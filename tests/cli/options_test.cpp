#include "cli/options.hpp"

#include <initializer_list>

#include <gtest/gtest.h>

#include "common/error.hpp"

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

}  // namespace
}  // namespace rbdsync::cli
