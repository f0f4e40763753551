#include "inventory/librbd_names.hpp"

#include <gtest/gtest.h>

namespace rbdsync::inventory {
namespace {

TEST(FeatureNames, DefaultImageFeaturesAreNamedAsRbdInfoDoes) {
  // layering, exclusive-lock, object-map, fast-diff, deep-flatten: `rbd create`'s default.
  EXPECT_EQ(feature_names(0x3d),
            (std::vector<std::string>{"layering", "exclusive-lock", "object-map", "fast-diff",
                                      "deep-flatten"}));
}

TEST(FeatureNames, NoBitsGiveNoNames) {
  EXPECT_TRUE(feature_names(0).empty());
}

TEST(FeatureNames, UnknownBitsAreKeptNotDropped) {
  EXPECT_EQ(feature_names((1ULL << 40) | 1),
            (std::vector<std::string>{"layering", "unknown-0x10000000000"}));
}

TEST(OpFeatureNames, EveryPacificOpFeatureIsNamedAsRbdInfoDoes) {
  EXPECT_EQ(op_feature_names(0xf),
            (std::vector<std::string>{"clone-parent", "clone-child", "group", "snap-trash"}));
}

TEST(OpFeatureNames, UnknownBitsAreKeptNotDropped) {
  EXPECT_EQ(op_feature_names((1ULL << 4) | (1ULL << 1)),
            (std::vector<std::string>{"clone-child", "unknown-0x10"}));
}

TEST(FlagNames, ObjectMapAndFastDiffInvalidAreSpelledWithSpaces) {
  EXPECT_EQ(flag_names(0x3), (std::vector<std::string>{"object map invalid", "fast diff invalid"}));
}

TEST(FlagNames, NoBitsGiveNoNames) {
  EXPECT_TRUE(flag_names(0).empty());
}

TEST(FlagNames, UnknownBitsAreKeptNotDropped) {
  EXPECT_EQ(flag_names(1ULL << 2), std::vector<std::string>{"unknown-0x4"});
}

}  // namespace
}  // namespace rbdsync::inventory
