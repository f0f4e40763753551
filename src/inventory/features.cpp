#include "inventory/features.hpp"

#include <array>
#include <sstream>
#include <utility>

namespace rbdsync::inventory {

namespace {

// The bit values are part of the on-disk RBD format (rbd/features.h), so they are
// spelled out here rather than pulling a Ceph header into this dependency-free module.
constexpr std::array<std::pair<std::uint64_t, const char*>, 12> k_features = {{
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

}  // namespace

std::vector<std::string> feature_names(std::uint64_t mask) {
  std::vector<std::string> names;
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t value = 1ULL << bit;
    if ((mask & value) == 0) {
      continue;
    }
    std::string name;
    for (const auto& [known, known_name] : k_features) {
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

}  // namespace rbdsync::inventory
