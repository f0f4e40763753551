#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace rbdsync::testing {

/// One mebibyte: image sizes in tests are written in it.
inline constexpr std::uint64_t k_mib = std::uint64_t{1} << 20U;

/// The whole content of a file ("" when it cannot be read: a test that needs the file
/// asserts on what it expected to find in it).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace rbdsync::testing
