// End to end: the real binary syncs the real throwaway cluster into the real database.
#include <nlohmann/json.hpp>

#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

constexpr std::uint64_t k_mib = 1ULL << 20;

class SyncTest : public IntegrationTest {
 protected:
  void SetUp() override {
    pool = migrate_and_create_pool("it");
    pool_id = std::to_string(ceph.pool_id(pool));
  }

  std::vector<std::string> image_rows() const {
    return db.rows(
        "SELECT namespace, name, size_bytes, object_size, features, feature_names "
        "FROM rbdsync.images WHERE pool_id = " +
        pool_id);
  }

  std::string pool;
  std::string pool_id;
};

TEST_F(SyncTest, FirstSyncStoresEveryImageWithItsSizeObjectSizeAndFeatures) {
  const std::string id_a = ceph.create_image(pool, "a", 1024 * k_mib);
  ceph.create_image(pool, "b", 10 * k_mib, /*features=*/1, /*order=*/20);
  ceph.create_namespace(pool, "tenant");
  ceph.create_image(pool, "c", 5 * k_mib, 0x3d, 22, "tenant");
  ceph.snapshot(pool, "a", "s1", /*protect=*/true);
  ceph.clone(pool, "a", "s1", "a-clone");

  const RunResult result = sync({"--pool", pool});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("pools=1 images=4 added=4 changed=0 removed=0"), std::string::npos)
      << result.out;

  const std::string all = "{layering,exclusive-lock,object-map,fast-diff,deep-flatten}";
  EXPECT_EQ(image_rows(), (std::vector<std::string>{
                              // sorted as text: 't' sorts before '|'
                              "tenant|c|5242880|4194304|61|" + all,
                              "|a-clone|1073741824|4194304|61|" + all,
                              "|a|1073741824|4194304|61|" + all,
                              "|b|10485760|1048576|1|{layering}",
                          }));
  EXPECT_EQ(
      db.rows("SELECT image_id FROM rbdsync.images WHERE name = 'a' AND pool_id = " + pool_id),
      std::vector<std::string>{id_a});
  EXPECT_EQ(db.rows("SELECT fsid, name FROM rbdsync.pools WHERE pool_id = " + pool_id),
            std::vector<std::string>{ceph.fsid() + "|" + pool});
}

TEST_F(SyncTest, ResyncOfAnUnchangedPoolChangesNoImageRow) {
  ceph.create_image(pool, "a", 64 * k_mib);
  ASSERT_EQ(sync({"--pool", pool}).exit_code, 0);
  const auto before = db.rows("SELECT image_id, updated_at FROM rbdsync.images");

  const RunResult result = sync({"--pool", pool});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("images=1 added=0 changed=0 removed=0"), std::string::npos)
      << result.out;
  EXPECT_EQ(db.rows("SELECT image_id, updated_at FROM rbdsync.images"), before);
}

TEST_F(SyncTest, RemovedImageDisappearsAndResizedImageIsUpdated) {
  ceph.create_image(pool, "keep", 64 * k_mib);
  ceph.create_image(pool, "grow", 64 * k_mib);
  ceph.create_image(pool, "gone", 64 * k_mib);
  ASSERT_EQ(sync({"--pool", pool}).exit_code, 0);

  ceph.remove_image(pool, "gone");
  ceph.resize_image(pool, "grow", 128 * k_mib);
  const RunResult result = sync({"--pool", pool});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("images=2 added=0 changed=1 removed=1"), std::string::npos)
      << result.out;
  EXPECT_EQ(db.rows("SELECT name, size_bytes FROM rbdsync.images WHERE pool_id = " + pool_id),
            (std::vector<std::string>{"grow|134217728", "keep|67108864"}));
}

TEST_F(SyncTest, WithoutPoolOptionEveryRbdPoolIsSyncedAndOtherPoolsAreNot) {
  const std::string second = unique_name("it");
  const std::string not_rbd = unique_name("it-raw");
  ceph.create_pool(second);
  ceph.create_pool(not_rbd, /*rbd=*/false);
  ceph.create_image(pool, "one", 8 * k_mib);
  ceph.create_image(second, "two", 8 * k_mib);

  const RunResult result = sync();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto pools = db.rows("SELECT name FROM rbdsync.pools");
  EXPECT_NE(std::find(pools.begin(), pools.end(), pool), pools.end());
  EXPECT_NE(std::find(pools.begin(), pools.end(), second), pools.end());
  EXPECT_EQ(std::find(pools.begin(), pools.end(), not_rbd), pools.end());
  EXPECT_EQ(db.rows("SELECT p.name, i.name FROM rbdsync.images i JOIN rbdsync.pools p "
                    "USING (fsid, pool_id) WHERE p.name IN ('" +
                    pool + "', '" + second + "')"),
            (std::vector<std::string>{pool + "|one", second + "|two"}));
}

TEST_F(SyncTest, DeletedPoolIsRemovedWithItsImagesWhenSyncingEveryPool) {
  const std::string doomed = unique_name("it");
  ceph.create_pool(doomed);
  ceph.create_image(doomed, "x", 8 * k_mib);
  ASSERT_EQ(sync().exit_code, 0);
  const std::string doomed_id = std::to_string(ceph.pool_id(doomed));
  ASSERT_EQ(db.rows("SELECT name FROM rbdsync.images WHERE pool_id = " + doomed_id).size(), 1U);

  ceph.delete_pool(doomed);
  const RunResult result = sync();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(db.rows("SELECT name FROM rbdsync.pools WHERE pool_id = " + doomed_id).empty());
  EXPECT_TRUE(db.rows("SELECT name FROM rbdsync.images WHERE pool_id = " + doomed_id).empty());
}

TEST_F(SyncTest, UnknownPoolFailsWithConfigAndLeavesTheDatabaseUnchanged) {
  ceph.create_image(pool, "a", 8 * k_mib);
  ASSERT_EQ(sync({"--pool", pool}).exit_code, 0);
  const std::string before = db.checksum();
  ceph.remove_image(pool, "a");

  const RunResult result = sync({"--pool", pool, "--pool", "no-such-pool"});
  EXPECT_EQ(result.exit_code, 78);
  EXPECT_NE(result.err.find("pool 'no-such-pool' does not exist"), std::string::npos) << result.err;
  EXPECT_EQ(db.checksum(), before);
}

TEST_F(SyncTest, JsonOutputCarriesTheSameCountsAsPlain) {
  ceph.create_image(pool, "a", 8 * k_mib);
  const RunResult result = sync({"--pool", pool, "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json.at("status"), "succeeded");
  EXPECT_EQ(json.at("exit_code"), 0);
  EXPECT_EQ(json.at("fsid"), ceph.fsid());
  EXPECT_EQ(json.at("images"), 1);
  EXPECT_EQ(json.at("added"), 1);
  std::size_t read = 0;
  for (const auto& [method, images] : json.at("read").at("images").items()) {
    read += images.get<std::size_t>();
  }
  EXPECT_EQ(read, 1U) << json.dump();
}

TEST_F(SyncTest, JsonOutputSaysHowEachReaderReadTheImages) {
  ceph.create_image(pool, "plain", 8 * k_mib);
  const RunResult direct = sync({"--pool", pool, "--json", "--reader", "direct"});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(nlohmann::json::parse(direct.out).at("read"),
            nlohmann::json::parse(R"({"images": {"header": 1, "librbd": 0}, "fallbacks": {}})"));
  const RunResult librbd = sync({"--pool", pool, "--json", "--reader", "librbd"});
  ASSERT_EQ(librbd.exit_code, 0) << librbd.err;
  EXPECT_EQ(nlohmann::json::parse(librbd.out).at("read"),
            nlohmann::json::parse(R"({"images": {"librbd": 1}, "fallbacks": {}})"));
}

class SchemaTest : public IntegrationTest {};

TEST_F(SchemaTest, RunAgainstAnUnmigratedDatabaseIsRefusedWithAHint) {
  const RunResult result = sync();
  EXPECT_EQ(result.exit_code, 78);
  EXPECT_NE(result.err.find("rbd-sync migrate"), std::string::npos) << result.err;
}

TEST_F(SchemaTest, SecondMigrateAppliesNothing) {
  const RunResult first = migrate();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto applied_at = first.out.find("applied=");
  ASSERT_NE(applied_at, std::string::npos) << first.out;
  const std::string applied =
      first.out.substr(applied_at + 8, first.out.find(' ', applied_at) - applied_at - 8);
  EXPECT_EQ(applied.substr(0, 2), "1,") << "every migration, from the first: " << first.out;

  const RunResult second = migrate();
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("applied=none"), std::string::npos) << second.out;
  EXPECT_EQ(db.rows("SELECT string_agg(version::text, ',' ORDER BY version) "
                    "FROM rbdsync.schema_migrations"),
            std::vector<std::string>{applied});
}

}  // namespace
}  // namespace rbdsync::testing
