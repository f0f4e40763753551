// libFuzzer harness: decode_format1_directory() (a format 1 `rbd_directory`'s data, a
// tmap that any tenant with write caps on the pool can write) over the whole input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/pool_objects.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto names = rbdsync::ceph::decode_format1_directory(bytes);
  if (names) {
    for (const std::string& name : *names) {
      rbdsync::fuzz::keep(name.size());
    }
  }
  return 0;
}
