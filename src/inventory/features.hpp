#pragma once

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

}  // namespace rbdsync::inventory
