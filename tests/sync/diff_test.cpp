#include "sync/diff.hpp"

#include <gtest/gtest.h>

namespace rbdsync::sync {
namespace {

using inventory::ClusterInventory;
using inventory::Image;

Image image(std::int64_t pool, const std::string& id, const std::string& name,
            std::uint64_t size = 100) {
  Image result;
  result.key = {pool, "", id};
  result.name = name;
  result.size_bytes = size;
  result.object_size = 4096;
  return result;
}

const SyncScope k_all_pools{true, {}};

TEST(DiffInventories, EmptyStoreGetsEveryPoolAndImage) {
  ClusterInventory seen{"f", {{1, "rbd"}}, {image(1, "a", "a")}};
  const ChangeSet changes = diff_inventories({"f", {}, {}}, seen, k_all_pools);
  EXPECT_EQ(changes.fsid, "f");
  EXPECT_EQ(changes.upserted_pools.size(), 1U);
  EXPECT_EQ(changes.added_images.size(), 1U);
  EXPECT_TRUE(changes.removed_images.empty());
}

TEST(DiffInventories, IdenticalInventoriesGiveAnEmptyChangeSet) {
  ClusterInventory both{"f", {{1, "rbd"}}, {image(1, "a", "a"), image(1, "b", "b")}};
  EXPECT_TRUE(diff_inventories(both, both, k_all_pools).empty());
}

TEST(DiffInventories, RenamedPoolIsUpsertedAndItsImagesKept) {
  ClusterInventory stored{"f", {{1, "old"}}, {image(1, "a", "a")}};
  ClusterInventory seen{"f", {{1, "new"}}, {image(1, "a", "a")}};
  const ChangeSet changes = diff_inventories(stored, seen, k_all_pools);
  ASSERT_EQ(changes.upserted_pools.size(), 1U);
  EXPECT_EQ(changes.upserted_pools[0].name, "new");
  EXPECT_TRUE(changes.removed_pools.empty());
  EXPECT_TRUE(changes.removed_images.empty());
}

TEST(DiffInventories, ImageIdentityIsItsIdSoARenameIsAChange) {
  ClusterInventory stored{"f", {{1, "rbd"}}, {image(1, "a", "old")}};
  ClusterInventory seen{"f", {{1, "rbd"}}, {image(1, "a", "new")}};
  const ChangeSet changes = diff_inventories(stored, seen, k_all_pools);
  EXPECT_EQ(changes.changed_images.size(), 1U);
  EXPECT_TRUE(changes.added_images.empty());
  EXPECT_TRUE(changes.removed_images.empty());
}

TEST(DiffInventories, SameImageIdInTwoNamespacesIsTwoImages) {
  Image in_default = image(1, "a", "x");
  Image in_ns = image(1, "a", "x");
  in_ns.key.pool_namespace = "tenant";
  ClusterInventory seen{"f", {{1, "rbd"}}, {in_default, in_ns}};
  EXPECT_EQ(diff_inventories({"f", {}, {}}, seen, k_all_pools).added_images.size(), 2U);
}

TEST(DiffInventories, PoolMissingFromCephIsRemovedWithItsImagesWhenSyncingAll) {
  ClusterInventory stored{
      "f", {{1, "rbd"}, {2, "gone"}}, {image(1, "a", "a"), image(2, "b", "b"), image(2, "c", "c")}};
  ClusterInventory seen{"f", {{1, "rbd"}}, {image(1, "a", "a")}};
  const ChangeSet changes = diff_inventories(stored, seen, k_all_pools);
  EXPECT_EQ(changes.removed_pools, std::vector<std::int64_t>{2});
  EXPECT_EQ(changes.removed_images.size(), 2U);
}

TEST(DiffInventories, PoolsOutsideANamedScopeAreLeftAlone) {
  ClusterInventory stored{
      "f", {{1, "rbd"}, {2, "other"}}, {image(1, "a", "a"), image(2, "b", "b")}};
  ClusterInventory seen{"f", {{1, "rbd"}}, {}};
  const ChangeSet changes = diff_inventories(stored, seen, SyncScope{false, {"rbd"}});
  EXPECT_TRUE(changes.removed_pools.empty());
  ASSERT_EQ(changes.removed_images.size(), 1U);
  EXPECT_EQ(changes.removed_images[0].image_id, "a");
}

TEST(DiffInventories, NamedPoolSyncLeavesAStoredPoolOfTheSameNameAndAnotherIdAlone) {
  // "rbd" (id 1) may have been renamed to "rbd-old" and a new "rbd" (id 7) created:
  // only a sync of every pool can tell, so a named sync removes nothing of pool 1.
  ClusterInventory stored{"f", {{1, "rbd"}}, {image(1, "a", "a")}};
  ClusterInventory seen{"f", {{7, "rbd"}}, {image(7, "z", "z")}};
  const ChangeSet named = diff_inventories(stored, seen, SyncScope{false, {"rbd"}});
  EXPECT_TRUE(named.removed_pools.empty());
  EXPECT_TRUE(named.removed_images.empty());
  EXPECT_EQ(named.added_images.size(), 1U);
  const ChangeSet all = diff_inventories(stored, seen, k_all_pools);
  EXPECT_EQ(all.removed_pools, std::vector<std::int64_t>{1});
  EXPECT_EQ(all.removed_images.size(), 1U);
}

}  // namespace
}  // namespace rbdsync::sync
