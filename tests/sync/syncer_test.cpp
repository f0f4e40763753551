#include "sync/syncer.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "fakes/fake_inventory_source.hpp"
#include "fakes/memory_sink.hpp"

namespace rbdsync::sync {
namespace {

using testing::FakeInventorySource;
using testing::MemorySink;

class SyncerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source.add_pool(1, "rbd");
    source.add_pool(2, "vms");
    source.add_image(1, "id-a", "a");
    source.add_image(1, "id-b", "b");
    source.add_image(2, "id-c", "c");
  }

  SyncReport sync(const std::vector<std::string>& pools = {}) {
    SyncOptions options;
    options.pool_names = pools;
    return Syncer().run(source, sink, options);
  }

  const inventory::ClusterInventory& stored() { return sink.committed.at(source.fsid); }

  FakeInventorySource source;
  MemorySink sink;
};

TEST_F(SyncerTest, FirstSyncAddsEveryImageOfEveryPool) {
  const SyncReport report = sync();
  EXPECT_EQ(report.fsid, source.fsid);
  EXPECT_EQ(report.pools, 2U);
  EXPECT_EQ(report.images, 3U);
  EXPECT_EQ(report.added, 3U);
  EXPECT_EQ(report.changed, 0U);
  EXPECT_EQ(report.removed, 0U);
  EXPECT_EQ(sink.commits, 1);
  EXPECT_EQ(stored().images.size(), 3U);
  EXPECT_EQ(stored().pools.size(), 2U);
}

TEST_F(SyncerTest, ResyncOfAnUnchangedClusterWritesNoImageRows) {
  sync();
  const SyncReport report = sync();
  EXPECT_EQ(report.added + report.changed + report.removed, 0U);
  ASSERT_EQ(sink.applied.size(), 2U);
  EXPECT_TRUE(sink.applied.back().empty());
}

TEST_F(SyncerTest, ImageDeletedFromCephIsRemoved) {
  sync();
  source.images.erase(source.images.begin() + 1);  // "b"
  const SyncReport report = sync();
  EXPECT_EQ(report.removed, 1U);
  EXPECT_EQ(stored().images.size(), 2U);
  for (const auto& image : stored().images) {
    EXPECT_NE(image.name, "b");
  }
}

TEST_F(SyncerTest, ResizedAndRenamedImagesAreChanged) {
  sync();
  source.images[0].size_bytes *= 2;
  source.images[1].name = "b-renamed";
  const SyncReport report = sync();
  EXPECT_EQ(report.changed, 2U);
  EXPECT_EQ(report.added, 0U);
  EXPECT_EQ(report.removed, 0U);
}

TEST_F(SyncerTest, ImageDeletedBetweenListingAndReadingIsSkippedAndCounted) {
  sync();
  source.vanish_on_read.insert("id-b");
  const SyncReport report = sync();
  EXPECT_EQ(report.skipped, 1U);
  // Deleted from Ceph: not an error, and its stored row goes like any deleted image.
  EXPECT_EQ(report.removed, 1U);
  EXPECT_EQ(report.images, 2U);
}

TEST_F(SyncerTest, NamedPoolSyncLeavesOtherPoolsRowsAlone) {
  sync();
  source.images.clear();                    // everything gone from Ceph...
  const SyncReport report = sync({"vms"});  // ...but only "vms" is synced
  EXPECT_EQ(report.removed, 1U);
  EXPECT_EQ(stored().images.size(), 2U);
  EXPECT_EQ(stored().pools.size(), 2U);
}

TEST_F(SyncerTest, PoolGoneFromCephIsRemovedWithItsImages) {
  sync();
  source.pools.pop_back();  // "vms" deleted, with image "c"
  source.images.pop_back();
  const SyncReport report = sync();
  EXPECT_EQ(report.removed, 1U);
  EXPECT_EQ(stored().pools.size(), 1U);
  EXPECT_EQ(stored().images.size(), 2U);
}

TEST_F(SyncerTest, NothingIsCommittedWhenSourceFailsMidway) {
  sync();
  const auto before = stored();
  source.images[0].size_bytes = 1;
  source.fail_on_read.insert("id-c");
  try {
    sync();
    FAIL() << "a failing read must fail the sync";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::unavailable);
  }
  EXPECT_EQ(sink.commits, 1);
  EXPECT_EQ(stored().images, before.images);
}

TEST_F(SyncerTest, NothingIsCommittedWhenCommitFails) {
  sync();
  const auto before = stored();
  source.images.clear();
  sink.fail_on_commit = true;
  EXPECT_THROW(sync(), Error);
  EXPECT_EQ(stored().images, before.images);
}

TEST_F(SyncerTest, InterruptionJustBeforeCommitCommitsNothing) {
  sync();
  const auto before = stored();
  source.images.clear();
  int checks = 0;
  SyncOptions options;
  // With no images left, the only check is the one before commit.
  options.check_interrupted = [&checks] {
    ++checks;
    throw Error(ExitCode::interrupted_term, "interrupted by SIGTERM before commit");
  };
  try {
    Syncer().run(source, sink, options);
    FAIL() << "an interruption must stop the sync";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::interrupted_term);
  }
  EXPECT_EQ(checks, 1);
  EXPECT_EQ(sink.commits, 1);
  EXPECT_EQ(stored().images, before.images);
}

TEST_F(SyncerTest, InterruptionWhileReadingStopsBeforeTheNextImage) {
  SyncOptions options;
  int checks = 0;
  // Checked before listing each of the 2 pools, then before each image: the 4th check
  // comes after the first image was read.
  options.check_interrupted = [&checks] {
    if (++checks == 4) {
      throw Error(ExitCode::interrupted_int, "interrupted by SIGINT before commit");
    }
  };
  EXPECT_THROW(Syncer().run(source, sink, options), Error);
  EXPECT_EQ(source.reads, 1);
  EXPECT_TRUE(sink.applied.empty());
}

TEST_F(SyncerTest, UnknownPoolFailsBeforeAnythingIsRead) {
  try {
    sync({"nope"});
    FAIL() << "an unknown pool must fail the sync";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::config);
  }
  EXPECT_EQ(source.reads, 0);
  EXPECT_TRUE(sink.applied.empty());
}

}  // namespace
}  // namespace rbdsync::sync
