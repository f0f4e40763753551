// The PostgreSQL sink on its own, against the real test server: rows stream into the
// transaction's temporary tables in batches while a sync reads, and what is stored does
// not depend on how the rows were cut into batches. A PostgreSQL failure in the middle
// of the read fails the sync and leaves the inventory as it was.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "db/pg_store.hpp"
#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

constexpr int k_images = 1000;
const std::string k_fsid = "8d0f4bd4-5a6b-4c7d-9e8f-0a1b2c3d4e5f";

/// A made-up inventory of two pools; `generation` 2 is generation 1 a day later: some
/// images resized, some gone, some new, a snapshot more, the trash changed.
struct Inventory {
  std::vector<inventory::Pool> pools;
  std::vector<inventory::Namespace> namespaces;
  std::vector<inventory::Image> images;
  std::vector<inventory::TrashEntry> trash;
};

inventory::Image made_up_image(int n, int generation) {
  inventory::Image image;
  image.key = {n % 2 == 0 ? 1 : 2, n % 5 == 0 ? "tenant-" + std::to_string(n % 3) : "",
               "id" + std::to_string(n)};
  // Long names, with bytes COPY must escape.
  image.name = "volume-" + std::to_string(n) + "-0123456789abcdef0123456789\tx\\y";
  image.size_bytes = (std::uint64_t{1} << 30U) * static_cast<std::uint64_t>(1 + n % 7);
  if (generation == 2 && n % 50 == 0) {
    image.size_bytes *= 2;
  }
  image.order = 22;
  image.object_size = std::uint64_t{1} << 22U;
  image.object_count = image.size_bytes >> 22U;
  image.features = 0x3d;
  image.block_name_prefix = "rbd_data." + image.key.image_id;
  image.create_timestamp = 1'700'000'000'000'000 + n;
  image.usage.used_bytes = image.size_bytes / 3;
  if (n % 10 == 0) {
    for (int s = 0; s < (generation == 2 && n % 20 == 0 ? 3 : 2); ++s) {
      inventory::Snapshot snap;
      snap.id = static_cast<std::uint64_t>(s + 1);
      snap.name = "snap-" + std::to_string(s);
      snap.size_bytes = image.size_bytes;
      snap.namespace_type = "user";
      snap.timestamp = 1'700'000'000'000'000 + s;
      image.snapshots.push_back(snap);
    }
  }
  if (n % 10 == 1) {
    image.parent = inventory::Parent{1,     "pool-a",         "", "id0", "volume-0", 1, "snap-0",
                                     false, image.size_bytes, ""};
  }
  return image;
}

Inventory made_up_inventory(int generation) {
  Inventory made;
  for (const std::int64_t id : {1, 2}) {
    inventory::Pool pool;
    pool.id = id;
    pool.name = id == 1 ? "pool-a" : "pool-b";
    pool.type = "replicated";
    pool.replica_size = 3;
    pool.objects = generation == 1 ? 100 : 200;
    pool.mirror_mode = "disabled";
    made.pools.push_back(pool);
    for (int t = 0; t < 3; ++t) {
      made.namespaces.push_back({id, "tenant-" + std::to_string(t)});
    }
  }
  for (int n = 0; n < k_images + (generation == 2 ? 40 : 0); ++n) {
    if (generation == 2 && n % 30 == 7) {
      continue;  // removed since
    }
    made.images.push_back(made_up_image(n, generation));
  }
  for (int n = 0; n < 60; ++n) {
    if (generation == 2 && n % 4 == 0) {
      continue;
    }
    inventory::TrashEntry entry;
    entry.pool_id = 1 + n % 2;
    entry.image_id = "trashed" + std::to_string(n);
    entry.name = "old-" + std::to_string(n);
    entry.source = "user";
    entry.deletion_time = 1'700'000'000'000'000;
    entry.deferment_end_time = 1'700'000'000'000'000;
    made.trash.push_back(entry);
  }
  return made;
}

/// Adds the whole of `made`, as a sync would, without storing it.
void add_all(sync::SinkTransaction& transaction, const Inventory& made) {
  transaction.add_pools(made.pools);
  for (const inventory::Namespace& ns : made.namespaces) {
    transaction.add_namespace(ns);
  }
  for (const inventory::TrashEntry& entry : made.trash) {
    transaction.add_trash(entry);
  }
  for (const inventory::Image& image : made.images) {
    transaction.add_image(image);
  }
}

std::vector<sync::StaleImage> stale_images(int generation) {
  if (generation == 1) {
    return {};
  }
  // An image stored by generation 1 and one never seen before, both unreadable now.
  return {{{2, "", "id7"}, "volume-7", "pool-b/volume-7", "timed out"},
          {{2, "", "id-unseen"}, "unseen", "pool-b/unseen", "timed out"}};
}

class SinkStreamTest : public ::testing::Test {
 protected:
  TestDatabase db;  // no Ceph cluster: label postgres

  /// Migrates `database` and records a run there for the usage history to name.
  static std::string prepare(const TestDatabase& database) {
    return database.migrate_and_start_run(k_fsid);
  }

  /// Stores generation `generation` into `database`, its rows sent in batches of
  /// `batch_bytes`, and commits.
  static sync::StoreCounts sync_generation(const TestDatabase& database, const std::string& run_id,
                                           int generation, std::size_t batch_bytes) {
    db::PgStore store(database.conninfo());
    store.set_run_id(run_id);
    store.set_batch_bytes(batch_bytes);
    const auto transaction = store.begin(k_fsid, "test-cluster", sync::UsageMarksWanted::yes);
    add_all(*transaction, made_up_inventory(generation));
    const sync::StoreCounts counts = transaction->store({}, stale_images(generation));
    transaction->commit();
    return counts;
  }

  /// Every inventory row, without the times a sync sets (they differ between databases).
  static std::vector<std::string> stored(const TestDatabase& database) {
    std::vector<std::string> all;
    for (const char* table : {"rbdsync.clusters", "rbdsync.pools", "rbdsync.namespaces",
                              "rbdsync.images", "rbdsync.snapshots", "rbdsync.trash"}) {
      for (const std::string& row :
           database.rows(std::string("SELECT to_jsonb(t) - 'first_seen_at' - 'updated_at' - "
                                     "'stale_since' - 'first_synced_at' - 'last_synced_at' FROM ") +
                         table + " AS t")) {
        all.push_back(std::string(table) + " " + row);
      }
    }
    return all;
  }
};

void expect_same_counts(const sync::StoreCounts& tiny, const sync::StoreCounts& huge) {
  EXPECT_EQ(tiny.pools, huge.pools);
  EXPECT_EQ(tiny.namespaces, huge.namespaces);
  EXPECT_EQ(tiny.images, huge.images);
  EXPECT_EQ(tiny.snapshots, huge.snapshots);
  EXPECT_EQ(tiny.trash, huge.trash);
}

TEST_F(SinkStreamTest, RowsSentOneAtATimeStoreExactlyWhatOneBatchStores) {
  TestDatabase huge_db;
  const std::string tiny_run = prepare(db);
  const std::string huge_run = prepare(huge_db);
  // A one-byte cap sends every row of every kind as a COPY of its own, in the middle of
  // the read; a huge one sends each kind in one COPY at store(), as before streaming.
  constexpr std::size_t k_tiny = 1;
  constexpr std::size_t k_huge = std::size_t{1} << 30U;
  for (const int generation : {1, 2}) {
    SCOPED_TRACE("generation " + std::to_string(generation));
    const sync::StoreCounts tiny = sync_generation(db, tiny_run, generation, k_tiny);
    const sync::StoreCounts huge = sync_generation(huge_db, huge_run, generation, k_huge);
    expect_same_counts(tiny, huge);
    std::vector<std::string> tiny_rows = stored(db);
    std::vector<std::string> huge_rows = stored(huge_db);
    std::sort(tiny_rows.begin(), tiny_rows.end());
    std::sort(huge_rows.begin(), huge_rows.end());
    std::vector<std::string> differing;
    std::set_symmetric_difference(tiny_rows.begin(), tiny_rows.end(), huge_rows.begin(),
                                  huge_rows.end(), std::back_inserter(differing));
    EXPECT_EQ(tiny_rows.size(), huge_rows.size());
    EXPECT_GT(tiny_rows.size(), static_cast<std::size_t>(k_images));
    EXPECT_TRUE(differing.empty())
        << differing.size() << " rows differ, e.g. " << differing.front();
    if (generation == 1) {
      EXPECT_EQ(tiny.images.added, static_cast<std::size_t>(k_images));
      EXPECT_EQ(tiny.snapshots.added, static_cast<std::size_t>(k_images / 10 * 2));
      EXPECT_EQ(tiny.trash.added, 60U);
      EXPECT_EQ(tiny.namespaces.added, 6U);
    } else {
      EXPECT_GT(tiny.images.changed, 0U);
      EXPECT_GT(tiny.images.removed, 0U);
      EXPECT_GT(tiny.images.unchanged, 0U);
      EXPECT_GT(tiny.snapshots.added, 0U);
      EXPECT_GT(tiny.trash.removed, 0U);
      EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.images WHERE stale_error IS NOT NULL"),
                std::vector<std::string>{"2"});
    }
  }
}

TEST_F(SinkStreamTest, SessionEndedWhileReadingFailsTheSyncAndLeavesTheInventoryAsItWas) {
  const std::string run_id = prepare(db);
  sync_generation(db, run_id, 1, std::size_t{512} << 10U);
  const std::string before = db.checksum();

  db::PgStore store(db.conninfo());
  store.set_run_id(run_id);
  store.set_batch_bytes(1);
  const Inventory made = made_up_inventory(2);
  auto transaction = store.begin(k_fsid, "test-cluster", sync::UsageMarksWanted::yes);
  transaction->add_pools(made.pools);
  const std::size_t half = made.images.size() / 2;
  for (std::size_t i = 0; i < half; ++i) {
    transaction->add_image(made.images[i]);
  }
  // The sink's session ends mid-read, as when an administrator terminates it (a fast
  // shutdown does the same to every session). pg_terminate_backend waits until it has.
  EXPECT_EQ(db.rows("SELECT pg_terminate_backend(pid, 30000) FROM pg_stat_activity WHERE "
                    "datname = current_database() AND application_name = 'rbd-sync'"),
            std::vector<std::string>{"t"});
  try {
    for (std::size_t i = half; i < made.images.size(); ++i) {
      transaction->add_image(made.images[i]);
    }
    transaction->store({}, {});
    transaction->commit();
    ADD_FAILURE() << "the sync went on without its session";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::unavailable) << error.what();
    EXPECT_NE(std::string(error.what()).find("lost the connection to PostgreSQL"),
              std::string::npos)
        << error.what();
  }
  transaction.reset();
  EXPECT_EQ(db.checksum(), before) << "the inventory must be exactly as before";
}

TEST_F(SinkStreamTest, ATrashEntryWithTheKeyOfAnImageAddedIsNotStored) {
  const std::string run_id = prepare(db);
  db::PgStore store(db.conninfo());
  store.set_run_id(run_id);
  const auto transaction = store.begin(k_fsid, "test-cluster", sync::UsageMarksWanted::no);
  const Inventory inventory = made_up_inventory(1);
  transaction->add_pools(inventory.pools);
  for (const inventory::Namespace& ns : inventory.namespaces) {
    transaction->add_namespace(ns);
  }
  const inventory::Image& image = inventory.images.at(0);
  transaction->add_image(image);
  const inventory::ImageKey& key = image.key;
  ASSERT_FALSE(key.pool_namespace.empty());
  // The image's own key, the same id in another namespace, and another id.
  transaction->add_trash({key.pool_id, key.pool_namespace, key.image_id, image.name, "user", 1, 2});
  transaction->add_trash({key.pool_id, "", key.image_id, "twin", "user", 1, 2});
  transaction->add_trash({key.pool_id, key.pool_namespace, "other-id", "other", "user", 1, 2});
  const sync::StoreCounts counts = transaction->store({}, {});
  transaction->commit();
  EXPECT_EQ(counts.images.added, 1U);
  EXPECT_EQ(counts.trash.added, 2U);
  EXPECT_EQ(counts.trash.unchanged, 0U);
  EXPECT_EQ(db.rows("SELECT name FROM rbdsync.trash"), (std::vector<std::string>{"other", "twin"}));
}

}  // namespace
}  // namespace rbdsync::testing
