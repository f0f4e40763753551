// libFuzzer harness: fast_diff_used_bytes() through a chain of object maps (a user
// snapshot's, those of the group and trash snapshots after it, the end's), each decoded
// by decode_object_map(), as the direct reader diffs through non-user snapshots.
//
// Input framing: u8 order selector (order 12 + n % 15), u8 mode (bit 0: there is a
// `from` map; bits 1-2: 1 to 4 maps in the chain); then per map (`from` first) a u64
// size, a u32 length and that many bytes of the map.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/object_map.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using rbdsync::ceph::SizedObjectMap;
  rbdsync::fuzz::FuzzInput in(data, size);
  const int order = 12 + in.number<std::uint8_t>() % 15;
  const auto mode = in.number<std::uint8_t>();
  const bool has_from = (mode & 1) != 0;
  const std::size_t count = 1 + ((mode >> 1) & 3) + (has_from ? 1 : 0);
  std::vector<rbdsync::ceph::ObjectStates> maps;
  std::vector<std::uint64_t> sizes;
  maps.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    sizes.push_back(in.number<std::uint64_t>());
    auto states = rbdsync::ceph::decode_object_map(in.bytes(in.number<std::uint32_t>()));
    if (!states) {
      return 0;
    }
    maps.push_back(std::move(*states));
  }
  const SizedObjectMap from{has_from ? &maps[0] : nullptr, has_from ? sizes[0] : 0};
  std::vector<SizedObjectMap> chain;
  for (std::size_t i = has_from ? 1 : 0; i < count; ++i) {
    chain.push_back({&maps[i], sizes[i]});
  }
  rbdsync::fuzz::keep(rbdsync::ceph::fast_diff_used_bytes(has_from ? &from : nullptr, chain,
                                                          std::uint64_t{1} << order));
  return 0;
}
