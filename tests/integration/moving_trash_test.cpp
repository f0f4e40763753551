// Images that move to or from the trash while a sync reads their pool, on the real
// cluster and the real PostgreSQL sink. The pool's trash is listed before its directory
// is paged; without a second listing after the reads, an image moved to the trash
// before its page was read was in neither and vanished from the inventory for a sync,
// and one restored before its page was in both.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ceph/ceph_source.hpp"
#include "db/pg_store.hpp"
#include "integration/harness.hpp"
#include "sync/syncer.hpp"

namespace rbdsync::testing {
namespace {

constexpr std::uint64_t k_image_bytes = 4 << 20;

/// Calls `action` once, when the sync reports reading with `done` images done: on the
/// sync's own thread, between two reads, so the cluster changes at that very point.
class ActAtProgress : public sync::ProgressObserver {
 public:
  ActAtProgress(std::size_t done, std::function<void()> action)
      : m_done(done), m_action(std::move(action)) {}

  void on_progress(Phase phase, std::size_t done, std::size_t /*total*/) override {
    if (phase == Phase::reading && done == m_done && m_action) {
      std::function<void()> action = std::move(m_action);
      m_action = nullptr;
      action();
    }
  }

  bool acted() const { return !m_action; }

 private:
  std::size_t m_done;
  std::function<void()> m_action;
};

class MovingTrashTest : public IntegrationTest {
 protected:
  void SetUp() override {
    pool = unique_name("moving");
    ceph.create_pool(pool);
    run_id = db.migrate_and_start_run(ceph.fsid());
  }

  /// One sync of `pool` in this process, with `progress` told of every image.
  sync::SyncReport sync_pool(sync::ProgressObserver& progress) {
    ceph::CephSource source(admin_ceph_config());
    db::PgStore store(db.conninfo());
    store.set_run_id(run_id);
    sync::SyncOptions options;
    options.pool_names = {pool};
    return sync::Syncer().run(source, store, options, &progress);
  }

  std::vector<std::string> stored_images() const {
    return db.rows("SELECT name FROM rbdsync.images");
  }
  std::vector<std::string> stored_trash() const {
    return db.rows("SELECT name || '|' || image_id FROM rbdsync.trash");
  }

  std::string pool;
  std::string run_id;
};

TEST_F(MovingTrashTest, AnImageMovedEitherWayBeforeItsPageIsReadIsStoredWhereItWent) {
  ceph.create_image(pool, "stays", k_image_bytes);
  ceph.create_image(pool, "leaves", k_image_bytes);
  ceph.create_image(pool, "returns", k_image_bytes);
  const std::string returning_id = ceph.trash_move(pool, "returns");
  std::string leaving_id;
  // After the trash was listed, before the first directory page is read.
  ActAtProgress progress(0, [&] {
    leaving_id = ceph.trash_move(pool, "leaves");
    ceph.trash_restore(pool, returning_id, "returns");
  });
  const sync::SyncReport report = sync_pool(progress);
  ASSERT_TRUE(progress.acted());
  EXPECT_FALSE(report.partial());
  EXPECT_EQ(stored_images(), (std::vector<std::string>{"returns", "stays"}));
  EXPECT_EQ(stored_trash(), std::vector<std::string>{"leaves|" + leaving_id});
  EXPECT_EQ(report.counts.trash.added, 1U);
}

// The sink's half: the second listing meets an image already read, and the image wins.
// (The first test is the one that needs the second listing.) trash_move() succeeds
// because the reads are over: the reader holds no image open.
TEST_F(MovingTrashTest, AnImageMovedToTheTrashAfterItWasReadIsStoredOnceAsTheImageItWasRead) {
  ceph.create_image(pool, "first", k_image_bytes);
  ceph.create_image(pool, "second", k_image_bytes);
  // Both images read (the pool has one page), before the trash is listed again.
  ActAtProgress progress(2, [&] { ceph.trash_move(pool, "second"); });
  const sync::SyncReport report = sync_pool(progress);
  ASSERT_TRUE(progress.acted());
  EXPECT_EQ(stored_images(), (std::vector<std::string>{"first", "second"}));
  EXPECT_TRUE(stored_trash().empty());
  EXPECT_EQ(report.counts.trash.added, 0U);
  // The next sync finds it where it is now.
  ActAtProgress nothing(0, [] {});
  sync_pool(nothing);
  EXPECT_EQ(stored_images(), std::vector<std::string>{"first"});
  EXPECT_EQ(stored_trash().size(), 1U);
}

}  // namespace
}  // namespace rbdsync::testing
