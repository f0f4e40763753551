#include "inventory/features.hpp"

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

}  // namespace
}  // namespace rbdsync::inventory
