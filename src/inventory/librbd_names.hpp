#pragma once

/// The words librbd and `rbd` print for its bits and enum values, free of Ceph headers so
/// that db/ and the fuzz build can use them. The values are part of the on-disk RBD
/// format and librbd's ABI, so they are spelled out here; tests/ceph checks every table
/// against librbd's own headers.
///
/// Each set of words is a table that reads as a function: `snap_namespace_name(1)` is
/// "group". One class per kind of table keeps the rule for an unknown value in one place
/// rather than in a wrapper per enum.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rbdsync::inventory {

/// The names of the bits of a mask, as `rbd info` lists them. The bits librbd names
/// are dense from bit 0, so the table is a name per bit.
class BitWords {
 public:
  template <std::size_t N>
  constexpr explicit BitWords(const std::array<const char*, N>& name_of_bit)
      : begin_(name_of_bit.data()), end_(name_of_bit.data() + N) {}

  /// The name of each bit set in `mask`, lowest bit first. A bit the table does not
  /// know is named "unknown-0x<bit>", so none is dropped.
  std::vector<std::string> operator()(std::uint64_t mask) const;

 private:
  const char* const* begin_;
  const char* const* end_;
};

/// The words for the values of one of librbd's enums.
class EnumWords {
 public:
  using Entry = std::pair<int, const char*>;
  /// How a value the table does not hold is named: "unknown-<n>" where librbd's own
  /// printers number it, else "unknown".
  enum class Unknown { numbered, unnumbered };

  template <std::size_t N>
  constexpr EnumWords(const std::array<Entry, N>& table, Unknown unknown)
      : begin_(table.data()), end_(table.data() + N), unknown_(unknown) {}

  std::string operator()(int value) const;

 private:
  const Entry* begin_;
  const Entry* end_;
  Unknown unknown_;
};

/// RBD_FEATURE_*: "layering", "exclusive-lock", ...
extern const BitWords feature_names;
/// RBD_OPERATION_FEATURE_*, printed under "op_features": "clone-parent", ...
extern const BitWords op_feature_names;
/// RBD_FLAG_*, printed under "flags": "object map invalid", "fast diff invalid".
extern const BitWords flag_names;

/// rbd_snap_namespace_type_t: "user", "group", "trash", "mirror"; else "unknown-<n>".
extern const EnumWords snap_namespace_name;
/// rbd_trash_image_source_t: "user", "mirroring", "migration", "removing",
/// "user_parent"; else "unknown-<n>".
extern const EnumWords trash_source_name;
/// rbd_mirror_mode_t of a pool: "disabled", "image", "pool"; else "unknown".
extern const EnumWords pool_mirror_mode_name;
/// rbd_mirror_image_mode_t: "journal", "snapshot"; else "unknown".
extern const EnumWords image_mirror_mode_name;
/// rbd_mirror_image_state_t: "disabling", "enabled", "disabled"; else "unknown".
extern const EnumWords mirror_image_state_name;
/// entity_name_t's type as a locker's client is named ("client" of "client.4123"):
/// "mon", "mds", "osd", "client", "mgr"; else "unknown".
extern const EnumWords entity_type_name;
/// The words `rbd status` prints for cls::rbd::MigrationState; else "unknown".
extern const EnumWords migration_state_name;

}  // namespace rbdsync::inventory
