#include "cli/ceph_args.hpp"

#include <gtest/gtest.h>

namespace rbdsync::cli {
namespace {

TEST(EarlyCephArgs, EverySpellingCephTakesIsRead) {
  const EarlyCephArgs args = early_ceph_args("--cluster=b -c /x.conf --user sync");
  EXPECT_EQ(args.cluster, "b");
  EXPECT_EQ(args.conf, "/x.conf");
  EXPECT_EQ(args.client_name(), "client.sync");
  EXPECT_TRUE(args.client_from_id);
  EXPECT_EQ(early_ceph_args("--conf=/y.conf").conf, "/y.conf");
  EXPECT_EQ(early_ceph_args("-n client.z").client_name(), "client.z");
  EXPECT_EQ(early_ceph_args("--name=client.z").client_value, "client.z");
  EXPECT_EQ(early_ceph_args("--id=a").client_name(), "client.a");
}

// Ceph reads -i only for daemons; a client's CEPH_ARGS="-i x" leaves it client.admin.
TEST(EarlyCephArgs, DashIIsNotAClientsId) {
  EXPECT_FALSE(early_ceph_args("-i x").client_name());
}

TEST(EarlyCephArgs, OtherOptionsAndTheirValuesAreLeftToLibrados) {
  const EarlyCephArgs args = early_ceph_args("-m 10.0.0.1 --keyring /k --rbd_cache=false");
  EXPECT_FALSE(args.cluster);
  EXPECT_FALSE(args.conf);
  EXPECT_FALSE(args.client_name());
  EXPECT_FALSE(early_ceph_args("").client_name());
}

TEST(EarlyCephArgs, TheLastOfIdAndNameChoosesTheClient) {
  const EarlyCephArgs by_name = early_ceph_args("--id a --name client.b");
  EXPECT_EQ(by_name.client_name(), "client.b");
  EXPECT_FALSE(by_name.client_from_id);
  EXPECT_EQ(early_ceph_args("--name client.b --id a").client_name(), "client.a");
}

TEST(EarlyCephArgs, NothingAfterTheDoubleDashOrAFinalOptionWithoutValue) {
  EXPECT_FALSE(early_ceph_args("-- --cluster b").cluster);
  EXPECT_FALSE(early_ceph_args("--cluster").cluster);
}

// Ceph's env_to_vec() splits at spaces only: "--cluster<TAB>c" is one word, no option.
TEST(EarlyCephArgs, OnlyASpaceSeparatesWords) {
  EXPECT_FALSE(early_ceph_args("--cluster\tc").cluster);
  EXPECT_EQ(early_ceph_args("  --cluster   c  ").cluster, "c");
  EXPECT_EQ(early_ceph_args("--id a\tb").client_value, "a\tb");
}

// An option's value is a word, whatever it looks like: "--cluster --id" names the
// cluster "--id", as Ceph reads it.
TEST(EarlyCephArgs, AValueThatLooksLikeAnOptionIsAValue) {
  const EarlyCephArgs args = early_ceph_args("--cluster --id x");
  EXPECT_EQ(args.cluster, "--id");
  EXPECT_FALSE(args.client_value);
}

// Measured with librados 16.2: CEPH_ARGS="--keyring" makes conf_parse_env() print
// "Option --keyring requires an argument." and exit 1.
// ("-k -- -m": "--" is -k's value, so -m is the last option; "--id -k": librados passes
// over --id, not its value.)
TEST(LibradosCephArgsProblem, AnOptionLibradosReadsWithoutItsValueIsNamed) {
  for (const char* ceph_args : {"--keyring", "-k", "--id a -m", "--mon-host", "--mon_host", "-K",
                                "--keyfile", "--monmap", "-M", "--bind", "--client_mountpoint",
                                "-r", "--show-config-value", "-k -- -m", "--id -k"}) {
    const std::optional<std::string> problem = librados_ceph_args_problem(ceph_args);
    ASSERT_TRUE(problem) << ceph_args;
    EXPECT_NE(problem->find("ends in "), std::string::npos) << *problem;
    EXPECT_NE(problem->find("takes a value"), std::string::npos) << *problem;
  }
  EXPECT_EQ(librados_ceph_args_problem("--id a --mon-host"),
            "CEPH_ARGS ends in --mon-host, an option that takes a value");
}

TEST(LibradosCephArgsProblem, ShowConfIsNamedWhereverItStands) {
  EXPECT_EQ(librados_ceph_args_problem("--show_conf -m h"),
            "CEPH_ARGS holds --show_conf, on which the Ceph library prints its configuration "
            "and exits");
  EXPECT_TRUE(librados_ceph_args_problem("-m h --show-conf"));
}

// The early options are rbd's to exit on: librados passes over those words.
TEST(LibradosCephArgsProblem, WhatLibradosReadsWithoutEndingTheProcessIsNoProblem) {
  for (const char* ceph_args :
       {"", "   ", "--keyring=/k", "-k /k -m h --id a", "--keyring -m", "-k /k -- -m", "--debug_ms",
        "--rbd_cache=false --no-mon-config", "-- --show_conf", "-m --show_conf", "--keyringx",
        "--show_conf=true", "-i", "--cluster", "--id", "-n", "--conf"}) {
    EXPECT_EQ(librados_ceph_args_problem(ceph_args), std::nullopt) << ceph_args;
  }
}

// Measured with rbd 16.2: an early option without its value makes rbd exit 1.
TEST(EarlyCephArgs, AnEarlyOptionWithoutItsValueIsNamed) {
  for (const char* ceph_args :
       {"--cluster", "-c", "--conf", "--id", "--user", "-n", "--name", "-m 10.0.0.1 --id"}) {
    const std::optional<std::string> problem = early_ceph_args(ceph_args).problem;
    ASSERT_TRUE(problem) << ceph_args;
    EXPECT_NE(problem->find("takes a value"), std::string::npos) << *problem;
  }
  EXPECT_EQ(early_ceph_args("--id -k").problem, std::nullopt);
  EXPECT_EQ(early_ceph_args("--cluster=b -k").problem, std::nullopt);
}

}  // namespace
}  // namespace rbdsync::cli
