#pragma once

// Object maps as tests write them. The product builds ObjectStates only from bytes
// (decode_object_map) or by count, and diffs through a chain of maps; these say a short
// map and a diff of one map in a line.

#include <cstdint>
#include <initializer_list>
#include <optional>

#include "ceph/wire/object_map.hpp"

namespace rbdsync::testing {

/// The states listed, the first object first.
inline ceph::ObjectStates states(std::initializer_list<std::uint8_t> listed) {
  ceph::ObjectStates states(listed.size(), 0);
  std::uint64_t at = 0;
  for (const std::uint8_t state : listed) {
    states.set(at++, state);
  }
  return states;
}

/// ceph::fast_diff_used_bytes() of the one map `end` (of a snapshot or head of
/// `size_bytes`) from the previous user snapshot's map `from` (of `from_size_bytes`;
/// nullptr: from nothing).
inline std::optional<std::uint64_t> fast_diff_used_bytes(const ceph::ObjectStates* from,
                                                         std::uint64_t from_size_bytes,
                                                         const ceph::ObjectStates& end,
                                                         std::uint64_t size_bytes,
                                                         std::uint64_t object_size) {
  const ceph::SizedObjectMap start{from, from_size_bytes};
  return ceph::fast_diff_used_bytes(from != nullptr ? &start : nullptr, {{&end, size_bytes}},
                                    object_size);
}

}  // namespace rbdsync::testing
