#pragma once

/// The words librbd and `rbd` print for its bits and enum values, free of Ceph headers so
/// that db/ and the fuzz build can use them. The values are part of the on-disk RBD
/// format and librbd's ABI, so they are spelled out here; tests/ceph checks every table
/// against librbd's own headers.

#include <cstdint>
#include <string>
#include <vector>

namespace rbdsync::inventory {

/// The names `rbd info` prints for the RBD_FEATURE_* bits in `mask`, lowest bit first.
/// Bits this version does not know are named "unknown-0x<bit>" so none is dropped.
std::vector<std::string> feature_names(std::uint64_t mask);

/// The names `rbd info` prints under "op_features" for the RBD_OPERATION_FEATURE_* bits
/// in `mask`, lowest bit first; unknown bits as in feature_names().
std::vector<std::string> op_feature_names(std::uint64_t mask);

/// The names `rbd info` prints under "flags" for the RBD_FLAG_* bits in `mask`
/// ("object map invalid", "fast diff invalid"), lowest bit first; unknown bits as in
/// feature_names().
std::vector<std::string> flag_names(std::uint64_t mask);

/// rbd_snap_namespace_type_t: "user", "group", "trash", "mirror"; else "unknown-<n>".
std::string snap_namespace_name(int type);

/// rbd_trash_image_source_t: "user", "mirroring", "migration", "removing",
/// "user_parent"; else "unknown-<n>".
std::string trash_source_name(int source);

/// rbd_mirror_mode_t of a pool: "disabled", "image", "pool"; else "unknown".
std::string pool_mirror_mode_name(int mode);

/// rbd_mirror_image_mode_t: "journal", "snapshot"; else "unknown".
std::string image_mirror_mode_name(int mode);

/// rbd_mirror_image_state_t: "disabling", "enabled", "disabled"; else "unknown".
std::string mirror_image_state_name(int state);

/// entity_name_t's type as a locker's client is named ("client" of "client.4123"):
/// "mon", "mds", "osd", "client", "mgr"; else "unknown".
std::string entity_type_name(int type);

/// The words `rbd status` prints for cls::rbd::MigrationState; else "unknown".
std::string migration_state_name(int state);

}  // namespace rbdsync::inventory
