#include "inventory/librbd_names.hpp"

#include <array>
#include <sstream>
#include <utility>

namespace rbdsync::inventory {

namespace {

// The bits are part of the on-disk RBD format (rbd/features.h, rbd/librbd.h), so their
// names are spelled out here, from bit 0 up, rather than pulling a Ceph header into this
// dependency-free module; tests/ceph checks them against librbd.
constexpr std::array<const char*, 12> k_features = {
    "layering",   "striping",  "exclusive-lock", "object-map", "fast-diff",   "deep-flatten",
    "journaling", "data-pool", "operations",     "migrating",  "non-primary", "dirty-cache"};

// Pacific's `rbd info` prints these four (RBD_OPERATION_FEATURE_NAME_* in rbd/features.h).
constexpr std::array<const char*, 4> k_op_features = {"clone-parent", "clone-child", "group",
                                                      "snap-trash"};

// `rbd info` spells the flags with spaces (format_flags() in tools/rbd/action/Info.cc).
constexpr std::array<const char*, 2> k_flags = {"object map invalid", "fast diff invalid"};

using ValueName = EnumWords::Entry;

// librbd's enums (rbd/librbd.h), in value order.
constexpr std::array<ValueName, 4> k_snap_namespaces = {
    {{0, "user"}, {1, "group"}, {2, "trash"}, {3, "mirror"}}};
constexpr std::array<ValueName, 5> k_trash_sources = {
    {{0, "user"}, {1, "mirroring"}, {2, "migration"}, {3, "removing"}, {4, "user_parent"}}};
constexpr std::array<ValueName, 3> k_pool_mirror_modes = {
    {{0, "disabled"}, {1, "image"}, {2, "pool"}}};
constexpr std::array<ValueName, 2> k_image_mirror_modes = {{{0, "journal"}, {1, "snapshot"}}};
constexpr std::array<ValueName, 3> k_mirror_image_states = {
    {{0, "disabling"}, {1, "enabled"}, {2, "disabled"}}};
// entity_name_t's CEPH_ENTITY_TYPE_* (include/msgr.h).
constexpr std::array<ValueName, 5> k_entity_types = {
    {{0x01, "mon"}, {0x02, "mds"}, {0x04, "osd"}, {0x08, "client"}, {0x10, "mgr"}}};
// cls::rbd::MigrationState (cls/rbd/cls_rbd_types.h).
constexpr std::array<ValueName, 6> k_migration_states = {{{0, "error"},
                                                          {1, "preparing"},
                                                          {2, "prepared"},
                                                          {3, "executing"},
                                                          {4, "executed"},
                                                          {5, "aborting"}}};

}  // namespace

std::vector<std::string> BitWords::operator()(std::uint64_t mask) const {
  const auto known_bits = static_cast<std::size_t>(end_ - begin_);
  std::vector<std::string> names;
  for (std::size_t bit = 0; bit < 64; ++bit) {
    const std::uint64_t value = 1ULL << bit;
    if ((mask & value) == 0) {
      continue;
    }
    if (bit < known_bits) {
      names.emplace_back(begin_[bit]);
    } else {
      std::ostringstream unknown;
      unknown << "unknown-0x" << std::hex << value;
      names.push_back(unknown.str());
    }
  }
  return names;
}

std::string EnumWords::operator()(int value) const {
  for (const Entry* entry = begin_; entry != end_; ++entry) {
    if (entry->first == value) {
      return entry->second;
    }
  }
  // librbd's own printers number an unknown value where they name snapshot namespaces
  // and trash sources, and print a bare "unknown" elsewhere.
  return unknown_ == Unknown::numbered ? "unknown-" + std::to_string(value) : "unknown";
}

// constexpr, not const: the compiler then refuses any edit that would make these run at
// start-up, where another file's static initialiser could call one before it is made.
constexpr BitWords feature_names{k_features};
constexpr BitWords op_feature_names{k_op_features};
constexpr BitWords flag_names{k_flags};

constexpr EnumWords snap_namespace_name{k_snap_namespaces, EnumWords::Unknown::numbered};
constexpr EnumWords trash_source_name{k_trash_sources, EnumWords::Unknown::numbered};
constexpr EnumWords pool_mirror_mode_name{k_pool_mirror_modes, EnumWords::Unknown::unnumbered};
constexpr EnumWords image_mirror_mode_name{k_image_mirror_modes, EnumWords::Unknown::unnumbered};
constexpr EnumWords mirror_image_state_name{k_mirror_image_states, EnumWords::Unknown::unnumbered};
constexpr EnumWords entity_type_name{k_entity_types, EnumWords::Unknown::unnumbered};
constexpr EnumWords migration_state_name{k_migration_states, EnumWords::Unknown::unnumbered};

}  // namespace rbdsync::inventory
