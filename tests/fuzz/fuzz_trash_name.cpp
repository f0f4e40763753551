// libFuzzer harness: decode_trash_spec() and decode_trash_name() (an `rbd_trash`
// `id_<id>` value) over the whole input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/pool_objects.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto spec = rbdsync::ceph::decode_trash_spec(bytes);
  if (spec) {
    rbdsync::fuzz::keep(spec->name.size() + spec->source);
  }
  const auto name = rbdsync::ceph::decode_trash_name(bytes);
  if (name) {
    rbdsync::fuzz::keep(name->size());
  }
  return 0;
}
