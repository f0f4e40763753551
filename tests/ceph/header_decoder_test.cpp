#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/lock_info.hpp"
#include "ceph/wire/object_map.hpp"
#include "ceph/wire/pool_objects.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rbd/features.h>

#include "support/files.hpp"
#include "support/hex.hpp"
#include "support/object_maps.hpp"

namespace rbdsync::ceph {
namespace {

using ceph::fast_diff_used_bytes;
using rbdsync::testing::bytes;
using rbdsync::testing::fast_diff_used_bytes;
using rbdsync::testing::states;

// Captured from the test cluster (Ceph 16.2.15): `rbd create --size 12M`, 1 MiB
// written at offset 0, then `rbd snap create img@s1`.
std::map<std::string, std::string> captured_header() {
  return {
      {"access_timestamp", bytes("8566116b92b96719")},
      {"create_timestamp", bytes("8566116b92b96719")},
      {"features", bytes("3d00000000000000")},
      {"modify_timestamp", bytes("8566116b92b96719")},
      {"object_prefix", bytes("150000007262645f646174612e616464613438663336623166")},
      {"order", bytes("16")},
      {"size", bytes("0000c00000000000")},
      {"snap_seq", bytes("0400000000000000")},
      {"snapshot_0000000000000004",
       bytes("08083600000004000000000000000200000073310000c00000000000000000000000000000010104"
             "000000000000008566116b11017e370000000000")},
  };
}

// rbd_object_map.<id> of that image after the snapshot: 3 objects, the first clean.
const std::string k_captured_map =
    bytes("0e0000000101080000000300000000000000c00c0000003b3df33101000000c4268dc3");

using rbdsync::testing::k_mib;

/// `hex` with the first `from` replaced by `to` (both hex, the same length).
std::string patched(std::string hex, const std::string& from, const std::string& to) {
  const auto at = hex.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return bytes(at == std::string::npos ? hex : hex.replace(at, from.size(), to));
}

TEST(HeaderDecoder, CapturedHeaderDecodesToWhatRbdInfoShows) {
  const HeaderDecoding decoded = decode_header(captured_header());
  ASSERT_TRUE(decoded.value) << decoded.fallback_reason;
  const DecodedHeader& header = *decoded.value;
  EXPECT_EQ(header.size_bytes, 12 * k_mib);
  EXPECT_EQ(header.order, 22);
  EXPECT_EQ(header.features, 0x3dU);
  EXPECT_EQ(header.object_prefix, "rbd_data.adda48f36b1f");
  EXPECT_EQ(header.stripe_unit, 4 * k_mib);
  EXPECT_EQ(header.stripe_count, 1U);
  EXPECT_FALSE(header.snapshot_limit);
  EXPECT_FALSE(header.data_pool_id);
  EXPECT_EQ(header.create_timestamp, 0x6b116685LL * 1'000'000 + 0x1967b992 / 1000);
  ASSERT_EQ(header.snapshots.size(), 1U);
  const HeaderSnapshot& snap = header.snapshots[0];
  EXPECT_EQ(snap.id, 4U);
  EXPECT_EQ(snap.name, "s1");
  EXPECT_EQ(snap.size_bytes, 12 * k_mib);
  EXPECT_EQ(snap.protection_status, 0);
  EXPECT_EQ(snap.namespace_type, 0U);
  EXPECT_EQ(snap.child_count, 0U);
  EXPECT_TRUE(snap.timestamp);
}

TEST(HeaderDecoder, ConfigOverridesComeFromConfMetadata) {
  auto omap = captured_header();
  omap["metadata_conf_rbd_qos_iops_limit"] = "100";
  omap["metadata_owner"] = "someone";
  const HeaderDecoding decoded = decode_header(omap);
  ASSERT_TRUE(decoded.value) << decoded.fallback_reason;
  EXPECT_EQ(decoded.value->config,
            (std::map<std::string, std::string>{{"rbd_qos_iops_limit", "100"}}));
}

TEST(HeaderDecoder, MigrationsAndUnknownKeysFallBack) {
  for (const auto& [key, reason] : std::map<std::string, std::string>{
           {"migration", "migration"}, {"mystery", "unknown header key 'mystery'"}}) {
    auto omap = captured_header();
    omap[key] = "x";
    const HeaderDecoding decoded = decode_header(omap);
    EXPECT_FALSE(decoded.value) << key;
    EXPECT_EQ(decoded.fallback_reason, reason);
    EXPECT_EQ(decoded.damage, "");
  }
}

TEST(HeaderDecoder, UndecodableParentIsDamageNotAFallback) {
  auto omap = captured_header();
  omap["parent"] = "x";
  const HeaderDecoding decoded = decode_header(omap);
  EXPECT_FALSE(decoded.value);
  EXPECT_EQ(decoded.fallback_reason, "");
  EXPECT_EQ(decoded.damage, "header key 'parent' is damaged (1 bytes)");
}

// Captured from the test cluster: the `parent` key of a clone v2 (in namespace ns1) of
// pool 3's image 102d79f498b3 at snapshot 4, after the clone was shrunk to 6 MiB.
const std::string k_captured_parent = bytes(
    "02022d000000030000000000000000000000"
    "0c000000313032643739663439386233"
    "0400000000000000010000600000000000");

/// The parent that the captured header decodes to with `parent_key` as its parent key;
/// none when the header does not decode (a failure) or has no parent.
std::optional<HeaderParent> decoded_parent(const std::string& parent_key) {
  auto omap = captured_header();
  omap["parent"] = parent_key;
  const HeaderDecoding decoded = decode_header(omap);
  EXPECT_TRUE(decoded.value) << decoded.fallback_reason;
  return decoded.value ? decoded.value->parent : std::nullopt;
}

TEST(HeaderDecoder, CapturedParentKeyDecodesToTheParentSpecAndHeadOverlap) {
  const auto parent = decoded_parent(k_captured_parent);
  ASSERT_TRUE(parent);
  EXPECT_EQ(parent->pool_id, 3);
  EXPECT_EQ(parent->pool_namespace, "");
  EXPECT_EQ(parent->image_id, "102d79f498b3");
  EXPECT_EQ(parent->snap_id, 4U);
  EXPECT_EQ(parent->head_overlap, 6 * k_mib);
}

TEST(HeaderDecoder, ParentOfAFlattenedHeadWithSnapshotsHasNoHeadOverlap) {
  // What cls_rbd's parent_detach leaves when snapshots still use the parent (no
  // deep-flatten): the spec, in namespace "ns", with an empty optional overlap.
  const auto parent =
      decoded_parent(bytes("020227000000"
                           "0300000000000000"
                           "020000006e73"
                           "0c000000313032643739663439386233"
                           "0400000000000000"
                           "00"));
  ASSERT_TRUE(parent);
  EXPECT_EQ(parent->pool_namespace, "ns");
  EXPECT_EQ(parent->snap_id, 4U);
  EXPECT_FALSE(parent->head_overlap);
}

TEST(HeaderDecoder, PreNautilusParentEncodingHasAPlainOverlap) {
  const auto parent =
      decoded_parent(bytes("010128000000"
                           "0300000000000000"
                           "0c000000313032643739663439386233"
                           "0400000000000000"
                           "0000c00000000000"));
  ASSERT_TRUE(parent);
  EXPECT_EQ(parent->pool_namespace, "");
  EXPECT_EQ(parent->head_overlap, 12 * k_mib);
}

TEST(HeaderDecoder, ParentKeyOfANewerEncodingFallsBackButATruncatedOneIsDamage) {
  auto omap = captured_header();
  omap["parent"] = k_captured_parent;
  omap["parent"][1] = 3;  // compat 3: not understood
  EXPECT_EQ(decode_header(omap).fallback_reason, "unknown encoding of header key 'parent'");
  omap["parent"] = k_captured_parent;
  omap["parent"].pop_back();
  EXPECT_EQ(decode_header(omap).damage, "header key 'parent' is damaged (50 bytes)");
}

TEST(HeaderDecoder, CapturedSnapChildrenCountTheCloneV2ChildrenOfEachSnapshot) {
  // A parent's `snap_children_<id>`: one child, pool 3, image 103574c75e3b, namespace ns1.
  auto omap = captured_header();
  omap["snap_children_0000000000000004"] = bytes(
      "01000000"
      "02011f000000"
      "0300000000000000"
      "0c000000313033353734633735653362"
      "030000006e7331");
  const HeaderDecoding decoded = decode_header(omap);
  ASSERT_TRUE(decoded.value) << decoded.fallback_reason;
  ASSERT_EQ(decoded.value->snap_children.size(), 1U);
  const auto& children = decoded.value->snap_children.at(4);
  ASSERT_EQ(children.size(), 1U);
  EXPECT_EQ(children[0].pool_id, 3);
  EXPECT_EQ(children[0].image_id, "103574c75e3b");
  EXPECT_EQ(children[0].pool_namespace, "ns1");
  omap["snap_children_0000000000000004"].pop_back();
  EXPECT_FALSE(decode_header(omap).value);
}

TEST(HeaderDecoder, SnapshotKeyIsSixteenHexDigits) {
  EXPECT_EQ(snapshot_key(4), "snapshot_0000000000000004");
  EXPECT_EQ(snapshot_key(0xabc), "snapshot_0000000000000abc");
}

// The trash entry of image "trashme", moved to the trash by a user (source 0), as
// captured from the test cluster.
const std::string k_captured_trash_hex =
    "02011d00000000"
    "07000000"
    "74726173686d65"
    "537d116b6a1d7f31537d116b6a1d7f3100";

TEST(HeaderDecoder, CapturedDirectoryAndTrashEntriesNameTheImage) {
  EXPECT_EQ(decode_directory_name(bytes("0700000074726173686d65")), "trashme");
  EXPECT_EQ(decode_trash_name(bytes(k_captured_trash_hex)), "trashme");
  EXPECT_FALSE(decode_directory_name(bytes("0800000074726173686d65")));
  EXPECT_FALSE(decode_trash_name(bytes("02031d000000")));
}

TEST(HeaderDecoder, TrashSpecGivesItsSourceAndName) {
  // The captured entry, its source made 3 (removing: `rbd rm` on its way).
  const auto spec =
      decode_trash_spec(patched(k_captured_trash_hex, "02011d00000000", "02011d00000003"));
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->source, 3);
  EXPECT_EQ(spec->name, "trashme");
  EXPECT_FALSE(decode_trash_spec(bytes("02011d000000030700")));
  EXPECT_FALSE(decode_trash_spec(""));
}

TEST(HeaderDecoder, Format1DirectoryGivesItsNamesAndRefusesAnythingElse) {
  // A bufferlist header (u32 length, bytes), then map<string, bufferlist>.
  EXPECT_EQ(decode_format1_directory(""), std::vector<std::string>{});
  EXPECT_EQ(decode_format1_directory(bytes("02000000abcd"
                                           "02000000"
                                           "010000006100000000"
                                           "0100000062030000007879"
                                           "7a")),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(decode_format1_directory("xx")) << "what inventory_test writes";
  EXPECT_FALSE(decode_format1_directory(bytes("00000000020000000100000061000000")))
      << "the second entry is missing";
  EXPECT_FALSE(decode_format1_directory(bytes("0000000001000000010000006100000000ff")))
      << "a byte after the map";
  // A count of 2^32-1 over a few bytes is refused without reserving or looping for it.
  EXPECT_FALSE(decode_format1_directory(bytes("00000000ffffffff0100000061")));
}

TEST(HeaderDecoder, CapturedGroupReferenceNamesTheGroupsPoolAndId) {
  // rbd_group_ref of an image in group g1 of pool 102 (Pacific).
  const std::string captured_hex =
      "010118000000"
      "6600000000000000"
      "0c000000363061623662386234353637";
  const auto spec = decode_group_spec(bytes(captured_hex));
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->pool_id, 102);
  EXPECT_EQ(spec->group_id, "60ab6b8b4567");
  EXPECT_FALSE(decode_group_spec(bytes("010118000000660000")));
  EXPECT_FALSE(decode_group_spec(patched(captured_hex, "0101", "0102")))
      << "compat 2 is a newer encoding";
}

// Captured from the test cluster (Ceph 16.2.15): `rbd snap create base@gold`, a clone v2
// of it, `rbd snap rm base@gold` (the snapshot moves to the trash namespace, one child
// left), then the clone added to group g1 (pool 3, id 10416b8b4567) and `rbd group snap
// create g1@gs1`.
const std::string k_trash_snapshot_hex =
    "08086400000004000000000000002400000036613837623133662d316539622d343231652d383662632d38"
    "663063313732666361343100008000000000000000000000000000000101100000000200000004000000676f"
    "6c64000000004b97126b0f9952000100000000";
const std::string k_group_snapshot_hex =
    "0808860000000500000000000000220000002e67726f75702e335f3130343136623862343536375f31303437"
    "36623862343536370000800000000000000000000000000000"
    "01012c0000000100000003000000000000000c0000003130343136623862343536370c000000313034373662"
    "3862343536375597126b2a304a3500000000010000800000000000";
const std::string k_group_ref_hex = "01011800000003000000000000000c000000313034313662386234353637";

TEST(HeaderDecoder, CapturedTrashSnapshotKeepsItsIdAndChild) {
  const auto snap = decode_snapshot_record(bytes(k_trash_snapshot_hex));
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->id, 4U);
  EXPECT_EQ(snap->name, "6a87b13f-1e9b-421e-86bc-8f0c172fca41");
  EXPECT_EQ(snap->namespace_type, 2U);
  EXPECT_EQ(snap->child_count, 1U);
  // The original name "gold" claims 255 bytes of the namespace's 16.
  EXPECT_FALSE(decode_snapshot_record(
      patched(k_trash_snapshot_hex, "04000000676f6c64", "ff000000676f6c64")));
}

TEST(HeaderDecoder, CapturedGroupSnapshotDecodesAndItsDamagedNamespaceIsDamage) {
  const auto snap = decode_snapshot_record(bytes(k_group_snapshot_hex));
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->id, 5U);
  EXPECT_EQ(snap->name, ".group.3_10416b8b4567_10476b8b4567");
  EXPECT_EQ(snap->namespace_type, 1U);
  auto omap = captured_header();
  // The group id claims 255 bytes of the namespace's 44.
  omap["snapshot_0000000000000005"] =
      patched(k_group_snapshot_hex, "0c00000031303431", "ff00000031303431");
  EXPECT_EQ(decode_header(omap).damage,
            "header key 'snapshot_0000000000000005' is damaged (140 bytes)");
  // A longer namespace body is a later version: the envelope skips the rest.
  std::string longer_hex = k_group_snapshot_hex;
  longer_hex.replace(0, 8, "08088700");  // the record's length: one byte more
  std::string& record = omap["snapshot_0000000000000005"];
  record = patched(longer_hex, "01012c00000001000000", "01012d00000001000000");
  record.insert(69 + 6 + 0x2c, 1, '\x07');  // after the namespace envelope's 44 bytes
  const HeaderDecoding longer = decode_header(omap);
  ASSERT_TRUE(longer.value) << longer.damage << longer.fallback_reason;
  EXPECT_EQ(longer.value->snapshots.back().name, ".group.3_10416b8b4567_10476b8b4567");
}

TEST(HeaderDecoder, GroupMemberHeaderNamesTheGroupsPoolAndId) {
  auto omap = captured_header();
  omap["rbd_group_ref"] = bytes(k_group_ref_hex);
  const HeaderDecoding decoded = decode_header(omap);
  ASSERT_TRUE(decoded.value) << decoded.fallback_reason << decoded.damage;
  ASSERT_TRUE(decoded.value->group);
  EXPECT_EQ(decoded.value->group->pool_id, 3);
  EXPECT_EQ(decoded.value->group->group_id, "10416b8b4567");
  EXPECT_FALSE(decode_header(captured_header()).value->group);
  omap["rbd_group_ref"] = "x";
  EXPECT_EQ(decode_header(omap).damage, "header key 'rbd_group_ref' is damaged (1 bytes)");
  omap["rbd_group_ref"] = patched(k_group_ref_hex, "0101", "0102");
  EXPECT_EQ(decode_header(omap).fallback_reason, "unknown encoding of header key 'rbd_group_ref'");
}

TEST(HeaderDecoder, DirGetNameRequestIsTheIdAsAString) {
  EXPECT_EQ(encode_dir_get_name_request("10416b8b4567"), bytes("0c000000313034313662386234353637"));
  // What dir_get_name answers is read as a directory entry's name.
  EXPECT_EQ(decode_directory_name(bytes("020000006731")), "g1");
}

TEST(HeaderDecoder, CloneV1ChildrenKeyAndValueAsCapturedFromRbdChildren) {
  EXPECT_EQ(clone_v1_children_key(3, "102d79f498b3", 4), bytes("0300000000000000"
                                                               "0c000000313032643739663439386233"
                                                               "0400000000000000"));
  EXPECT_EQ(decode_child_ids(bytes("01000000"
                                   "0c000000313033333735333566336562")),
            std::vector<std::string>{"10337535f3eb"});
  EXPECT_EQ(decode_child_ids(bytes("00000000")), std::vector<std::string>{});
  EXPECT_FALSE(
      decode_child_ids(bytes("02000000"
                             "0c000000313033333735333566336562")));
}

// As `rados ls` and `rados listomapkeys rbd_directory` show them for an image with a
// snapshot (Ceph 16.2).
TEST(HeaderDecoder, ObjectAndKeyNamesAreLibrbds) {
  EXPECT_EQ(header_object_name("102d79f498b3"), "rbd_header.102d79f498b3");
  EXPECT_EQ(object_map_name("102d79f498b3"), "rbd_object_map.102d79f498b3");
  EXPECT_EQ(object_map_name("102d79f498b3", 4), "rbd_object_map.102d79f498b3.0000000000000004");
  EXPECT_EQ(image_id_key("102d79f498b3"), "id_102d79f498b3");
}

TEST(HeaderDecoder, SnapshotRecordOfAnOlderEncodingFallsBack) {
  auto omap = captured_header();
  omap["snapshot_0000000000000004"][0] = 7;  // version 7: pre-Nautilus layout
  const HeaderDecoding decoded = decode_header(omap);
  EXPECT_FALSE(decoded.value);
  EXPECT_EQ(decoded.fallback_reason, "unknown encoding of header key 'snapshot_0000000000000004'");
}

TEST(HeaderDecoder, SnapshotRecordOrNamespaceOfANewerVersionFallsBackNeverSkipsFields) {
  // Version 9 of the record, compat still 8: fields after child_count the decoder does
  // not know. Version 2 of the namespace, compat still 1: e.g. a mirror snapshot's group
  // fields. Either would be skipped by the envelope; both go to librbd, counted.
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"08088600", "09088600"},
        std::pair<std::string, std::string>{"01012c00000001000000", "02012c00000001000000"}}) {
    SCOPED_TRACE(to);
    auto omap = captured_header();
    omap["snapshot_0000000000000005"] = patched(k_group_snapshot_hex, from, to);
    const HeaderDecoding decoded = decode_header(omap);
    EXPECT_FALSE(decoded.value);
    EXPECT_EQ(decoded.fallback_reason,
              "unknown encoding of header key 'snapshot_0000000000000005'");
    EXPECT_TRUE(decoded.damage.empty()) << decoded.damage;
  }
}

TEST(HeaderDecoder, TruncatedValueFallsBack) {
  auto omap = captured_header();
  omap["size"].pop_back();
  EXPECT_FALSE(decode_header(omap).value);
  omap = captured_header();
  omap.erase("object_prefix");
  EXPECT_FALSE(decode_header(omap).value);
}

// Hostile bytes (issue #19): anyone with write access to a pool can set any omap value.
// Each of these crashed or misread before the decoder was bounds-checked; none may.

TEST(HeaderDecoder, EnvelopeClaimingMoreBytesThanRemainFailsItsParent) {
  auto omap = captured_header();
  std::string& record = omap["snapshot_0000000000000004"];
  ASSERT_EQ(record[39], '\x04');  // the snapshot namespace envelope's length
  record[39] = '\xff';
  // Once the outer decoder ran past its end here (heap-buffer-overflow, SIGSEGV).
  EXPECT_EQ(decode_header(omap).damage,
            "header key 'snapshot_0000000000000004' is damaged (60 bytes)");
  EXPECT_FALSE(decode_snapshot_record(record));
}

TEST(HeaderDecoder, SnapshotRecordUnderAnotherIdsKeyIsDamage) {
  auto omap = captured_header();
  omap["snapshot_0000000000000005"] = omap["snapshot_0000000000000004"];
  EXPECT_EQ(decode_header(omap).damage,
            "snapshot record 'snapshot_0000000000000005' holds snapshot id 4");
  omap = captured_header();
  omap["snapshot_0000000000000004"][6] = 9;  // the id inside the record
  EXPECT_EQ(decode_header(omap).damage,
            "snapshot record 'snapshot_0000000000000004' holds snapshot id 9");
}

TEST(HeaderDecoder, HugeStripeCountIsDamageAndNeverReachesADivision) {
  // A striped image with 1 MiB objects whose stripe_count was set to 2^44: librbd keeps
  // it in 32 bits (0) and dies of SIGFPE; object size x count wraps to 0 in 64 bits.
  auto omap = captured_header();
  omap["order"] = bytes("14");
  omap["stripe_unit"] = bytes("0000010000000000");   // 64 KiB
  omap["stripe_count"] = bytes("0000000000100000");  // 2^44
  EXPECT_EQ(decode_header(omap).damage,
            "stripe count 17592186044416 is out of range (at most 4294967295)");
  EXPECT_EQ(layout_damage(omap), decode_header(omap).damage);
  EXPECT_FALSE(object_count(12 * k_mib, k_mib, 64 * 1024, std::uint64_t{1} << 44));
  EXPECT_FALSE(object_count(12 * k_mib, k_mib, 0, 4));
}

TEST(HeaderDecoder, LayoutsLibrbdCannotDivideByAreDamage) {
  auto omap = captured_header();
  omap["order"] = bytes("3f");
  EXPECT_EQ(decode_header(omap).damage, "object order 63 is out of range (12 to 26)");
  omap = captured_header();
  omap["order"] = bytes("1600");
  EXPECT_EQ(decode_header(omap).damage, "header key 'order' is damaged (2 bytes, not 1)");
  omap = captured_header();
  omap["stripe_unit"] = bytes("0000600000000000");  // 6 MiB > 4 MiB objects
  omap["stripe_count"] = bytes("0200000000000000");
  EXPECT_EQ(decode_header(omap).damage,
            "stripe unit 6291456 does not divide the object size 4194304");
  omap = captured_header();
  omap["stripe_count"] = bytes("02000000");
  EXPECT_EQ(decode_header(omap).damage, "header key 'stripe_count' is damaged (4 bytes, not 8)");
  // Unset figures are one stripe of whole objects, as librbd reads them.
  omap = captured_header();
  omap["stripe_unit"] = bytes("0000000000000000");
  omap["stripe_count"] = bytes("0000000000000000");
  const HeaderDecoding decoded = decode_header(omap);
  ASSERT_TRUE(decoded.value) << decoded.damage;
  EXPECT_EQ(decoded.value->stripe_unit, 4 * k_mib);
  EXPECT_EQ(decoded.value->stripe_count, 1U);
}

TEST(HeaderDecoder, CountsBeyondTheRemainingBytesFailWithoutAllocating) {
  EXPECT_FALSE(decode_child_ids(bytes("ffffffff")));
  auto omap = captured_header();
  omap["snap_children_0000000000000004"] = bytes("ffffffff");
  EXPECT_EQ(decode_header(omap).damage,
            "header key 'snap_children_0000000000000004' is damaged (4 bytes)");
  // An object map claiming 2^64-1 objects in a few bytes.
  EXPECT_FALSE(decode_object_map(bytes("0e000000010108000000ffffffffffffffff00000000")));
  EXPECT_FALSE(decode_lock_info(bytes("010108000000ffffffff00000000")));
}

TEST(HeaderDecoder, LockInfoEnvelopeOverrunIsRejected) {
  // One locker whose id envelope claims 255 bytes of a reply that has 13.
  EXPECT_FALSE(decode_lock_info(bytes("01010d00000001000000") + bytes("0101ff000000080000")));
}

TEST(HeaderDecoder, ObjectStatesArePackedTwoBitsAnObjectAsLibrbdPacksThem) {
  // librbd's first object in the high bits: 0b11'01'10'00, then 0b01 in the high bits.
  const ObjectStates unpacked = states({3, 1, 2, 0, 1});
  const ObjectStates packed = ObjectStates::from_packed(bytes("d8"
                                                              "7f"),
                                                        5);
  EXPECT_EQ(unpacked, packed) << "the unused low bits of the last byte do not count";
  EXPECT_EQ(packed[0], 3);
  EXPECT_EQ(packed[3], 0);
  EXPECT_EQ(packed[4], 1);
  ObjectStates grown = packed;
  grown.resize(11, 2);
  EXPECT_EQ(grown, states({3, 1, 2, 0, 1, 2, 2, 2, 2, 2, 2}));
  grown.set(10, 0);
  grown.resize(3, 0);
  EXPECT_EQ(grown, states({3, 1, 2}));
  grown.resize(6, 1);
  EXPECT_EQ(grown, states({3, 1, 2, 1, 1, 1})) << "what was cut off does not come back";
  EXPECT_EQ(ObjectStates(9, 3), states({3, 3, 3, 3, 3, 3, 3, 3, 3}));
}

TEST(HeaderDecoder, AnObjectMapObjectIsAtMostWhatItsObjectCountImplies) {
  // The captured map (3 objects, CRCs on) is exactly that long: the direct reader reads
  // one byte more, and a larger object is told by its size.
  EXPECT_EQ(object_map_object_bytes(3), k_captured_map.size());
  EXPECT_EQ(object_map_object_bytes(0), 30U);
  // 100 TiB in 4 MiB objects: 6.4 MiB of states and a CRC for each 4 KiB of them.
  const std::uint64_t objects = (std::uint64_t{100} << 40) >> 22;
  EXPECT_EQ(object_map_object_bytes(objects), 18 + objects / 4 + 12 + 4 * (objects / 4 / 4096));
}

TEST(HeaderDecoder, AnObjectMapReadInPartGivesItsFirstObjects) {
  // The captured map (3 objects) cut after its first data byte, as a bounded read of a
  // map larger than the image leaves it: the first objects are those of the image.
  const std::string head = k_captured_map.substr(0, 19);
  EXPECT_EQ(decode_object_map_head(head, 2), states({3, 0}));
  EXPECT_EQ(decode_object_map_head(head, 3), states({3, 0, 0}));
  EXPECT_EQ(decode_object_map_head(head, 9), states({3, 0, 0})) << "fewer than asked";
  EXPECT_FALSE(decode_object_map_head(k_captured_map.substr(0, 18), 3)) << "no data byte";
  EXPECT_FALSE(decode_object_map_head(k_captured_map.substr(0, 10), 3)) << "half a header";
  // A header that claims 2^64-1 objects: only what was asked for is taken.
  EXPECT_EQ(decode_object_map_head(bytes("0e000000010108000000ffffffffffffffff00ff"), 5),
            states({0, 0, 0, 0, 3}));
}

TEST(HeaderDecoder, CapturedObjectMapHoldsOneCleanObjectFirst) {
  const auto decoded = decode_object_map(k_captured_map);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, states({3, 0, 0}));
  EXPECT_FALSE(decode_object_map(k_captured_map.substr(0, 20)));
}

TEST(HeaderDecoder, UsageFromNothingCountsEveryExistingObjectClippedToTheSize) {
  const ObjectStates end = states({3, 0, 1, 2});
  // The last object holds only 1 MiB of a 13 MiB image.
  EXPECT_EQ(fast_diff_used_bytes(nullptr, 0, end, 13 * k_mib, 4 * k_mib), 9 * k_mib);
}

TEST(HeaderDecoder, UsageSinceASnapshotCountsOnlyObjectsWrittenSince) {
  const ObjectStates before = states({3, 3, 0, 1});
  const ObjectStates after = states({3, 1, 3, 0});
  // 0 unchanged (clean), 1 rewritten, 2 new, 3 removed.
  EXPECT_EQ(fast_diff_used_bytes(&before, 16 * k_mib, after, 16 * k_mib, 4 * k_mib), 8 * k_mib);
}

TEST(HeaderDecoder, MapSmallerThanTheImageRefusesTheFastDiff) {
  const ObjectStates end = states({1, 1});
  EXPECT_FALSE(fast_diff_used_bytes(nullptr, 0, end, 12 * k_mib, 4 * k_mib));
}

// A group or trash snapshot between two user snapshots: librbd's fast diff loads its
// map too, and an object written before it and clean at the end still counts.
TEST(HeaderDecoder, UsageThroughAGroupSnapshotCountsWhatWasWrittenBeforeIt) {
  const ObjectStates from = states({3, 3, 3});
  const ObjectStates group = states({1, 3, 0});  // 0 rewritten, 2 removed
  const ObjectStates end = states({3, 3, 3});    // 2 written again
  const SizedObjectMap start{&from, 12 * k_mib};
  EXPECT_EQ(fast_diff_used_bytes(&start, {{&group, 12 * k_mib}, {&end, 12 * k_mib}}, 4 * k_mib),
            8 * k_mib);
  // The two-map diff would miss both.
  EXPECT_EQ(fast_diff_used_bytes(&from, 12 * k_mib, end, 12 * k_mib, 4 * k_mib), 0U);
}

TEST(HeaderDecoder, UsageFromNothingStartsAtTheFirstSnapshotOfAnyNamespace) {
  const ObjectStates trash = states({1, 0, 1});
  const ObjectStates end = states({3, 1, 0});  // 0 clean since, 1 new, 2 removed
  EXPECT_EQ(fast_diff_used_bytes(nullptr, {{&trash, 12 * k_mib}, {&end, 12 * k_mib}}, 4 * k_mib),
            8 * k_mib);
  // A snapshot of a smaller image: its map covers only its own objects.
  const ObjectStates small = states({1});
  EXPECT_EQ(fast_diff_used_bytes(nullptr, {{&small, 4 * k_mib}, {&end, 12 * k_mib}}, 4 * k_mib),
            8 * k_mib);
  EXPECT_FALSE(fast_diff_used_bytes(nullptr, {{&small, 8 * k_mib}, {&end, 12 * k_mib}}, 4 * k_mib))
      << "a map smaller than its snapshot";
  EXPECT_FALSE(fast_diff_used_bytes(nullptr, {}, 4 * k_mib));
}

TEST(HeaderDecoder, ObjectCountFollowsTheStriper) {
  EXPECT_EQ(object_count(12 * k_mib + 1, 4 * k_mib, 4 * k_mib, 1), 4U);
  EXPECT_EQ(object_count(32 * k_mib, k_mib, 64 * 1024, 4), 32U);
  EXPECT_EQ(object_count(64 * 1024, k_mib, 64 * 1024, 4), 1U);
  EXPECT_EQ(object_count(UINT64_MAX, 64 * k_mib, 64 * k_mib, 1), (UINT64_MAX >> 26) + 1);
}

TEST(HeaderDecoder, LockInfoRequestNamesTheLock) {
  EXPECT_EQ(encode_lock_info_request("rbd_lock"), bytes("01010c00000008000000") + "rbd_lock");
}

TEST(HeaderDecoder, LockInfoWithOneExclusiveLockerDecodes) {
  // cls_lock_get_info_reply: one locker client.4123, cookie "auto 1", 127.0.0.1:0/77.
  const auto le32 = [](std::uint32_t v) {
    return std::string{static_cast<char>(v & 0xff), static_cast<char>((v >> 8) & 0xff),
                       static_cast<char>((v >> 16) & 0xff), static_cast<char>(v >> 24)};
  };
  const auto envelope = [&le32](const std::string& body) {
    return bytes("0101") + le32(static_cast<std::uint32_t>(body.size())) + body;
  };
  const std::string id = envelope(bytes("08") + bytes("1b10000000000000") + le32(6) + "auto 1");
  const std::string address =
      bytes("01") + envelope(le32(2) + le32(77) + le32(16) + bytes("0200") + bytes("0000") +
                             bytes("7f000001") + bytes("0000000000000000"));
  const std::string details = envelope(bytes("0000000000000000") + address + le32(0));
  const std::string reply = envelope(le32(1) + id + details + bytes("01") + le32(0));
  const auto info = decode_lock_info(reply);
  ASSERT_TRUE(info);
  ASSERT_EQ(info->lockers.size(), 1U);
  EXPECT_EQ(info->lockers[0].client, "client.4123");
  EXPECT_EQ(info->lockers[0].cookie, "auto 1");
  EXPECT_EQ(info->lockers[0].address, "127.0.0.1:0/77");
  EXPECT_TRUE(info->exclusive);
}

/// A fast-diff image in 4 MiB objects whose snapshots are 1, 2 and 1 TiB: maps of 64,
/// 128 and 64 KiB.
DecodedHeader read_ahead_header() {
  DecodedHeader header;
  header.features = RBD_FEATURE_LAYERING | RBD_FEATURE_EXCLUSIVE_LOCK | RBD_FEATURE_OBJECT_MAP |
                    RBD_FEATURE_FAST_DIFF;
  header.order = 22;
  header.stripe_unit = 4 * k_mib;
  header.stripe_count = 1;
  constexpr std::uint64_t k_tib = 1ULL << 40;
  for (const auto& [id, size] : {std::pair{4ULL, k_tib}, {7ULL, 2 * k_tib}, {9ULL, k_tib}}) {
    HeaderSnapshot snap;
    snap.id = id;
    snap.size_bytes = size;
    header.snapshots.push_back(snap);
  }
  return header;
}

TEST(SnapshotMapsReadAhead, TheFirstSnapshotsWhoseMapsFitTheBudget) {
  const DecodedHeader header = read_ahead_header();
  EXPECT_EQ(snapshot_maps_read_ahead(header, 256 * 1024).snapshot_ids,
            (std::vector<std::uint64_t>{4, 7, 9}));
  EXPECT_EQ(snapshot_maps_read_ahead(header, 256 * 1024).bytes, 256U * 1024);
  EXPECT_EQ(snapshot_maps_read_ahead(header, 255 * 1024).snapshot_ids,
            (std::vector<std::uint64_t>{4, 7}));
  EXPECT_EQ(snapshot_maps_read_ahead(header, 255 * 1024).bytes, 192U * 1024);
  EXPECT_EQ(snapshot_maps_read_ahead(header, 191 * 1024).snapshot_ids,
            (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(snapshot_maps_read_ahead(header, 63 * 1024).snapshot_ids, std::vector<std::uint64_t>{});
  EXPECT_EQ(snapshot_maps_read_ahead(header, 63 * 1024).bytes, 0U);
}

TEST(ObjectMapBytes, TwoBitsAnObjectRoundedUpAndNoneForAnUncountableLayout) {
  DecodedHeader header = read_ahead_header();
  EXPECT_EQ(object_map_bytes(header, 1ULL << 40), std::optional<std::uint64_t>(64 * 1024));
  EXPECT_EQ(object_map_bytes(header, 5 * 4 * k_mib), std::optional<std::uint64_t>(2));
  EXPECT_EQ(object_map_bytes(header, 1), std::optional<std::uint64_t>(1));
  EXPECT_EQ(object_map_bytes(header, 0), std::optional<std::uint64_t>(0));
  header.stripe_unit = 64 * 1024;  // fancy striping whose object count overflows
  header.stripe_count = std::uint64_t{1} << 44;
  EXPECT_EQ(object_map_bytes(header, 1ULL << 40), std::nullopt);
}

TEST(SnapshotMapsReadAhead, NoneWithoutFastDiffOrPastAnUncountableLayout) {
  DecodedHeader header = read_ahead_header();
  header.features &= ~std::uint64_t{RBD_FEATURE_FAST_DIFF};
  EXPECT_EQ(snapshot_maps_read_ahead(header, 1ULL << 30).snapshot_ids,
            std::vector<std::uint64_t>{});
  header = read_ahead_header();
  header.stripe_unit = 64 * 1024;  // fancy striping whose object count overflows
  header.stripe_count = std::uint64_t{1} << 44;
  EXPECT_EQ(snapshot_maps_read_ahead(header, 1ULL << 30).snapshot_ids,
            std::vector<std::uint64_t>{});
}

}  // namespace
}  // namespace rbdsync::ceph
