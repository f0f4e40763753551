#include "ceph/librbd_rules.hpp"

namespace rbdsync::ceph {

namespace {

constexpr std::uint64_t k_clone_parent = 1ULL << 0;  // RBD_OPERATION_FEATURE_CLONE_PARENT

}  // namespace

std::string unknown_usage_reason(bool fast_diff, std::uint64_t range_flags) {
  if (!fast_diff) {
    return "fast-diff disabled";
  }
  if ((range_flags & k_object_map_invalid) != 0) {
    return "object map invalid";
  }
  if ((range_flags & k_fast_diff_invalid) != 0) {
    return "fast-diff invalid";
  }
  return {};
}

bool may_have_children(bool is_protected, std::uint64_t op_features) {
  return is_protected || (op_features & k_clone_parent) != 0;
}

bool pool_mirroring_enabled(const std::string& pool_mirror_mode) {
  return !pool_mirror_mode.empty() && pool_mirror_mode != "disabled";
}

}  // namespace rbdsync::ceph
