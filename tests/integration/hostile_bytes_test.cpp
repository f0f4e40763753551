// Hostile bytes (issue #19), on the real cluster and database, with both readers: names
// of any bytes are stored and addressable, damaged headers make one image stale and
// never crash a reader, and a run that throws something unexpected is still finished.

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <rados/librados.hpp>
#include <rbd/librbd.hpp>

#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

using nlohmann::json;

constexpr int k_exit_partial = 3;
constexpr int k_exit_internal = 70;

std::string le64(std::uint64_t value) {
  std::string out;
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
  return out;
}

std::string snapshot_key(std::uint64_t id) {
  char key[32];
  std::snprintf(key, sizeof key, "snapshot_%016llx", static_cast<unsigned long long>(id));
  return key;
}

class HostileBytesTest : public IntegrationTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    reader = GetParam();
    pool = migrate_and_create_pool("hostile");
    pool_id = ceph.pool_id(pool);
  }

  /// Sets omap values of an image's header object, bypassing librbd and cls_rbd.
  void set_header_values(const std::string& image_id,
                         const std::map<std::string, std::string>& values) {
    librados::IoCtx io = ceph.io(pool);
    std::map<std::string, librados::bufferlist> omap;
    for (const auto& [key, value] : values) {
      omap[key].append(value);
    }
    check(io.omap_set("rbd_header." + image_id, omap), "omap_set on rbd_header." + image_id);
  }

  std::string header_value(const std::string& image_id, const std::string& key) {
    librados::IoCtx io = ceph.io(pool);
    std::map<std::string, librados::bufferlist> values;
    check(io.omap_get_vals_by_keys("rbd_header." + image_id, {key}, &values), "omap read");
    return values.at(key).to_str();
  }

  /// The (display name, hex of name_bytes) of every image of the pool, by image id.
  std::map<std::string, std::string> stored_names(const std::string& table = "images") {
    std::map<std::string, std::string> names;
    for (const json& row : db.json_rows("SELECT image_id, name, encode(name_bytes, 'hex') AS hex "
                                        "FROM rbdsync." +
                                        table + " WHERE pool_id = " + std::to_string(pool_id))) {
      names[row.at("image_id")] =
          row.at("name").get<std::string>() + "|" +
          (row.at("hex").is_null() ? std::string("NULL") : row.at("hex").get<std::string>());
    }
    return names;
  }

  std::string pool;
  std::int64_t pool_id = 0;
};

INSTANTIATE_TEST_SUITE_P(Readers, HostileBytesTest, ::testing::Values("direct", "librbd"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST_P(HostileBytesTest, NamesOfAnyBytesAreStoredAsDisplayTextWithTheirExactBytes) {
  const std::string latin1 = "caf\xe9";
  const std::string ns = "ns\xe9";
  ceph.create_namespace(pool, ns);
  const std::string latin1_id = ceph.create_image(pool, latin1, 4 * k_mib);
  const std::string tab_id = ceph.create_image(pool, "tab\there", 4 * k_mib);
  const std::string newline_id = ceph.create_image(pool, "new\nline", 4 * k_mib);
  const std::string backslash_id = ceph.create_image(pool, "back\\slash", 4 * k_mib);
  const std::string dot_id = ceph.create_image(pool, "\\.", 4 * k_mib);
  const std::string null_id = ceph.create_image(pool, "\\N", 4 * k_mib);
  const std::string in_ns_id = ceph.create_image(pool, "in\xe9", 4 * k_mib, 0x3d, 22, ns);
  ceph.snapshot(pool, latin1, "snap\xe9", /*protect=*/false);

  librados::IoCtx io = ceph.io(pool);
  librbd::RBD api;
  check(api.group_create(io, "grp\xe9"), "creating the group");
  check(api.group_image_add(io, "grp\xe9", io, "back\\slash"), "adding to the group");
  {
    librbd::Image image;
    check(api.open(io, image, "tab\there"), "opening tab\\there");
    check(image.lock_exclusive("cookie\xff"), "locking tab\\there");
  }
  // librbd checks the values it is given; anyone with write access to the pool can
  // write the header itself.
  set_header_values(tab_id, {{"metadata_conf_rbd_journal_pool", "p\xe9"}});

  const auto [code, out] = sync_json({"--pool", pool});
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(out.at("stale"), json::array());
  EXPECT_EQ(stored_names(), (std::map<std::string, std::string>{
                                {latin1_id, "caf\\xe9|636166e9"},
                                {tab_id, "tab\there|NULL"},
                                {newline_id, "new\nline|NULL"},
                                {backslash_id, "back\\\\slash|6261636b5c736c617368"},
                                {dot_id, "\\\\.|5c2e"},
                                {null_id, "\\\\N|5c4e"},
                                {in_ns_id, "in\\xe9|696ee9"},
                            }));
  EXPECT_EQ(db.rows("SELECT namespace, name, encode(name_bytes, 'hex') FROM rbdsync.images "
                    "WHERE image_id = '" +
                    in_ns_id + "'"),
            std::vector<std::string>{"ns\\xe9|in\\xe9|696ee9"});
  EXPECT_EQ(db.rows("SELECT name, encode(name_bytes, 'hex') FROM rbdsync.namespaces "
                    "WHERE pool_id = " +
                    std::to_string(pool_id)),
            std::vector<std::string>{"ns\\xe9|6e73e9"});
  EXPECT_EQ(db.rows("SELECT name, encode(name_bytes, 'hex') FROM rbdsync.snapshots "
                    "WHERE image_id = '" +
                    latin1_id + "'"),
            std::vector<std::string>{"snap\\xe9|736e6170e9"});
  EXPECT_EQ(db.rows("SELECT group_name, encode(group_name_bytes, 'hex') FROM rbdsync.images "
                    "WHERE image_id = '" +
                    backslash_id + "'"),
            std::vector<std::string>{"grp\\xe9|677270e9"});
  const auto tab = db.json_rows(
      "SELECT lockers, config_overrides FROM rbdsync.images "
      "WHERE image_id = '" +
      tab_id + "'");
  ASSERT_EQ(tab.size(), 1U);
  ASSERT_EQ(tab[0].at("lockers").size(), 1U) << tab[0];
  EXPECT_EQ(tab[0].at("lockers")[0].at("id"), "cookie\\xff");
  EXPECT_EQ(tab[0].at("lockers")[0].at("id_bytes"), "636f6f6b6965ff");
  // librbd leaves out an override it cannot apply; the direct reader shows what the
  // header holds. Either way, what is stored is display text.
  const json& overrides = tab[0].at("config_overrides");
  if (reader == "direct" || overrides.contains("rbd_journal_pool")) {
    EXPECT_EQ(overrides.at("rbd_journal_pool"), "p\\xe9") << tab[0];
  }

  // The same bytes again are the same rows: nothing to rewrite.
  const auto [again_code, again] = sync_json({"--pool", pool});
  ASSERT_EQ(again_code, 0) << again;
  EXPECT_EQ(again.at("counts").at("images").at("changed"), 0) << again;
  EXPECT_EQ(again.at("counts").at("snapshots").at("changed"), 0) << again;
}

TEST_P(HostileBytesTest, DamagedHeadersMakeTheirImagesStaleAndEveryOtherImageIsStored) {
  ceph.create_image(pool, "good", 8 * k_mib);
  ceph.snapshot(pool, "good", "s1", /*protect=*/false);
  const std::string truncated_id = ceph.create_image(pool, "truncated", 8 * k_mib);
  ceph.snapshot(pool, "truncated", "s1", false);
  const std::string overlong_id = ceph.create_image(pool, "overlong", 8 * k_mib);
  ceph.snapshot(pool, "overlong", "s1", false);
  const std::string misfiled_id = ceph.create_image(pool, "misfiled", 8 * k_mib);
  ceph.snapshot(pool, "misfiled", "s1", false);
  // Fancy striping with 1 MiB objects, then a stripe count of 2^44: librbd keeps it in
  // 32 bits and divides by the 0 (SIGFPE in `rbd info`, `rbd ls -l`, any open).
  const std::string striped_id =
      ceph.create_striped_image(pool, "striped", 8 * k_mib, 20, 64 * 1024, 4);

  const std::uint64_t snap_id = rbd_json({"snap", "ls", pool + "/truncated"})[0].at("id");
  const std::string record = header_value(truncated_id, snapshot_key(snap_id));
  set_header_values(truncated_id, {{snapshot_key(snap_id), record.substr(0, 20)}});
  const std::uint64_t overlong_snap = rbd_json({"snap", "ls", pool + "/overlong"})[0].at("id");
  std::string overlong = header_value(overlong_id, snapshot_key(overlong_snap));
  ASSERT_GT(overlong.size(), 42U);
  ASSERT_EQ(overlong[39], '\x04') << "the snapshot namespace envelope's length moved";
  overlong[39] = '\xff';
  set_header_values(overlong_id, {{snapshot_key(overlong_snap), overlong}});
  const std::uint64_t misfiled_snap = rbd_json({"snap", "ls", pool + "/misfiled"})[0].at("id");
  set_header_values(misfiled_id, {{snapshot_key(misfiled_snap + 0x100),
                                   header_value(misfiled_id, snapshot_key(misfiled_snap))}});
  set_header_values(striped_id, {{"stripe_count", le64(std::uint64_t{1} << 44)}});

  // A first sync into an empty database: unreadable images still get rows.
  const auto [code, out] = sync_json({"--pool", pool});
  ASSERT_EQ(code, k_exit_partial) << out;
  std::map<std::string, std::string> stale;
  for (const json& image : out.at("stale")) {
    stale[image.at("image_id")] = image.at("error");
  }
  ASSERT_EQ(stale.count(striped_id), 1U) << out;
  EXPECT_EQ(stale.at(striped_id),
            "damaged header: stripe count 17592186044416 is out of range (at most 4294967295)");
  if (reader == "direct") {
    // The direct reader refuses every damaged header itself.
    EXPECT_EQ(stale.size(), 4U) << out;
    EXPECT_EQ(stale[truncated_id].rfind("damaged header: ", 0), 0U) << out;
    EXPECT_EQ(stale[overlong_id].rfind("damaged header: ", 0), 0U) << out;
    EXPECT_EQ(stale[misfiled_id], "damaged header: snapshot record '" +
                                      snapshot_key(misfiled_snap + 0x100) + "' holds snapshot id " +
                                      std::to_string(misfiled_snap))
        << out;
  }
  const RunResult plain = sync({"--pool", pool});
  EXPECT_EQ(plain.exit_code, k_exit_partial) << plain.err;
  EXPECT_NE(plain.err.find(pool + "/striped"), std::string::npos) << plain.err;

  EXPECT_EQ(db.rows("SELECT size_bytes, snapshot_count, stale_error IS NULL FROM rbdsync.images "
                    "WHERE pool_id = " +
                    std::to_string(pool_id) + " AND name = 'good'"),
            std::vector<std::string>{std::to_string(8 * k_mib) + "|1|t"});
  for (const auto& [image_id, error] : stale) {
    EXPECT_EQ(db.rows("SELECT size_bytes IS NULL, stale_error FROM rbdsync.images WHERE "
                      "image_id = '" +
                      image_id + "'"),
              std::vector<std::string>{"t|" + error});
  }
  EXPECT_EQ(db.rows("SELECT status FROM rbdsync.runs WHERE status = 'running'"),
            std::vector<std::string>{});
}

class ObjectMapBoundTest : public IntegrationTest {};

TEST_F(ObjectMapBoundTest, AMapObjectFarLargerThanItsHeaderImpliesCostsNoMemory) {
  // A tenant with write caps on the pool writes 64 MiB more than an 8 MiB image's map
  // (two objects: 35 bytes) behind its tiny header. 731a07e read the whole object
  // (read(0, 0)) and expanded it to a byte an object: 256 such images in flight would
  // take gigabytes. Now only what two objects' map can hold is read, and its first two
  // objects give the usage, as librbd's fast diff cuts a map larger than the image.
  const std::string pool = migrate_and_create_pool("bound");
  const std::string id = ceph.create_image(pool, "planted", 8 * k_mib);
  ceph.create_image(pool, "intact", 8 * k_mib);
  ceph.write(pool, "planted", 0, k_mib);
  ceph.write(pool, "intact", 0, k_mib);
  const RunResult before = sync({"--pool", pool});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  ASSERT_EQ(db.rows("SELECT used_bytes FROM rbdsync.images WHERE name = 'planted'"),
            std::vector<std::string>{std::to_string(4 * k_mib)});

  librados::IoCtx io = ceph.io(pool);
  librados::bufferlist map;
  ASSERT_GE(io.read("rbd_object_map." + id, map, 0, 0), 0);
  ASSERT_EQ(map.length(), 35U) << "an 8 MiB image's map, CRCs on";
  librados::bufferlist planted;
  planted.append(map);
  planted.append_zero(64 * k_mib);  // more states than objects, footer nowhere
  ASSERT_EQ(io.write_full("rbd_object_map." + id, planted), 0);
  // A change to the header, so that the usage stored by the first sync is not carried
  // (sync/usage_marks.hpp) and the map is read again: an image-meta key, written with
  // rados (opening the image through librbd would check, and flag, its map).
  const auto touch_header = [&](const std::string& value) {
    librados::bufferlist encoded;
    const std::uint32_t length = value.size();
    encoded.append(reinterpret_cast<const char*>(&length), sizeof length);
    encoded.append(value);
    ASSERT_EQ(io.omap_set("rbd_header." + id, {{"metadata_rbdsync_test", encoded}}), 0);
  };
  touch_header("one");

  const RunResult after = sync({"--pool", pool, "--reader", "direct"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(db.rows("SELECT used_bytes, used_unknown_reason IS NULL, stale_error IS NULL "
                    "FROM rbdsync.images WHERE name = 'planted'"),
            std::vector<std::string>{std::to_string(4 * k_mib) + "|t|t"});
  EXPECT_EQ(db.rows("SELECT used_bytes FROM rbdsync.images WHERE name = 'intact'"),
            std::vector<std::string>{std::to_string(4 * k_mib)});
  std::cout << "[object map bound] peak RSS: intact maps " << before.peak_rss_kib
            << " KiB, one map planted 64 MiB larger " << after.peak_rss_kib << " KiB" << std::endl;
  // The budget (ceph/direct/map_budget.hpp): maps in flight count what their headers imply, at
  // most 16 MiB. The planted run may not grow past the intact one by more than that.
  EXPECT_LT(after.peak_rss_kib, before.peak_rss_kib + 16 * 1024)
      << "the planted 64 MiB were read (or more)";

  // A map of fewer objects than the image has (its header's count cut to one): the
  // usage is unknown, with the reason, and the image is not read through librbd.
  librados::bufferlist small;
  small.append(std::string(map.c_str(), 10) + std::string("\x01", 1) + std::string(7, '\0') +
               std::string(map.c_str() + 18, map.length() - 18));
  ASSERT_EQ(io.write_full("rbd_object_map." + id, small), 0);
  touch_header("two");
  const RunResult smaller = sync({"--pool", pool, "--reader", "direct", "--json"});
  ASSERT_EQ(smaller.exit_code, 0) << smaller.err;
  EXPECT_EQ(db.rows("SELECT used_bytes IS NULL, used_unknown_reason FROM rbdsync.images "
                    "WHERE name = 'planted'"),
            std::vector<std::string>{"t|object map smaller than the image"});
  EXPECT_EQ(json::parse(smaller.out).at("read").at("fallbacks"), json::object()) << smaller.out;
}

class RunEndingTest : public IntegrationTest {};

TEST_F(RunEndingTest, AnExceptionFromInsideTheSinkStillFinishesTheRun) {
  const std::string pool = migrate_and_create_pool("sink-throws");
  ceph.create_image(pool, "one", 4 * k_mib);
  const std::string metrics = dir.file("rbd-sync.prom");
  const RunResult result =
      run_rbd_sync(run_args({"--pool", pool, "--json", "--metrics-file", metrics}), 120, {},
                   {"RBDSYNC_INJECT_FAULT=sink-exception"});
  ASSERT_EQ(result.exit_code, k_exit_internal) << result.err;
  const json out = json::parse(result.out);
  EXPECT_EQ(out.at("status"), "failed");
  EXPECT_EQ(out.at("message"), "unexpected: injected fault: sink-exception") << out;
  const auto runs = db.json_rows("SELECT status, exit_code, error FROM rbdsync.runs");
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(runs[0].at("status"), "failed");
  EXPECT_EQ(runs[0].at("exit_code"), k_exit_internal);
  EXPECT_EQ(runs[0].at("error"), "unexpected: injected fault: sink-exception");
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.images"), std::vector<std::string>{"0"});
  const std::string text = read_file(metrics);
  EXPECT_NE(text.find("rbd_sync_last_run_exit_code{cluster=\"ceph\"} 70"), std::string::npos)
      << text;
  // The holder record says how the run ended, and nobody holds the lock.
  const json status = lock_status(lock_file);
  EXPECT_EQ(status.at("running"), false) << status;
  EXPECT_EQ(status.at("last_run").at("status"), "failed") << status;
  EXPECT_EQ(status.at("last_run").at("exit_code"), k_exit_internal) << status;
}

}  // namespace
}  // namespace rbdsync::testing
