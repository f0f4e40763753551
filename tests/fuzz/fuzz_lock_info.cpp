// libFuzzer harness: decode_lock_info() (the cls "lock" get_info reply for `rbd_lock`)
// over the whole input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "ceph/wire/lock_info.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto info = rbdsync::ceph::decode_lock_info(bytes);
  if (info) {
    rbdsync::fuzz::keep(info->exclusive ? 1 : 0);
    for (const auto& locker : info->lockers) {
      rbdsync::fuzz::keep(locker.client.size() + locker.cookie.size() + locker.address.size());
    }
  }
  return 0;
}
