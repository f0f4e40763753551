#!/usr/bin/python3
"""Writes the seed corpus of the libFuzzer harnesses (tests/fuzz/corpus/<harness>/).

    tests/fuzz/make_corpus.py

The seeds are the bytes the unit tests capture from the test cluster
(tests/ceph/header_decoder_test.cpp, tests/ceph/migration_spec_test.cpp,
tests/lock/holder_record_test.cpp) and small variations of them that each decoder
understands, plus a few it must reject, so the fuzzer starts past the envelopes. The
files are committed; run this again after changing it, and commit what it writes. It
replaces every file in the corpus directories it knows, and leaves the rest alone.
No crash input belongs here (they are in tests/fuzz/crashes/ until fixed).
"""
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def b(hexdigits):
    return bytes.fromhex(hexdigits.replace(" ", ""))


def u8(v):
    return struct.pack("<B", v)


def u16(v):
    return struct.pack("<H", v)


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


def text(s):
    s = s.encode() if isinstance(s, str) else s
    return u32(len(s)) + s


def envelope(body, version=1, compat=1):
    return u8(version) + u8(compat) + u32(len(body)) + body


# --- captured bytes (header_decoder_test.cpp) ----------------------------------------
MIB = 1 << 20
CAPTURED_SNAPSHOT = b(
    "08083600000004000000000000000200000073310000c00000000000000000000000000000010104"
    "000000000000008566116b11017e370000000000")
# `rbd mirror image enable img snapshot`, then `rbd mirror image demote img`: the
# demoted mirror snapshot, and the image's entry in rbd_mirroring.
CAPTURED_MIRROR_SNAPSHOT = b(
    "0808d30000000900000000000000590000002e6d6972726f722e7072696d6172792e38643465343565"
    "382d376133302d343132612d393234392d3634663337376233376630612e38643736376632642d3166"
    "34352d343133332d393433382d396331633564663962626664000000020000000000000000000000000"
    "001014a000000030000000101010000002400000062326564326165352d353031312d346535302d3964"
    "66632d62326137353966356538363200000000feffffffffffffff0000000000000000000000"
    "00b494126b4160492a0000000000")
CAPTURED_MIRROR_IMAGE = b(
    "02012a0000002400000032383233363366652d333634312d346165362d396466372d3265643438623431"
    "653866640101")
CAPTURED_HEADER = {
    "access_timestamp": b("8566116b92b96719"),
    "create_timestamp": b("8566116b92b96719"),
    "features": b("3d00000000000000"),
    "modify_timestamp": b("8566116b92b96719"),
    "object_prefix": b("150000007262645f646174612e616464613438663336623166"),
    "order": b("16"),
    "size": b("0000c00000000000"),
    "snap_seq": b("0400000000000000"),
    "snapshot_0000000000000004": CAPTURED_SNAPSHOT,
}
CAPTURED_PARENT = b("02022d000000030000000000000000000000"
                    "0c000000313032643739663439386233"
                    "0400000000000000010000600000000000")
FLATTENED_PARENT = b("020227000000" "0300000000000000" "020000006e73"
                     "0c000000313032643739663439386233" "0400000000000000" "00")
PRE_NAUTILUS_PARENT = b("010128000000" "0300000000000000" "0c000000313032643739663439386233"
                        "0400000000000000" "0000c00000000000")
CAPTURED_SNAP_CHILDREN = b("01000000" "02011f000000" "0300000000000000"
                           "0c000000313033353734633735653362" "030000006e7331")
CAPTURED_MAP = b("0e0000000101080000000300000000000000c00c0000003b3df33101000000c4268dc3")
# A trashed parent snapshot, a group snapshot and a group reference (Ceph 16.2.15).
CAPTURED_TRASH_SNAPSHOT = b(
    "08086400000004000000000000002400000036613837623133662d316539622d343231652d383662632d38"
    "663063313732666361343100008000000000000000000000000000000101100000000200000004000000676f"
    "6c64000000004b97126b0f9952000100000000")
CAPTURED_GROUP_SNAPSHOT = b(
    "0808860000000500000000000000220000002e67726f75702e335f3130343136623862343536375f31303437"
    "36623862343536370000800000000000000000000000000000"
    "01012c0000000100000003000000000000000c0000003130343136623862343536370c000000313034373662"
    "3862343536375597126b2a304a3500000000010000800000000000")
CAPTURED_GROUP_REF = b("01011800000003000000000000000c000000313034313662386234353637")
CAPTURED_DIRECTORY = b("0700000074726173686d65")
CAPTURED_TRASH = b("02011d0000000007000000" "74726173686d65" "537d116b6a1d7f31537d116b6a1d7f3100")
CAPTURED_CHILD_IDS = b("01000000" "0c000000313033333735333566336562")

# --- captured bytes (migration_spec_test.cpp) ----------------------------------------
CAPTURED_MIGRATION = (
    b"\x03\x01\x40\x00\x00\x00" b"\x02" b"\x03\x00\x00\x00\x00\x00\x00\x00" b"\x00\x00\x00\x00"
    b"\x07\x00\x00\x00img-mig" b"\x0c\x00\x00\x00" b"108dbdc1a30a" b"\x00\x00\x00\x00"
    b"\x00\x00\x00\x01\x00\x00\x00\x00" b"\x00\x00" b"\x02" b"\x00\x00\x00\x00" b"\x00"
    b"\x00\x00\x00\x00")


def snapshot(snap_id, name, size, protection=0, flags=0, namespace_type=0,
             timestamp=b("8566116b11017e37"), child_count=0, overlap=None, version=8,
             namespace_body=b""):
    """cls_rbd_snap, encoding version 8 (Nautilus and later)."""
    body = (u64(snap_id) + text(name) + u64(size) + u8(protection) + u64(flags) +
            envelope(u32(namespace_type) + namespace_body) + timestamp + u32(child_count))
    body += u8(0) if overlap is None else u8(1) + u64(overlap)
    return envelope(body, version, version)


def child_spec(pool_id, image_id, namespace=None):
    """cls::rbd::ChildImageSpec: version 1 has no namespace."""
    if namespace is None:
        return envelope(u64(pool_id) + text(image_id), 1, 1)
    return envelope(u64(pool_id) + text(image_id) + text(namespace), 2, 1)


def frame(omap, by_index=()):
    """fuzz_header's framing: tag (key length, or 0x80 + index in k_keys), u16 length,
    value. Keys named in `by_index` are written as that index."""
    keys = ["size", "order", "features", "op_features", "flags", "snap_limit", "stripe_unit",
            "stripe_count", "snap_seq", "data_pool_id", "object_prefix", "create_timestamp",
            "modify_timestamp", "access_timestamp", "snapshot_0000000000000004",
            "snapshot_0000000000000005", "parent", "snap_children_0000000000000004",
            "snap_children_000000000000000g", "metadata_conf_rbd_qos_iops_limit",
            "metadata_owner", "rbd_group_ref", "migration"]
    out = b""
    for key, value in omap.items():
        if key in by_index:
            out += u8(0x80 + keys.index(key))
        else:
            out += u8(len(key)) + key.encode()
        out += u16(len(value)) + value
    return out


def header_seeds():
    def with_(**extra):
        omap = dict(CAPTURED_HEADER)
        for key, value in extra.items():
            omap[key.replace("__", "_")] = value
        return frame(omap)

    minimal = {k: CAPTURED_HEADER[k] for k in ("size", "order", "features", "object_prefix")}
    two_snaps = dict(CAPTURED_HEADER)
    two_snaps["snapshot_0000000000000005"] = snapshot(5, "s2", 16 * MIB, protection=2,
                                                      child_count=1, overlap=8 * MIB)
    two_snaps["snap_seq"] = u64(5)
    v7 = dict(CAPTURED_HEADER)
    v7["snapshot_0000000000000004"] = b"\x07" + CAPTURED_SNAPSHOT[1:]
    truncated = dict(CAPTURED_HEADER)
    truncated["size"] = truncated["size"][:-1]
    return {
        "captured": frame(CAPTURED_HEADER),
        "captured-keys-by-index": frame(CAPTURED_HEADER, by_index=set(CAPTURED_HEADER)),
        "minimal": frame(minimal),
        "conf-metadata": frame({**CAPTURED_HEADER,
                                "metadata_conf_rbd_qos_iops_limit": b"100",
                                "metadata_owner": b"someone",
                                "metadata_conf_x": b"1"}),
        "parent-v2": with_(parent=CAPTURED_PARENT),
        "parent-v2-flattened": with_(parent=FLATTENED_PARENT),
        "parent-v1": with_(parent=PRE_NAUTILUS_PARENT),
        "snap-children": frame({**CAPTURED_HEADER,
                                "snap_children_0000000000000004": CAPTURED_SNAP_CHILDREN}),
        "snap-children-two": frame({**CAPTURED_HEADER, "snap_children_0000000000000004":
                                    u32(2) + child_spec(3, "103574c75e3b", "ns1") +
                                    child_spec(4, "10aa00000001")}),
        "striped": with_(stripe_unit=u64(64 * 1024), stripe_count=u64(4)),
        "data-pool-limits": with_(data_pool_id=u64(7), snap_limit=u64(10),
                                  op_features=u64(1), flags=u64(0)),
        "two-snapshots": frame(two_snaps),
        "group": with_(rbd__group__ref=CAPTURED_GROUP_REF),
        "group-snapshot": frame({**CAPTURED_HEADER, "rbd_group_ref": CAPTURED_GROUP_REF,
                                 "snapshot_0000000000000005": CAPTURED_GROUP_SNAPSHOT}),
        "trash-snapshot": frame({**CAPTURED_HEADER,
                                 "snapshot_0000000000000004": CAPTURED_TRASH_SNAPSHOT}),
        "migration": frame({**CAPTURED_HEADER, "migration": CAPTURED_MIGRATION}),
        "unknown-key": frame({**CAPTURED_HEADER, "mystery": b"x"}),
        "snapshot-v7": frame(v7),
        "truncated-size": frame(truncated),
        "order-out-of-range": frame({**CAPTURED_HEADER, "order": b"\x0b"}),
        "timestamp-zero": frame({**CAPTURED_HEADER, "create_timestamp": u64(0)}),
    }


def snapshot_record_seeds():
    return {
        **mirror_snapshot_seeds(),
        "captured": CAPTURED_SNAPSHOT,
        "protected-with-child": snapshot(5, "s2", 16 * MIB, protection=2, child_count=1),
        "with-parent-overlap": snapshot(6, "s3", 12 * MIB, overlap=6 * MIB),
        "trash-namespace": snapshot(7, "deleted", MIB, namespace_type=2,
                                    namespace_body=text("gold") + u32(0)),
        "group-namespace": snapshot(12, ".group.3_a_b", MIB, namespace_type=1,
                                    namespace_body=u64(3) + text("a") + text("b")),
        "captured-trash": CAPTURED_TRASH_SNAPSHOT,
        "captured-group": CAPTURED_GROUP_SNAPSHOT,
        "group-namespace-cut": snapshot(13, "cut", MIB, namespace_type=1,
                                        namespace_body=u64(3)),
        "object-map-flags": snapshot(8, "flagged", 4 * MIB, flags=3),
        "no-timestamp": snapshot(9, "old", MIB, timestamp=u64(0)),
        "long-name": snapshot(10, "n" * 200, 100 * MIB),
        "empty-name": snapshot(11, "", 0),
        "version-7": b"\x07" + CAPTURED_SNAPSHOT[1:],
        "truncated": CAPTURED_SNAPSHOT[:30],
    }


def mirror_namespace(state, peers=(), primary_mirror_uuid="", snap_seqs=()):
    """cls::rbd::MirrorSnapshotNamespace, after its type."""
    out = u8(state) + u8(1) + u32(len(peers))
    for peer in peers:
        out += text(peer)
    out += text(primary_mirror_uuid) + u64(0xfffffffffffffffe) + u64(0) + u32(len(snap_seqs))
    for remote, local in snap_seqs:
        out += u64(remote) + u64(local)
    return out


def mirror_snapshot_seeds():
    peer = "b2ed2ae5-5011-4e50-9dfc-b2a759f5e862"
    primary = snapshot(6, ".mirror.primary.g.1", 64 * MIB, namespace_type=3,
                       namespace_body=mirror_namespace(0, [peer]))
    return {
        "captured-mirror-demoted": CAPTURED_MIRROR_SNAPSHOT,
        "mirror-primary": primary,
        "mirror-non-primary": snapshot(7, ".mirror.non_primary.g.2", MIB, namespace_type=3,
                                       namespace_body=mirror_namespace(2, [], "remote-uuid",
                                                                       [(4, 7), (5, 8)])),
        "mirror-truncated-namespace": snapshot(8, "m", MIB, namespace_type=3,
                                               namespace_body=u8(0) + u8(1) + u32(5)),
    }


def mirror_image_seeds():
    return {
        "captured": CAPTURED_MIRROR_IMAGE,
        "journal-version-1": envelope(text("3d582e6b-1f9f-41eb-be5f-f62f0c0535a1") + u8(1), 1, 1),
        "disabling": envelope(text("g") + u8(0) + u8(1), 2, 1),
        "newer-version": envelope(text("g") + u8(1) + u8(1) + u64(7), 3, 1),
        "unknown-mode": envelope(text("g") + u8(1) + u8(9), 2, 1),
        "newer-compat": envelope(text("g") + u8(1) + u8(1), 3, 3),
        "truncated": CAPTURED_MIRROR_IMAGE[:20],
    }


def directory_name_seeds():
    return {
        "captured": CAPTURED_DIRECTORY,
        "empty": text(""),
        "long": text("image-" * 40),
        "utf8": text("d\u00e9j\u00e0-vu"),
        "length-too-long": b("0800000074726173686d65"),
    }


def trash_seeds():
    v1 = envelope(u8(0) + text("old-image") + b("537d116b6a1d7f31537d116b6a1d7f31"), 1, 1)
    return {
        "captured": CAPTURED_TRASH,
        "version-1": v1,
        "source-migration": envelope(u8(2) + text("mig") + b("537d116b6a1d7f31537d116b6a1d7f31") +
                                     u8(1), 2, 1),
        "newer-compat": b("02031d000000"),
        "truncated": CAPTURED_TRASH[:12],
    }


def child_ids_seeds():
    return {
        "captured": CAPTURED_CHILD_IDS,
        "empty": u32(0),
        "three": u32(3) + text("10337535f3eb") + text("10aa00000001") + text("10bb00000002"),
        "count-too-high": b("02000000" "0c000000313033333735333566336562"),
    }


def lock_info_seeds():
    def address(family=0x0002, port=0, ip=b("7f000001"), nonce=77, length=16):
        sockaddr = struct.pack("<H", family) + struct.pack(">H", port) + ip
        sockaddr = (sockaddr + b"\0" * length)[:length]
        return u8(1) + envelope(u32(2) + u32(nonce) + u32(len(sockaddr)) + sockaddr)

    def locker(entity_type, number, cookie, addr):
        locker_id = envelope(u8(entity_type) + u64(number) + text(cookie))
        details = envelope(u64(0) + addr + text(""))
        return locker_id + details

    def reply(lockers, lock_type=1, tag=""):
        return envelope(u32(len(lockers)) + b"".join(lockers) + u8(lock_type) + text(tag))

    one = locker(0x08, 4123, "auto 1", address())
    return {
        "one-exclusive": reply([one]),
        "none": reply([], lock_type=0),
        "two-shared": reply([one, locker(0x08, 4124, "auto 2", address(port=6800, nonce=9))],
                            lock_type=2, tag="internal"),
        "mgr-locker": reply([locker(0x10, 1, "auto 3", address(ip=b("0a000102")))]),
        "ipv6-locker": reply([locker(0x08, 7, "auto 4", address(family=10, ip=b("00000000"),
                                                                 length=28))]),
        "legacy-address": reply([locker(0x08, 8, "auto 5", u8(0) + b"\0" * 20)]),
    }


def bit_vector(states):
    """BitVector<2>: a header bufferlist, the packed states, a CRC footer."""
    packed = bytearray((len(states) + 3) // 4)
    for i, state in enumerate(states):
        packed[i // 4] |= (state & 3) << ((3 - i % 4) * 2)
    header = envelope(u64(len(states)))
    return u32(len(header)) + header + bytes(packed) + u32(4) + b"\0\0\0\0"


def object_map_seeds():
    def params(order, size, from_size=0, stripe_unit=0, stripe_count=0, from_map=None,
               through=False):
        out = u8(order - 12) + u8((1 if from_map is not None else 0) | (2 if through else 0))
        out += u64(size) + u64(from_size) + u64(stripe_unit) + u64(stripe_count)
        if from_map is not None:
            out += u32(len(from_map)) + from_map
        return out

    many = [i % 4 for i in range(64)]
    return {
        "captured": params(22, 12 * MIB) + CAPTURED_MAP,
        "captured-since-snapshot": params(22, 12 * MIB, 12 * MIB,
                                          from_map=CAPTURED_MAP) + CAPTURED_MAP,
        "four-objects": params(22, 13 * MIB) + bit_vector([3, 0, 1, 2]),
        "rewritten-since": params(22, 16 * MIB, 16 * MIB,
                                  from_map=bit_vector([3, 3, 0, 1])) + bit_vector([3, 1, 3, 0]),
        "through-snapshots-between": params(22, 16 * MIB, 12 * MIB, from_map=bit_vector(
            [3, 1, 0]), through=True) + bit_vector([3, 3, 1, 0]),
        "map-too-small": params(22, 12 * MIB) + bit_vector([1, 1]),
        "striped": params(20, 32 * MIB, stripe_unit=64 * 1024, stripe_count=4) + bit_vector(
            [1] * 32),
        "sixty-four-objects": params(12, 64 * 4096) + bit_vector(many),
        "empty-map": params(22, 0) + bit_vector([]),
        "truncated": params(22, 12 * MIB) + CAPTURED_MAP[:20],
    }


def group_spec_seeds():
    return {
        "captured": CAPTURED_GROUP_REF,
        "no-group": envelope(u64(0xFFFFFFFFFFFFFFFF) + text("")),
        "longer": envelope(u64(3) + text("g") + u64(9), 2, 1),
        "compat-2": envelope(u64(3) + text("g"), 2, 2),
        "truncated": CAPTURED_GROUP_REF[:12],
    }


def fast_diff_chain_seeds():
    def chain(order, maps, with_from):
        mode = (1 if with_from else 0) | ((len(maps) - (2 if with_from else 1)) << 1)
        out = u8(order - 12) + u8(mode)
        for size, states in maps:
            encoded = bit_vector(states)
            out += u64(size) + u32(len(encoded)) + encoded
        return out

    return {
        "through-group-snapshot": chain(22, [(12 * MIB, [3, 3, 3]), (12 * MIB, [1, 3, 0]),
                                             (12 * MIB, [3, 3, 3])], True),
        "from-nothing": chain(22, [(12 * MIB, [1, 0, 1]), (12 * MIB, [3, 1, 0])], False),
        "grown": chain(22, [(4 * MIB, [1]), (8 * MIB, [3, 1]), (16 * MIB, [3, 3, 1, 1])], False),
        "too-small": chain(22, [(8 * MIB, [1]), (12 * MIB, [3, 1, 0])], False),
        "captured": chain(22, [(12 * MIB, [3, 0, 0])], False),
    }


def migration_seeds():
    def spec(header_type=2, snap_seqs=(), state=2, description="", version=3):
        """cls::rbd::MigrationSpec; the other end is rbd/img-mig (108dbdc1a30a)."""
        body = (u8(header_type) + u64(3) + text("") + text("img-mig") + text("108dbdc1a30a") +
                u32(len(snap_seqs)) + b"".join(u64(a) + u64(b) for a, b in snap_seqs) +
                u64(16 * MIB) + u8(0) + u8(0) + u8(state) + text(description))
        if version >= 2:
            body += u8(0)  # mirror image mode
        if version >= 3:
            body += text("")  # source spec
        return envelope(body, version, 1)

    assert spec() == CAPTURED_MIGRATION
    return {
        "destination-captured": CAPTURED_MIGRATION,
        "source": spec(header_type=1),
        "version-1": spec(version=1),
        "snap-seqs": spec(snap_seqs=[(4, 5), (6, 7)]),
        "executing-described": spec(state=3, description="copying objects"),
        "truncated": CAPTURED_MIGRATION[:40],
        "unknown-header-type": spec(header_type=7),
        "newer-compat": CAPTURED_MIGRATION[:1] + u8(4) + CAPTURED_MIGRATION[2:],
    }


def holder_record_seeds():
    run = {"run_id": "5f0c8a7e-0000-4000-8000-000000000001", "pid": 4242, "host": "web-1",
           "trigger": "cron", "started_at": 1764800000, "phase": "reading", "done": 3120,
           "total": 10000}
    ended = dict(run, status="failed", ended_at=1764800100, exit_code=69,
                 message="cannot connect")

    def record(holder, last_run):
        return json.dumps({"format": "rbd-sync holder record 1", "holder": holder,
                           "last_run": last_run}, separators=(",", ":")).encode()

    both = record(run, ended)
    return {
        "holder": record(run, None),
        "last-run": record(None, ended),
        "both": both,
        # What the lock file holds: one 4096-byte block, padded with spaces.
        "padded-block": both + b" " * (4095 - len(both)) + b"\n",
        "torn": both[:70],
        "wrong-type": b'{"format": "rbd-sync holder record 1", "holder": {"pid": "x"}}',
        "foreign": b'{"pid": 4242}',
        "pid-only": b"4242\n",
        "empty": b"",
    }


def format1_directory_seeds():
    def tmap(entries, header=b""):
        body = u32(len(header)) + header + u32(len(entries))
        for name, value in entries:
            body += text(name) + u32(len(value)) + value
        return body

    return {
        "empty": b"",
        "no-images": tmap([]),
        "three": tmap([("a", b""), ("old-vm", b"\x01\x02"), ("zz", b"")], header=b"hdr"),
        "what-inventory-test-writes": b"xx",
        "truncated": tmap([("a", b""), ("b", b"")])[:-3],
        "huge-count": u32(0) + u32(0xFFFFFFFF) + text("a"),
        "trailing-byte": tmap([("a", b"")]) + b"\x00",
    }


def mon_answer_seeds():
    osd_dump = {"epoch": 40, "pools": [
        {"pool": 2, "pool_name": "device_health_metrics", "type": 1, "size": 1,
         "min_size": 1, "pg_num": 1},
        {"pool": 3, "pool_name": "rbd", "type": 1, "size": 3, "min_size": 2, "pg_num": 32},
        {"pool": 7, "pool_name": "ec", "type": 3, "size": 5, "min_size": 4, "pg_num": 16}]}
    df = {"stats": {"total_bytes": 4294967296}, "pools": [
        {"name": "rbd", "id": 3, "stats": {"stored": 70255678, "objects": 108,
                                           "bytes_used": 210767034, "percent_used": 0.017,
                                           "max_avail": 4001464064}},
        {"name": "ec", "id": 7, "stats": {"stored": 0, "objects": 0, "bytes_used": 0,
                                          "max_avail": 0}}]}
    return {
        "osd-dump": json.dumps(osd_dump).encode(),
        "df": json.dumps(df).encode(),
        "df-huge": b'{"pools":[{"id":3,"stats":{"stored":1e300,"objects":1,"bytes_used":1,'
                   b'"max_avail":18446744073709551616}}]}',
        "df-negative": b'{"pools":[{"id":3,"stats":{"stored":-1,"objects":1,"bytes_used":1,'
                       b'"max_avail":1}}]}',
        "not-json": b"{\"pools\": [",
    }


CORPORA = {
    "fuzz_header": header_seeds,
    "fuzz_snapshot_record": snapshot_record_seeds,
    "fuzz_directory_name": directory_name_seeds,
    "fuzz_trash_name": trash_seeds,
    "fuzz_child_ids": child_ids_seeds,
    "fuzz_lock_info": lock_info_seeds,
    "fuzz_object_map": object_map_seeds,
    "fuzz_group_spec": group_spec_seeds,
    "fuzz_fast_diff_chain": fast_diff_chain_seeds,
    "fuzz_migration_spec": migration_seeds,
    "fuzz_holder_record": holder_record_seeds,
    "fuzz_mirror_image": mirror_image_seeds,
    "fuzz_format1_directory": format1_directory_seeds,
    "fuzz_mon_answers": mon_answer_seeds,
}


def main():
    for harness, make in CORPORA.items():
        directory = os.path.join(HERE, "corpus", harness)
        os.makedirs(directory, exist_ok=True)
        for stale in os.listdir(directory):
            os.remove(os.path.join(directory, stale))
        seeds = make()
        for name, data in seeds.items():
            with open(os.path.join(directory, name + ".bin"), "wb") as out:
                out.write(data)
        print(f"{harness}: {len(seeds)} seeds", file=sys.stderr)


if __name__ == "__main__":
    main()
