// End to end: the real binary syncs the real throwaway cluster into the real database.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/rows/inventory_rows.hpp"
#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

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

TEST_F(SyncTest, AnIdleImageKeepsItsStoredUsageAndAWriteBetweenSyncsShows) {
  ceph.create_image(pool, "idle", 32 * k_mib);
  ceph.write(pool, "idle", 0, k_mib);
  ceph.create_image(pool, "busy", 32 * k_mib);
  ceph.write(pool, "busy", 0, k_mib);
  const auto usage = [this] {
    return db.rows("SELECT name, used_bytes FROM rbdsync.images WHERE pool_id = " + pool_id);
  };
  const auto kept = [](const RunResult& result) {
    return nlohmann::json::parse(result.out).at("usage_kept").get<int>();
  };
  const RunResult first = sync({"--pool", pool, "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(kept(first), 0);
  EXPECT_EQ(usage(), (std::vector<std::string>{"busy|4194304", "idle|4194304"}));

  ceph.write(pool, "busy", 20 * k_mib, k_mib);  // a third object: 12 MiB from its map
  ceph.write(pool, "busy", 8 * k_mib, k_mib);
  const RunResult second = sync({"--pool", pool, "--json"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(kept(second), 1);
  EXPECT_EQ(nlohmann::json::parse(second.out).at("changed"), 1);
  EXPECT_EQ(usage(), (std::vector<std::string>{"busy|12582912", "idle|4194304"}));

  const RunResult third = sync({"--pool", pool, "--json"});
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(kept(third), 2);
  EXPECT_EQ(nlohmann::json::parse(third.out).at("changed"), 0);
  EXPECT_EQ(usage(), (std::vector<std::string>{"busy|12582912", "idle|4194304"}));
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

TEST_F(SyncTest, WithoutPoolOptionEveryPoolOfTheRbdApplicationIsSyncedAndNoOther) {
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
  const RunResult result = sync({"--pool", "not-read-before-the-schema-is-checked"});
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

/// Column name -> "type" or "type NOT NULL", as a staging table would declare it.
using Definitions = std::map<std::string, std::string>;

Definitions declared(const std::vector<db::ColumnType>& columns) {
  Definitions definitions;
  for (const db::ColumnType& column : columns) {
    const std::string definition = column.sql_type + (column.not_null ? " NOT NULL" : "");
    EXPECT_TRUE(definitions.emplace(column.name, definition).second)
        << column.name << " declared twice";
  }
  return definitions;
}

/// The columns of rbdsync.`table` as migrated, but those that rbd-sync maintains itself
/// (first_seen_at, updated_at) rather than stages.
Definitions migrated(const TestDatabase& db, const std::string& table) {
  Definitions definitions;
  for (const std::string& row :
       db.rows("SELECT attname || '|' || format_type(atttypid, atttypmod) || "
               "CASE WHEN attnotnull THEN ' NOT NULL' ELSE '' END FROM pg_attribute "
               "WHERE attrelid = 'rbdsync." +
               table +
               "'::regclass AND attnum > 0 AND NOT attisdropped "
               "AND attname NOT IN ('first_seen_at', 'updated_at')")) {
    const auto bar = row.find('|');
    definitions[row.substr(0, bar)] = row.substr(bar + 1);
  }
  return definitions;
}

// Staging tables are created from the columns db/rows/inventory_rows.cpp declares: a type or
// a NOT NULL that differed from sql/ would change how a staged value is cast, or refuse
// it, before it reaches the real table.
TEST_F(SchemaTest, DeclaredColumnsMatchTheMigratedSchema) {
  const RunResult migrated_run = migrate();
  ASSERT_EQ(migrated_run.exit_code, 0) << migrated_run.err;
  for (const db::Table* table : {&db::pools_table(), &db::namespaces_table(), &db::images_table(),
                                 &db::snapshots_table(), &db::trash_table()}) {
    ASSERT_EQ(table->types.size(), 1 + table->keys.size() + table->values.size()) << table->name;
    const Definitions in_code = declared(table->types);
    const Definitions in_schema = migrated(db, table->name);
    for (const auto& [name, definition] : in_schema) {
      const auto found = in_code.find(name);
      EXPECT_EQ(found == in_code.end() ? "not declared" : found->second, definition)
          << table->name << "." << name;
    }
    for (const auto& [name, definition] : in_code) {
      EXPECT_EQ(in_schema.count(name), 1U) << table->name << "." << name << " is not in sql/";
    }
    // A keep flag lives in the staging table only; what it keeps is in the real one.
    if (!table->keep_flag.empty()) {
      EXPECT_EQ(in_schema.count(table->keep_flag), 0U) << table->name << "." << table->keep_flag;
    }
    for (const std::string& kept : table->kept) {
      EXPECT_EQ(in_schema.count(kept), 1U) << table->name << "." << kept;
    }
  }

  // The first row of an image never read is made from stale_images: each of its columns
  // has the type of the images column it goes to (the error to stale_error). NOT NULL may
  // differ: what the listing knew is always there.
  const Definitions images = migrated(db, "images");
  for (const db::ColumnType& column : db::stale_image_types()) {
    const std::string stored = column.name == "error" ? "stale_error" : column.name;
    ASSERT_EQ(images.count(stored), 1U) << column.name;
    const std::string& type = images.at(stored);
    EXPECT_TRUE(type == column.sql_type || type == column.sql_type + " NOT NULL")
        << column.name << ": " << column.sql_type << " staged, " << type << " stored";
  }
}

}  // namespace
}  // namespace rbdsync::testing
