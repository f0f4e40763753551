// libFuzzer harness: decode_child_ids() (an `rbd_children` value: clone v1 children)
// over the whole input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/pool_objects.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto ids = rbdsync::ceph::decode_child_ids(bytes);
  if (ids) {
    for (const auto& id : *ids) {
      rbdsync::fuzz::keep(id.size());
    }
  }
  return 0;
}
