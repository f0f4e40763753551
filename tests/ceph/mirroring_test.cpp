#include "ceph/wire/mirroring.hpp"
#include "ceph/wire/object_map.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ceph/wire/header_decoder.hpp"
#include "support/files.hpp"
#include "support/hex.hpp"
#include "support/object_maps.hpp"

namespace rbdsync::ceph {
namespace {

using rbdsync::testing::bytes;
using rbdsync::testing::states;

// Captured from the test cluster (Ceph 16.2.15): `rbd mirror pool enable pool image`,
// `rbd mirror pool peer add`, `rbd mirror image enable pool/b snapshot`, `rbd mirror
// image demote pool/b`. The demoted mirror snapshot (id 9) of b's header...
const std::string k_demoted_hex =
    "0808d30000000900000000000000590000002e6d6972726f722e7072696d6172792e38643465343565382d3761"
    "33302d343132612d393234392d3634663337376233376630612e38643736376632642d316634352d343133332d"
    "393433382d396331633564663962626664000000020000000000000000000000000001014a0000000300000001"
    "01010000002400000062326564326165352d353031312d346535302d396466632d623261373539663565383632"
    "00000000feffffffffffffff000000000000000000000000b494126b4160492a0000000000";
// ... and an image's `image_<id>` entry in rbd_mirroring (snapshot mode, enabled).
const std::string k_entry = bytes(
    "02012a0000002400000032383233363366652d333634312d346165362d396466372d32656434386234316538"
    "66640101");
const std::string k_peer = "b2ed2ae5-5011-4e50-9dfc-b2a759f5e862";

/// The demoted snapshot's record with another mirror snapshot state.
std::string mirror_snapshot_in_state(const std::string& state_hex) {
  std::string hex = k_demoted_hex;
  const std::string at =
      "03000000"
      "01"
      "01"
      "01000000";
  const auto found = hex.find(at);
  EXPECT_NE(found, std::string::npos);
  hex.replace(found + 8, 2, state_hex);
  return bytes(hex);
}

TEST(Mirroring, CapturedEntryDecodesToWhatRbdInfoShows) {
  const auto entry = decode_mirror_image(k_entry);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->global_id, "282363fe-3641-4ae6-9df7-2ed48b41e8fd");
  EXPECT_EQ(entry->state, 1);  // enabled
  EXPECT_EQ(entry->mode, 1);   // snapshot
  EXPECT_EQ(mirror_image_key("10359946004c"), "image_10359946004c");
}

TEST(Mirroring, EntryOfVersionOneIsJournalModeAndANewerCompatIsNotUnderstood) {
  // Version 1 (before snapshot mirroring): no mode byte.
  const auto v1 =
      decode_mirror_image(bytes("0101060000000100000067"
                                "01"));
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->global_id, "g");
  EXPECT_EQ(v1->mode, 0);
  // A later version's extra fields are skipped; a compat this decoder does not know is not.
  EXPECT_TRUE(decode_mirror_image(bytes("03010f000000010000006701010700000000000000")));
  EXPECT_FALSE(
      decode_mirror_image(bytes("0303070000000100000067"
                                "0101")));
  EXPECT_FALSE(decode_mirror_image(k_entry.substr(0, 20)));
  EXPECT_FALSE(decode_mirror_image(k_entry + "x"));
  EXPECT_FALSE(decode_mirror_image(""));
}

TEST(Mirroring, CapturedDemotedMirrorSnapshotDecodesItsNamespace) {
  const auto snap = decode_snapshot_record(bytes(k_demoted_hex));
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->id, 9U);
  EXPECT_EQ(snap->namespace_type, 3U);
  EXPECT_EQ(snap->name.rfind(".mirror.primary.8d4e45e8-7a30-412a-9249-64f377b37f0a.", 0), 0U);
  ASSERT_TRUE(snap->mirror);
  EXPECT_EQ(snap->mirror->state, 1);  // primary demoted
  EXPECT_TRUE(snap->mirror->complete);
  EXPECT_EQ(snap->mirror->peer_uuids, std::vector<std::string>{k_peer});
  EXPECT_EQ(snap->mirror->primary_mirror_uuid, "");
}

TEST(Mirroring, TruncatedMirrorNamespaceIsDamageInAHeader) {
  // The namespace envelope claims 5 peer uuids and holds none.
  std::string hex = k_demoted_hex;
  const std::string peers = "01010000002400000062";
  hex.replace(hex.find(peers), 10, "0105000000");
  const std::string record = bytes(hex);
  EXPECT_FALSE(decode_snapshot_record(record));
  const std::map<std::string, std::string> omap{
      {"features", bytes("3d00000000000000")},
      {"object_prefix", bytes("150000007262645f646174612e616464613438663336623166")},
      {"order", bytes("16")},
      {"size", bytes("0000c00000000000")},
      {"snapshot_0000000000000009", record}};
  const HeaderDecoding decoded = decode_header(omap);
  EXPECT_FALSE(decoded.damage.empty());
}

HeaderSnapshot snapshot(std::uint64_t id, std::optional<std::uint8_t> mirror_state) {
  HeaderSnapshot snap;
  snap.id = id;
  if (mirror_state) {
    snap.namespace_type = 3;
    snap.mirror = MirrorSnapshot{*mirror_state, true, {k_peer}, ""};
  }
  return snap;
}

TEST(Mirroring, PrimaryFollowsTheLatestMirrorSnapshotAsLibrbdsPromotionState) {
  const MirrorImageEntry entry{"g", 1, 1};
  const auto primary = [&entry](const std::vector<HeaderSnapshot>& snaps) {
    const auto mirroring = image_mirroring(&entry, snaps);
    EXPECT_TRUE(mirroring.ok());
    EXPECT_TRUE(mirroring.ok() && *mirroring.value);
    return mirroring.ok() && *mirroring.value && (*mirroring.value)->primary;
  };
  EXPECT_TRUE(primary({snapshot(4, 0)}));
  EXPECT_TRUE(primary({snapshot(4, 1), snapshot(6, 0), snapshot(7, std::nullopt)}));
  EXPECT_FALSE(primary({snapshot(4, 0), snapshot(6, 1)}));  // demoted
  EXPECT_FALSE(primary({snapshot(4, 2)}));                  // non-primary
  EXPECT_FALSE(primary({snapshot(4, 3)}));                  // non-primary demoted
  EXPECT_FALSE(primary({snapshot(4, std::nullopt)}));       // none: unknown
  EXPECT_FALSE(primary({}));
  const auto decoded = decode_snapshot_record(mirror_snapshot_in_state("00"));
  ASSERT_TRUE(decoded);
  EXPECT_TRUE(primary({*decoded}));

  const auto mirroring = image_mirroring(&entry, {snapshot(4, 0)});
  ASSERT_TRUE(mirroring.ok() && *mirroring.value);
  EXPECT_EQ((*mirroring.value)->mode, "snapshot");
  EXPECT_EQ((*mirroring.value)->state, "enabled");
  EXPECT_EQ((*mirroring.value)->global_id, "g");
}

TEST(Mirroring, DisabledImagesHaveNoneJournalAndUnknownModesFallBack) {
  const auto none = image_mirroring(nullptr, {});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none.value);
  const MirrorImageEntry disabled{"g", 2, 1};
  ASSERT_TRUE(image_mirroring(&disabled, {}).ok());
  EXPECT_FALSE(*image_mirroring(&disabled, {}).value);
  const MirrorImageEntry disabling{"g", 0, 1};
  ASSERT_TRUE(image_mirroring(&disabling, {}).ok());
  EXPECT_EQ((*image_mirroring(&disabling, {}).value)->state, "disabling");
  const MirrorImageEntry journal{"g", 1, 0};
  EXPECT_EQ(image_mirroring(&journal, {}).fallback_reason, "journal-mode mirroring");
  const MirrorImageEntry unknown{"g", 1, 7};
  EXPECT_EQ(image_mirroring(&unknown, {}).fallback_reason, "unknown mirroring mode 7");
}

using rbdsync::testing::k_mib;

TEST(Mirroring, UsageDiffWalksTheMapsOfTheSnapshotsBetween) {
  // Objects: 0 written before the user snapshot only; 1 rewritten before the mirror
  // snapshot (clean at the end); 2 deleted before it and written again; 3 new since it.
  const ObjectStates user = states({3, 3, 1, 0});
  const ObjectStates mirror = states({3, 1, 0, 0});
  const ObjectStates end = states({3, 3, 1, 1});
  const SizedObjectMap from{&user, 16 * k_mib};
  const auto used =
      fast_diff_used_bytes(&from, {{&mirror, 16 * k_mib}, {&end, 16 * k_mib}}, 4 * k_mib);
  EXPECT_EQ(used, 12 * k_mib);
  // Diffed straight from the user snapshot, object 1 would look unchanged.
  EXPECT_EQ(rbdsync::testing::fast_diff_used_bytes(&user, 16 * k_mib, end, 16 * k_mib, 4 * k_mib),
            8 * k_mib);
}

TEST(Mirroring, UsageDiffThroughAShrinkAndAGrowth) {
  // The mirror snapshot was taken at 8 MiB: objects 2 and 3 are gone there, and come
  // back at the end (object 3 empty).
  const ObjectStates user = states({3, 3, 3, 3});
  const ObjectStates mirror = states({3, 3});
  const ObjectStates end = states({3, 3, 3, 0});
  const SizedObjectMap from{&user, 16 * k_mib};
  EXPECT_EQ(fast_diff_used_bytes(&from, {{&mirror, 8 * k_mib}, {&end, 16 * k_mib}}, 4 * k_mib),
            4 * k_mib);
  // A map smaller than its snapshot needs refuses the fast diff, as librbd does.
  const ObjectStates short_map = states({3});
  EXPECT_FALSE(
      fast_diff_used_bytes(&from, {{&short_map, 8 * k_mib}, {&end, 16 * k_mib}}, 4 * k_mib));
}

}  // namespace
}  // namespace rbdsync::ceph
