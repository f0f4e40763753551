#pragma once

// For the tests of a table that must hold every enumerator of an enum once, in order
// (k_exit_codes). The test says which values are enumerators with a switch
// that -Wswitch-enum makes list every one, so that an enumerator added without a case
// fails to compile, and the test then wants it in the table too.

#include <array>
#include <cstddef>
#include <vector>

namespace rbdsync::testing {

/// The values 0..255 of `Enum` that `is_enumerator` names, in ascending order.
template <typename Enum, typename IsEnumerator>
std::vector<Enum> enumerators(IsEnumerator is_enumerator) {
  std::vector<Enum> found;
  for (int value = 0; value < 256; ++value) {
    if (is_enumerator(static_cast<Enum>(value))) {
      found.push_back(static_cast<Enum>(value));
    }
  }
  return found;
}

/// The enumerator of each row of `table`, in the table's order.
template <typename Row, std::size_t N, typename Enum>
std::vector<Enum> listed(const std::array<Row, N>& table, Enum Row::*field) {
  std::vector<Enum> found;
  for (const Row& row : table) {
    found.push_back(row.*field);
  }
  return found;
}

}  // namespace rbdsync::testing
