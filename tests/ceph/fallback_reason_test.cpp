// The reasons' texts are what --json's read.fallbacks counts by: each is said once, in
// k_fallbacks, and these pin the table's shape and a few texts byte for byte.
#include "ceph/fallback_reason.hpp"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ceph/or_fallback.hpp"

namespace rbdsync::ceph {
namespace {

// -Wswitch-enum makes a switch list every enumerator even with a default: a Fallback
// added without a case here fails to compile, and the test below then wants it in
// k_fallbacks too.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch-enum"
std::vector<Fallback> every_reason() {
  std::vector<Fallback> reasons;
  for (int value = 0; value < 256; ++value) {
    const auto reason = static_cast<Fallback>(value);
    switch (reason) {
      case Fallback::format_1:
      case Fallback::migration:
      case Fallback::header_unreadable:
      case Fallback::header_too_many_keys:
      case Fallback::header_key_encoding_unknown:
      case Fallback::header_key_unknown:
      case Fallback::header_incomplete:
      case Fallback::lock_info_undecodable:
      case Fallback::fast_diff_with_fancy_striping:
      case Fallback::snapshot_namespace_unknown:
      case Fallback::snapshot_being_unprotected:
      case Fallback::object_map_unreadable:
      case Fallback::snapshot_map_unreadable:
      case Fallback::exact_usage_without_map:
      case Fallback::mirroring_object_unreadable:
      case Fallback::mirroring_entry_undecodable:
      case Fallback::mirroring_journal_mode:
      case Fallback::mirroring_mode_unknown:
      case Fallback::librbd_not_permitted:
      case Fallback::parent_pool_unreadable:
      case Fallback::parent_pool_unopened:
      case Fallback::parent_directory_unreadable:
      case Fallback::parent_directory_undecodable:
      case Fallback::parent_trash_unreadable:
      case Fallback::parent_trash_undecodable:
      case Fallback::parent_image_not_found:
      case Fallback::parent_snapshot_unreadable:
      case Fallback::parent_snapshot_not_found:
      case Fallback::parent_snapshot_undecodable:
      case Fallback::group_pool_unopened:
      case Fallback::group_name_unreadable:
      case Fallback::group_name_undecodable:
      case Fallback::pool_list_unreadable:
      case Fallback::base_tier_unreadable:
      case Fallback::children_pool_unreadable:
      case Fallback::children_object_unreadable:
      case Fallback::children_object_undecodable:
      case Fallback::children_key_unreadable:
      case Fallback::children_key_undecodable:
      case Fallback::child_pool_unreadable:
      case Fallback::child_directory_unreadable:
      case Fallback::child_trash_unreadable:
      case Fallback::child_name_not_found:
        reasons.push_back(reason);
        break;
      default:
        break;
    }
  }
  return reasons;
}
#pragma GCC diagnostic pop

TEST(FallbackReasons, TheTableHoldsEveryReasonOnceInOrder) {
  std::vector<Fallback> listed;
  for (const FallbackInfo& info : k_fallbacks) {
    listed.push_back(info.reason);
  }
  EXPECT_EQ(listed, every_reason());
}

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
