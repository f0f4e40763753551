#pragma once

/// Inside ceph/ only: the rules of librbd that both readers follow (the librbd reader
/// where it asks librbd, the direct reader where it reads the header itself), said
/// once, free of Ceph headers; tests/ceph checks the bits against librbd's.

#include <cstdint>
#include <string>

namespace rbdsync::ceph {

inline constexpr std::uint64_t k_object_map_invalid = 1ULL << 0;  ///< RBD_FLAG_OBJECT_MAP_INVALID
inline constexpr std::uint64_t k_fast_diff_invalid = 1ULL << 1;   ///< RBD_FLAG_FAST_DIFF_INVALID
/// An object map in the range of a fast diff with either flag makes librbd diff the slow
/// way.
inline constexpr std::uint64_t k_invalid_map_flags = k_object_map_invalid | k_fast_diff_invalid;

// cls_rbd's header keys (cls/rbd/cls_rbd.cc).
inline constexpr const char* k_snapshot_prefix = "snapshot_";
inline constexpr const char* k_metadata_prefix = "metadata_";
inline constexpr const char* k_config_prefix = "metadata_conf_";
inline constexpr const char* k_snap_children_prefix = "snap_children_";
/// RBD_GROUP_REF: the key that says which group the image belongs to.
inline constexpr const char* k_group_key = "rbd_group_ref";
/// RBD_GROUP_INVALID_POOL (in a header librbd does not install): the group pool of an
/// image in no group.
inline constexpr std::int64_t k_no_group_pool = -1;

/// Why librbd would not compute an image's usage with a cheap fast diff over object maps
/// whose flags together are `range_flags`: "fast-diff disabled", "object map invalid" or
/// "fast-diff invalid" (the stored usage reasons, not the flag names); "" when it would.
std::string unknown_usage_reason(bool fast_diff, std::uint64_t range_flags);

/// The usage reason of a snapshot outside the user namespace (a group's, the trash's, a
/// mirror's): `rbd du` shows no usage for it either.
inline constexpr const char* k_not_user_snapshot_reason = "not a user snapshot";

/// Whether a snapshot may have children, so that list_children3() is worth its lookup in
/// every pool: v1 clones need a protected snapshot, v2 clones set clone-parent on the
/// parent image (`op_features`).
bool may_have_children(bool is_protected, std::uint64_t op_features);

/// Whether an image's mirroring is read at all: only in a pool whose mirror mode (as
/// stored, "" when never `rbd pool init`-ed) has mirroring enabled.
bool pool_mirroring_enabled(const std::string& pool_mirror_mode);

}  // namespace rbdsync::ceph
