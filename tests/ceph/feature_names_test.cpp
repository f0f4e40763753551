// The inventory module names feature bits without depending on Ceph; check its names
// against librbd's own, bit by bit, so the two cannot drift apart.
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

}  // namespace
}  // namespace rbdsync::inventory
