// The whole RBD inventory (issue #6), end to end: the real binary syncs the real
// throwaway cluster into the real database, and every stored value is checked against
// what the rbd CLI reports for the same object (`rbd info`, `du`, `snap ls --all`,
// `status`, `lock ls`, `config image ls`, `children`, `trash ls -l`, `namespace ls`,
// all with --format json). Also: an unreadable image keeps its rows, marked stale, in a
// partial run; a resync changes and counts exactly what changed in Ceph; a resync of
// an unchanged cluster writes no inventory row; which stored rows a sync speaks for.
// Every check runs with both readers: --reader direct (the default) and librbd.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <utility>

#include <rados/librados.hpp>

#include "db/pqxx_compat.hpp"
#include "integration/harness.hpp"
#include "support/source_file.hpp"

namespace rbdsync::testing {

using db::exec;
using db::exec_with;
namespace {

using nlohmann::json;

constexpr int k_exit_partial = 3;
constexpr std::uint64_t k_all_features = 0x3d;  // rbd create's default: up to deep-flatten
constexpr std::uint64_t k_layering_only = 1;

/// A place images live: a pool and a namespace in it ("" is the default one).
struct Location {
  std::string pool;
  std::string ns;
};

std::vector<std::string> with_location(std::vector<std::string> args, const Location& at) {
  args.insert(args.end(), {"--pool", at.pool, "--namespace", at.ns});
  return args;
}

std::vector<std::string> with_image(std::vector<std::string> args, const Location& at,
                                    const std::string& image) {
  args = with_location(std::move(args), at);
  args.insert(args.end(), {"--image", image});
  return args;
}

/// A short, printable name for messages (one image name is 2041 bytes long).
std::string shown(const std::string& name) {
  return name.size() > 40 ? name.substr(0, 20) + "...(" + std::to_string(name.size()) + " bytes)"
                          : name;
}

/// A JSON array in a fixed order, for comparing lists whose order carries no meaning.
json sorted(json list) {
  std::sort(list.begin(), list.end(),
            [](const json& a, const json& b) { return a.dump() < b.dump(); });
  return list;
}

json kind_counts(std::size_t added, std::size_t changed, std::size_t removed,
                 std::size_t unchanged) {
  return json{
      {"added", added}, {"changed", changed}, {"removed", removed}, {"unchanged", unchanged}};
}

/// The counts of one kind without "unchanged", for runs where what an unread (stale)
/// image counts as is no business of the test.
json changes(const json& out, const std::string& kind) {
  json counts = out.at("counts").at(kind);
  counts.erase("unchanged");
  return counts;
}

json changes(std::size_t added, std::size_t changed, std::size_t removed) {
  return json{{"added", added}, {"changed", changed}, {"removed", removed}};
}

/// Expects each column of `row` to hold what `from` (rbd's JSON) says in the field paired
/// with it.
void expect_columns_as(const json& row, const json& from,
                       std::initializer_list<std::pair<const char*, const char*>> columns) {
  for (const auto& [column, field] : columns) {
    EXPECT_EQ(row.at(column), from.at(field)) << column;
  }
}

std::vector<std::string> sorted_rows(std::vector<std::string> rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

/// The seconds since the epoch of a timestamptz column, in SQL.
std::string epoch(const std::string& column) {
  return "floor(extract(epoch FROM " + column + "))::bigint";
}

bool has(const json& list, const std::string& element) {
  return std::find(list.begin(), list.end(), element) != list.end();
}

/// The time of a trash entry's `status` ("expired at <time>" / "protected until <time>").
std::int64_t deferment_end(const std::string& status) {
  for (const std::string prefix : {"expired at ", "protected until "}) {
    if (status.rfind(prefix, 0) == 0) {
      return parse_ctime(status.substr(prefix.size()));
    }
  }
  throw std::runtime_error("unexpected trash status '" + status + "'");
}

class InventoryTest : public IntegrationTest {
 protected:
  void SetUp() override {
    pool = migrate_and_create_pool("inv");
    pool_id = ceph.pool_id(pool);
    fsid = ceph.fsid();
  }

  /// Every image row of `at`, with the timestamps also as whole seconds.
  std::vector<json> image_rows(const Location& at) {
    return db.json_rows("SELECT i.*, " + epoch("i.create_timestamp") + " AS create_s, " +
                        epoch("i.modify_timestamp") + " AS modify_s, " +
                        epoch("i.access_timestamp") + " AS access_s FROM rbdsync.images i " +
                        "WHERE fsid = " + literal(fsid) +
                        " AND pool_id = " + std::to_string(ceph.pool_id(at.pool)) +
                        " AND namespace = " + literal(at.ns) + " ORDER BY image_id");
  }

  std::vector<json> snapshot_rows(const Location& at, const std::string& image_id) {
    return db.json_rows("SELECT s.*, " + epoch("s.\"timestamp\"") +
                        " AS timestamp_s FROM rbdsync.snapshots s WHERE fsid = " + literal(fsid) +
                        " AND pool_id = " + std::to_string(ceph.pool_id(at.pool)) +
                        " AND namespace = " + literal(at.ns) +
                        " AND image_id = " + literal(image_id) + " ORDER BY snap_id");
  }

  /// `rbd ARGS --format json`, asked once per test: the checks against the CLI run while
  /// the cluster stands still, once per reader.
  const json& cli(const std::vector<std::string>& args) {
    auto found = m_cli.find(args);
    if (found == m_cli.end()) {
      found = m_cli.emplace(args, rbd_json(args)).first;
    }
    return found->second;
  }

  /// Syncs the fixture of create_inventory_fixture() into an empty inventory and
  /// checks every stored row against the CLI.
  void expect_inventory_of_every_kind(const std::string& second, const InventoryFixture& fixture);
  /// Checks every stored column of one image and its snapshots against the CLI.
  void expect_image_as_the_cli_reports(const Location& at, const json& row, const json& du);
  void expect_trash_as_the_cli_reports(const Location& at);

  std::string pool;
  std::int64_t pool_id = 0;
  std::string fsid;

 private:
  std::map<std::vector<std::string>, json> m_cli;
};

/// The tests that run once per reader (--reader direct, the default, and librbd, the
/// reference): each makes its own small fixture.
class InventoryReaderTest : public InventoryTest,
                            public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    reader = GetParam();
    InventoryTest::SetUp();
  }
};

INSTANTIATE_TEST_SUITE_P(Readers, InventoryReaderTest, ::testing::Values("direct", "librbd"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

void InventoryTest::expect_image_as_the_cli_reports(const Location& at, const json& row,
                                                    const json& du) {
  const std::string name = row.at("name");
  SCOPED_TRACE("image " + at.pool + "/" + at.ns + "/" + shown(name));
  const json info = cli(with_image({"info"}, at, name));

  expect_columns_as(row, info,
                    {{"image_id", "id"},
                     {"format", "format"},
                     {"size_bytes", "size"},
                     {"object_size", "object_size"},
                     {"object_order", "order"},
                     {"object_count", "objects"},
                     {"snapshot_count", "snapshot_count"},
                     {"block_name_prefix", "block_name_prefix"},
                     {"feature_names", "features"},
                     {"op_feature_names", "op_features"},
                     {"flag_names", "flags"}});
  EXPECT_EQ(row.at("create_s"), parse_ctime(info.at("create_timestamp")));
  EXPECT_EQ(row.at("modify_s"), parse_ctime(info.at("modify_timestamp")));
  EXPECT_EQ(row.at("access_s"), parse_ctime(info.at("access_timestamp")));
  if (info.contains("stripe_unit")) {
    EXPECT_EQ(row.at("stripe_unit"), info.at("stripe_unit"));
    EXPECT_EQ(row.at("stripe_count"), info.at("stripe_count"));
  }
  if (info.contains("data_pool")) {
    EXPECT_EQ(row.at("data_pool_id"), ceph.pool_id(info.at("data_pool")));
  } else {
    EXPECT_TRUE(row.at("data_pool_id").is_null());
  }
  // Nothing here is mirrored, grouped or migrating.
  for (const char* column : {"group_name", "group_pool_id", "migration_state", "migration",
                             "mirror_mode", "mirror_state", "mirror_global_id", "mirror_primary"}) {
    EXPECT_TRUE(row.at(column).is_null()) << column << ": " << row.at(column);
  }
  EXPECT_TRUE(row.at("stale_error").is_null());
  EXPECT_TRUE(row.at("stale_since").is_null());

  if (info.contains("parent")) {
    const json& parent = info.at("parent");
    const Location parent_at{parent.at("pool"), parent.at("pool_namespace")};
    EXPECT_EQ(row.at("parent_pool_id"), ceph.pool_id(parent_at.pool));
    expect_columns_as(row, parent,
                      {{"parent_pool_name", "pool"},
                       {"parent_namespace", "pool_namespace"},
                       {"parent_image_id", "id"},
                       {"parent_image_name", "image"},
                       {"parent_snap_name", "snapshot"},
                       {"parent_in_trash", "trash"},
                       {"parent_overlap_bytes", "overlap"}});
    json parent_snap_id;
    for (const json& snap :
         cli(with_image({"snap", "ls", "--all"}, parent_at, parent.at("image")))) {
      if (snap.at("name") == parent.at("snapshot")) {
        parent_snap_id = snap.at("id");
      }
    }
    EXPECT_EQ(row.at("parent_snap_id"), parent_snap_id);
  } else {
    for (const char* column : {"parent_pool_id", "parent_pool_name", "parent_namespace",
                               "parent_image_id", "parent_image_name", "parent_snap_id",
                               "parent_snap_name", "parent_in_trash", "parent_overlap_bytes"}) {
      EXPECT_TRUE(row.at(column).is_null()) << column << ": " << row.at(column);
    }
  }

  const json status = cli(with_image({"status"}, at, name));
  EXPECT_EQ(sorted(row.at("watchers")), sorted(status.at("watchers")));
  const json lockers = cli(with_image({"lock", "ls"}, at, name));
  EXPECT_EQ(sorted(row.at("lockers")), sorted(lockers));
  if (lockers.empty()) {
    EXPECT_TRUE(row.at("lock_type").is_null()) << row.at("lock_type");
  } else {
    // The exclusive-lock feature's own lock.
    EXPECT_EQ(row.at("lock_type"), "exclusive");
  }
  json overrides = json::object();
  for (const json& option : cli(with_image({"config", "image", "ls"}, at, name))) {
    if (option.at("source") == "image") {
      overrides[option.at("name").get<std::string>()] = option.at("value");
    }
  }
  EXPECT_EQ(row.at("config_overrides"), overrides);

  // Usage: known when fast-diff has a valid map, as `rbd du` then reads it cheaply.
  const bool fast_diff =
      has(info.at("features"), "fast-diff") && !has(info.at("flags"), "fast diff invalid");
  std::map<std::uint64_t, json> du_of_snapshot;
  json du_of_head;
  for (const json& entry : du.at("images")) {
    if (entry.at("id") != info.at("id")) {
      continue;
    }
    if (entry.contains("snapshot_id")) {
      du_of_snapshot[entry.at("snapshot_id").get<std::uint64_t>()] = entry.at("used_size");
    } else {
      du_of_head = entry.at("used_size");
    }
  }
  const auto expect_usage = [&](const json& stored, const json& used, const std::string& what) {
    if (fast_diff) {
      EXPECT_EQ(stored.at("used_bytes"), used) << what;
      EXPECT_TRUE(stored.at("used_unknown_reason").is_null())
          << what << ": " << stored.at("used_unknown_reason");
    } else {
      EXPECT_TRUE(stored.at("used_bytes").is_null()) << what << ": " << stored.at("used_bytes");
      EXPECT_TRUE(stored.at("used_unknown_reason").is_string() &&
                  !stored.at("used_unknown_reason").get<std::string>().empty())
          << what << ": " << stored.at("used_unknown_reason");
    }
  };
  expect_usage(row, du_of_head, "image usage");

  const json snaps = cli(with_image({"snap", "ls", "--all"}, at, name));
  const auto stored_snaps = snapshot_rows(at, row.at("image_id"));
  ASSERT_EQ(stored_snaps.size(), snaps.size());
  for (const json& snap : snaps) {
    const std::string snap_name = snap.at("name");
    SCOPED_TRACE("snapshot " + snap_name);
    const auto found = std::find_if(stored_snaps.begin(), stored_snaps.end(), [&](const json& r) {
      return r.at("snap_id") == snap.at("id");
    });
    ASSERT_NE(found, stored_snaps.end()) << "no row for snapshot id " << snap.at("id");
    const json& stored = *found;
    EXPECT_EQ(stored.at("name"), snap.at("name"));
    EXPECT_EQ(stored.at("size_bytes"), snap.at("size"));
    EXPECT_EQ(stored.at("protected"), snap.at("protected") == "true");
    EXPECT_EQ(stored.at("timestamp_s"), parse_ctime(snap.at("timestamp")));
    EXPECT_EQ(stored.at("namespace_type"), snap.at("namespace").at("type"));
    const json children = cli(with_image(
        {"children", "--all", "--snap-id", std::to_string(snap.at("id").get<std::uint64_t>())}, at,
        name));
    EXPECT_EQ(stored.at("children"), children.size());
    if (snap.at("namespace").at("type") == "user") {
      expect_usage(stored, du_of_snapshot[snap.at("id").get<std::uint64_t>()], "snapshot usage");
    } else {
      // `rbd du` shows no usage for trash, group or mirror snapshots either.
      EXPECT_EQ(du_of_snapshot.count(snap.at("id").get<std::uint64_t>()), 0U);
      EXPECT_TRUE(stored.at("used_bytes").is_null()) << stored.at("used_bytes");
      EXPECT_TRUE(stored.at("used_unknown_reason").is_string()) << stored;
    }
  }
}

void InventoryTest::expect_trash_as_the_cli_reports(const Location& at) {
  SCOPED_TRACE("trash of " + at.pool + "/" + at.ns);
  const json listed = cli(with_location({"trash", "ls", "--long"}, at));
  const auto stored = db.json_rows(
      "SELECT t.*, " + epoch("deletion_time") + " AS deletion_s, " + epoch("deferment_end_time") +
      " AS deferment_end_s FROM rbdsync.trash t WHERE fsid = " + literal(fsid) +
      " AND pool_id = " + std::to_string(ceph.pool_id(at.pool)) +
      " AND namespace = " + literal(at.ns) + " ORDER BY image_id");
  ASSERT_EQ(stored.size(), listed.size());
  for (const json& entry : listed) {
    const auto row = std::find_if(stored.begin(), stored.end(), [&](const json& r) {
      return r.at("image_id") == entry.at("id");
    });
    ASSERT_NE(row, stored.end()) << entry;
    EXPECT_EQ(row->at("name"), entry.at("name"));
    std::string source = entry.at("source");
    std::transform(source.begin(), source.end(), source.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    EXPECT_EQ(row->at("source"), source);
    EXPECT_EQ(row->at("deletion_s"), parse_ctime(entry.at("deleted_at")));
    EXPECT_EQ(row->at("deferment_end_s"), deferment_end(entry.at("status")));
  }
}

void InventoryTest::expect_inventory_of_every_kind(const std::string& second,
                                                   const InventoryFixture& fixture) {
  db.rows(
      "TRUNCATE rbdsync.clusters, rbdsync.pools, rbdsync.namespaces, rbdsync.images, "
      "rbdsync.snapshots, rbdsync.trash, rbdsync.pool_usage_history, "
      "rbdsync.cluster_usage_history");
  const auto [exit_code, out] = sync_json({"--pool", pool, "--pool", second});
  ASSERT_EQ(exit_code, 0) << out;
  EXPECT_EQ(out.at("status"), "succeeded");
  EXPECT_EQ(out.at("exit_code"), 0);
  EXPECT_EQ(out.at("fsid"), fsid);
  EXPECT_EQ(out.at("pools"), 2);
  EXPECT_EQ(out.at("images"), fixture.images);
  if (reader == "direct") {
    // On every cluster release (label matrix runs this against Reef and Tentacle), the
    // direct reader decodes at least 99% of the fixture's images itself; what it cannot
    // decode is read through librbd and counted under its reason, never skipped.
    const json& read = out.at("read");
    std::size_t fell_back = 0;
    for (const auto& [reason, count] : read.at("fallbacks").items()) {
      fell_back += count.get<std::size_t>();
    }
    const std::size_t decoded = read.at("images").value("header", std::size_t{0});
    EXPECT_GE(decoded * 100, fixture.images * 99) << read;
    EXPECT_EQ(decoded + read.at("images").value("librbd", std::size_t{0}), fixture.images) << read;
    EXPECT_EQ(read.at("images").value("librbd", std::size_t{0}), fell_back) << read;
  }
  EXPECT_EQ(out.at("skipped"), 0);
  EXPECT_EQ(out.at("stale"), json::array());
  EXPECT_EQ(out.at("counts").at("pools"), kind_counts(2, 0, 0, 0));
  EXPECT_EQ(out.at("counts").at("namespaces"), kind_counts(1, 0, 0, 0));
  EXPECT_EQ(out.at("counts").at("images"), kind_counts(fixture.images, 0, 0, 0));
  EXPECT_EQ(out.at("counts").at("snapshots"), kind_counts(3, 0, 0, 0));
  EXPECT_EQ(out.at("counts").at("trash"), kind_counts(2, 0, 0, 0));
  EXPECT_EQ(out.at("added"), fixture.images);

  EXPECT_EQ(db.rows("SELECT fsid, name FROM rbdsync.clusters"),
            std::vector<std::string>{fsid + "|ceph"});

  // Pools, against the OSD map and the mirroring mode.
  const json osd_pools = json::parse(
      ceph.mon_command(R"({"prefix": "osd pool ls", "detail": "detail", "format": "json"})"));
  for (const std::string& name : {pool, second}) {
    SCOPED_TRACE("pool " + name);
    const auto stored = db.json_rows("SELECT * FROM rbdsync.pools WHERE name = " + literal(name));
    ASSERT_EQ(stored.size(), 1U);
    const auto osd_pool = std::find_if(osd_pools.begin(), osd_pools.end(),
                                       [&](const json& p) { return p.at("pool_name") == name; });
    ASSERT_NE(osd_pool, osd_pools.end());
    EXPECT_EQ(stored[0].at("pool_id"), osd_pool->at("pool_id"));
    EXPECT_EQ(stored[0].at("pool_type"), osd_pool->at("type") == 1 ? "replicated" : "erasure");
    EXPECT_EQ(stored[0].at("replica_size"), osd_pool->at("size"));
    EXPECT_EQ(stored[0].at("min_size"), osd_pool->at("min_size"));
    EXPECT_EQ(stored[0].at("pg_num"), osd_pool->at("pg_num"));
    EXPECT_EQ(stored[0].at("mirror_mode"),
              cli({"mirror", "pool", "info", "--pool", name}).at("mode"));
  }

  // Namespaces.
  for (const std::string& name : {pool, second}) {
    json listed = json::array();
    for (const json& ns : cli({"namespace", "ls", "--pool", name})) {
      listed.push_back(ns.at("name"));
    }
    json stored = json::array();
    for (const json& row : db.json_rows("SELECT name FROM rbdsync.namespaces WHERE pool_id = " +
                                        std::to_string(ceph.pool_id(name)) + " ORDER BY name")) {
      stored.push_back(row.at("name"));
    }
    EXPECT_EQ(sorted(stored), sorted(listed)) << "namespaces of " << name;
  }

  // Images and their snapshots, watchers, locks, usage; the trash.
  for (const Location& at : {Location{pool, ""}, Location{pool, "tenant"}, Location{second, ""}}) {
    const auto rows = image_rows(at);
    json listed = json::array();
    for (const json& name : cli(with_location({"ls"}, at))) {
      listed.push_back(name);
    }
    json stored = json::array();
    for (const json& row : rows) {
      stored.push_back(row.at("name"));
    }
    EXPECT_EQ(sorted(stored), sorted(listed)) << "images of " << at.pool << "/" << at.ns;
    const json du = cli(with_location({"du"}, at));
    for (const json& row : rows) {
      expect_image_as_the_cli_reports(at, row, du);
    }
    expect_trash_as_the_cli_reports(at);
  }

  // The fixtures did what they were meant to, so the comparisons above covered it.
  const auto stored = [&](const std::string& column, const std::string& name) {
    return db.rows("SELECT " + column + " FROM rbdsync.images WHERE name = " + literal(name));
  };
  EXPECT_EQ(stored("flag_names", "broken-map"),
            std::vector<std::string>{"{\"object map invalid\",\"fast diff invalid\"}"});
  EXPECT_EQ(stored("jsonb_array_length(watchers)", "watched"), std::vector<std::string>{"1"});
  EXPECT_EQ(stored("lock_type", "watched"), std::vector<std::string>{"exclusive"});
  EXPECT_EQ(stored("op_feature_names", "fast"), std::vector<std::string>{"{clone-parent}"});
  EXPECT_EQ(stored("parent_image_name || '@' || parent_snap_name", "cross-child"),
            std::vector<std::string>{"fast@s1"});
  EXPECT_EQ(stored("used_bytes IS NOT NULL", "fast"), std::vector<std::string>{"t"});
  EXPECT_EQ(stored("stripe_count", "plain"), std::vector<std::string>{"4"});
  EXPECT_EQ(stored("octet_length(name)", fixture.longest_name), std::vector<std::string>{"2041"});
  EXPECT_EQ(db.rows("SELECT i.name, s.namespace_type, s.protected, s.children "
                    "FROM rbdsync.snapshots s JOIN rbdsync.images i "
                    "USING (fsid, pool_id, namespace, image_id)"),
            (std::vector<std::string>{"fast|user|f|0", "fast|user|t|2", "snap-trasher|trash|f|1"}));
  EXPECT_EQ(stored("op_feature_names", "snap-trasher"),
            std::vector<std::string>{"{clone-parent,snap-trash}"});
}

TEST_F(InventoryTest, EveryKindOfObjectIsStoredWithTheValuesTheRbdCliReportsByEitherReader) {
  const std::string second = unique_name("inv");
  ceph.create_pool(second);
  const InventoryFixture fixture = ceph.create_inventory_fixture(pool, second);
  {
    // The longest name is the longest: one byte more is refused.
    librados::IoCtx io = ceph.io(pool);
    librbd::RBD api;
    int order = 22;
    EXPECT_EQ(
        api.create2(io, (fixture.longest_name + "n").c_str(), 4 * k_mib, k_all_features, &order),
        -ENAMETOOLONG);
  }

  // One fixture, checked with each reader in turn.
  for (const char* each : {"direct", "librbd"}) {
    SCOPED_TRACE(std::string("--reader ") + each);
    reader = each;
    expect_inventory_of_every_kind(second, fixture);
    if (HasFatalFailure()) {
      return;
    }
  }

  // Switching readers on a stored inventory (as upgrading to the direct default does)
  // changes no row: both read every value the same.
  reader = "direct";
  const auto [code, out] = sync_json({"--pool", pool, "--pool", second});
  ASSERT_EQ(code, 0) << out;
  for (const char* kind : {"namespaces", "images", "snapshots", "trash"}) {
    EXPECT_EQ(changes(out, kind), changes(0, 0, 0)) << kind;
  }
  EXPECT_EQ(out.at("counts").at("images").at("unchanged"), fixture.images);
}

TEST_P(InventoryReaderTest, UsageWithoutAValidFastDiffMapIsUnknownUnlessExactUsageIsAsked) {
  ceph.create_image(pool, "fast", 32 * k_mib);
  ceph.write(pool, "fast", 0, 3 * k_mib);
  ceph.create_image(pool, "plain", 32 * k_mib, k_layering_only);
  ceph.write(pool, "plain", 4 * k_mib, 6 * k_mib);
  ceph.snapshot(pool, "plain", "p1", false);
  ceph.write(pool, "plain", 20 * k_mib, k_mib);
  const std::string broken_id = ceph.create_image(pool, "broken-map", 16 * k_mib);
  rados({"-p", pool, "rm", "rbd_object_map." + broken_id});
  ceph.write(pool, "broken-map", 0, 2 * k_mib);

  const json du = rbd_json({"du", "--pool", pool});
  const auto du_used = [&](const std::string& name, const std::string& snapshot) {
    for (const json& entry : du.at("images")) {
      if (entry.at("name") == name && entry.value("snapshot", "") == snapshot) {
        return entry.at("used_size").get<std::int64_t>();
      }
    }
    throw std::runtime_error("rbd du shows no " + name + "@" + snapshot);
  };
  // image|snapshot|used bytes|reason given
  const auto usage = [&] {
    return db.rows(
        "SELECT name, '', coalesce(used_bytes::text, 'NULL'), used_unknown_reason IS NOT NULL "
        "FROM rbdsync.images UNION ALL "
        "SELECT i.name, s.name, coalesce(s.used_bytes::text, 'NULL'), "
        "s.used_unknown_reason IS NOT NULL FROM rbdsync.snapshots s JOIN rbdsync.images i "
        "USING (fsid, pool_id, namespace, image_id)");
  };
  const auto text = [](std::int64_t n) { return std::to_string(n); };

  const auto [fast_code, fast_out] = sync_json({"--pool", pool});
  ASSERT_EQ(fast_code, 0) << fast_out;
  EXPECT_EQ(usage(), (std::vector<std::string>{
                         "broken-map||NULL|t",
                         "fast||" + text(du_used("fast", "")) + "|f",
                         "plain|p1|NULL|t",
                         "plain||NULL|t",
                     }));

  const auto [exact_code, exact_out] = sync_json({"--pool", pool, "--exact-usage"});
  ASSERT_EQ(exact_code, 0) << exact_out;
  EXPECT_EQ(usage(), (std::vector<std::string>{
                         "broken-map||" + text(du_used("broken-map", "")) + "|f",
                         "fast||" + text(du_used("fast", "")) + "|f",
                         "plain|p1|" + text(du_used("plain", "p1")) + "|f",
                         "plain||" + text(du_used("plain", "")) + "|f",
                     }));
  EXPECT_EQ(exact_out.at("counts").at("images"), kind_counts(0, 2, 0, 1));
  EXPECT_EQ(exact_out.at("counts").at("snapshots"), kind_counts(0, 1, 0, 0));
}

TEST_P(InventoryReaderTest, UnreadableImageKeepsItsRowsMarkedStaleAndTheRunIsPartial) {
  const std::string victim_id = ceph.create_image(pool, "victim", 16 * k_mib);
  ceph.write(pool, "victim", 0, k_mib);
  ceph.snapshot(pool, "victim", "v1", true);
  ceph.create_image(pool, "healthy", 16 * k_mib);
  const auto [first_code, first] = sync_json({"--pool", pool});
  ASSERT_EQ(first_code, 0) << first;

  const std::string victim_sql =
      "SELECT to_jsonb(i) - 'stale_error' - 'stale_since' FROM rbdsync.images i WHERE image_id = " +
      literal(victim_id) +
      " UNION ALL SELECT to_jsonb(s) FROM rbdsync.snapshots s WHERE image_id = " +
      literal(victim_id);
  const auto victim_rows = db.rows(victim_sql);
  ASSERT_EQ(victim_rows.size(), 2U);
  const std::string header = "rbd_header." + victim_id;
  rados({"-p", pool, "cp", header, "saved-" + header});  // with its omap
  rados({"-p", pool, "rm", header});
  ceph.resize_image(pool, "healthy", 32 * k_mib);  // the other images are still synced

  const auto [code, out] = sync_json({"--pool", pool});
  EXPECT_EQ(code, k_exit_partial) << out;
  EXPECT_EQ(out.at("status"), "partial");
  EXPECT_EQ(out.at("exit_code"), k_exit_partial);
  ASSERT_EQ(out.at("stale").size(), 1U) << out;
  const json& stale = out.at("stale")[0];
  EXPECT_EQ(stale.at("path"), pool + "/victim");
  EXPECT_EQ(stale.at("image_id"), victim_id);
  EXPECT_FALSE(stale.at("error").get<std::string>().empty());
  EXPECT_EQ(out.at("images"), 1);
  EXPECT_EQ(changes(out, "images"), changes(0, 1, 0));
  EXPECT_EQ(changes(out, "snapshots"), changes(0, 0, 0));

  EXPECT_EQ(db.rows(victim_sql), victim_rows)
      << "the unreadable image's rows must be kept as they were";
  const auto marked = db.json_rows(
      "SELECT stale_error, stale_since, now() - stale_since < interval '1 minute' AS recent "
      "FROM rbdsync.images WHERE image_id = " +
      literal(victim_id));
  ASSERT_EQ(marked.size(), 1U);
  EXPECT_EQ(marked[0].at("stale_error"), stale.at("error"));
  EXPECT_EQ(marked[0].at("recent"), true) << marked[0];
  EXPECT_EQ(db.rows("SELECT size_bytes FROM rbdsync.images WHERE name = 'healthy'"),
            std::vector<std::string>{std::to_string(32 * k_mib)});
  const auto run = db.json_rows(
      "SELECT status, exit_code, stale, stale_images, counts FROM rbdsync.runs "
      "WHERE run_id = " +
      literal(out.at("run_id")));
  ASSERT_EQ(run.size(), 1U);
  EXPECT_EQ(run[0].at("status"), "partial");
  EXPECT_EQ(run[0].at("exit_code"), k_exit_partial);
  EXPECT_EQ(run[0].at("stale"), 1);
  EXPECT_EQ(run[0].at("stale_images"), out.at("stale"));
  EXPECT_EQ(run[0].at("counts"), out.at("counts"));

  // Still unreadable: still stale, since the first time, and nothing else to write.
  const auto [again_code, again] = sync_json({"--pool", pool});
  EXPECT_EQ(again_code, k_exit_partial) << again;
  EXPECT_EQ(changes(again, "images"), changes(0, 0, 0));
  EXPECT_EQ(changes(again, "snapshots"), changes(0, 0, 0));
  const auto marked_again = db.json_rows(
      "SELECT stale_error, stale_since FROM rbdsync.images WHERE image_id = " + literal(victim_id));
  ASSERT_EQ(marked_again.size(), 1U);
  EXPECT_EQ(marked_again[0].at("stale_since"), marked[0].at("stale_since"));
  EXPECT_EQ(db.rows(victim_sql), victim_rows);

  // Readable again: the mark goes, the run is a success.
  rados({"-p", pool, "cp", "saved-" + header, header});
  const auto [healed_code, healed] = sync_json({"--pool", pool});
  EXPECT_EQ(healed_code, 0) << healed;
  EXPECT_EQ(healed.at("status"), "succeeded");
  EXPECT_EQ(healed.at("stale"), json::array());
  EXPECT_EQ(db.rows("SELECT stale_error, stale_since FROM rbdsync.images WHERE image_id = " +
                    literal(victim_id)),
            std::vector<std::string>{"NULL|NULL"});
}

TEST_P(InventoryReaderTest, ResyncCountsExactlyWhatChangedAndASecondResyncWritesNothing) {
  for (const char* name :
       {"keep", "gone", "old-name", "grow", "snapped", "pruned", "stable", "binned"}) {
    ceph.create_image(pool, name, 8 * k_mib);
  }
  ceph.snapshot(pool, "snapped", "before", false);
  ceph.snapshot(pool, "pruned", "old", false);
  ceph.snapshot(pool, "stable", "s", false);
  const std::string restored_id = ceph.create_image(pool, "restored", 8 * k_mib);
  ceph.trash_move(pool, "restored");
  const std::string renamed_id = ceph.image_id(pool, "old-name");

  const auto [first_code, first] = sync_json({"--pool", pool});
  ASSERT_EQ(first_code, 0) << first;
  EXPECT_EQ(first.at("counts").at("images"), kind_counts(8, 0, 0, 0));
  EXPECT_EQ(first.at("counts").at("snapshots"), kind_counts(3, 0, 0, 0));
  EXPECT_EQ(first.at("counts").at("trash"), kind_counts(1, 0, 0, 0));
  const auto first_seen =
      db.rows("SELECT first_seen_at FROM rbdsync.images WHERE image_id = " + literal(renamed_id));

  ceph.remove_image(pool, "gone");
  ceph.rename_image(pool, "old-name", "new-name");
  ceph.resize_image(pool, "grow", 16 * k_mib);
  ceph.snapshot(pool, "snapped", "after", false);
  ceph.remove_snapshot(pool, "pruned", "old");
  ceph.trash_move(pool, "binned");
  ceph.trash_restore(pool, restored_id, "restored");
  ceph.create_image(pool, "fresh", 8 * k_mib);
  ceph.create_namespace(pool, "tenant");

  const auto [code, out] = sync_json({"--pool", pool});
  ASSERT_EQ(code, 0) << out;
  const json& counts = out.at("counts");
  // Added: fresh, restored. Changed: new-name (a rename, not a remove and an add), grow,
  // snapped and pruned (snapshot counts). Removed: gone, binned. Unchanged: keep, stable.
  EXPECT_EQ(counts.at("images"), kind_counts(2, 4, 2, 2));
  EXPECT_EQ(counts.at("snapshots"), kind_counts(1, 0, 1, 2));
  EXPECT_EQ(counts.at("trash"), kind_counts(1, 0, 1, 0));
  EXPECT_EQ(counts.at("namespaces"), kind_counts(1, 0, 0, 0));
  // The pool's usage figures may move with the images' objects.
  EXPECT_EQ(counts.at("pools").at("added"), 0);
  EXPECT_EQ(counts.at("pools").at("removed"), 0);
  EXPECT_EQ(out.at("added"), 2);
  EXPECT_EQ(out.at("changed"), 4);
  EXPECT_EQ(out.at("removed"), 2);

  EXPECT_EQ(
      db.rows("SELECT name, size_bytes, snapshot_count FROM rbdsync.images"),
      (std::vector<std::string>{"fresh|8388608|0", "grow|16777216|0", "keep|8388608|0",
                                "new-name|8388608|0", "pruned|8388608|0", "restored|8388608|0",
                                "snapped|8388608|2", "stable|8388608|1"}));
  EXPECT_EQ(db.rows("SELECT i.name, s.name FROM rbdsync.snapshots s JOIN rbdsync.images i "
                    "USING (fsid, pool_id, namespace, image_id)"),
            (std::vector<std::string>{"snapped|after", "snapped|before", "stable|s"}));
  EXPECT_EQ(db.rows("SELECT name FROM rbdsync.trash"), std::vector<std::string>{"binned"});
  EXPECT_EQ(db.rows("SELECT name FROM rbdsync.namespaces"), std::vector<std::string>{"tenant"});
  EXPECT_EQ(
      db.rows("SELECT first_seen_at FROM rbdsync.images WHERE image_id = " + literal(renamed_id)),
      first_seen)
      << "a renamed image is the same image";

  // Nothing changed in Ceph since: nothing to count, nothing written. Only the pool
  // figures a mgr reports may still move (they follow the changes above by a few
  // seconds, and max_avail follows the whole OSD, which the tests beside this one write
  // to): the pool row may be updated then, and only then, in those columns alone. So
  // one resync shows it either way, however busy the cluster is.
  const std::string pool_row_sql =
      "SELECT to_jsonb(p) - 'stored_bytes' - 'objects' - 'used_bytes' - 'max_avail_bytes' - "
      "'updated_at' FROM rbdsync.pools p";
  const std::string figures_sql =
      "SELECT stored_bytes || ' ' || objects || ' ' || used_bytes || ' ' || max_avail_bytes "
      "FROM rbdsync.pools";
  const auto pool_updates = [](const std::vector<std::string>& counts) {
    const auto row = std::find_if(counts.begin(), counts.end(),
                                  [](const std::string& r) { return r.rfind("pools|", 0) == 0; });
    return row == counts.end() ? std::string() : row->substr(row->find('|', 6));
  };
  // The checksum of every table but pools (the second), whose figures may move.
  const auto without_pools = [](std::string text) {
    const std::size_t start = text.find(';') + 1;
    return text.erase(start, text.find(';', start) - start);
  };
  const auto before = db.settled_write_counts();
  const std::string checksum = db.checksum();
  const auto pool_rows = db.rows(pool_row_sql);
  const auto figures = db.rows(figures_sql);
  const auto [noop_code, noop] = sync_json({"--pool", pool});
  ASSERT_EQ(noop_code, 0) << noop;
  const auto after = db.settled_write_counts();
  for (const char* kind : {"namespaces", "images", "snapshots", "trash"}) {
    EXPECT_EQ(noop.at("counts").at(kind).at("added"), 0) << kind;
    EXPECT_EQ(noop.at("counts").at(kind).at("changed"), 0) << kind;
    EXPECT_EQ(noop.at("counts").at(kind).at("removed"), 0) << kind;
  }
  EXPECT_EQ(noop.at("counts").at("images").at("unchanged"), 8);
  EXPECT_EQ(changes(noop, "pools").at("added"), 0);
  EXPECT_EQ(changes(noop, "pools").at("removed"), 0);
  EXPECT_EQ(db.rows(pool_row_sql), pool_rows) << "only the mgr's figures may move";
  EXPECT_EQ(without_pools(db.checksum()), without_pools(checksum));
  // pg_stat_user_tables: no row of any other table inserted, updated or deleted.
  ASSERT_EQ(after.size(), 6U) << "a row per inventory table";
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (after[i].rfind("pools|", 0) != 0) {
      EXPECT_EQ(after[i], before[i]) << "pg_stat_user_tables: rows inserted, updated or deleted";
    }
  }
  if (changes(noop, "pools").at("changed") == 0) {
    EXPECT_EQ(db.rows(figures_sql), figures);
    EXPECT_EQ(pool_updates(after), pool_updates(before))
        << "pg_stat_user_tables: pool rows inserted, updated or deleted";
  } else {
    EXPECT_NE(db.rows(figures_sql), figures) << "a pool row updated though its figures held";
  }
  // The counters do count this database's writes: the syncs above show in them.
  const std::string images = after[1];  // sorted: clusters, images, namespaces, ...
  ASSERT_EQ(images.rfind("images|", 0), 0U) << images;
  EXPECT_GE(std::stoi(images.substr(7)), 10) << "10 image rows inserted so far: " << images;
}

// Which stored rows a sync speaks for (these were unit tests of the in-memory diff;
// the diff now lives in SQL).

TEST_P(InventoryReaderTest, SyncOfNamedPoolsNeverRemovesRowsOfOtherPools) {
  const std::string other = unique_name("inv");
  ceph.create_pool(other);
  ceph.create_image(pool, "a", 8 * k_mib);
  ceph.create_image(other, "b", 8 * k_mib);
  ceph.snapshot(other, "b", "s", false);
  ASSERT_EQ(sync({"--pool", pool, "--pool", other}).exit_code, 0);
  const std::string other_id = std::to_string(ceph.pool_id(other));
  const std::string other_rows_sql =
      "SELECT to_jsonb(p) FROM rbdsync.pools p WHERE pool_id = " + other_id +
      " UNION ALL SELECT to_jsonb(i) FROM rbdsync.images i WHERE pool_id = " + other_id +
      " UNION ALL SELECT to_jsonb(s) FROM rbdsync.snapshots s WHERE pool_id = " + other_id;
  const auto other_rows = db.rows(other_rows_sql);
  ASSERT_EQ(other_rows.size(), 3U);

  ceph.remove_snapshot(other, "b", "s");
  ceph.remove_image(other, "b");
  ceph.create_image(pool, "c", 8 * k_mib);
  const auto [code, out] = sync_json({"--pool", pool});
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(out.at("counts").at("images"), kind_counts(1, 0, 0, 1));
  EXPECT_EQ(out.at("counts").at("snapshots").at("removed"), 0);
  EXPECT_EQ(out.at("counts").at("pools").at("removed"), 0);
  EXPECT_EQ(db.rows(other_rows_sql), other_rows);
}

TEST_P(InventoryReaderTest,
       SyncOfANamedPoolKeepsAStoredPoolOfThatNameWithAnotherIdAsDoesAnEveryPoolSync) {
  ceph.create_image(pool, "old", 8 * k_mib);
  ASSERT_EQ(sync({"--pool", pool}).exit_code, 0);
  const std::string renamed = unique_name("inv-renamed");
  ceph.rename_pool(pool, renamed);
  ceph.create_pool(pool);  // same name, new id
  ceph.create_image(pool, "new", 8 * k_mib);
  const std::int64_t new_id = ceph.pool_id(pool);
  ASSERT_NE(new_id, pool_id);

  const auto [code, out] = sync_json({"--pool", pool});
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(out.at("counts").at("pools"), kind_counts(1, 0, 0, 0));
  EXPECT_EQ(out.at("counts").at("images"), kind_counts(1, 0, 0, 0));
  EXPECT_EQ(db.rows("SELECT p.pool_id, p.name, i.name FROM rbdsync.pools p JOIN rbdsync.images i "
                    "USING (fsid, pool_id)"),
            sorted_rows({std::to_string(pool_id) + "|" + pool + "|old",
                         std::to_string(new_id) + "|" + pool + "|new"}));

  // Every pool: the old id is still there under its new name; nothing of it goes.
  const auto [all_code, all] = sync_json();
  ASSERT_EQ(all_code, 0) << all;
  EXPECT_EQ(all.at("counts").at("pools").at("removed"), 0);
  EXPECT_EQ(all.at("counts").at("images").at("removed"), 0);
  EXPECT_EQ(db.rows("SELECT p.name, i.name FROM rbdsync.pools p JOIN rbdsync.images i "
                    "USING (fsid, pool_id) WHERE pool_id IN (" +
                    std::to_string(pool_id) + ", " + std::to_string(new_id) + ")"),
            sorted_rows({pool + "|new", renamed + "|old"}));
}

TEST_P(InventoryReaderTest, SyncOfEveryPoolRemovesADeletedPoolWithEverythingInItAndCountsIt) {
  const std::string doomed = unique_name("inv");
  ceph.create_pool(doomed);
  ceph.create_namespace(doomed, "ns");
  ceph.create_image(doomed, "x", 8 * k_mib);
  ceph.snapshot(doomed, "x", "s", false);
  ceph.create_image(doomed, "y", 8 * k_mib, k_all_features, 22, "ns");
  ceph.create_image(doomed, "z", 8 * k_mib);
  ceph.trash_move(doomed, "z");
  ceph.create_image(pool, "survivor", 8 * k_mib);
  const auto [first_code, first] = sync_json();
  ASSERT_EQ(first_code, 0) << first;
  const std::string doomed_id = std::to_string(ceph.pool_id(doomed));

  ceph.delete_pool(doomed);
  const auto [code, out] = sync_json();
  ASSERT_EQ(code, 0) << out;
  const json& counts = out.at("counts");
  EXPECT_EQ(counts.at("pools").at("removed"), 1);
  EXPECT_EQ(counts.at("namespaces").at("removed"), 1);
  EXPECT_EQ(counts.at("images").at("removed"), 2);
  EXPECT_EQ(counts.at("snapshots").at("removed"), 1);
  EXPECT_EQ(counts.at("trash").at("removed"), 1);
  for (const char* kind : {"pools", "namespaces", "images", "snapshots", "trash"}) {
    EXPECT_EQ(counts.at(kind).at("added"), 0) << kind;
  }
  for (const char* table : {"pools", "namespaces", "images", "snapshots", "trash"}) {
    EXPECT_EQ(db.rows(std::string("SELECT count(*) FROM rbdsync.") + table +
                      " WHERE pool_id = " + doomed_id),
              std::vector<std::string>{"0"})
        << table;
  }
  EXPECT_EQ(db.rows("SELECT name FROM rbdsync.images WHERE pool_id = " + std::to_string(pool_id)),
            std::vector<std::string>{"survivor"});
}

TEST_P(InventoryReaderTest, PoolWhoseImageListIsDamagedIsLeftOutAndTheOthersSync) {
  const std::string second = unique_name("inv");
  ceph.create_pool(second);
  ceph.create_image(pool, "a", 8 * k_mib);
  ceph.create_image(second, "b", 8 * k_mib);
  ASSERT_EQ(sync({"--pool", pool, "--pool", second}).exit_code, 0);
  ceph.resize_image(pool, "a", 16 * k_mib);  // the other pool's change is still written
  ceph.remove_image(second, "b");            // the damaged pool's cannot be told
  const std::vector<std::string> second_rows_before =
      db.rows("SELECT name, size_bytes FROM rbdsync.images WHERE pool_id = " +
              std::to_string(ceph.pool_id(second)));
  // A format 1 image list (the tmap in rbd_directory's data) that does not decode: which
  // images the pool holds cannot be told. Any tenant with write caps on the pool can
  // write it; on 731a07e it failed every sync of the cluster (65) while it stayed so. (A
  // damaged directory entry is one failed image instead: directory_pager_test. A damaged
  // rbd_trash entry is not tried: Ceph 16.2's cls_rbd trash_list does not catch its
  // decode error, and the OSD aborts.)
  librados::bufferlist garbage;
  garbage.append("xx");
  ASSERT_EQ(ceph.io(second).write_full("rbd_directory", garbage), 0);

  const auto [code, out] = sync_json({"--pool", pool, "--pool", second});
  std::cout << "[inventory] damaged pool: exit " << code << ": " << out.dump() << std::endl;
  EXPECT_EQ(code, k_exit_partial) << "one damaged pool is one left out, the run partial";
  EXPECT_EQ(out.at("pools"), 1);
  ASSERT_EQ(out.at("unreadable_pools").size(), 1U) << out;
  const nlohmann::json& left_out = out.at("unreadable_pools")[0];
  EXPECT_EQ(left_out.at("pool"), second);
  EXPECT_EQ(left_out.at("damaged"), true);
  EXPECT_NE(left_out.at("error").get<std::string>().find("cannot be decoded"), std::string::npos)
      << left_out;
  EXPECT_NE(out.at("message").get<std::string>().find("1 pool(s) could not be listed"),
            std::string::npos)
      << out;
  EXPECT_EQ(db.rows("SELECT size_bytes FROM rbdsync.images WHERE pool_id = " +
                    std::to_string(ceph.pool_id(pool)) + " AND name = 'a'"),
            std::vector<std::string>{std::to_string(16 * k_mib)});
  EXPECT_EQ(db.rows("SELECT name, size_bytes FROM rbdsync.images WHERE pool_id = " +
                    std::to_string(ceph.pool_id(second))),
            second_rows_before)
      << "the damaged pool's rows are kept as they were";
  const auto run = db.rows(
      "SELECT status || '|' || exit_code || '|' || "
      "(unreadable_pools -> 0 ->> 'pool') FROM rbdsync.runs WHERE run_id = " +
      literal(out.at("run_id")));
  EXPECT_EQ(run, std::vector<std::string>{"partial|3|" + second});
}

// docs/schema.md: every example query runs against a synced inventory and finds what
// it is for.

struct DocQuery {
  std::string title;
  std::string sql;
  std::vector<std::string> parameters;  ///< names, in $1, $2, ... order
};

/// The ```sql blocks of docs/schema.md with the "### title" above each and the
/// parameters its first line ("-- $1 = fsid, $2 = pool id") names.
std::vector<DocQuery> schema_doc_queries() {
  std::vector<DocQuery> queries;
  std::istringstream lines(read_source_file("docs/schema.md"));
  std::string line;
  std::string title;
  while (std::getline(lines, line)) {
    if (line.rfind("### ", 0) == 0) {
      title = line.substr(4);
    } else if (line == "```sql") {
      DocQuery query{title, {}, {}};
      while (std::getline(lines, line) && line != "```") {
        query.sql += line + "\n";
      }
      const std::string first = query.sql.substr(0, query.sql.find('\n'));
      static const std::regex parameter(R"(\$([0-9]+) = ([a-z ]+))");
      for (auto it = std::sregex_iterator(first.begin(), first.end(), parameter);
           it != std::sregex_iterator(); ++it) {
        const std::size_t number = std::stoul((*it)[1]);
        if (number != query.parameters.size() + 1) {
          throw std::runtime_error("docs/schema.md, '" + title + "': parameters out of order");
        }
        query.parameters.push_back((*it)[2]);
      }
      queries.push_back(std::move(query));
    }
  }
  return queries;
}

class SchemaDocTest : public InventoryTest {};

TEST_F(SchemaDocTest, EveryExampleQueryRunsAndFindsRows) {
  const std::string parent_id = ceph.create_image(pool, "fast", 16 * k_mib);
  ceph.write(pool, "fast", 0, 2 * k_mib);
  ceph.snapshot(pool, "fast", "s1", /*protect=*/true);
  ceph.clone(pool, "fast", "s1", "child");
  ceph.create_image(pool, "plain", 8 * k_mib, k_layering_only);
  ceph.create_image(pool, "binned", 8 * k_mib);
  ceph.trash_move(pool, "binned");
  const std::string victim_id = ceph.create_image(pool, "victim", 8 * k_mib);
  ASSERT_EQ(sync({"--pool", pool}).exit_code, 0);
  rados({"-p", pool, "rm", "rbd_header." + victim_id});
  const RunResult partial = sync({"--pool", pool});
  ASSERT_EQ(partial.exit_code, k_exit_partial) << partial.err;

  const std::map<std::string, std::string> values{{"fsid", fsid},
                                                  {"pool id", std::to_string(pool_id)},
                                                  {"namespace", ""},
                                                  {"image id", parent_id}};
  const auto queries = schema_doc_queries();
  EXPECT_GE(queries.size(), 9U) << "docs/schema.md lost example queries";
  auto connection = db.connect();
  for (const DocQuery& query : queries) {
    SCOPED_TRACE("docs/schema.md, '" + query.title + "'");
    std::vector<std::string> arguments;
    for (const std::string& name : query.parameters) {
      const auto value = values.find(name);
      ASSERT_NE(value, values.end()) << "unknown parameter '" << name << "'";
      arguments.push_back(value->second);
    }
    pqxx::work work(*connection);
    pqxx::result rows;
    try {
      rows = exec_with(work, query.sql, arguments);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what() << query.sql;
      continue;
    }
    EXPECT_GT(rows.size(), 0U) << query.sql;
    if (query.sql.find("parent_image_id = $") != std::string::npos) {
      // The tables are tiny, so the planner picks any index; with the other indexes
      // gone (rolled back with this transaction) and no sequential scans, it shows
      // whether images_by_parent fits the query.
      work.exec("SET LOCAL enable_seqscan = off");
      work.exec("DROP INDEX rbdsync.images_by_name");
      work.exec("ALTER TABLE rbdsync.images DROP CONSTRAINT images_pkey CASCADE");
      std::string plan;
      for (const auto& row : exec_with(work, "EXPLAIN " + query.sql, arguments)) {
        plan += row[0].c_str() + std::string("\n");
      }
      EXPECT_NE(plan.find("images_by_parent"), std::string::npos) << plan;
    }
  }
  // What the queries are for, in this fixture.
  EXPECT_EQ(db.rows("SELECT name FROM rbdsync.images WHERE stale_error IS NOT NULL"),
            std::vector<std::string>{"victim"});
}

}  // namespace
}  // namespace rbdsync::testing
