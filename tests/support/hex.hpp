#pragma once

#include <cstddef>
#include <string>

namespace rbdsync::testing {

/// The bytes that `hex` (two hex digits a byte, as captured with `xxd -p`) spells.
inline std::string bytes(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace rbdsync::testing
