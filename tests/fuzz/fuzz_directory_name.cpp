// libFuzzer harness: decode_directory_name() (an `rbd_directory` `id_<id>` value) over
// the whole input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/pool_objects.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto name = rbdsync::ceph::decode_directory_name(bytes);
  if (name) {
    rbdsync::fuzz::keep(name->size());
  }
  return 0;
}
