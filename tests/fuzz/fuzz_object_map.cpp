// libFuzzer harness: decode_object_map() on one or two object maps, then
// fast_diff_used_bytes() (also through a chain of maps) between them and
// object_count(), as the direct reader calls them.
//
// Input framing: u8 order selector (order 12 + n % 15, the orders decode_header()
// accepts), u8 mode (bit 0: there is a `from` map; bit 1: diff through snapshots
// between too), u64 size, u64 from size, u64 stripe
// unit, u64 stripe count (all little-endian); with bit 0, a u32 length and that many
// bytes of the `from` map; the rest is the `end` map.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ceph/wire/object_map.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using rbdsync::fuzz::keep;
  rbdsync::fuzz::FuzzInput in(data, size);
  const int order = 12 + in.number<std::uint8_t>() % 15;
  const auto mode = in.number<std::uint8_t>();
  const auto size_bytes = in.number<std::uint64_t>();
  const auto from_size_bytes = in.number<std::uint64_t>();
  auto stripe_unit = in.number<std::uint64_t>();
  const auto stripe_count = in.number<std::uint64_t>();
  std::optional<std::string> from_bytes;
  if ((mode & 1) != 0) {
    from_bytes = in.bytes(in.number<std::uint32_t>());
  }
  const std::string end_bytes = in.rest();

  const std::uint64_t object_size = std::uint64_t{1} << order;
  // decode_header() stores the object size for a header without a stripe unit.
  if (stripe_unit == 0) {
    stripe_unit = object_size;
  }
  keep(rbdsync::ceph::object_count(size_bytes, object_size, stripe_unit, stripe_count));

  // As the direct reader reads a map: in part, its first objects.
  const auto objects =
      rbdsync::ceph::object_count(size_bytes, object_size, stripe_unit, stripe_count);
  if (objects && *objects <= (std::uint64_t{1} << 24)) {
    keep(rbdsync::ceph::object_map_object_bytes(*objects));
    const auto head = rbdsync::ceph::decode_object_map_head(end_bytes, *objects);
    keep(head ? head->size() + (head->size() > 0 ? (*head)[head->size() - 1] : 0) : 0);
  }
  const auto end = rbdsync::ceph::decode_object_map(end_bytes);
  std::optional<rbdsync::ceph::ObjectStates> from;
  if (from_bytes) {
    from = rbdsync::ceph::decode_object_map(*from_bytes);
  }
  if (!end || (from_bytes && !from)) {
    return 0;
  }
  keep(end->size() + (from ? from->size() : 0));
  const rbdsync::ceph::SizedObjectMap start{from ? &*from : nullptr, from_size_bytes};
  const auto used = rbdsync::ceph::fast_diff_used_bytes(from ? &start : nullptr,
                                                        {{&*end, size_bytes}}, object_size);
  if (used) {
    keep(*used);
  }
  // Bit 1: the same diff through both maps as snapshots between (of other namespaces).
  if ((mode & 2) != 0 && from) {
    const auto through = rbdsync::ceph::fast_diff_used_bytes(
        &start, {{&*end, from_size_bytes}, {&*from, size_bytes}, {&*end, size_bytes}}, object_size);
    keep(through.value_or(0));
  }
  return 0;
}
