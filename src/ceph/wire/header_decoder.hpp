#pragma once

/// Decodes the omap of an RBD format 2 image's header object `rbd_header.<id>` (cls_rbd's
/// keys: layout, features, snapshots, parent, group). Its neighbours in ceph/wire/ decode
/// the other objects the direct reader fetches: lock_info.hpp (the cls "lock" get_info
/// reply), object_map.hpp (the object maps, a BitVector<2>), pool_objects.hpp (directory,
/// trash, children), mirroring.hpp, migration_spec.hpp. Plain bytes in, plain values
/// out: no librados here, so every rule is unit-tested from captured bytes.
///
/// The bytes are untrusted: anyone with write access to a pool can put anything in an
/// omap. Every value is read through ceph/wire/encoding.hpp's bounds-checked Decoder and
/// every layout figure is computed with overflow checks, so no input crashes this code
/// (tests/fuzz/ keeps it so). What is not understood yields one of two verdicts instead
/// of a guess: a fallback reason (an unknown encoding version or key, a feature this
/// decoder does not turn into what librbd reports: the caller reads the image through
/// librbd) or damage (bytes no Ceph writes: the image is unreadable, and is never handed
/// to librbd, which may not survive it).

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ceph/or_fallback.hpp"
#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

/// cls::rbd::SnapshotNamespaceType: the namespace a snapshot record names.
constexpr std::uint32_t k_user_snapshot = 0;
constexpr std::uint32_t k_group_snapshot = 1;
constexpr std::uint32_t k_trash_snapshot = 2;
constexpr std::uint32_t k_mirror_snapshot = 3;

/// The namespace of a mirror snapshot (cls::rbd::MirrorSnapshotNamespace): what librbd
/// reads of it for an image's promotion state.
struct MirrorSnapshot {
  std::uint8_t state = 0;  ///< 0 primary, 1 primary demoted, 2 non-primary, 3 non-primary demoted
  bool complete = false;   ///< a non-primary copy finished
  std::vector<std::string> peer_uuids;
  std::string primary_mirror_uuid;  ///< of a non-primary snapshot
};

/// One `snapshot_<id>` record (cls_rbd_snap, encoding version 8).
struct HeaderSnapshot {
  std::uint64_t id = 0;
  std::string name;
  std::uint64_t size_bytes = 0;
  std::uint8_t protection_status = 0;  ///< 0 unprotected, 1 unprotecting, 2 protected
  std::uint64_t flags = 0;             ///< RBD_FLAG_*, of this snapshot's object map
  std::uint32_t namespace_type = 0;    ///< 0 user, 1 group, 2 trash, 3 mirror
  std::optional<inventory::Timestamp> timestamp;
  std::uint32_t child_count = 0;         ///< clone v2 children
  std::optional<MirrorSnapshot> mirror;  ///< set for a mirror snapshot (namespace 3)
};

/// The `parent` key (cls_rbd_parent) of a clone: which snapshot of which image it was
/// cloned from, and how much of it the head still maps.
struct HeaderParent {
  std::int64_t pool_id = -1;
  std::string pool_namespace;
  std::string image_id;
  std::uint64_t snap_id = 0;
  /// None once the head was flattened while snapshots still refer to the parent.
  std::optional<std::uint64_t> head_overlap;
};

/// A clone v2 child as cls_rbd lists it under its parent's snapshot (ChildImageSpec).
struct ChildSpec {
  std::int64_t pool_id = 0;
  std::string pool_namespace;
  std::string image_id;
};

/// The `rbd_group_ref` key of a header (cls::rbd::GroupSpec): the group's pool and id.
struct GroupSpec {
  std::int64_t pool_id = -1;
  std::string group_id;
};

/// What a format 2 header says of its image.
struct DecodedHeader {
  std::uint64_t size_bytes = 0;
  int order = 0;
  std::uint64_t features = 0;
  std::uint64_t op_features = 0;
  std::uint64_t flags = 0;
  std::string object_prefix;
  std::optional<std::int64_t> data_pool_id;
  std::uint64_t stripe_unit = 0;   ///< object size unless the header sets it
  std::uint64_t stripe_count = 1;  ///< 1 unless the header sets it
  std::optional<std::uint64_t> snapshot_limit;
  std::optional<inventory::Timestamp> create_timestamp;
  std::optional<inventory::Timestamp> modify_timestamp;
  std::optional<inventory::Timestamp> access_timestamp;
  /// `conf_*` image metadata: option name -> value, as stored.
  std::map<std::string, std::string> config;
  std::vector<HeaderSnapshot> snapshots;  ///< in id order
  std::optional<HeaderParent> parent;     ///< set for a clone
  /// Clone v2 children attached to each snapshot (`snap_children_<id>`), by snapshot id:
  /// what cls_rbd's children_list returns.
  std::map<std::uint64_t, std::vector<ChildSpec>> snap_children;
  std::optional<GroupSpec> group;  ///< set for a group member
};

/// The header; or why it must be read through librbd instead; or why it cannot be read
/// at all.
using HeaderDecoding = OrFallback<DecodedHeader>;

/// Decodes the omap of `rbd_header.<id>` (every key). Falls back for a migration, an unknown key or
/// encoding version, or a missing required key; damage for a truncated or overlong value, a
/// snapshot record under another id's key, or a layout that layout_damage() refuses.
HeaderDecoding decode_header(const std::map<std::string, std::string>& omap);

/// The header keys layout_damage() reads.
const std::vector<std::string>& layout_keys();

/// Why the layout in these header keys (order, size, stripe unit and count; absent keys
/// are fine) would crash librbd or overflow its figures, or nullopt when it is sound:
/// an order outside 12..26, a stripe unit that does not divide the object size, a
/// stripe count beyond 32 bits (librbd divides by its truncation), a size whose object
/// count overflows. Both readers check it before librbd ever opens the image.
std::optional<std::string> layout_damage(const std::map<std::string, std::string>& omap);

/// One `snapshot_<id>` value, as decode_header() reads it; nullopt when not understood.
std::optional<HeaderSnapshot> decode_snapshot_record(const std::string& bytes);

/// The header key of snapshot `snap_id` (`snapshot_` and 16 hex digits).
std::string snapshot_key(std::uint64_t snap_id);

/// One `rbd_group_ref` value; nullopt when not understood.
std::optional<GroupSpec> decode_group_spec(const std::string& bytes);

}  // namespace rbdsync::ceph
