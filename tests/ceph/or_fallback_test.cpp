// The direct reader's verdicts travel up through OrFallback::carry(); --json counts the
// fallback reasons by their text, so the prefixes must come out exactly.
#include <string>

#include <gtest/gtest.h>

#include "ceph/or_fallback.hpp"

namespace rbdsync::ceph {
namespace {

TEST(OrFallback, CarriesTheVerdictWithAPrefix) {
  const auto fallback =
      OrFallback<int>::fall_back("parent image not found").carry<std::string>("clone: ");
  EXPECT_FALSE(fallback.ok());
  EXPECT_EQ(fallback.fallback_reason, "clone: parent image not found");
  EXPECT_EQ(fallback.damage, "");

  const auto damage =
      OrFallback<int>::damaged("header key 'order' is damaged (1 bytes)").carry<std::string>();
  EXPECT_FALSE(damage.ok());
  EXPECT_EQ(damage.fallback_reason, "");
  EXPECT_EQ(damage.damage, "header key 'order' is damaged (1 bytes)");

  const auto value = OrFallback<int>::of(7);
  EXPECT_TRUE(value.ok());
  EXPECT_EQ(*value.value, 7);
}

}  // namespace
}  // namespace rbdsync::ceph
