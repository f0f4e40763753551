// The reasons' texts are what --json's read.fallbacks counts by: each is said once, in
// k_fallbacks (which the header checks holds every reason once, in order, when it is
// compiled), and these pin the texts' form and a few of them byte for byte.
#include "ceph/fallback_reason.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "ceph/or_fallback.hpp"

namespace rbdsync::ceph {
namespace {

TEST(FallbackReasons, EveryTextIsOneLineUniqueWithAtMostOneDetail) {
  std::set<std::string> texts;
  for (const FallbackInfo& info : k_fallbacks) {
    const std::string text = info.text;
    EXPECT_TRUE(texts.insert(text).second) << text;
    EXPECT_FALSE(text.empty());
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    const std::size_t detail = text.find("{}");
    EXPECT_TRUE(detail == std::string::npos || text.find("{}", detail + 1) == std::string::npos)
        << text;
  }
}

TEST(FallbackReasons, TheDetailTakesThePlaceOfItsMark) {
  EXPECT_EQ(fallback_text(Fallback::format_1), "format 1");
  EXPECT_EQ(fallback_text(Fallback::librbd_not_permitted), "librbd not permitted to open it");
  EXPECT_EQ(fallback_text(Fallback::header_too_many_keys, "4096"),
            "header has more than 4096 keys");
  EXPECT_EQ(fallback_text(Fallback::children_pool_unreadable, "5: Permission denied"),
            "cannot read pool 5: Permission denied");
  EXPECT_EQ(OrFallback<int>::fall_back(Fallback::parent_image_not_found)
                .carry<int>(k_clone_prefix)
                .fallback_reason,
            "clone: parent image not found");
}

}  // namespace
}  // namespace rbdsync::ceph
