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
  EXPECT_EQ(early_ceph_args("--cluster\tc").cluster, "c");
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

}  // namespace
}  // namespace rbdsync::cli
