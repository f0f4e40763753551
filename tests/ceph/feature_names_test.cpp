// The inventory module names feature bits without depending on Ceph; check its names
// against librbd's own, bit by bit, so the two cannot drift apart.
#include <initializer_list>
#include <string>
#include <vector>

#include <rbd/features.h>
#include <rbd/librbd.h>
#include <rbd/librbd.hpp>

#include <gtest/gtest.h>

#include "inventory/librbd_names.hpp"

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

/// What `name` calls each of `values`, in order.
std::vector<std::string> names(const EnumWords& name, std::initializer_list<int> values) {
  std::vector<std::string> named;
  for (const int value : values) {
    named.push_back(name(value));
  }
  return named;
}

// The librbd reader passes librbd's enum values straight to these names.
TEST(SnapNamespaceNames, MatchLibrbdsEnum) {
  EXPECT_EQ(names(snap_namespace_name,
                  {RBD_SNAP_NAMESPACE_TYPE_USER, RBD_SNAP_NAMESPACE_TYPE_GROUP,
                   RBD_SNAP_NAMESPACE_TYPE_TRASH, RBD_SNAP_NAMESPACE_TYPE_MIRROR, 9}),
            (std::vector<std::string>{"user", "group", "trash", "mirror", "unknown-9"}));
}

TEST(TrashSourceNames, MatchLibrbdsEnum) {
  EXPECT_EQ(
      names(trash_source_name, {RBD_TRASH_IMAGE_SOURCE_USER, RBD_TRASH_IMAGE_SOURCE_MIRRORING,
                                RBD_TRASH_IMAGE_SOURCE_MIGRATION, RBD_TRASH_IMAGE_SOURCE_REMOVING,
                                RBD_TRASH_IMAGE_SOURCE_USER_PARENT, 7}),
      (std::vector<std::string>{"user", "mirroring", "migration", "removing", "user_parent",
                                "unknown-7"}));
}

TEST(MirroringNames, MatchLibrbdsEnums) {
  EXPECT_EQ(names(pool_mirror_mode_name,
                  {RBD_MIRROR_MODE_DISABLED, RBD_MIRROR_MODE_IMAGE, RBD_MIRROR_MODE_POOL, 3}),
            (std::vector<std::string>{"disabled", "image", "pool", "unknown"}));
  EXPECT_EQ(names(image_mirror_mode_name,
                  {RBD_MIRROR_IMAGE_MODE_JOURNAL, RBD_MIRROR_IMAGE_MODE_SNAPSHOT, 2}),
            (std::vector<std::string>{"journal", "snapshot", "unknown"}));
  EXPECT_EQ(names(mirror_image_state_name, {RBD_MIRROR_IMAGE_DISABLING, RBD_MIRROR_IMAGE_ENABLED,
                                            RBD_MIRROR_IMAGE_DISABLED, 3}),
            (std::vector<std::string>{"disabling", "enabled", "disabled", "unknown"}));
}

TEST(LockerAndMigrationNames, AreTheWordsLibrbdPrints) {
  // CEPH_ENTITY_TYPE_CLIENT and _MGR; a locker of another type is "unknown".
  EXPECT_EQ(names(entity_type_name, {0x08, 0x10, 0x03}),
            (std::vector<std::string>{"client", "mgr", "unknown"}));
  EXPECT_EQ(names(migration_state_name, {0, 3, 5, 6}),
            (std::vector<std::string>{"error", "executing", "aborting", "unknown"}));
}

}  // namespace
}  // namespace rbdsync::inventory
