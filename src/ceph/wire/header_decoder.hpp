#pragma once

/// Decodes what the direct reader fetches for an RBD format 2 image: the omap of its
/// header object `rbd_header.<id>` (cls_rbd's keys), the cls "lock" get_info reply and
/// the object map objects (a BitVector<2>). Plain bytes in, plain values out: no
/// librados here, so every rule is unit-tested from captured bytes.
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
#include <initializer_list>
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

/// The name stored in an `rbd_directory` `id_<id>` value; nullopt when not understood.
std::optional<std::string> decode_directory_name(const std::string& bytes);

/// The head of an `rbd_trash` `id_<id>` value (cls::rbd::TrashImageSpec).
struct TrashSpecHead {
  std::uint8_t source = 0;  ///< RBD_TRASH_IMAGE_SOURCE_*: 3 is "removing" (`rbd rm`)
  std::string name;
};

/// An `rbd_trash` `id_<id>` value's source and image name; nullopt when not understood.
std::optional<TrashSpecHead> decode_trash_spec(const std::string& bytes);

/// The image name in an `rbd_trash` `id_<id>` value; nullopt when not understood.
std::optional<std::string> decode_trash_name(const std::string& bytes);

/// The image names of a format 1 `rbd_directory`'s data (a tmap: a bufferlist header,
/// then map<string, bufferlist>); nullopt when it does not decode to its last byte.
/// Empty data is an empty list.
std::optional<std::vector<std::string>> decode_format1_directory(const std::string& bytes);

/// One `rbd_group_ref` value; nullopt when not understood.
std::optional<GroupSpec> decode_group_spec(const std::string& bytes);

/// The cls_rbd dir_get_name request for the group (or image) id `id`: the id as a string.
std::string encode_dir_get_name_request(const std::string& id);

/// The `rbd_children` key under which cls_rbd lists the clone v1 children of snapshot
/// `snap_id` of image `image_id` in pool `pool_id` (default namespace).
std::string clone_v1_children_key(std::int64_t pool_id, const std::string& image_id,
                                  std::uint64_t snap_id);

/// The child image ids in an `rbd_children` value (a set of ids); nullopt when not
/// understood.
std::optional<std::vector<std::string>> decode_child_ids(const std::string& bytes);

/// The lockers of `rbd_lock` as the cls "lock" get_info reply lists them, with the lock
/// type; nullopt when the reply is not understood.
struct LockInfo {
  std::vector<inventory::Locker> lockers;
  bool exclusive = false;
};
std::optional<LockInfo> decode_lock_info(const std::string& bytes);

/// The cls "lock" get_info request for the lock named `name`.
std::string encode_lock_info_request(const std::string& name);

/// The states of an object map's objects, packed as librbd packs them (BitVector<2>: 2
/// bits an object, four a byte, the first in the high bits): the map of 100 TiB in 4 MiB
/// objects is 6.4 MiB here as in its object, not the 26 MiB of a byte an object.
class ObjectStates {
 public:
  ObjectStates() = default;
  /// `count` objects, each in `state`.
  ObjectStates(std::uint64_t count, std::uint8_t state) { resize(count, state); }
  /// The states listed, for tests.
  ObjectStates(std::initializer_list<std::uint8_t> states);
  /// `count` states packed in `packed`, which holds at least ceil(count / 4) bytes.
  static ObjectStates from_packed(std::string packed, std::uint64_t count);

  std::uint64_t size() const { return m_count; }
  std::uint8_t operator[](std::uint64_t at) const {
    return static_cast<std::uint8_t>((static_cast<unsigned char>(m_packed[at / 4]) >> shift(at)) &
                                     0x3);
  }
  void set(std::uint64_t at, std::uint8_t state);
  /// Cut to `count` objects, or grown to it with objects in `state`.
  void resize(std::uint64_t count, std::uint8_t state);
  bool operator==(const ObjectStates& other) const {
    return m_count == other.m_count && m_packed == other.m_packed;
  }

 private:
  static unsigned shift(std::uint64_t at) { return static_cast<unsigned>((3 - at % 4) * 2); }
  /// Zeroes the bits past the last object, so that equal states compare equal.
  void clear_tail();

  std::string m_packed;
  std::uint64_t m_count = 0;
};

/// The object states of an object map object (BitVector<2>: header, data, footer with
/// CRCs, which are not checked); nullopt when the bytes are not such an object.
std::optional<ObjectStates> decode_object_map(const std::string& bytes);

/// The first `objects` states of an object map object read only in part (its header,
/// then at least ceil(objects / 4) bytes of data): fewer when the map holds fewer;
/// nullopt when the bytes do not start such an object. What librbd's fast diff uses of
/// a map larger than the image: its first objects.
std::optional<ObjectStates> decode_object_map_head(const std::string& bytes, std::uint64_t objects);

/// The most bytes the object map object of `objects` objects can hold (BitVector<2>'s
/// header, data, and its footer with a CRC for each 4 KiB of data): what the direct
/// reader reads of it, so that an object planted larger costs no more than that.
std::uint64_t object_map_object_bytes(std::uint64_t objects);

/// One object map of a fast diff and the size of the snapshot (or head) it maps.
struct SizedObjectMap {
  const ObjectStates* states = nullptr;
  std::uint64_t size_bytes = 0;
};

/// Bytes `rbd du` reports for the snapshot or head whose object map is the last of
/// `chain`, diffed (whole objects, fast-diff) from the user snapshot whose map is `from`
/// (nullptr: from the image's first snapshot, as librbd diffs from nothing) through
/// every snapshot between them, in id order: librbd's object_map::DiffRequest loads the
/// maps of the group, trash and mirror snapshots in between too, and an object written
/// before one of them counts even where the end map says clean. nullopt when `chain` is
/// empty or a map is smaller than its snapshot needs (librbd then refuses the fast diff).
std::optional<std::uint64_t> fast_diff_used_bytes(const SizedObjectMap* from,
                                                  const std::vector<SizedObjectMap>& chain,
                                                  std::uint64_t object_size);

/// Bytes `rbd du` reports for the snapshot or head whose object map is `end`, diffed
/// (whole objects, fast-diff) from the previous user snapshot's map `from` (nullopt: from
/// nothing). `size_bytes` is the size of that snapshot or head; objects are
/// `object_size` apart (no fancy striping). nullopt when a map is smaller than the
/// image needs (librbd then refuses the fast diff).
std::optional<std::uint64_t> fast_diff_used_bytes(const ObjectStates* from,
                                                  std::uint64_t from_size_bytes,
                                                  const ObjectStates& end, std::uint64_t size_bytes,
                                                  std::uint64_t object_size);

/// Objects an image of `size_bytes` spans (Striper::get_num_objects); nullopt for a
/// zero figure or when the count overflows.
std::optional<std::uint64_t> object_count(std::uint64_t size_bytes, std::uint64_t object_size,
                                          std::uint64_t stripe_unit, std::uint64_t stripe_count);

/// The bytes of the object map of `header`'s image at `size_bytes` (2 bits an object,
/// librbd's BitVector data without its small header and footer); nullopt when the object
/// count overflows.
std::optional<std::uint64_t> object_map_bytes(const DecodedHeader& header,
                                              std::uint64_t size_bytes);

/// Snapshot object maps to read ahead, and what they come to together.
struct MapReadAhead {
  std::vector<std::uint64_t> snapshot_ids;
  std::uint64_t bytes = 0;  ///< 2 bits an object, as object_map_bytes()
};

/// The snapshots of `header` whose object maps may be read ahead, all at once, before the
/// fast diff walks them: the first ones, in the header's order, whose maps come to at
/// most `budget_bytes` together; none without fast-diff. The walk reads the others, if it
/// needs them, one at a time.
MapReadAhead snapshot_maps_read_ahead(const DecodedHeader& header, std::uint64_t budget_bytes);

}  // namespace rbdsync::ceph
