#pragma once

/// Inside ceph/ only: every reason the direct reader hands an image to librbd, said once.
/// The text is what --json's read.fallbacks counts by and the log names, so a reason's
/// text is part of the output: change one only on purpose. A `{}` in a text takes the
/// detail (a key, a number, an errno's text); a step that carries a verdict up adds its
/// prefix (k_clone_prefix, ...).

#include <array>
#include <cassert>
#include <cstddef>
#include <string>
#include <string_view>

namespace rbdsync::ceph {

enum class Fallback {
  format_1,
  migration,
  header_unreadable,
  header_too_many_keys,
  header_key_encoding_unknown,
  header_key_unknown,
  header_incomplete,
  lock_info_undecodable,
  fast_diff_with_fancy_striping,
  snapshot_namespace_unknown,
  snapshot_being_unprotected,
  object_map_unreadable,
  snapshot_map_unreadable,
  exact_usage_without_map,
  mirroring_object_unreadable,
  mirroring_entry_undecodable,
  mirroring_journal_mode,
  mirroring_mode_unknown,
  librbd_not_permitted,
  parent_pool_unreadable,
  parent_pool_unopened,
  parent_directory_unreadable,
  parent_directory_undecodable,
  parent_trash_unreadable,
  parent_trash_undecodable,
  parent_image_not_found,
  parent_snapshot_unreadable,
  parent_snapshot_not_found,
  parent_snapshot_undecodable,
  group_pool_unopened,
  group_name_unreadable,
  group_name_undecodable,
  pool_list_unreadable,
  base_tier_unreadable,
  children_pool_unreadable,
  children_object_unreadable,
  children_object_undecodable,
  children_key_unreadable,
  children_key_undecodable,
  child_pool_unreadable,
  child_directory_unreadable,
  child_trash_unreadable,
  child_name_not_found,
  count_,  ///< not a reason: how many there are, the size of k_fallbacks
};

struct FallbackInfo {
  Fallback reason;
  const char* text;
};

/// Every Fallback, in declaration order (checked below, when compiled), with its text.
inline constexpr std::array<FallbackInfo, static_cast<std::size_t>(Fallback::count_)> k_fallbacks{{
    {Fallback::format_1, "format 1"},
    {Fallback::migration, "migration"},
    {Fallback::header_unreadable, "header read failed"},
    {Fallback::header_too_many_keys, "header has more than {} keys"},
    {Fallback::header_key_encoding_unknown, "unknown encoding of header key {}"},
    {Fallback::header_key_unknown, "unknown header key {}"},
    {Fallback::header_incomplete, "header lacks size, order, features or object_prefix"},
    {Fallback::lock_info_undecodable, "cannot decode the lock info"},
    {Fallback::fast_diff_with_fancy_striping, "fast-diff with fancy striping"},
    {Fallback::snapshot_namespace_unknown, "non-user snapshot"},
    {Fallback::snapshot_being_unprotected, "snapshot being unprotected"},
    {Fallback::object_map_unreadable, "cannot read the object map"},
    {Fallback::snapshot_map_unreadable, "cannot read a snapshot's object map"},
    {Fallback::exact_usage_without_map, "exact usage without a valid fast-diff map"},
    {Fallback::mirroring_object_unreadable, "cannot read the mirroring object"},
    {Fallback::mirroring_entry_undecodable, "cannot decode the mirroring entry"},
    {Fallback::mirroring_journal_mode, "journal-mode mirroring"},
    {Fallback::mirroring_mode_unknown, "unknown mirroring mode {}"},
    {Fallback::librbd_not_permitted, "librbd not permitted to open it"},
    {Fallback::parent_pool_unreadable, "cannot read the parent's pool: {}"},
    {Fallback::parent_pool_unopened, "cannot open the parent's pool"},
    {Fallback::parent_directory_unreadable, "cannot read the parent's directory entry: {}"},
    {Fallback::parent_directory_undecodable, "cannot decode the parent's directory entry"},
    {Fallback::parent_trash_unreadable, "cannot read the parent's trash entry: {}"},
    {Fallback::parent_trash_undecodable, "cannot decode the parent's trash entry"},
    {Fallback::parent_image_not_found, "parent image not found"},
    {Fallback::parent_snapshot_unreadable, "cannot read the parent's snapshot: {}"},
    {Fallback::parent_snapshot_not_found, "parent snapshot not found"},
    {Fallback::parent_snapshot_undecodable, "cannot decode the parent's snapshot record"},
    {Fallback::group_pool_unopened, "cannot open the group's pool"},
    {Fallback::group_name_unreadable, "cannot read the group's name: {}"},
    {Fallback::group_name_undecodable, "cannot decode the group's name"},
    {Fallback::pool_list_unreadable, "cannot read the pool list: {}"},
    {Fallback::base_tier_unreadable, "cannot read the base tier of pool {}"},
    {Fallback::children_pool_unreadable, "cannot read pool {}"},
    {Fallback::children_object_unreadable, "cannot read the clone v1 children of pool {}"},
    {Fallback::children_object_undecodable, "cannot decode the clone v1 children of pool {}"},
    {Fallback::children_key_unreadable, "cannot read the clone v1 children in pool {}"},
    {Fallback::children_key_undecodable, "cannot decode the clone v1 children in pool {}"},
    {Fallback::child_pool_unreadable, "cannot read the pool of a child image: {}"},
    {Fallback::child_directory_unreadable, "cannot read the directory entries of child images: {}"},
    {Fallback::child_trash_unreadable, "cannot read the trash entries of child images: {}"},
    {Fallback::child_name_not_found, "a child image's name not found"},
}};

/// Whether row i of k_fallbacks is Fallback i, with a text: a reason added to the enum
/// without its row leaves the last row empty (the array is as long as the enum).
constexpr bool lists_every_fallback_in_order() {
  for (std::size_t row = 0; row < k_fallbacks.size(); ++row) {
    if (k_fallbacks.at(row).reason != static_cast<Fallback>(row) ||
        k_fallbacks.at(row).text == nullptr) {
      return false;
    }
  }
  return true;
}
static_assert(lists_every_fallback_in_order(), "k_fallbacks: every Fallback once, in order");

/// The prefixes of verdicts carried up from a clone's parent, a group member's group and
/// a snapshot's children.
inline constexpr std::string_view k_clone_prefix = "clone: ";
inline constexpr std::string_view k_group_prefix = "group: ";
inline constexpr std::string_view k_children_prefix = "children: ";

/// The text of `reason`, its `{}` (if any) replaced by `detail`.
inline std::string fallback_text(Fallback reason, std::string_view detail = {}) {
  std::string text = k_fallbacks.at(static_cast<std::size_t>(reason)).text;
  const std::size_t at = text.find("{}");
  assert(at != std::string::npos || detail.empty());  // a detail no text would show
  if (at != std::string::npos) {
    text.replace(at, 2, detail);
  }
  return text;
}

}  // namespace rbdsync::ceph
