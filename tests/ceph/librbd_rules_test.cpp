// ceph/librbd_rules.hpp spells librbd's bits out to stay free of Ceph headers; check them
// here against librbd's, and the usage reasons the readers store.
#include <rbd/features.h>
#include <rbd/librbd.h>

#include <gtest/gtest.h>

#include "ceph/librbd_rules.hpp"

namespace rbdsync::ceph {
namespace {

static_assert(k_object_map_invalid == RBD_FLAG_OBJECT_MAP_INVALID);
static_assert(k_fast_diff_invalid == RBD_FLAG_FAST_DIFF_INVALID);
static_assert(k_invalid_map_flags == (RBD_FLAG_OBJECT_MAP_INVALID | RBD_FLAG_FAST_DIFF_INVALID));

TEST(LibrbdRules, UsageIsUnknownForTheFirstInvalidMap) {
  EXPECT_EQ(unknown_usage_reason(true, 0), "");
  EXPECT_EQ(unknown_usage_reason(false, RBD_FLAG_OBJECT_MAP_INVALID), "fast-diff disabled");
  EXPECT_EQ(unknown_usage_reason(true, RBD_FLAG_OBJECT_MAP_INVALID | RBD_FLAG_FAST_DIFF_INVALID),
            "object map invalid");
  // The stored usage reason, not the flag's name ("fast diff invalid").
  EXPECT_EQ(unknown_usage_reason(true, RBD_FLAG_FAST_DIFF_INVALID), "fast-diff invalid");
}

TEST(LibrbdRules, ChildrenMayExistUnderAProtectedSnapshotOrAV2Parent) {
  EXPECT_FALSE(may_have_children(false, RBD_OPERATION_FEATURE_CLONE_CHILD));
  EXPECT_TRUE(may_have_children(true, 0));
  EXPECT_TRUE(may_have_children(false, RBD_OPERATION_FEATURE_CLONE_PARENT));
}

TEST(LibrbdRules, MirroringIsReadOnlyInAPoolWithMirroringEnabled) {
  EXPECT_FALSE(pool_mirroring_enabled(""));  // never `rbd pool init`-ed
  EXPECT_FALSE(pool_mirroring_enabled("disabled"));
  EXPECT_TRUE(pool_mirroring_enabled("image"));
  EXPECT_TRUE(pool_mirroring_enabled("pool"));
}

}  // namespace
}  // namespace rbdsync::ceph
