// Least-privilege clients (issue #15), end to end: real cephx clients with the caps
// production clusters hand out (`mon 'profile rbd' osd 'profile rbd-read-only'`, or one
// pool's `osd 'profile rbd pool=P'`) sync a fixture whose clones, protected snapshots and
// group cross from one pool into another. What such a client may not read is stored as
// unknown with a 'not permitted: ' reason and the run ends 0; everything else is stored
// exactly as an admin's sync stores it. Every check runs with both readers.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <rbd/features.h>

#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

using nlohmann::json;

constexpr std::uint64_t k_all_features = 0x3d;  // rbd create's default: up to deep-flatten
constexpr const char* k_parent_reason = "not permitted: this client cannot read the parent's pool";
constexpr const char* k_children_reason =
    "not permitted: this client cannot read every pool its clones may be in";
constexpr const char* k_group_reason = "not permitted: this client cannot read the group's pool";
constexpr const char* k_data_pool_reason =
    "not permitted: this client cannot read the image's data pool";

/// A cephx client made for one test with `caps` ({"mon", "profile rbd", "osd", ...}),
/// its keyring written to `dir`; removed from the cluster (`auth rm`) on destruction.
class CephClient {
 public:
  CephClient(CephAdmin& ceph, const ScopedTempDir& dir, const std::string& id,
             const std::vector<std::string>& caps)
      : m_ceph(ceph), m_id(id), m_keyring(dir.file("ceph.client." + id + ".keyring")) {
    const std::string keyring = ceph.mon_command(json{
        {"prefix", "auth get-or-create"},
        {"entity", "client." + id},
        {"caps", caps},
        {"format", "plain"}}.dump());
    std::ofstream(m_keyring) << keyring;
  }
  ~CephClient() {
    try {
      m_ceph.mon_command(json{{"prefix", "auth rm"}, {"entity", "client." + m_id}}.dump());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "removing client." << m_id << ": " << e.what();
    }
  }
  CephClient(const CephClient&) = delete;
  CephClient& operator=(const CephClient&) = delete;

  const std::string& id() const { return m_id; }
  const std::string& keyring() const { return m_keyring; }

 private:
  CephAdmin& m_ceph;
  std::string m_id;
  std::string m_keyring;
};

/// Keys whose values differ between two rows, ignoring when rows were written.
std::set<std::string> differing(const json& a, const json& b) {
  std::set<std::string> keys;
  for (const auto& [key, value] : a.items()) {
    if (key != "first_seen_at" && key != "updated_at" && (!b.contains(key) || b.at(key) != value)) {
      keys.insert(key);
    }
  }
  return keys;
}

using Diffs = std::map<std::string, std::set<std::string>>;

/// Two pools whose links cross: A holds "golden" (its protected snapshot s1 has clones
/// in B, one of each clone format) and the group "g"; B holds those clones, "v1-parent"
/// and "v2-parent" whose snapshots have their only clone in A, "local-parent" whose clone
/// is in B, "lonely" (protected, no clones), "grouped" (a member of A's group) and
/// "data-in-a" (its data objects in A).
class LeastPrivilegeTest : public IntegrationTest,
                           public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    reader = GetParam();
    pool_a = migrate_and_create_pool("lp-a");
    pool_b = unique_name("lp-b");
    ceph.create_pool(pool_b);
    id_a = ceph.pool_id(pool_a);
    id_b = ceph.pool_id(pool_b);
    fsid = ceph.fsid();
    make_fixture();
  }

  void make_fixture() {
    ceph.create_image(pool_a, "golden", 16 * k_mib);
    ceph.write(pool_a, "golden", 0, k_mib);
    ceph.snapshot(pool_a, "golden", "s1", /*protect=*/true);
    clone(pool_a, "golden", pool_b, "vm-v1", 1);
    clone(pool_a, "golden", pool_b, "vm-v2", 2);

    parent_and_clone("v1-parent", /*protect=*/true, pool_a, "from-b-v1", 1);
    parent_and_clone("v2-parent", /*protect=*/false, pool_a, "from-b-v2", 2);
    parent_and_clone("local-parent", /*protect=*/true, pool_b, "local-child", 1);
    ceph.create_image(pool_b, "lonely", 8 * k_mib);
    ceph.snapshot(pool_b, "lonely", "s1", /*protect=*/true);

    ceph.create_image(pool_b, "grouped", 8 * k_mib);
    librados::IoCtx io_a = ceph.io(pool_a);
    librados::IoCtx io_b = ceph.io(pool_b);
    librbd::RBD api;
    check(api.group_create(io_a, "g"), "creating group g");
    check(api.group_image_add(io_a, "g", io_b, "grouped"), "adding grouped to g");

    librbd::ImageOptions options;
    check(options.set(RBD_IMAGE_OPTION_DATA_POOL, pool_a), "setting the data pool");
    check(options.set(RBD_IMAGE_OPTION_FEATURES, std::uint64_t{RBD_FEATURE_LAYERING}),
          "setting the features");
    check(api.create4(io_b, "data-in-a", 8 * k_mib, options), "creating data-in-a");
    ceph.write(pool_b, "data-in-a", 0, k_mib);
  }

  /// An 8 MiB image `parent` in pool_b with snapshot s1, and its clone `child` in
  /// `child_pool` in clone format `format`.
  void parent_and_clone(const std::string& parent, bool protect, const std::string& child_pool,
                        const std::string& child, std::uint64_t format) {
    ceph.create_image(pool_b, parent, 8 * k_mib);
    ceph.snapshot(pool_b, parent, "s1", protect);
    clone(pool_b, parent, child_pool, child, format);
  }

  /// Clones `parent`@s1 of `pool` into `child_pool` in clone format `format`.
  void clone(const std::string& pool, const std::string& parent, const std::string& child_pool,
             const std::string& child, std::uint64_t format) {
    librados::IoCtx parent_io = ceph.io(pool);
    librados::IoCtx child_io = ceph.io(child_pool);
    librbd::RBD api;
    librbd::ImageOptions options;
    check(options.set(RBD_IMAGE_OPTION_CLONE_FORMAT, format), "setting the clone format");
    check(options.set(RBD_IMAGE_OPTION_FEATURES, k_all_features), "setting the features");
    check(api.clone3(parent_io, parent.c_str(), "s1", child_io, child.c_str(), options),
          "cloning " + parent + " to " + child);
  }

  /// `run_args(extra)` as `client` (with its keyring); nullptr: as the admin.
  std::vector<std::string> args_as(const CephClient* client,
                                   const std::vector<std::string>& extra) const {
    std::vector<std::string> args = run_args(extra);
    const auto id = std::find(args.begin(), args.end(), "--id");
    *(id + 1) = client == nullptr ? required_env("RBDSYNC_TEST_CEPH_ADMIN_ID") : client->id();
    if (client != nullptr) {
      args.insert(args.end(), {"--keyring", client->keyring()});
    }
    return args;
  }

  /// Syncs as `client` with --json; prints how long it took.
  std::pair<RunResult, json> sync_as(const CephClient* client, std::vector<std::string> extra,
                                     const std::string& what) {
    extra.emplace_back("--json");
    const RunResult result = run_rbd_sync(args_as(client, extra));
    std::cout << "[least-privilege] " << what << " (--reader " << reader << "): exit "
              << result.exit_code << " in " << result.seconds << " s" << std::endl;
    json out;
    try {
      out = json::parse(result.out);
    } catch (const json::exception&) {
      ADD_FAILURE() << what << ": no JSON on stdout: " << result.out << "\nstderr: " << result.err;
    }
    return {result, out};
  }

  /// The admin's sync of both pools: what everything else is compared with.
  void sync_as_admin() {
    const auto [result, out] = sync_as(nullptr, {"--pool", pool_a, "--pool", pool_b}, "admin");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    ASSERT_EQ(out.at("unknown").at("parents"), 0) << out;
  }

  /// What the admin's sync of both pools stored of pool B's images and snapshots, and
  /// pool A's rows: what a one-pool client's sync of pool B is compared with.
  struct AdminRows {
    std::map<std::string, json> images;
    std::map<std::string, json> snapshots;
    std::vector<std::string> pool_a;
  };
  AdminRows synced_as_admin() {
    sync_as_admin();
    return {images(id_b), snapshots(id_b), pool_rows(id_a)};
  }

  /// A client's caps: `osd_profile` on pool B alone, 'profile rbd' on the mons.
  std::vector<std::string> pool_b_caps(const std::string& osd_profile) const {
    return {"mon", "profile rbd", "osd", osd_profile + " pool=" + pool_b};
  }

  /// Image rows of pool `pool_id` by name.
  std::map<std::string, json> images(std::int64_t pool_id) {
    std::map<std::string, json> rows;
    for (json& row : db.json_rows("SELECT * FROM rbdsync.images WHERE fsid = " + literal(fsid) +
                                  " AND pool_id = " + std::to_string(pool_id))) {
      const std::string name = row.at("name").get<std::string>();
      // rbd-sync's own bookkeeping: set by the way an image was read (librbd stores none,
      // and a clone librbd may not open is decoded from its header), not by what the
      // client may see.
      row.erase("usage_mark");
      // Not in one statement: json's assignment takes its operand by value, which C++17
      // makes before the key is read.
      rows[name] = std::move(row);
    }
    return rows;
  }

  /// Snapshot rows of pool `pool_id` by "image@snapshot".
  std::map<std::string, json> snapshots(std::int64_t pool_id) {
    std::map<std::string, json> rows;
    for (json& row :
         db.json_rows("SELECT i.name AS image, s.* FROM rbdsync.snapshots s JOIN rbdsync.images i "
                      "USING (fsid, pool_id, namespace, image_id) WHERE s.fsid = " +
                      literal(fsid) + " AND s.pool_id = " + std::to_string(pool_id))) {
      const std::string name =
          row.at("image").get<std::string>() + "@" + row.at("name").get<std::string>();
      rows[name] = std::move(row);
    }
    return rows;
  }

  /// Every stored row of pool `pool_id` but the mgr's moving usage figures, as text.
  /// Syncs every pool as the admin, then as a new client with `caps`: the client must
  /// read every pool, know every value, and rewrite not one of the admin's rows.
  void expect_every_pool_stored_as_by_the_admin(const std::vector<std::string>& caps,
                                                const std::string& what) {
    sync_as_admin();
    const auto admin_a = pool_rows(id_a);
    const auto admin_b = pool_rows(id_b);
    CephClient client(ceph, dir, unique_name("lp"), caps);
    const auto [result, out] = sync_as(&client, {}, what);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(out.value("unreadable_pools", json()), json::array());
    EXPECT_EQ(out.value("unknown", json()),
              (json{{"parents", 0}, {"children", 0}, {"groups", 0}, {"usage", 0}}));
    // Not one of the two pools' rows was rewritten: the values are the admin's.
    EXPECT_EQ(pool_rows(id_a), admin_a);
    EXPECT_EQ(pool_rows(id_b), admin_b);
  }

  std::vector<std::string> pool_rows(std::int64_t pool_id) {
    const std::string where =
        " WHERE fsid = " + literal(fsid) + " AND pool_id = " + std::to_string(pool_id);
    std::vector<std::string> all = db.rows(
        "SELECT pool_id, name, pool_type, replica_size, min_size, pg_num, mirror_mode "
        "FROM rbdsync.pools" +
        where);
    for (const char* table : {"namespaces", "images", "snapshots", "trash"}) {
      for (const std::string& row :
           db.rows(std::string("SELECT t::text FROM rbdsync.") + table + " t" + where)) {
        all.push_back(std::string(table) + ": " + row);
      }
    }
    return all;
  }

  /// Which columns of each row of `after` differ from `before` (rows equal: none listed).
  static Diffs diffs(const std::map<std::string, json>& before,
                     const std::map<std::string, json>& after) {
    Diffs found;
    EXPECT_EQ(before.size(), after.size());
    for (const auto& [name, row] : after) {
      const auto old = before.find(name);
      if (old == before.end()) {
        ADD_FAILURE() << name << " was not stored by the admin's sync";
        continue;
      }
      if (auto keys = differing(old->second, row); !keys.empty()) {
        found[name] = std::move(keys);
      }
    }
    return found;
  }

  /// What a one-pool `profile rbd` client stores differently from an admin in pool B:
  /// the names of the parent in A, the clones in A, the name of the group in A.
  void expect_pool_b_as_a_one_pool_client_sees_it(const std::map<std::string, json>& admin_images,
                                                  const std::map<std::string, json>& admin_snaps,
                                                  const std::set<std::string>& unknown_children) {
    const std::set<std::string> parent = {"parent_image_name", "parent_snap_name",
                                          "parent_in_trash", "parent_unknown_reason"};
    EXPECT_EQ(diffs(admin_images, images(id_b)),
              (Diffs{{"vm-v1", parent},
                     {"vm-v2", parent},
                     {"grouped", {"group_name", "group_unknown_reason"}}}));
    Diffs children;
    for (const std::string& snap : unknown_children) {
      children[snap] = {"children", "children_unknown_reason"};
    }
    EXPECT_EQ(diffs(admin_snaps, snapshots(id_b)), children);

    const auto stored = images(id_b);
    for (const char* name : {"vm-v1", "vm-v2"}) {
      SCOPED_TRACE(name);
      const json& row = stored.at(name);
      // What the clone's own header and the OSD map say is still there.
      EXPECT_EQ(row.at("parent_pool_id"), id_a);
      EXPECT_EQ(row.at("parent_pool_name"), pool_a);
      EXPECT_EQ(row.at("parent_image_id"), admin_images.at(name).at("parent_image_id"));
      EXPECT_EQ(row.at("parent_snap_id"), admin_images.at(name).at("parent_snap_id"));
      EXPECT_EQ(row.at("parent_overlap_bytes"), 16 * k_mib);
      EXPECT_TRUE(row.at("parent_image_name").is_null());
      EXPECT_EQ(row.at("parent_unknown_reason"), k_parent_reason);
    }
    EXPECT_EQ(stored.at("grouped").at("group_pool_id"), id_a);
    EXPECT_TRUE(stored.at("grouped").at("group_name").is_null());
    EXPECT_EQ(stored.at("grouped").at("group_unknown_reason"), k_group_reason);
    const auto snaps = snapshots(id_b);
    for (const std::string& snap : unknown_children) {
      EXPECT_TRUE(snaps.at(snap).at("children").is_null()) << snap;
      EXPECT_EQ(snaps.at(snap).at("children_unknown_reason"), k_children_reason) << snap;
    }
  }

  std::string pool_a;
  std::string pool_b;
  std::int64_t id_a = 0;
  std::int64_t id_b = 0;
  std::string fsid;
};

INSTANTIATE_TEST_SUITE_P(Readers, LeastPrivilegeTest, ::testing::Values("direct", "librbd"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST_P(LeastPrivilegeTest, ReadOnlyClientOfEveryPoolStoresEverythingAsTheAdminDoes) {
  expect_every_pool_stored_as_by_the_admin({"mon", "profile rbd", "osd", "profile rbd-read-only"},
                                           "rbd-read-only client, every pool");
}

TEST_P(LeastPrivilegeTest, MonReadOnlyIsAllTheMonCapsASyncOfEveryPoolNeeds) {
  // The smallest caps: `mon 'profile rbd'` adds the right to blocklist other clients
  // (librbd breaking a dead owner's lock), which a reader that never takes a lock must
  // not hold. `mon 'allow r'` covers the OSD map, `osd dump` and `df detail`.
  expect_every_pool_stored_as_by_the_admin({"mon", "allow r", "osd", "profile rbd-read-only"},
                                           "mon 'allow r', rbd-read-only");

  // And no less on the OSDs: without the class reads of 'profile rbd-read-only'
  // (cls_rbd's and cls_lock's read methods) a sync cannot read a pool (77).
  CephClient plain_reads(ceph, dir, unique_name("lp-osdr"), {"mon", "allow r", "osd", "allow r"});
  const auto [plain, plain_out] = sync_as(&plain_reads, {}, "mon 'allow r', osd 'allow r'");
  EXPECT_EQ(plain.exit_code, 77) << plain_out;
}

TEST_P(LeastPrivilegeTest, OnePoolClientStoresWhatLivesInOtherPoolsAsUnknownWithAReason) {
  const AdminRows admin = synced_as_admin();
  CephClient client(ceph, dir, unique_name("lp-one"), pool_b_caps("profile rbd"));

  const auto [result, out] = sync_as(&client, {"--pool", pool_b}, "one-pool client, --pool");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(out.value("status", ""), "succeeded");
  EXPECT_EQ(out.value("stale", json()), json::array());
  EXPECT_EQ(out.value("unknown", json()),
            (json{{"parents", 2}, {"children", 2}, {"groups", 1}, {"usage", 0}}));
  if (reader == "librbd") {
    // librbd opens a clone's parent with it: the two clones of golden were decoded.
    EXPECT_EQ(out.at("read").at("fallbacks").value("librbd not permitted to open it", 0), 2)
        << out.at("read");
  }
  // 'profile rbd' may class-read every pool's rbd_children: a snapshot whose clones are
  // all in B, or that has none, still has its count.
  expect_pool_b_as_a_one_pool_client_sees_it(admin.images, admin.snapshots,
                                             {"v1-parent@s1", "v2-parent@s1"});
  EXPECT_EQ(snapshots(id_b).at("local-parent@s1").at("children"), 1);
  EXPECT_EQ(snapshots(id_b).at("lonely@s1").at("children"), 0);
  EXPECT_EQ(pool_rows(id_a), admin.pool_a) << "pool A was not synced";

  // Usage object by object reads the data pool, which is A's.
  const auto [exact, exact_out] =
      sync_as(&client, {"--pool", pool_b, "--exact-usage"}, "one-pool client, --exact-usage");
  EXPECT_EQ(exact.exit_code, 0) << exact.err;
  EXPECT_EQ(exact_out.at("unknown").value("usage", 0), 1) << exact_out;
  const json data_in_a = images(id_b).at("data-in-a");
  EXPECT_EQ(data_in_a.at("data_pool_id"), id_a);
  EXPECT_TRUE(data_in_a.at("used_bytes").is_null());
  EXPECT_EQ(data_in_a.at("used_unknown_reason"), k_data_pool_reason);
}

TEST_P(LeastPrivilegeTest, OnePoolReadOnlyClientCannotCountClonesOfAnySnapshot) {
  const AdminRows admin = synced_as_admin();
  CephClient client(ceph, dir, unique_name("lp-one-ro"), pool_b_caps("profile rbd-read-only"));

  const auto [result, out] =
      sync_as(&client, {"--pool", pool_b}, "one-pool read-only client, --pool");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(out.value("unknown", json()),
            (json{{"parents", 2}, {"children", 4}, {"groups", 1}, {"usage", 0}}));
  // Unlike 'profile rbd', 'profile rbd-read-only' grants nothing in other pools, not even
  // class reads of rbd_children, which list_children3 needs for every pool.
  expect_pool_b_as_a_one_pool_client_sees_it(
      admin.images, admin.snapshots,
      {"v1-parent@s1", "v2-parent@s1", "local-parent@s1", "lonely@s1"});
}

TEST_P(LeastPrivilegeTest, OnePoolClientInAnEveryPoolSyncSyncsItsPoolAndNamesThoseItCannotRead) {
  const AdminRows admin = synced_as_admin();
  CephClient client(ceph, dir, unique_name("lp-one"), pool_b_caps("profile rbd"));

  const auto [result, out] = sync_as(&client, {}, "one-pool client, every pool");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(out.value("status", ""), "succeeded");
  EXPECT_EQ(out.value("pools", 0), 1) << "only its own pool: " << out;
  const json unreadable = out.value("unreadable_pools", json::array());
  const auto named = [&unreadable](std::int64_t id) {
    return std::find_if(unreadable.begin(), unreadable.end(), [id](const json& pool) {
      return pool.value("pool_id", std::int64_t{-1}) == id;
    });
  };
  ASSERT_NE(named(id_a), unreadable.end()) << out;
  EXPECT_EQ(named(id_a)->value("pool", ""), pool_a);
  EXPECT_EQ(named(id_a)->value("error", ""), "Operation not permitted");
  EXPECT_EQ(named(id_b), unreadable.end()) << out;
  EXPECT_NE(result.err.find("pool '" + pool_a + "' (id " + std::to_string(id_a) + ") not synced"),
            std::string::npos)
      << "the log names it: " << result.err;
  EXPECT_EQ(db.rows("SELECT status, exit_code, "
                    "jsonb_path_exists(unreadable_pools, '$[*] ? (@.pool_id == " +
                    std::to_string(id_a) +
                    ")') FROM rbdsync.runs WHERE run_id = " + literal(out.value("run_id", ""))),
            std::vector<std::string>{"succeeded|0|t"});

  // A's stored rows are exactly as the admin's sync left them; B is synced.
  EXPECT_EQ(pool_rows(id_a), admin.pool_a);
  expect_pool_b_as_a_one_pool_client_sees_it(admin.images, admin.snapshots,
                                             {"v1-parent@s1", "v2-parent@s1"});
}

TEST_P(LeastPrivilegeTest,
       ClientThatMayNotReadWhatItIsAskedToSyncFailsWithExit77ByPoolOrEveryPool) {
  sync_as_admin();
  const std::string before = db.checksum();
  CephClient one_pool(ceph, dir, unique_name("lp-one"),
                      {"mon", "profile rbd", "osd", "profile rbd pool=" + pool_b});
  CephClient no_osd(ceph, dir, unique_name("lp-mon"), {"mon", "profile rbd"});

  const auto [named, named_out] =
      sync_as(&one_pool, {"--pool", pool_a, "--pool", pool_b}, "one-pool client, --pool A B");
  EXPECT_EQ(named.exit_code, 77) << named.err;
  EXPECT_NE(named_out.value("message", "").find("may not read pool '" + pool_a + "'"),
            std::string::npos)
      << named_out;
  EXPECT_NE(named_out.value("hint", "").find("profile rbd-read-only pool=" + pool_a),
            std::string::npos)
      << named_out;

  const auto [none, none_out] = sync_as(&no_osd, {}, "client without osd caps, every pool");
  if (ceph.release() < 18) {
    // Pacific's OSDs refuse the client at once.
    EXPECT_EQ(none.exit_code, 77) << none.err;
    EXPECT_NE(none_out.value("message", "").find("may read none of the rbd pools"),
              std::string::npos)
        << none_out;
  } else {
    // From Reef the mon gives such a client no OSD ticket: it waits out --ceph-timeout
    // (the test's 20 s), and the error names the caps as one of the two causes.
    EXPECT_EQ(none.exit_code, 69) << none.err;
    EXPECT_NE(none_out.value("message", "").find("the mon answered, no OSD did"), std::string::npos)
        << none_out;
    EXPECT_NE(none_out.value("hint", "").find("has osd caps"), std::string::npos) << none_out;
  }
  EXPECT_EQ(db.checksum(), before);
}

}  // namespace
}  // namespace rbdsync::testing
