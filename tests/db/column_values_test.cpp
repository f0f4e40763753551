// Each column of each inventory table holds the value its name says. The values below
// are all different, and every column has an expected text written here by hand, so a
// row that puts two columns' values in each other's place (two bigints, two texts) or
// that gains or loses a column fails, whatever the order of the columns.

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "db/rows/inventory_rows.hpp"
#include "db/rows/table_sync.hpp"

namespace rbdsync::db {
namespace {

const char* const k_fsid = "00000000-0000-4000-8000-0000000000f5";

/// Column name -> the text expected in it; std::nullopt is NULL.
using Expected = std::map<std::string, Field>;

std::string shown(const Field& field) {
  return field ? "'" + *field + "'" : std::string("NULL");
}

/// Checks `row` of `table` column by column against `expected`, which must name every
/// column of the table and no other.
void expect_columns(const Table& table, const Row& row, const Expected& expected) {
  std::vector<std::string> names{"fsid"};
  names.insert(names.end(), table.keys.begin(), table.keys.end());
  names.insert(names.end(), table.values.begin(), table.values.end());
  if (!table.keep_flag.empty()) {
    names.push_back(table.keep_flag);  // staged only, last
  }
  ASSERT_EQ(row.size(), names.size()) << table.name;
  std::set<std::string> unused;
  for (const auto& entry : expected) {
    unused.insert(entry.first);
  }
  for (std::size_t at = 0; at < names.size(); ++at) {
    const auto found = expected.find(names[at]);
    if (found == expected.end()) {
      ADD_FAILURE() << table.name << "." << names[at] << " has no expected value in the test";
      continue;
    }
    unused.erase(names[at]);
    EXPECT_EQ(shown(row[at]), shown(found->second)) << table.name << "." << names[at];
  }
  for (const std::string& name : unused) {
    ADD_FAILURE() << table.name << " has no column " << name;
  }
}

/// An image with every value known and different from every other.
inventory::Image image_with_everything_known() {
  inventory::Image image;
  image.key = {11, "ns-a", "id-a"};
  image.name = "image-\xff";
  image.format = 2;
  image.size_bytes = 1000001;
  image.object_size = 4194304;
  image.order = 22;
  image.object_count = 1000003;
  image.features = 61;    // layering, exclusive-lock, object-map, fast-diff, deep-flatten
  image.op_features = 5;  // clone-parent, group
  image.flags = 1;        // object map invalid
  image.data_pool_id = 12;
  image.stripe_unit = 65536;
  image.stripe_count = 16;
  image.block_name_prefix = "rbd_data.a1";
  image.snapshot_limit = 100;
  image.create_timestamp = 1796296953000001;
  image.modify_timestamp = 1796296953000002;
  image.access_timestamp = 1796296953000003;
  inventory::Parent parent;
  parent.pool_id = 13;
  parent.pool_name = "parent-pool";
  parent.pool_namespace = "parent-ns";
  parent.image_id = "parent-id";
  parent.image_name = "parent-image";
  parent.snap_id = 14;
  parent.snap_name = "parent-snap";
  parent.in_trash = false;
  parent.overlap_bytes = 1000005;
  image.parent = parent;
  image.group = inventory::GroupMembership{15, "group-\xfe", ""};
  inventory::Migration migration;
  migration.state = "prepared";
  migration.state_description = "waiting";
  migration.source_pool_id = 17;
  migration.source_namespace = "from-ns";
  migration.source_image_name = "from-image";
  migration.source_image_id = "from-id";
  migration.destination_pool_id = 18;
  migration.destination_namespace = "to-ns";
  migration.destination_image_name = "to-image";
  migration.destination_image_id = "to-id";
  image.migration = migration;
  image.mirroring = inventory::Mirroring{"snapshot", "enabled", "global-a", true};
  image.config_overrides = {{"rbd_qos_iops_limit", "100"}};
  image.usage.used_bytes = 1000007;
  image.usage_mark = 0xfffffffffffffff9;  // beyond a bigint: stored with the same 64 bits
  image.watchers = {{"10.0.0.1:0/1", 4123, 99}};
  image.lockers = {{"client.4124", "auto 1", "10.0.0.2:0/2"}};
  image.lock_type = "exclusive";
  image.snapshots.resize(3);
  return image;
}

/// The columns of image_with_everything_known()'s row.
const Expected k_everything_known_columns = {
    {"fsid", k_fsid},
    {"pool_id", "11"},
    {"namespace", "ns-a"},
    {"image_id", "id-a"},
    {"name", "image-\\xff"},
    {"format", "2"},
    {"size_bytes", "1000001"},
    {"object_size", "4194304"},
    {"object_order", "22"},
    {"object_count", "1000003"},
    {"features", "61"},
    {"feature_names", R"({"layering","exclusive-lock","object-map","fast-diff","deep-flatten"})"},
    {"op_features", "5"},
    {"op_feature_names", R"({"clone-parent","group"})"},
    {"flags", "1"},
    {"flag_names", R"({"object map invalid"})"},
    {"data_pool_id", "12"},
    {"stripe_unit", "65536"},
    {"stripe_count", "16"},
    {"block_name_prefix", "rbd_data.a1"},
    {"snapshot_limit", "100"},
    {"snapshot_count", "3"},
    {"create_timestamp", "2026-12-03 11:22:33.000001+00"},
    {"modify_timestamp", "2026-12-03 11:22:33.000002+00"},
    {"access_timestamp", "2026-12-03 11:22:33.000003+00"},
    {"parent_pool_id", "13"},
    {"parent_pool_name", "parent-pool"},
    {"parent_namespace", "parent-ns"},
    {"parent_image_id", "parent-id"},
    {"parent_image_name", "parent-image"},
    {"parent_snap_id", "14"},
    {"parent_snap_name", "parent-snap"},
    {"parent_in_trash", "f"},
    {"parent_overlap_bytes", "1000005"},
    {"group_pool_id", "15"},
    {"group_name", "group-\\xfe"},
    {"migration_state", "prepared"},
    {"migration",
     R"({"destination":{"image_id":"to-id","image_name":"to-image","namespace":"to-ns",)"
     R"("pool_id":18},"source":{"image_id":"from-id","image_name":"from-image",)"
     R"("namespace":"from-ns","pool_id":17},"state":"prepared",)"
     R"("state_description":"waiting"})"},
    {"mirror_mode", "snapshot"},
    {"mirror_state", "enabled"},
    {"mirror_global_id", "global-a"},
    {"mirror_primary", "t"},
    {"config_overrides", R"({"rbd_qos_iops_limit":"100"})"},
    {"used_bytes", "1000007"},
    {"used_unknown_reason", std::nullopt},
    {"usage_mark", "-7"},
    {"usage_carried", "f"},
    {"watchers", R"([{"address":"10.0.0.1:0/1","client":4123,"cookie":99}])"},
    {"lockers", R"([{"address":"10.0.0.2:0/2","id":"auto 1","locker":"client.4124"}])"},
    {"lock_type", "exclusive"},
    // Read just now: a stored stale mark is cleared.
    {"stale_error", std::nullopt},
    {"stale_since", std::nullopt},
    {"name_bytes", "\\x696d6167652dff"},
    {"group_name_bytes", "\\x67726f75702dfe"},
    {"parent_unknown_reason", std::nullopt},
    {"group_unknown_reason", std::nullopt}};

TEST(ImageColumns, EachColumnHoldsTheValueItsNameSays) {
  expect_columns(images_table(), image_row(k_fsid, image_with_everything_known()),
                 k_everything_known_columns);
}

TEST(ImageColumns, EachColumnHoldsTheValueItsNameSaysWhenValuesAreUnknownOrAbsent) {
  inventory::Image image = image_with_everything_known();
  image.name = "image-b";
  image.data_pool_id.reset();
  image.snapshot_limit.reset();
  image.create_timestamp.reset();
  image.modify_timestamp.reset();
  image.access_timestamp.reset();
  image.parent->image_name.clear();
  image.parent->snap_name.clear();
  image.parent->unknown_reason = "not permitted: parent";
  image.group = inventory::GroupMembership{15, "", "not permitted: group"};
  image.migration.reset();
  image.mirroring.reset();
  image.config_overrides.clear();
  image.usage = {std::nullopt, "fast-diff disabled"};
  image.usage_mark.reset();
  image.watchers.clear();
  image.lockers.clear();
  image.lock_type.clear();
  image.snapshots.clear();
  const Row row = image_row(k_fsid, image);
  // What the unknown and absent values change; the other columns as before.
  Expected expected = k_everything_known_columns;
  for (const char* name :
       {"data_pool_id",     "snapshot_limit",    "create_timestamp", "modify_timestamp",
        "access_timestamp", "parent_image_name", "parent_snap_name", "parent_in_trash",
        "group_name",       "migration_state",   "migration",        "mirror_mode",
        "mirror_state",     "mirror_global_id",  "mirror_primary",   "used_bytes",
        "usage_mark",       "lock_type",         "name_bytes",       "group_name_bytes"}) {
    expected[name] = std::nullopt;
  }
  for (const auto& [name, value] : Expected{{"name", "image-b"},
                                            {"snapshot_count", "0"},
                                            {"config_overrides", "{}"},
                                            {"used_unknown_reason", "fast-diff disabled"},
                                            {"watchers", "[]"},
                                            {"lockers", "[]"},
                                            {"parent_unknown_reason", "not permitted: parent"},
                                            {"group_unknown_reason", "not permitted: group"}}) {
    expected[name] = value;
  }
  expect_columns(images_table(), row, expected);

  // Neither a parent nor a group: all of their columns are NULL, reasons included.
  image.parent.reset();
  image.group.reset();
  const Row alone = image_row(k_fsid, image);
  const Table& table = images_table();
  for (std::size_t at = 0; at < table.values.size(); ++at) {
    const std::string& name = table.values[at];
    if (name.rfind("parent_", 0) == 0 || name.rfind("group_", 0) == 0) {
      EXPECT_EQ(shown(alone[1 + table.keys.size() + at]), "NULL") << name;
    }
  }
}

TEST(SnapshotColumns, EachColumnHoldsTheValueItsNameSays) {
  inventory::Image image;
  image.key = {21, "ns-s", "id-s"};
  image.snapshots.resize(2);
  inventory::Snapshot& known = image.snapshots[0];
  known.id = 22;
  known.name = "snap-\xfd";
  known.size_bytes = 2000001;
  known.namespace_type = "user";
  known.timestamp = 1796296953000004;
  known.is_protected = true;
  known.children = 23;
  known.usage.used_bytes = 2000002;
  inventory::Snapshot& unknown = image.snapshots[1];
  unknown.id = 24;
  unknown.name = "snap-b";
  unknown.size_bytes = 2000003;
  unknown.namespace_type = "mirror";
  unknown.timestamp.reset();
  unknown.is_protected = false;
  unknown.children.reset();
  unknown.children_unknown_reason = "not permitted: children";
  unknown.usage.unknown_reason = "fast-diff invalid";
  const std::vector<Row> rows = snapshot_rows(k_fsid, image);
  ASSERT_EQ(rows.size(), 2U);
  expect_columns(snapshots_table(), rows[0],
                 {{"fsid", k_fsid},
                  {"pool_id", "21"},
                  {"namespace", "ns-s"},
                  {"image_id", "id-s"},
                  {"snap_id", "22"},
                  {"name", "snap-\\xfd"},
                  {"size_bytes", "2000001"},
                  {"namespace_type", "user"},
                  {"timestamp", "2026-12-03 11:22:33.000004+00"},
                  {"protected", "t"},
                  {"children", "23"},
                  {"used_bytes", "2000002"},
                  {"used_unknown_reason", std::nullopt},
                  {"name_bytes", "\\x736e61702dfd"},
                  {"children_unknown_reason", std::nullopt},
                  {"usage_carried", "f"}});
  expect_columns(snapshots_table(), rows[1],
                 {{"fsid", k_fsid},
                  {"pool_id", "21"},
                  {"namespace", "ns-s"},
                  {"image_id", "id-s"},
                  {"snap_id", "24"},
                  {"name", "snap-b"},
                  {"size_bytes", "2000003"},
                  {"namespace_type", "mirror"},
                  {"timestamp", std::nullopt},
                  {"protected", "f"},
                  {"children", std::nullopt},
                  {"used_bytes", std::nullopt},
                  {"used_unknown_reason", "fast-diff invalid"},
                  {"name_bytes", std::nullopt},
                  {"children_unknown_reason", "not permitted: children"},
                  {"usage_carried", "f"}});
}

TEST(PoolColumns, EachColumnHoldsTheValueItsNameSays) {
  inventory::Pool pool;
  pool.id = 31;
  pool.name = "pool-\xfc";
  pool.type = "erasure";
  pool.replica_size = 32;
  pool.min_size = 33;
  pool.pg_num = 34;
  pool.stored_bytes = 3000001;
  pool.objects = 3000002;
  pool.used_bytes = 3000003;
  pool.max_avail_bytes = 3000004;
  pool.mirror_mode = "image";
  expect_columns(pools_table(), pool_row(k_fsid, pool),
                 {{"fsid", k_fsid},
                  {"pool_id", "31"},
                  {"name", "pool-\\xfc"},
                  {"pool_type", "erasure"},
                  {"replica_size", "32"},
                  {"min_size", "33"},
                  {"pg_num", "34"},
                  {"stored_bytes", "3000001"},
                  {"objects", "3000002"},
                  {"used_bytes", "3000003"},
                  {"max_avail_bytes", "3000004"},
                  {"mirror_mode", "image"},
                  {"name_bytes", "\\x706f6f6c2dfc"}});
  pool.name = "pool-b";
  EXPECT_EQ(pool_row(k_fsid, pool).back(), std::nullopt);
}

TEST(NamespaceColumns, EachColumnHoldsTheValueItsNameSays) {
  expect_columns(
      namespaces_table(), namespace_row(k_fsid, inventory::Namespace{41, "ns-\xfb"}),
      {{"fsid", k_fsid}, {"pool_id", "41"}, {"name", "ns-\\xfb"}, {"name_bytes", "\\x6e732dfb"}});
  expect_columns(
      namespaces_table(), namespace_row(k_fsid, inventory::Namespace{42, "ns-b"}),
      {{"fsid", k_fsid}, {"pool_id", "42"}, {"name", "ns-b"}, {"name_bytes", std::nullopt}});
}

TEST(TrashColumns, EachColumnHoldsTheValueItsNameSays) {
  inventory::TrashEntry entry;
  entry.pool_id = 51;
  entry.pool_namespace = "ns-t";
  entry.image_id = "id-t";
  entry.name = "trashed-\xfa";
  entry.source = "user";
  entry.deletion_time = 1796296953000005;
  entry.deferment_end_time = 1796296953000006;
  expect_columns(trash_table(), trash_row(k_fsid, entry),
                 {{"fsid", k_fsid},
                  {"pool_id", "51"},
                  {"namespace", "ns-t"},
                  {"image_id", "id-t"},
                  {"name", "trashed-\\xfa"},
                  {"source", "user"},
                  {"deletion_time", "2026-12-03 11:22:33.000005+00"},
                  {"deferment_end_time", "2026-12-03 11:22:33.000006+00"},
                  {"name_bytes", "\\x747261736865642dfa"}});
}

}  // namespace
}  // namespace rbdsync::db
