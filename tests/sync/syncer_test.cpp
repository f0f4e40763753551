#include "sync/syncer.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "fakes/fake_inventory_source.hpp"
#include "fakes/memory_sink.hpp"

namespace rbdsync::sync {
namespace {

using testing::FakeInventorySource;
using testing::MemorySink;

inventory::Snapshot snapshot(std::uint64_t id, const std::string& name) {
  inventory::Snapshot snap;
  snap.id = id;
  snap.name = name;
  snap.size_bytes = 1 << 30;
  snap.namespace_type = "user";
  return snap;
}

/// Expects `report` to be that of a partial sync in which image b (id-b, in pool rbd)
/// alone is stale, for `error`.
void expect_b_alone_stale(const SyncReport& report, const std::string& error) {
  ASSERT_TRUE(report.partial());
  ASSERT_EQ(report.stale.size(), 1U);
  EXPECT_EQ(report.stale[0].key.image_id, "id-b");
  EXPECT_EQ(report.stale[0].name, "b");
  EXPECT_EQ(report.stale[0].path, "rbd/b");
  EXPECT_EQ(report.stale[0].error, error);
}

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

  /// The exit code of the Error that a sync of `pools` fails with; ExitCode::ok when it
  /// does not fail.
  ExitCode failure_of_sync(const std::vector<std::string>& pools = {}) {
    try {
      sync(pools);
    } catch (const Error& error) {
      return error.code();
    }
    return ExitCode::ok;
  }

  /// Syncs with an interruption at the `nth` call of check_interrupted, thrown as the
  /// signal handler's Error (`code`, `message`); the sync must end with it.
  void sync_interrupted_at(int nth, ExitCode code, const std::string& message) {
    SyncOptions options;
    int checks = 0;
    options.check_interrupted = [&checks, nth, code, &message] {
      if (++checks == nth) {
        throw Error(code, message);
      }
    };
    EXPECT_THROW(Syncer().run(source, sink, options), Error);
  }

  FakeInventorySource source;
  MemorySink sink;
};

TEST_F(SyncerTest, FirstSyncAddsEveryImageOfEveryPool) {
  const SyncReport report = sync();
  EXPECT_EQ(report.fsid, source.fsid);
  EXPECT_EQ(report.pools, 2U);
  EXPECT_EQ(report.images, 3U);
  EXPECT_EQ(report.counts.images.added, 3U);
  EXPECT_EQ(report.counts.images.changed, 0U);
  EXPECT_EQ(report.counts.images.removed, 0U);
  EXPECT_EQ(report.counts.pools.added, 2U);
  EXPECT_FALSE(report.partial());
  EXPECT_EQ(sink.commits, 1);
  EXPECT_EQ(stored().images.size(), 3U);
  EXPECT_EQ(stored().pools.size(), 2U);
}

TEST_F(SyncerTest, ResyncOfAnUnchangedClusterChangesNothing) {
  source.images[0].snapshots.push_back(snapshot(4, "s1"));
  sync();
  const SyncReport report = sync();
  const sync::KindCounts unchanged_images{0, 0, 0, 3};
  EXPECT_EQ(report.counts.images, unchanged_images);
  const sync::KindCounts unchanged_snapshots{0, 0, 0, 1};
  EXPECT_EQ(report.counts.snapshots, unchanged_snapshots);
  EXPECT_EQ(sink.stores, 2);
}

TEST_F(SyncerTest, TheSinksUsageMarksReachTheSourceAndKeptUsagesAreCounted) {
  source.images[0].usage_mark = 7;  // a: idle since its mark
  source.images[1].usage_mark = 9;  // b: its header changed since (the sink has 8)
  sink.usage_marks.add(1, "", "id-a", 7);
  sink.usage_marks.add(1, "", "id-b", 8);
  sink.usage_marks.seal();
  const SyncReport report = sync();
  EXPECT_EQ(source.marks_seen, 2U);
  EXPECT_EQ(report.usage_kept, 1U);
  EXPECT_EQ(report.images, 3U);
  EXPECT_EQ(sink.marks_wanted, std::vector<sync::UsageMarksWanted>{sync::UsageMarksWanted::yes});
}

TEST_F(SyncerTest, ASourceThatKeepsNoStoredUsageAsksTheSinkForNoMarks) {
  source.keeps_usage = false;  // as the librbd reader: every map is read
  source.images[0].usage_mark = 7;
  sink.usage_marks.add(1, "", "id-a", 7);
  sink.usage_marks.seal();
  const SyncReport report = sync();
  EXPECT_EQ(sink.marks_wanted, std::vector<sync::UsageMarksWanted>{sync::UsageMarksWanted::no});
  EXPECT_EQ(source.marks_seen, 0U);
  EXPECT_EQ(report.usage_kept, 0U);
}

TEST_F(SyncerTest, ImageDeletedFromCephIsRemoved) {
  sync();
  source.images.erase(source.images.begin() + 1);  // "b"
  const SyncReport report = sync();
  EXPECT_EQ(report.counts.images.removed, 1U);
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
  EXPECT_EQ(report.counts.images.changed, 2U);
  EXPECT_EQ(report.counts.images.added, 0U);
  EXPECT_EQ(report.counts.images.removed, 0U);
}

TEST_F(SyncerTest, ImageDeletedBetweenListingAndReadingIsSkippedAndCounted) {
  sync();
  source.vanish_on_read.insert("id-b");
  const SyncReport report = sync();
  EXPECT_EQ(report.skipped, 1U);
  // Deleted from Ceph: not an error, and its stored row goes like any deleted image.
  EXPECT_EQ(report.counts.images.removed, 1U);
  EXPECT_EQ(report.images, 2U);
  EXPECT_FALSE(report.partial());
}

TEST_F(SyncerTest, ImageMovedToTheTrashWhileReadingIsRecordedInTheTrash) {
  sync();
  source.vanish_on_read.insert("id-b");
  source.moved_to_trash.insert("id-b");
  const SyncReport report = sync();
  EXPECT_EQ(report.skipped, 1U);
  EXPECT_EQ(report.counts.trash.added, 1U);
  ASSERT_EQ(stored().trash.size(), 1U);
  EXPECT_EQ(stored().trash[0].image_id, "id-b");
  EXPECT_EQ(stored().trash[0].source, "removing");
}

TEST_F(SyncerTest, ImageThatFailsOnceIsRetriedAndStored) {
  sync();
  source.images[1].size_bytes = 7;
  source.fail_reads["id-b"] = 1;
  const SyncReport report = sync();
  EXPECT_FALSE(report.partial());
  EXPECT_EQ(report.counts.images.changed, 1U);
  EXPECT_EQ(source.reads, 3 + 4);  // first sync, then a, b twice, c
}

TEST_F(SyncerTest, ImageThatKeepsFailingKeepsItsRowsAndMakesThePartial) {
  source.images[1].snapshots.push_back(snapshot(4, "s1"));
  sync();
  const auto before = stored().images;
  source.fail_on_read.insert("id-b");
  source.images[1].size_bytes = 7;  // not seen: its old row stays as it was
  const SyncReport report = sync();
  expect_b_alone_stale(report, "cannot open: Input/output error");
  EXPECT_EQ(report.counts.images.removed, 0U);
  EXPECT_EQ(report.counts.snapshots.removed, 0U);
  // The kept row is the old one, size and snapshot included.
  const auto kept = std::find_if(stored().images.begin(), stored().images.end(),
                                 [](const inventory::Image& image) { return image.name == "b"; });
  ASSERT_NE(kept, stored().images.end());
  EXPECT_EQ(*kept, before[1]);
  EXPECT_EQ(sink.stale_marks.back(), std::set<std::string>{"id-b"});
  EXPECT_EQ(sink.commits, 2);  // a partial sync still commits everything else
}

TEST_F(SyncerTest, ImageWithAValueTheSinkCannotStoreIsStaleNotTheRun) {
  sync();
  sink.unstorable_ids.insert("id-b");
  source.images[1].size_bytes = 7;
  const SyncReport report = sync();
  expect_b_alone_stale(report, "image id id-b size does not fit a bigint");
  EXPECT_EQ(report.images, 2U);
  EXPECT_EQ(report.counts.images.removed, 0U);
  EXPECT_EQ(sink.stale_marks.back(), std::set<std::string>{"id-b"});
  EXPECT_EQ(sink.commits, 2);
}

TEST_F(SyncerTest, ImagesOfAnyBytesAreNamedInOneLineOfDisplayText) {
  source.add_image(1, "id-x", std::string("caf\xe9\nnew\\line", 13));
  source.fail_on_read.insert("id-x");
  const SyncReport report = sync();
  ASSERT_EQ(report.stale.size(), 1U);
  EXPECT_EQ(report.stale[0].name, std::string("caf\xe9\nnew\\line", 13));
  EXPECT_EQ(report.stale[0].path, "rbd/caf\\xe9\\x0anew\\\\line");
}

TEST_F(SyncerTest, NamespacesAndTrashAreStoredAndRemovedWithThePool) {
  source.namespaces.push_back({2, "tenant"});
  source.trash.push_back({2, "", "id-t", "old", "user", 1, 2});
  SyncReport report = sync();
  EXPECT_EQ(report.counts.namespaces.added, 1U);
  EXPECT_EQ(report.counts.trash.added, 1U);
  source.pools.pop_back();
  source.images.pop_back();
  source.namespaces.clear();
  source.trash.clear();
  report = sync();
  EXPECT_EQ(report.counts.pools.removed, 1U);
  EXPECT_EQ(report.counts.namespaces.removed, 1U);
  EXPECT_EQ(report.counts.trash.removed, 1U);
  EXPECT_EQ(report.counts.images.removed, 1U);
}

TEST_F(SyncerTest, NamedPoolSyncLeavesOtherPoolsRowsAlone) {
  sync();
  source.images.clear();                    // everything gone from Ceph...
  const SyncReport report = sync({"vms"});  // ...but only "vms" is synced
  EXPECT_EQ(report.counts.images.removed, 1U);
  EXPECT_EQ(stored().images.size(), 2U);
  EXPECT_EQ(stored().pools.size(), 2U);
}

TEST_F(SyncerTest, PoolGoneFromCephIsRemovedWithItsImages) {
  sync();
  source.pools.pop_back();  // "vms" deleted, with image "c"
  source.images.pop_back();
  const SyncReport report = sync();
  EXPECT_EQ(report.counts.images.removed, 1U);
  EXPECT_EQ(report.counts.pools.removed, 1U);
  EXPECT_EQ(stored().pools.size(), 1U);
  EXPECT_EQ(stored().images.size(), 2U);
}

TEST_F(SyncerTest, NothingIsCommittedWhenSourceFailsMidway) {
  sync();
  const auto before = stored();
  source.images[0].size_bytes = 1;
  source.cluster_fails_on_read.insert("id-c");
  EXPECT_EQ(failure_of_sync(), ExitCode::unavailable)
      << "a cluster-level failure must fail the sync";
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
  // Checked before listing each of the 2 pools, then before each image: the 4th check
  // comes after the first image was read.
  sync_interrupted_at(4, ExitCode::interrupted_int, "interrupted by SIGINT before commit");
  EXPECT_EQ(source.reads, 1);
  EXPECT_EQ(sink.stores, 0);
}

TEST_F(SyncerTest, EachPoolIsReadInOneBatch) {
  sync();
  EXPECT_EQ(source.batch_sizes, (std::vector<std::size_t>{2, 1}));
}

TEST_F(SyncerTest, ImagesOfEveryPageAreStored) {
  source.page_size = 1;
  const SyncReport report = sync();
  EXPECT_EQ(source.batch_sizes, (std::vector<std::size_t>{1, 1, 1}));
  EXPECT_EQ(report.images, 3U);
  EXPECT_EQ(stored().images.size(), 3U);
}

/// Every (phase, done, total) a sync reports.
struct ProgressLog : ProgressObserver {
  struct Step {
    Phase phase;
    std::size_t done;
    std::size_t total;
    bool operator==(const Step& other) const {
      return phase == other.phase && done == other.done && total == other.total;
    }
  };
  void on_progress(Phase phase, std::size_t done, std::size_t total) override {
    steps.push_back({phase, done, total});
  }
  std::vector<Step> steps;
};

TEST_F(SyncerTest, ImagesCreatedAfterTheCountGrowTheTotalInsteadOfPassingIt) {
  source.created_after_listing.push_back(source.images[0]);
  source.created_after_listing.back().key.image_id = "id-new";
  source.created_after_listing.back().name = "new";
  ProgressLog log;
  const SyncReport report = Syncer().run(source, sink, SyncOptions{}, &log);
  EXPECT_EQ(report.images, 4U);
  EXPECT_EQ(stored().images.size(), 4U);
  using Step = ProgressLog::Step;
  const std::vector<Step> reading(log.steps.begin() + 1, log.steps.end() - 2);
  EXPECT_EQ(reading, (std::vector<Step>{{Phase::reading, 0, 3},
                                        {Phase::reading, 1, 3},
                                        {Phase::reading, 2, 3},
                                        {Phase::reading, 3, 3},
                                        {Phase::reading, 4, 4}}));
  EXPECT_EQ(log.steps.back(), (Step{Phase::committing, 4, 4}));
}

TEST_F(SyncerTest, ImagesRemovedAfterTheCountLeaveTheTotalAtWhatWasMet) {
  sync();
  source.removed_after_listing.insert("id-b");
  ProgressLog log;
  const SyncReport report = Syncer().run(source, sink, SyncOptions{}, &log);
  EXPECT_EQ(report.counts.images.removed, 1U);
  ASSERT_GE(log.steps.size(), 3U);
  EXPECT_EQ(log.steps[1], (ProgressLog::Step{Phase::reading, 0, 3}));
  EXPECT_EQ(log.steps.back(), (ProgressLog::Step{Phase::committing, 2, 2}));
}

TEST_F(SyncerTest, ImageWhoseListingEntryIsDamagedIsStaleWithoutARetry) {
  sync();
  source.damaged_entries.insert("id-b");
  const SyncReport report = sync();
  EXPECT_TRUE(report.partial());
  ASSERT_EQ(report.stale.size(), 1U);
  EXPECT_EQ(report.stale[0].path, "rbd/b");
  EXPECT_EQ(source.reads, 3 + 3) << "no second read of the damaged entry";
  EXPECT_EQ(report.counts.images.removed, 0U);
}

TEST_F(SyncerTest, ImagesDeliveredOutOfOrderAreAllStored) {
  source.batch_in_reverse = true;
  source.vanish_on_read.insert("id-a");
  source.moved_to_trash.insert("id-a");
  source.fail_on_read.insert("id-b");
  source.add_image(1, "id-d", "d");
  source.add_image(1, "id-e", "e");
  const SyncReport report = sync();
  std::vector<std::string> names;
  for (const auto& image : stored().images) {
    names.push_back(image.name);
  }
  // Handed to the sink as they arrive: the stored outcome does not depend on order.
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"c", "d", "e"}));
  EXPECT_EQ(report.images, 3U);
  EXPECT_EQ(report.skipped, 1U);
  ASSERT_EQ(report.stale.size(), 1U);
  EXPECT_EQ(report.stale[0].path, "rbd/b");
  ASSERT_EQ(stored().trash.size(), 1U);
  EXPECT_EQ(stored().trash[0].image_id, "id-a");
}

TEST_F(SyncerTest, TrashEntryListedAndFoundByTheReadIsStoredOnce) {
  // Removed while the sync ran: the trash listing already had it, and the read of the
  // listed image found it in the trash too. The sink refuses a key twice.
  source.vanish_on_read.insert("id-a");
  source.moved_to_trash.insert("id-a");
  inventory::TrashEntry listed;
  listed.pool_id = 1;
  listed.image_id = "id-a";
  listed.name = "a";
  listed.source = "removing";
  source.trash.push_back(listed);
  const SyncReport report = sync();
  EXPECT_EQ(report.skipped, 1U);
  ASSERT_EQ(stored().trash.size(), 1U);
  EXPECT_EQ(stored().trash[0].image_id, "id-a");
}

TEST_F(SyncerTest, AnImageMovedToTheTrashBeforeItsPageWasReadIsStoredInTheTrash) {
  sync();
  // Counted and not in the first trash listing; gone from the directory when its page is
  // read: only the trash listed again after the reads holds it.
  source.removed_after_listing.insert("id-b");
  source.trashed_after_listing.push_back({1, "", "id-b", "b", "user", 1, 1});
  const SyncReport report = sync();
  EXPECT_EQ(report.counts.images.removed, 1U);
  EXPECT_EQ(report.counts.trash.added, 1U);
  ASSERT_EQ(stored().trash.size(), 1U);
  EXPECT_EQ(stored().trash[0].image_id, "id-b");
  EXPECT_EQ(stored().trash[0].source, "user");
}

TEST_F(SyncerTest, AnImageInATrashListingAndReadFromTheDirectoryIsStoredAsAnImageOnly) {
  // Restored from the trash after it was listed, before its page was read (or caught
  // between librbd's two writes of a move).
  source.trash.push_back({1, "", "id-a", "a", "user", 1, 1});
  const SyncReport report = sync();
  EXPECT_EQ(report.counts.images.added, 3U);
  EXPECT_EQ(report.counts.trash.added, 0U);
  EXPECT_TRUE(stored().trash.empty());
}

TEST_F(SyncerTest, ReportSaysHowTheSourceReadTheImages) {
  source.methods.images = {{"header", 2}, {"librbd", 1}};
  source.methods.fallbacks = {{"clone", 1}};
  const SyncReport report = sync();
  EXPECT_EQ(report.read.images, source.methods.images);
  EXPECT_EQ(report.read.fallbacks, source.methods.fallbacks);
}

TEST_F(SyncerTest, FailedImageOfABatchIsRetriedOnceAfterTheBatchAndStored) {
  source.batch_in_reverse = true;
  source.fail_reads["id-a"] = 1;
  std::vector<std::size_t> done;
  struct Recorder : ProgressObserver {
    explicit Recorder(std::vector<std::size_t>& done) : m_done(done) {}
    void on_progress(Phase phase, std::size_t images_done, std::size_t /*total*/) override {
      if (phase == Phase::reading) {
        m_done.push_back(images_done);
      }
    }
    std::vector<std::size_t>& m_done;
  } recorder(done);
  const SyncReport report = Syncer().run(source, sink, SyncOptions{}, &recorder);
  EXPECT_FALSE(report.partial());
  EXPECT_EQ(report.images, 3U);
  EXPECT_EQ(source.reads, 4);
  // Every image is counted once, the retried one when its retry is done.
  EXPECT_EQ(done, (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST_F(SyncerTest, InterruptionInsideABatchStopsItAndCommitsNothing) {
  source.batch_in_reverse = true;
  // 2 pool listings, then before the first pool's batch; the 4th check follows the
  // first image the batch delivered.
  sync_interrupted_at(4, ExitCode::interrupted_term, "interrupted by SIGTERM before commit");
  EXPECT_EQ(source.reads, 1);
  EXPECT_EQ(sink.stores, 0);
}

TEST_F(SyncerTest, UnknownPoolFailsBeforeAnythingIsRead) {
  EXPECT_EQ(failure_of_sync({"nope"}), ExitCode::config) << "an unknown pool must fail the sync";
  EXPECT_EQ(source.reads, 0);
  EXPECT_EQ(sink.stores, 0);
}

TEST_F(SyncerTest, PoolTheClientMayNotReadKeepsItsRowsInASyncOfEveryPool) {
  source.trash.push_back({2, "", "id-t", "t", "user", 1, 1});
  sync();
  source.unreadable = {2};
  source.images.erase(source.images.begin() + 2);  // "c" went, but this client cannot tell
  const SyncReport report = sync();
  EXPECT_FALSE(report.partial()) << "a least-privilege client read all it may";
  EXPECT_EQ(report.pools, 1U);
  ASSERT_EQ(report.unreadable_pools.size(), 1U);
  EXPECT_EQ(report.unreadable_pools[0].id, 2);
  EXPECT_EQ(report.unreadable_pools[0].name, "vms");
  EXPECT_EQ(report.counts.images.removed, 0U);
  EXPECT_EQ(report.counts.pools.removed, 0U);
  EXPECT_EQ(report.counts.trash.removed, 0U);
  EXPECT_EQ(stored().pools.size(), 2U);
  EXPECT_EQ(stored().images.size(), 3U);
  EXPECT_EQ(stored().trash.size(), 1U);
}

TEST_F(SyncerTest, APoolWhoseImageListIsDamagedIsLeftOutAndTheRunIsPartial) {
  // Any tenant with write caps on the pool can damage its format 1 directory: that
  // must not stop the other pools' sync (it failed the whole run, 65).
  source.trash.push_back({2, "", "id-t", "t", "user", 1, 1});
  sync();
  source.damaged_pools = {2};
  source.images.erase(source.images.begin() + 2);  // "c" went, but cannot be told
  source.add_image(1, "id-d", "d");                // the other pool still syncs
  for (const std::vector<std::string>& named :
       {std::vector<std::string>{}, std::vector<std::string>{"rbd", "vms"}}) {
    const SyncReport report = sync(named);
    EXPECT_TRUE(report.partial()) << "a damaged pool is a fault, unlike one the caps leave out";
    EXPECT_EQ(report.pools, 1U);
    ASSERT_EQ(report.unreadable_pools.size(), 1U);
    EXPECT_EQ(report.unreadable_pools[0].id, 2);
    EXPECT_TRUE(report.unreadable_pools[0].damaged);
    EXPECT_NE(report.unreadable_pools[0].error.find("cannot be decoded"), std::string::npos);
    EXPECT_EQ(report.counts.images.removed, 0U);
    EXPECT_EQ(report.counts.trash.removed, 0U);
    EXPECT_EQ(stored().pools.size(), 2U);
    EXPECT_EQ(stored().images.size(), 4U) << "a, b, d, and c kept";
    EXPECT_EQ(stored().trash.size(), 1U);
  }
}

TEST_F(SyncerTest, SyncOfEveryPoolFailsWhenTheClientMayReadNone) {
  source.unreadable = {1, 2};
  EXPECT_EQ(failure_of_sync(), ExitCode::no_permission);
  EXPECT_EQ(sink.commits, 0);
}

TEST_F(SyncerTest, ValuesTheClientMayNotReadAreCountedAsUnknown) {
  const std::string not_permitted = std::string(inventory::k_not_permitted) + "test";
  inventory::Image& clone = source.images[0];
  clone.parent = inventory::Parent{};
  clone.parent->unknown_reason = not_permitted;
  clone.group = inventory::GroupMembership{3, "", not_permitted};
  clone.usage.unknown_reason = not_permitted;
  clone.snapshots.push_back(snapshot(4, "s1"));
  clone.snapshots.back().children.reset();
  clone.snapshots.back().children_unknown_reason = not_permitted;
  clone.snapshots.push_back(snapshot(5, "s2"));
  clone.snapshots.back().usage.unknown_reason = "fast-diff disabled";  // not about caps
  const SyncReport report = sync();
  EXPECT_FALSE(report.partial());
  EXPECT_EQ(report.unknown.parents, 1U);
  EXPECT_EQ(report.unknown.groups, 1U);
  EXPECT_EQ(report.unknown.children, 1U);
  EXPECT_EQ(report.unknown.usage, 1U);
  EXPECT_EQ(report.unknown.total(), 4U);
  EXPECT_EQ(stored().images.at(0).snapshots.at(0).children, std::nullopt);
}

}  // namespace
}  // namespace rbdsync::sync
