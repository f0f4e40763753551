// Usage carried over idle images, the PostgreSQL side (sql/008_usage_mark.sql): the sink
// hands the sync the stored marks when its transaction begins, and an image added with
// usage_carried keeps the usage its stored rows hold. The sink on its own, against the
// real test server; no Ceph cluster is needed.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "db/pg_store.hpp"
#include "integration/harness.hpp"
#include "sync/usage_marks.hpp"

namespace rbdsync::testing {
namespace {

const std::string k_fsid = "2f6a0c1e-3b4d-4e5f-8a9b-0c1d2e3f4a5b";
constexpr std::uint64_t k_image_used = 123456789;
constexpr std::uint64_t k_snapshot_used = 4567;
constexpr const char* k_not_kept = "not read: no stored usage to keep";

inventory::Pool made_up_pool() {
  inventory::Pool pool;
  pool.id = 1;
  pool.name = "volumes";
  pool.type = "replicated";
  pool.replica_size = 3;
  pool.mirror_mode = "disabled";
  return pool;
}

/// An image whose usage was read from its object maps at header version `mark`, with
/// one user snapshot.
inventory::Image read_image(const std::string& id, std::uint64_t mark) {
  inventory::Image image;
  image.key = {1, "", id};
  image.name = "volume-" + id;
  image.size_bytes = std::uint64_t{1} << 30U;
  image.order = 22;
  image.object_size = std::uint64_t{1} << 22U;
  image.object_count = image.size_bytes >> 22U;
  image.features = 0x3d;
  image.block_name_prefix = "rbd_data." + id;
  image.usage.used_bytes = k_image_used;
  image.usage_mark = mark;
  inventory::Snapshot snap;
  snap.id = 1;
  snap.name = "daily";
  snap.size_bytes = image.size_bytes;
  snap.namespace_type = "user";
  snap.usage.used_bytes = k_snapshot_used;
  image.snapshots.push_back(snap);
  return image;
}

/// `image` as the source sends an idle one: usage carried, every usage field empty.
inventory::Image carried(inventory::Image image) {
  sync::keep_stored_usage(image);
  return image;
}

/// "added/changed/removed/unchanged", for messages a reader can read.
std::string shown(const sync::KindCounts& counts) {
  return std::to_string(counts.added) + "/" + std::to_string(counts.changed) + "/" +
         std::to_string(counts.removed) + "/" + std::to_string(counts.unchanged);
}

class UsageCarryTest : public ::testing::Test {
 protected:
  void SetUp() override { run_id = db.migrate_and_start_run(k_fsid); }

  /// Stores exactly `images` (in one pool) as a sync would, and commits.
  sync::StoreCounts store(const std::vector<inventory::Image>& images) const {
    db::PgStore store(db.conninfo());
    store.set_run_id(run_id);
    const auto transaction = store.begin(k_fsid, "test-cluster", sync::UsageMarksWanted::yes);
    transaction->add_pools({made_up_pool()});
    for (const inventory::Image& image : images) {
      transaction->add_image(image);
    }
    const sync::StoreCounts counts = transaction->store({}, {});
    transaction->commit();
    return counts;
  }

  /// The mark a new transaction hands the sync for image `id`; the transaction is
  /// given up.
  std::optional<std::uint64_t> mark_of(const std::string& id) const {
    db::PgStore store(db.conninfo());
    const auto transaction = store.begin(k_fsid, "test-cluster", sync::UsageMarksWanted::yes);
    return transaction->usage_marks().find(1, "", id);
  }

  /// "used_bytes|used_unknown_reason|usage_mark" of image `id`.
  std::vector<std::string> image_usage(const std::string& id) const {
    return db.rows(
        "SELECT coalesce(used_bytes::text, 'NULL'), coalesce(used_unknown_reason, 'NULL'), "
        "coalesce(usage_mark::text, 'NULL') FROM rbdsync.images WHERE image_id = " +
        literal(id));
  }

  /// "used_bytes|used_unknown_reason" of the snapshots of image `id`.
  std::vector<std::string> snapshot_usage(const std::string& id) const {
    return db.rows(
        "SELECT coalesce(used_bytes::text, 'NULL'), coalesce(used_unknown_reason, 'NULL') "
        "FROM rbdsync.snapshots WHERE image_id = " +
        literal(id));
  }

  /// updated_at of image `id` and of its snapshots, as text.
  std::vector<std::string> updated_at(const std::string& id) const {
    return db.rows(
        "SELECT 'image ' || updated_at FROM rbdsync.images WHERE image_id = " + literal(id) +
        " UNION ALL SELECT 'snapshot ' || updated_at FROM rbdsync.snapshots WHERE image_id = " +
        literal(id) + " ORDER BY 1");
  }

  TestDatabase db;
  std::string run_id;
};

const std::string k_read_usage = std::to_string(k_image_used) + "|NULL|7";
const std::string k_read_snapshot_usage = std::to_string(k_snapshot_used) + "|NULL";

TEST_F(UsageCarryTest, CarriedUnchangedImageKeepsItsStoredUsageAndIsNotRewritten) {
  const sync::StoreCounts first = store({read_image("a", 7)});
  ASSERT_EQ(first.images.added, 1U);
  ASSERT_EQ(first.snapshots.added, 1U);
  EXPECT_EQ(mark_of("a"), std::optional<std::uint64_t>(7));
  EXPECT_EQ(mark_of("b"), std::nullopt);
  const std::vector<std::string> written = updated_at("a");

  const sync::StoreCounts again = store({carried(read_image("a", 7))});
  EXPECT_EQ(shown(again.images), "0/0/0/1");
  EXPECT_EQ(shown(again.snapshots), "0/0/0/1");
  EXPECT_EQ(image_usage("a"), std::vector<std::string>{k_read_usage});
  EXPECT_EQ(snapshot_usage("a"), std::vector<std::string>{k_read_snapshot_usage});
  EXPECT_EQ(updated_at("a"), written) << "an unchanged row is never rewritten";
  EXPECT_EQ(mark_of("a"), std::optional<std::uint64_t>(7)) << "the mark is kept too";

  // A carried image without a mark of its own (as the source may send it) is the same.
  inventory::Image markless = carried(read_image("a", 7));
  markless.usage_mark.reset();
  const sync::StoreCounts third = store({markless});
  EXPECT_EQ(shown(third.images), "0/0/0/1");
  EXPECT_EQ(image_usage("a"), std::vector<std::string>{k_read_usage});
}

TEST_F(UsageCarryTest, CarriedImageWithOtherValuesChangedIsRewrittenButKeepsItsUsage) {
  store({read_image("a", 7)});
  inventory::Image changed = carried(read_image("a", 7));
  changed.size_bytes *= 2;
  changed.object_count *= 2;
  changed.watchers = {{"10.0.0.1:0/1", 4123, 99}};
  changed.snapshots[0].is_protected = true;

  const sync::StoreCounts counts = store({changed});
  EXPECT_EQ(shown(counts.images), "0/1/0/0");
  EXPECT_EQ(shown(counts.snapshots), "0/1/0/0");
  EXPECT_EQ(image_usage("a"), std::vector<std::string>{k_read_usage});
  EXPECT_EQ(snapshot_usage("a"), std::vector<std::string>{k_read_snapshot_usage});
  EXPECT_EQ(db.rows("SELECT size_bytes || '|' || (watchers->0->>'client') || '|' || "
                    "(SELECT protected FROM rbdsync.snapshots) FROM rbdsync.images"),
            std::vector<std::string>{std::to_string(std::uint64_t{2} << 30U) + "|4123|true"});
  EXPECT_EQ(mark_of("a"), std::optional<std::uint64_t>(7));
}

TEST_F(UsageCarryTest, CarriedImageWithNoStoredRowIsStoredWithUnknownUsageAndNoMark) {
  const sync::StoreCounts counts = store({carried(read_image("new", 7))});
  EXPECT_EQ(shown(counts.images), "1/0/0/0");
  EXPECT_EQ(shown(counts.snapshots), "1/0/0/0");
  EXPECT_EQ(image_usage("new"),
            std::vector<std::string>{std::string("NULL|") + k_not_kept + "|NULL"});
  EXPECT_EQ(snapshot_usage("new"), std::vector<std::string>{std::string("NULL|") + k_not_kept});
  EXPECT_EQ(mark_of("new"), std::nullopt) << "the next sync reads its maps";
}

TEST_F(UsageCarryTest, ReadUsageReplacesTheStoredUsageAndMark) {
  store({read_image("a", 7), read_image("b", 7)});
  inventory::Image read_again = read_image("a", 9);
  read_again.usage.used_bytes = 1000;
  read_again.snapshots[0].usage.used_bytes = 2000;
  // Carried and read images side by side in one store: each row by its own flag.
  const sync::StoreCounts counts = store({read_again, carried(read_image("b", 7))});
  EXPECT_EQ(shown(counts.images), "0/1/0/1");
  EXPECT_EQ(shown(counts.snapshots), "0/1/0/1");
  EXPECT_EQ(image_usage("a"), std::vector<std::string>{"1000|NULL|9"});
  EXPECT_EQ(snapshot_usage("a"), std::vector<std::string>{"2000|NULL"});
  EXPECT_EQ(image_usage("b"), std::vector<std::string>{k_read_usage});
  EXPECT_EQ(mark_of("a"), std::optional<std::uint64_t>(9));

  // Usage that came another way (here: unknown) has no mark: the stored one goes.
  inventory::Image unknown = read_image("a", 0);
  unknown.usage_mark.reset();
  unknown.usage = {std::nullopt, "fast-diff invalid"};
  unknown.snapshots[0].usage = {std::nullopt, "fast-diff invalid"};
  store({unknown, carried(read_image("b", 7))});
  EXPECT_EQ(image_usage("a"), std::vector<std::string>{"NULL|fast-diff invalid|NULL"});
  EXPECT_EQ(snapshot_usage("a"), std::vector<std::string>{"NULL|fast-diff invalid"});
  EXPECT_EQ(mark_of("a"), std::nullopt);
  EXPECT_EQ(mark_of("b"), std::optional<std::uint64_t>(7));
}

TEST_F(UsageCarryTest, AMarkAloneThatDiffersIsWrittenButNeitherCountedNorDated) {
  // As when the lock was taken and given back without a write, or the reader switched:
  // nothing the console shows differs.
  inventory::Image unmarked = read_image("a", 0);
  unmarked.usage_mark.reset();
  store({unmarked});
  const std::vector<std::string> before = updated_at("a");
  const sync::StoreCounts counts = store({read_image("a", 12)});
  EXPECT_EQ(shown(counts.images), "0/0/0/1");
  EXPECT_EQ(shown(counts.snapshots), "0/0/0/1");
  EXPECT_EQ(mark_of("a"), std::optional<std::uint64_t>(12));
  EXPECT_EQ(updated_at("a"), before);
  // A shown value and the mark together: counted, and dated.
  inventory::Image resized = read_image("a", 13);
  resized.size_bytes *= 2;
  EXPECT_EQ(shown(store({resized}).images), "0/1/0/0");
  EXPECT_EQ(mark_of("a"), std::optional<std::uint64_t>(13));
  EXPECT_NE(updated_at("a").at(0), before.at(0));
}

TEST_F(UsageCarryTest, MarksBeyondASignedBigintAndOfOtherClustersComeBackAsStored) {
  const std::uint64_t high = 0xfffffffffffffff9ULL;
  store({read_image("a", high)});
  EXPECT_EQ(db.rows("SELECT usage_mark FROM rbdsync.images"), std::vector<std::string>{"-7"});
  EXPECT_EQ(mark_of("a"), std::optional<std::uint64_t>(high));

  // Another cluster's marks are not this one's.
  db::PgStore other(db.conninfo());
  const auto transaction =
      other.begin("00000000-0000-4000-8000-000000000001", "other", sync::UsageMarksWanted::yes);
  EXPECT_EQ(transaction->usage_marks().size(), 0U);
}

TEST_F(UsageCarryTest,
       RowsStagedBeforeTheMarksAreAskedForAreStoredAndATransactionWantingNoneHasNone) {
  store({read_image("a", 7)});
  {
    // The marks load in the stager's writer while the sync goes on: rows staged before
    // usage_marks() is asked, one COPY each here, are written after the load (that the
    // writer's first job holds back every batch is RowStagerTest's) and stored.
    db::PgStore store(db.conninfo());
    store.set_run_id(run_id);
    store.set_batch_bytes(1);
    const auto transaction = store.begin(k_fsid, "test-cluster", sync::UsageMarksWanted::yes);
    transaction->add_pools({made_up_pool()});
    transaction->add_image(carried(read_image("a", 7)));
    EXPECT_EQ(transaction->usage_marks().find(1, "", "a"), std::optional<std::uint64_t>(7));
    EXPECT_EQ(shown(transaction->store({}, {}).images), "0/0/0/1");
    transaction->commit();
  }
  EXPECT_EQ(image_usage("a"), std::vector<std::string>{k_read_usage});
  // As with --reader librbd: no marks are read, though some are stored.
  db::PgStore store(db.conninfo());
  const auto transaction = store.begin(k_fsid, "test-cluster", sync::UsageMarksWanted::no);
  EXPECT_EQ(transaction->usage_marks().size(), 0U);
}

TEST_F(UsageCarryTest, AMarksLoadThatFailsFailsTheTransactionWithItsReason) {
  store({read_image("a", 7)});
  // A session that lets no one read the images, as an ALTER TABLE would: the load waits
  // until the statement timeout ends it.
  auto holder = db.connect();
  pqxx::work holding(*holder);
  holding.exec("LOCK TABLE rbdsync.images IN ACCESS EXCLUSIVE MODE");
  db::PgStore store(db.conninfo(), /*statement_timeout_seconds=*/1);
  store.set_run_id(run_id);
  const auto transaction = store.begin(k_fsid, "test-cluster", sync::UsageMarksWanted::yes);
  try {
    transaction->usage_marks();
    ADD_FAILURE() << "the marks loaded past the lock";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("reading the usage marks"), std::string::npos)
        << error.what();
  }
  // The writer stopped with it: nothing more is staged or stored.
  transaction->add_pools({made_up_pool()});
  EXPECT_THROW(transaction->store({}, {}), Error);
}

TEST_F(UsageCarryTest, MarksAreReadInChunksAndAllArrive) {
  store({read_image("a", 7)});
  // More rows than one FETCH takes (20,000), made directly: stale first rows need no
  // more than the listing's columns.
  constexpr int k_rows = 20001;
  auto connection = db.connect();
  pqxx::work work(*connection);
  work.exec(
      "INSERT INTO rbdsync.images (fsid, pool_id, namespace, image_id, name, "
      "used_unknown_reason, stale_error, stale_since, usage_mark) SELECT " +
      literal(k_fsid) +
      ", 1, '', 'bulk-' || n, 'bulk-' || n, 'not read yet', 'test', now(), n "
      "FROM generate_series(1, " +
      std::to_string(k_rows) + ") AS n");
  work.commit();

  db::PgStore store(db.conninfo());
  store.set_run_id(run_id);
  const auto transaction = store.begin(k_fsid, "test-cluster", sync::UsageMarksWanted::yes);
  const sync::UsageMarks& marks = transaction->usage_marks();
  EXPECT_EQ(marks.size(), static_cast<std::size_t>(k_rows) + 1);
  EXPECT_EQ(marks.find(1, "", "a"), std::optional<std::uint64_t>(7));
  EXPECT_EQ(marks.find(1, "", "bulk-1"), std::optional<std::uint64_t>(1));
  EXPECT_EQ(marks.find(1, "", "bulk-20001"), std::optional<std::uint64_t>(20001));
  // The transaction goes on as usual after the cursor: its rows stage and store.
  transaction->add_pools({made_up_pool()});
  transaction->add_image(carried(read_image("a", 7)));
  const sync::StoreCounts counts = transaction->store({}, {});
  EXPECT_EQ(shown(counts.images), "0/0/" + std::to_string(k_rows) + "/1");
  transaction->commit();
  EXPECT_EQ(image_usage("a"), std::vector<std::string>{k_read_usage});
}

}  // namespace
}  // namespace rbdsync::testing
