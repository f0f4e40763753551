#include "inventory/features.hpp"

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

}  // namespace rbdsync::inventory
