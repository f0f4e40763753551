// The inventory module names feature bits without depending on Ceph; check its names
// against librbd's own, bit by bit, so the two cannot drift apart.
#include <rbd/features.h>
#include <rbd/librbd.h>
#include <rbd/librbd.hpp>

#include <gtest/gtest.h>

#include "inventory/features.hpp"

namespace rbdsync::inventory {
namespace {

TEST(FeatureNames, EveryBitLibrbdKnowsHasLibrbdsName) {
  librbd::RBD rbd;
  int known = 0;
  for (int bit = 0; bit < 64; ++bit) {
    std::string librbd_name;
    if (rbd.features_to_string(1ULL << bit, &librbd_name) < 0 || librbd_name.empty()) {
      continue;
    }
    ++known;
    EXPECT_EQ(feature_names(1ULL << bit), std::vector<std::string>{librbd_name}) << "bit " << bit;
  }
  EXPECT_GE(known, 10);
}

TEST(OpFeatureNames, MatchLibrbdsOperationFeatureNames) {
  EXPECT_EQ(op_feature_names(RBD_OPERATION_FEATURE_CLONE_PARENT),
            std::vector<std::string>{RBD_OPERATION_FEATURE_NAME_CLONE_PARENT});
  EXPECT_EQ(op_feature_names(RBD_OPERATION_FEATURE_CLONE_CHILD),
            std::vector<std::string>{RBD_OPERATION_FEATURE_NAME_CLONE_CHILD});
  EXPECT_EQ(op_feature_names(RBD_OPERATION_FEATURE_GROUP),
            std::vector<std::string>{RBD_OPERATION_FEATURE_NAME_GROUP});
  EXPECT_EQ(op_feature_names(RBD_OPERATION_FEATURE_SNAP_TRASH),
            std::vector<std::string>{RBD_OPERATION_FEATURE_NAME_SNAP_TRASH});
  EXPECT_EQ(op_feature_names(RBD_OPERATION_FEATURES_ALL).size(), 4U);
}

TEST(FlagNames, CoverLibrbdsFlagBits) {
  EXPECT_EQ(flag_names(RBD_FLAG_OBJECT_MAP_INVALID),
            std::vector<std::string>{"object map invalid"});
  EXPECT_EQ(flag_names(RBD_FLAG_FAST_DIFF_INVALID), std::vector<std::string>{"fast diff invalid"});
}

}  // namespace
}  // namespace rbdsync::inventory
