#include "inventory/librbd_names.hpp"

#include <array>
#include <sstream>
#include <utility>

namespace rbdsync::inventory {

namespace {

using BitName = std::pair<std::uint64_t, const char*>;

// The bit values are part of the on-disk RBD format (rbd/features.h, rbd/librbd.h), so
// they are spelled out here rather than pulling a Ceph header into this dependency-free
// module; tests/ceph checks them against librbd.
constexpr std::array<BitName, 12> k_features = {{
    {1ULL << 0, "layering"},
    {1ULL << 1, "striping"},
    {1ULL << 2, "exclusive-lock"},
    {1ULL << 3, "object-map"},
    {1ULL << 4, "fast-diff"},
    {1ULL << 5, "deep-flatten"},
    {1ULL << 6, "journaling"},
    {1ULL << 7, "data-pool"},
    {1ULL << 8, "operations"},
    {1ULL << 9, "migrating"},
    {1ULL << 10, "non-primary"},
    {1ULL << 11, "dirty-cache"},
}};

// Pacific's `rbd info` prints these four (RBD_OPERATION_FEATURE_NAME_* in rbd/features.h).
constexpr std::array<BitName, 4> k_op_features = {{
    {1ULL << 0, "clone-parent"},
    {1ULL << 1, "clone-child"},
    {1ULL << 2, "group"},
    {1ULL << 3, "snap-trash"},
}};

// `rbd info` spells the flags with spaces (format_flags() in tools/rbd/action/Info.cc).
constexpr std::array<BitName, 2> k_flags = {{
    {1ULL << 0, "object map invalid"},
    {1ULL << 1, "fast diff invalid"},
}};

template <std::size_t N>
std::vector<std::string> names_of(std::uint64_t mask, const std::array<BitName, N>& table) {
  std::vector<std::string> names;
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t value = 1ULL << bit;
    if ((mask & value) == 0) {
      continue;
    }
    std::string name;
    for (const auto& [known, known_name] : table) {
      if (known == value) {
        name = known_name;
      }
    }
    if (name.empty()) {
      std::ostringstream unknown;
      unknown << "unknown-0x" << std::hex << value;
      name = unknown.str();
    }
    names.push_back(std::move(name));
  }
  return names;
}

using ValueName = std::pair<int, const char*>;

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

/// The name of `value` in `table`, or nullptr.
template <std::size_t N>
const char* name_in(const std::array<ValueName, N>& table, int value) {
  for (const auto& [known, name] : table) {
    if (known == value) {
      return name;
    }
  }
  return nullptr;
}

/// An unknown value as librbd's own printers show it where they number it.
template <std::size_t N>
std::string name_or_number(const std::array<ValueName, N>& table, int value) {
  const char* name = name_in(table, value);
  return name != nullptr ? std::string(name) : "unknown-" + std::to_string(value);
}

template <std::size_t N>
std::string name_or_unknown(const std::array<ValueName, N>& table, int value) {
  const char* name = name_in(table, value);
  return name != nullptr ? name : "unknown";
}

}  // namespace

std::vector<std::string> feature_names(std::uint64_t mask) {
  return names_of(mask, k_features);
}

std::vector<std::string> op_feature_names(std::uint64_t mask) {
  return names_of(mask, k_op_features);
}

std::vector<std::string> flag_names(std::uint64_t mask) {
  return names_of(mask, k_flags);
}

std::string snap_namespace_name(int type) {
  return name_or_number(k_snap_namespaces, type);
}

std::string trash_source_name(int source) {
  return name_or_number(k_trash_sources, source);
}

std::string pool_mirror_mode_name(int mode) {
  return name_or_unknown(k_pool_mirror_modes, mode);
}

std::string image_mirror_mode_name(int mode) {
  return name_or_unknown(k_image_mirror_modes, mode);
}

std::string mirror_image_state_name(int state) {
  return name_or_unknown(k_mirror_image_states, state);
}

std::string entity_type_name(int type) {
  return name_or_unknown(k_entity_types, type);
}

std::string migration_state_name(int state) {
  return name_or_unknown(k_migration_states, state);
}

}  // namespace rbdsync::inventory
