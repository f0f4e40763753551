#pragma once

/// Plain data: the vocabulary that the Ceph source, the database sink and the syncer
/// share. No behaviour but image_path (how `rbd` names an image), no dependencies (tests
/// compare records with
/// tests/support/inventory_compare.hpp).
///
/// Field names follow what `rbd info`, `rbd du`, `rbd snap ls`, `rbd status`,
/// `rbd trash ls` and `ceph df` call them, so a reader can check a value against the CLI.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rbdsync::inventory {

/// Microseconds since the Unix epoch, UTC: the precision PostgreSQL's timestamptz keeps,
/// so a value read from Ceph compares equal to the same value read back from the database.
using Timestamp = std::int64_t;

/// Every unknown_reason that says this client may not read a value (its caps stop short
/// of the pool that holds it) starts with this, so that the console can tell "hidden
/// from this client" from "cannot be known" (docs/schema.md, least-privilege clients).
inline constexpr const char* k_not_permitted = "not permitted: ";

/// Whether `unknown_reason` is one of the not-permitted reasons.
inline bool not_permitted(const std::string& unknown_reason) {
  return unknown_reason.rfind(k_not_permitted, 0) == 0;
}

/// A RADOS pool that holds RBD images, with the `ceph df detail` figures of it.
/// Usage figures come from the mgr; a cluster without one reports zeros.
struct Pool {
  std::int64_t id = 0;
  std::string name;
  std::string type;               ///< "replicated" or "erasure"
  std::int64_t replica_size = 0;  ///< `size`: copies (or k+m for erasure)
  std::int64_t min_size = 0;
  std::int64_t pg_num = 0;
  std::uint64_t stored_bytes = 0;  ///< user data, before replication
  std::uint64_t objects = 0;
  std::uint64_t used_bytes = 0;  ///< raw, after replication
  std::uint64_t max_avail_bytes = 0;
  std::string mirror_mode;  ///< "disabled", "image" or "pool"
};

/// An RBD namespace inside a pool (`rbd namespace ls`). The default namespace ("")
/// is implied and not listed.
struct Namespace {
  std::int64_t pool_id = 0;
  std::string name;
};

/// Where an image lives and what identifies it for good: the image id survives renames.
struct ImageKey {
  std::int64_t pool_id = 0;
  std::string pool_namespace;  ///< "" is the pool's default namespace
  std::string image_id;
};

/// An image as listed, before it is opened.
struct ImageRef {
  std::string pool_namespace;
  std::string image_id;
  std::string name;
};

/// The snapshot a clone was made from (`rbd info`'s "parent").
struct Parent {
  std::int64_t pool_id = 0;
  std::string pool_name;
  std::string pool_namespace;
  std::string image_id;
  std::string image_name;
  std::uint64_t snap_id = 0;
  std::string snap_name;
  bool in_trash = false;  ///< the parent image was moved to the trash
  std::uint64_t overlap_bytes = 0;
  /// Why image_name, snap_name and in_trash are unknown (empty, empty, false here): they
  /// live in the parent's pool, which this client may not read. The ids, the pool's name
  /// and the overlap come from the clone's own header. "" when everything is known.
  std::string unknown_reason;
};

/// A client that has the image open (`rbd status`).
struct Watcher {
  std::string address;
  std::int64_t client_id = 0;
  std::uint64_t cookie = 0;
};

/// A holder of the image's header lock (`rbd lock ls`), including the exclusive-lock
/// feature's own lock.
struct Locker {
  std::string client;  ///< e.g. "client.4123"
  std::string cookie;
  std::string address;
};

/// A configuration option set on the image itself (`rbd config image ls`, source
/// "image"), such as an `rbd_qos_iops_limit`.
struct ConfigOverride {
  std::string name;
  std::string value;
};

/// Space used, as `rbd du` computes it. Unknown (no value) unless it could be computed
/// cheaply from a valid fast-diff object map, or a full scan was asked for.
struct Usage {
  std::optional<std::uint64_t> used_bytes;
  std::string unknown_reason;  ///< why used_bytes is empty; "" when it has a value
};

/// One snapshot of an image (`rbd snap ls --all`).
struct Snapshot {
  std::uint64_t id = 0;
  std::string name;
  std::uint64_t size_bytes = 0;
  std::string namespace_type;  ///< "user", "group", "trash", "mirror"
  std::optional<Timestamp> timestamp;
  bool is_protected = false;
  /// Clones made from it, in any pool; none when unknown (children_unknown_reason).
  std::optional<std::uint64_t> children = 0;
  std::string children_unknown_reason;  ///< why `children` is unknown; "" when known
  Usage usage;                          ///< bytes that changed since the previous snapshot
};

/// Live migration of an image (`rbd migration prepare`), from either end.
struct Migration {
  std::string state;  ///< "prepared", "executing", "executed", ...
  std::string state_description;
  std::int64_t source_pool_id = 0;
  std::string source_namespace;
  std::string source_image_name;
  std::string source_image_id;
  std::int64_t destination_pool_id = 0;
  std::string destination_namespace;
  std::string destination_image_name;
  std::string destination_image_id;
};

/// Mirroring of an image in a pool that has mirroring enabled.
struct Mirroring {
  std::string mode;   ///< "journal" or "snapshot"
  std::string state;  ///< "enabled", "disabling", ...
  std::string global_id;
  bool primary = false;
};

/// The group an image belongs to (`rbd group image ls`).
struct GroupMembership {
  std::int64_t pool_id = 0;
  std::string name;
  /// Why `name` is unknown (empty here): it lives in the group's pool, which this client
  /// may not read. "" when known.
  std::string unknown_reason;
};

/// What the inventory records of one RBD image.
struct Image {
  ImageKey key;
  std::string name;
  int format = 2;
  std::uint64_t size_bytes = 0;
  std::uint64_t object_size = 0;
  int order = 0;  ///< object size as a power of two
  std::uint64_t object_count = 0;
  std::uint64_t features = 0;                ///< RBD_FEATURE_* bit mask
  std::uint64_t op_features = 0;             ///< RBD_OPERATION_FEATURE_* bit mask
  std::uint64_t flags = 0;                   ///< RBD_FLAG_* bit mask, e.g. object map invalid
  std::optional<std::int64_t> data_pool_id;  ///< a separate data pool, if any
  std::uint64_t stripe_unit = 0;
  std::uint64_t stripe_count = 0;
  std::string block_name_prefix;
  std::optional<std::uint64_t> snapshot_limit;  ///< none when unlimited
  std::optional<Timestamp> create_timestamp;
  std::optional<Timestamp> modify_timestamp;
  std::optional<Timestamp> access_timestamp;
  std::optional<Parent> parent;
  std::optional<GroupMembership> group;
  std::optional<Migration> migration;
  std::optional<Mirroring> mirroring;
  std::vector<ConfigOverride> config_overrides;  ///< sorted by name
  Usage usage;                                   ///< of the image head
  /// The RADOS version of the header object read just before the object maps that gave
  /// `usage` and the snapshots' usage (sync/usage_marks.hpp); none when any of them
  /// came another way (librbd) or is unknown (no valid fast-diff map).
  std::optional<std::uint64_t> usage_mark;
  /// The usage of the head and of every snapshot was not read: it is what the stored
  /// rows hold, read at `usage_mark`, which the header still has with no lock held. Its
  /// `usage` fields are then empty and the sink keeps the stored ones.
  bool usage_carried = false;
  std::vector<Watcher> watchers;
  std::vector<Locker> lockers;
  std::string lock_type;  ///< "exclusive" or "shared" when there are lockers, else ""
  std::vector<Snapshot> snapshots;
};

/// An image in the RBD trash (`rbd trash ls -l`).
struct TrashEntry {
  std::int64_t pool_id = 0;
  std::string pool_namespace;
  std::string image_id;
  std::string name;
  std::string source;  ///< "user", "mirroring", "migration", "removing", "user_parent"
  Timestamp deletion_time = 0;
  Timestamp deferment_end_time = 0;
};

/// "pool/namespace/image", or "pool/image" in the default namespace: how `rbd` names an
/// image in messages. Raw bytes: callers make display text of it.
inline std::string image_path(const Pool& pool, const ImageRef& ref) {
  return pool.name + "/" + (ref.pool_namespace.empty() ? "" : ref.pool_namespace + "/") + ref.name;
}

}  // namespace rbdsync::inventory
