// libFuzzer harness: decode_group_spec() (a header's `rbd_group_ref` value, which the
// librbd reader decodes for a group in a pool it may not read) over the whole input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "ceph/wire/header_decoder.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto spec = rbdsync::ceph::decode_group_spec(bytes);
  if (spec) {
    rbdsync::fuzz::keep(static_cast<std::size_t>(spec->pool_id) + spec->group_id.size());
  }
  return 0;
}
