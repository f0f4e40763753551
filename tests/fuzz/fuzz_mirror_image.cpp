// libFuzzer harness: decode_mirror_image() (an `rbd_mirroring` `image_<id>` value) over
// the whole input, and what image_mirroring() makes of it.

#include <cstddef>
#include <cstdint>
#include <string>

#include "ceph/wire/mirroring.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto entry = rbdsync::ceph::decode_mirror_image(bytes);
  if (entry) {
    const auto mirroring = rbdsync::ceph::image_mirroring(&*entry, {});
    rbdsync::fuzz::keep(entry->global_id.size() + entry->state + entry->mode +
                        (mirroring.ok() && *mirroring.value ? 1 : 0));
  }
  return 0;
}
