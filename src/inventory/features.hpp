#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rbdsync::inventory {

/// The names `rbd info` prints for the RBD_FEATURE_* bits in `mask`, lowest bit first.
/// Bits this version does not know are named "unknown-0x<bit>" so none is dropped.
std::vector<std::string> feature_names(std::uint64_t mask);

}  // namespace rbdsync::inventory
