#include "ceph/wire/object_map.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <rbd/features.h>

#include "ceph/wire/encoding.hpp"

namespace rbdsync::ceph {

namespace {

// Object map states (include/rbd/object_map_types.h).
constexpr std::uint8_t k_object_nonexistent = 0;
constexpr std::uint8_t k_object_exists = 1;
constexpr std::uint8_t k_object_exists_clean = 3;

/// ceil(a / b), without the overflow of (a + b - 1) / b; b > 0.
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

/// The bytes `count` states take, four to a byte.
std::uint64_t packed_size(std::uint64_t count) {
  return ceil_div(count, 4);
}

/// The state count in BitVector<2>'s header, the bufferlist `in` starts with:
/// ENCODE_START(1, 1) { u64 size }. nullopt when the header holds anything else.
std::optional<std::uint64_t> bit_vector_size(Decoder& in) {
  const std::string header_bytes = in.text();
  Decoder header(header_bytes);
  const auto size = header.envelope(1).number<std::uint64_t>();
  if (!in.ok() || !header.at_end()) {
    return std::nullopt;
  }
  return size;
}

}  // namespace

ObjectStates ObjectStates::from_packed(std::string packed, std::uint64_t count) {
  ObjectStates states;
  states.m_packed = std::move(packed);
  states.m_count = count;
  states.clear_tail();
  return states;
}

void ObjectStates::set(std::uint64_t at, std::uint8_t state) {
  auto& byte = reinterpret_cast<unsigned char&>(m_packed[at / 4]);
  byte = static_cast<unsigned char>((byte & ~(0x3U << shift(at))) | ((state & 0x3U) << shift(at)));
}

void ObjectStates::resize(std::uint64_t count, std::uint8_t state) {
  const std::uint64_t old_count = m_count;
  // Whole new bytes take the state four times over; the old last byte's free bits
  // are set one by one.
  const auto repeated = static_cast<char>((state & 0x3U) * 0x55U);
  m_packed.resize(packed_size(count), repeated);
  m_count = count;
  for (std::uint64_t at = old_count; at < count && at % 4 != 0; ++at) {
    set(at, state);
  }
  clear_tail();
}

void ObjectStates::clear_tail() {
  m_packed.resize(packed_size(m_count));
  if (m_count % 4 != 0) {
    auto& last = reinterpret_cast<unsigned char&>(m_packed.back());
    last = static_cast<unsigned char>(last & (0xFFU << (8 - 2 * (m_count % 4))));
  }
}

std::optional<ObjectStates> decode_object_map(const std::string& bytes) {
  // BitVector<2>::encode: the header, the packed data (4 objects a byte, the first in
  // the high bits), a bufferlist footer.
  Decoder in(bytes);
  const auto size = bit_vector_size(in);
  if (!size || packed_size(*size) > in.remaining()) {
    return std::nullopt;
  }
  std::string packed = in.raw(packed_size(*size));
  in.text();  // footer: CRCs
  if (!in.at_end()) {
    return std::nullopt;
  }
  return ObjectStates::from_packed(std::move(packed), *size);
}

std::optional<ObjectStates> decode_object_map_head(const std::string& bytes,
                                                   std::uint64_t objects) {
  Decoder in(bytes);
  const auto size = bit_vector_size(in);
  if (!size) {
    return std::nullopt;
  }
  const std::uint64_t kept = std::min(*size, objects);
  if (packed_size(kept) > in.remaining()) {
    return std::nullopt;
  }
  return ObjectStates::from_packed(in.raw(packed_size(kept)), kept);
}

std::uint64_t object_map_object_bytes(std::uint64_t objects) {
  // The header: a u32 length, then ENCODE_START's u8 version, u8 compat and u32 length
  // around a u64 size. The footer: a u32 length, then a u32 header CRC and a u32 count
  // of u32 data CRCs, one for each block of 4 KiB (BitVector's BLOCK_SIZE; a larger
  // page size only makes fewer). Each sum is far from overflowing: objects / 4 bytes.
  constexpr std::uint64_t k_header = 4 + 1 + 1 + 4 + 8;
  constexpr std::uint64_t k_block = 4096;
  const std::uint64_t data = packed_size(objects);
  return k_header + data + 4 + 4 + 4 + 4 * ceil_div(data, k_block);
}

std::optional<std::uint64_t> object_count(std::uint64_t size_bytes, std::uint64_t object_size,
                                          std::uint64_t stripe_unit, std::uint64_t stripe_count) {
  if (object_size == 0 || stripe_unit == 0 || stripe_count == 0) {
    return std::nullopt;
  }
  if (stripe_count == 1 || stripe_unit == object_size) {
    return ceil_div(size_bytes, object_size);
  }
  const auto period = checked_mul(object_size, stripe_count);
  const auto stripe = checked_mul(stripe_unit, stripe_count);
  if (!period || !stripe) {
    return std::nullopt;
  }
  const std::uint64_t periods = ceil_div(size_bytes, *period);
  const std::uint64_t remainder = size_bytes % *period;
  std::uint64_t missing = 0;
  if (remainder > 0 && remainder < *stripe) {
    missing = stripe_count - ceil_div(remainder, stripe_unit);
  }
  const auto objects = checked_mul(periods, stripe_count);
  if (!objects) {
    return std::nullopt;
  }
  return *objects - missing;
}

std::optional<std::uint64_t> map_objects(const DecodedHeader& header, std::uint64_t size_bytes) {
  return object_count(size_bytes, std::uint64_t{1} << header.order, header.stripe_unit,
                      header.stripe_count);
}

std::optional<std::uint64_t> object_map_bytes(const DecodedHeader& header,
                                              std::uint64_t size_bytes) {
  const std::optional<std::uint64_t> objects = map_objects(header, size_bytes);
  if (!objects) {
    return std::nullopt;
  }
  return ceil_div(*objects, 4);
}

MapReadAhead snapshot_maps_read_ahead(const DecodedHeader& header, std::uint64_t budget_bytes) {
  MapReadAhead read_ahead;
  if ((header.features & RBD_FEATURE_FAST_DIFF) == 0) {
    return read_ahead;  // no map is read: the usage is unknown
  }
  for (const HeaderSnapshot& snap : header.snapshots) {
    const std::optional<std::uint64_t> map_bytes = object_map_bytes(header, snap.size_bytes);
    if (!map_bytes || *map_bytes > budget_bytes - read_ahead.bytes) {
      break;
    }
    read_ahead.bytes += *map_bytes;
    read_ahead.snapshot_ids.push_back(snap.id);
  }
  return read_ahead;
}

namespace {

/// What librbd's object_map::DiffRequest has found of one object so far (DIFF_STATE_*).
enum class DiffState : std::uint8_t { none, hole, updated };

/// One step of DiffRequest: the map `next` against the one before it, into `diff`.
/// Objects past the end of `previous` (the image grew, or the diff starts from nothing)
/// count as written when they exist.
void diff_step(const ObjectStates& previous, const ObjectStates& next, ObjectStates& diff) {
  const auto hole = static_cast<std::uint8_t>(DiffState::hole);
  const auto updated = static_cast<std::uint8_t>(DiffState::updated);
  const std::uint64_t overlap = std::min(previous.size(), next.size());
  for (std::uint64_t i = 0; i < overlap; ++i) {
    const std::uint8_t before = previous[i];
    const std::uint8_t now = next[i];
    if (now == k_object_nonexistent) {
      if (before != k_object_nonexistent) {
        diff.set(i, hole);
      }
    } else if (now == k_object_exists ||
               (before != now && !(before == k_object_exists && now == k_object_exists_clean))) {
      diff.set(i, updated);
    }
  }
  for (std::uint64_t i = overlap; i < next.size(); ++i) {
    diff.set(
        i, next[i] == k_object_nonexistent ? static_cast<std::uint8_t>(DiffState::none) : updated);
  }
}

}  // namespace

std::optional<std::uint64_t> fast_diff_used_bytes(const SizedObjectMap* from,
                                                  const std::vector<SizedObjectMap>& chain,
                                                  std::uint64_t object_size) {
  if (object_size == 0 || chain.empty()) {
    return std::nullopt;
  }
  std::vector<SizedObjectMap> maps;
  maps.reserve(chain.size() + 1);
  if (from != nullptr) {
    maps.push_back(*from);
  }
  maps.insert(maps.end(), chain.begin(), chain.end());
  // The diff's states are packed as the maps' are (DiffState fits in 2 bits).
  ObjectStates diff;
  ObjectStates previous;
  // From a snapshot, its map is only what the next is diffed against; from nothing,
  // the first map is diffed against an empty one, so all it holds is new.
  bool diff_this_map = from == nullptr;
  for (const SizedObjectMap& map : maps) {
    const std::uint64_t objects = ceil_div(map.size_bytes, object_size);
    if (map.states == nullptr || map.states->size() < objects) {
      return std::nullopt;  // librbd: "object map too small"
    }
    // As DiffRequest: each map cut to its snapshot's objects, then padded with
    // nonexistent objects to the largest size so far (a shrink removes objects).
    ObjectStates current = *map.states;
    current.resize(objects, k_object_nonexistent);
    diff.resize(std::max(diff.size(), objects), static_cast<std::uint8_t>(DiffState::none));
    current.resize(diff.size(), k_object_nonexistent);
    if (diff_this_map) {
      diff_step(previous, current, diff);
    }
    diff_this_map = true;
    previous = std::move(current);
  }
  // The sum never exceeds size_bytes: each object adds at most what is left of it.
  const std::uint64_t size_bytes = chain.back().size_bytes;
  std::uint64_t used = 0;
  for (std::uint64_t i = 0; i < ceil_div(size_bytes, object_size); ++i) {
    if (diff[i] == static_cast<std::uint8_t>(DiffState::updated)) {
      used += std::min(object_size, size_bytes - i * object_size);
    }
  }
  return used;
}

}  // namespace rbdsync::ceph
