#pragma once

/// For tests only: the inventory's records compared field by field, and a whole
/// cluster's inventory as the fakes keep it. No code in src/ compares these records, so
/// the comparisons live here, as free functions in rbdsync::inventory (found by ADL).

#include <string>
#include <tuple>
#include <vector>

#include "inventory/inventory.hpp"

namespace rbdsync::inventory {

// Each record's fields, in the order it declares them: two records are equal when all
// their fields are (operator== below, for every record with a tied()). But an Image's
// usage_mark and usage_carried: how this read came by its usage (the direct reader's
// header version, and whether it reused the stored usage), not what the image is, so
// the two readers' records of one image compare equal.

inline auto tied(const ImageKey& key) {
  return std::tie(key.pool_id, key.pool_namespace, key.image_id);
}
inline bool operator<(const ImageKey& a, const ImageKey& b) {
  return tied(a) < tied(b);
}

inline auto tied(const Parent& parent) {
  return std::tie(parent.pool_id, parent.pool_name, parent.pool_namespace, parent.image_id,
                  parent.image_name, parent.snap_id, parent.snap_name, parent.in_trash,
                  parent.overlap_bytes, parent.unknown_reason);
}

inline auto tied(const Watcher& watcher) {
  return std::tie(watcher.address, watcher.client_id, watcher.cookie);
}

inline auto tied(const Locker& locker) {
  return std::tie(locker.client, locker.cookie, locker.address);
}

inline auto tied(const ConfigOverride& option) {
  return std::tie(option.name, option.value);
}

inline auto tied(const Usage& usage) {
  return std::tie(usage.used_bytes, usage.unknown_reason);
}

inline auto tied(const Snapshot& snap) {
  return std::tie(snap.id, snap.name, snap.size_bytes, snap.namespace_type, snap.timestamp,
                  snap.is_protected, snap.children, snap.children_unknown_reason, snap.usage);
}

inline auto tied(const Migration& migration) {
  return std::tie(migration.state, migration.state_description, migration.source_pool_id,
                  migration.source_namespace, migration.source_image_name,
                  migration.source_image_id, migration.destination_pool_id,
                  migration.destination_namespace, migration.destination_image_name,
                  migration.destination_image_id);
}

inline auto tied(const Mirroring& mirroring) {
  return std::tie(mirroring.mode, mirroring.state, mirroring.global_id, mirroring.primary);
}

inline auto tied(const GroupMembership& group) {
  return std::tie(group.pool_id, group.name, group.unknown_reason);
}

inline auto tied(const Image& image) {
  return std::tie(image.key, image.name, image.format, image.size_bytes, image.object_size,
                  image.order, image.object_count, image.features, image.op_features, image.flags,
                  image.data_pool_id, image.stripe_unit, image.stripe_count,
                  image.block_name_prefix, image.snapshot_limit, image.create_timestamp,
                  image.modify_timestamp, image.access_timestamp, image.parent, image.group,
                  image.migration, image.mirroring, image.config_overrides, image.usage,
                  image.watchers, image.lockers, image.lock_type, image.snapshots);
}

inline auto tied(const Pool& pool) {
  return std::tie(pool.id, pool.name, pool.type, pool.replica_size, pool.min_size, pool.pg_num,
                  pool.stored_bytes, pool.objects, pool.used_bytes, pool.max_avail_bytes,
                  pool.mirror_mode);
}

inline auto tied(const Namespace& ns) {
  return std::tie(ns.pool_id, ns.name);
}

inline auto tied(const TrashEntry& entry) {
  return std::tie(entry.pool_id, entry.pool_namespace, entry.image_id, entry.name, entry.source,
                  entry.deletion_time, entry.deferment_end_time);
}

/// Two records of a kind with a tied() above are equal when their fields are.
template <typename Record>
auto operator==(const Record& a, const Record& b) -> decltype(tied(a) == tied(b)) {
  return tied(a) == tied(b);
}
template <typename Record>
auto operator!=(const Record& a, const Record& b) -> decltype(tied(a) == tied(b)) {
  return !(a == b);
}

/// Everything a sync read from one cluster.
struct ClusterInventory {
  std::string fsid;
  std::string name;  ///< the cluster name, "ceph" unless configured otherwise
  std::vector<Pool> pools;
  std::vector<Namespace> namespaces;
  std::vector<Image> images;
  std::vector<TrashEntry> trash;
};

}  // namespace rbdsync::inventory
