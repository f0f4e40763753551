#pragma once

/// Object maps: their objects decoded (BitVector<2>), their sizes as librbd lays an image
/// out, and the usage a fast diff of them gives, as `rbd du` computes it. Plain bytes in,
/// plain values out, as header_decoder.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ceph/wire/header_decoder.hpp"

namespace rbdsync::ceph {

/// The states of an object map's objects, packed as librbd packs them (BitVector<2>: 2
/// bits an object, four a byte, the first in the high bits): a large image's map takes
/// here what it takes in its object, a quarter of a byte an object (the example at
/// ceph/direct/direct_reader.hpp's k_map_bytes_in_flight).
class ObjectStates {
 public:
  ObjectStates() = default;
  /// `count` objects, each in `state`.
  ObjectStates(std::uint64_t count, std::uint8_t state) { resize(count, state); }
  /// `count` states packed in `packed`, which holds at least ceil(count / 4) bytes.
  static ObjectStates from_packed(std::string packed, std::uint64_t count);

  std::uint64_t size() const { return m_count; }
  std::uint8_t operator[](std::uint64_t at) const {
    return static_cast<std::uint8_t>((static_cast<unsigned char>(m_packed[at / 4]) >> shift(at)) &
                                     0x3);
  }
  void set(std::uint64_t at, std::uint8_t state);
  /// Cut to `count` objects, or grown to it with objects in `state`.
  void resize(std::uint64_t count, std::uint8_t state);
  bool operator==(const ObjectStates& other) const {
    return m_count == other.m_count && m_packed == other.m_packed;
  }

 private:
  static unsigned shift(std::uint64_t at) { return static_cast<unsigned>((3 - at % 4) * 2); }
  /// Zeroes the bits past the last object, so that equal states compare equal.
  void clear_tail();

  std::string m_packed;
  std::uint64_t m_count = 0;
};

/// The object states of an object map object (BitVector<2>: header, data, footer with
/// CRCs, which are not checked); nullopt when the bytes are not such an object.
std::optional<ObjectStates> decode_object_map(const std::string& bytes);

/// The first `objects` states of an object map object read only in part (its header,
/// then at least ceil(objects / 4) bytes of data): fewer when the map holds fewer;
/// nullopt when the bytes do not start such an object. What librbd's fast diff uses of
/// a map larger than the image: its first objects.
std::optional<ObjectStates> decode_object_map_head(const std::string& bytes, std::uint64_t objects);

/// The most bytes the object map object of `objects` objects can hold (BitVector<2>'s
/// header, data, and its footer with a CRC for each 4 KiB of data): what the direct
/// reader reads of it, so that an object planted larger costs no more than that.
std::uint64_t object_map_object_bytes(std::uint64_t objects);

/// One object map of a fast diff and the size of the snapshot (or head) it maps.
struct SizedObjectMap {
  const ObjectStates* states = nullptr;
  std::uint64_t size_bytes = 0;
};

/// Bytes `rbd du` reports for the snapshot or head whose object map is the last of
/// `chain`, diffed (whole objects, fast-diff) from the user snapshot whose map is `from`
/// (nullptr: from the image's first snapshot, as librbd diffs from nothing) through
/// every snapshot between them, in id order: librbd's object_map::DiffRequest loads the
/// maps of the group, trash and mirror snapshots in between too, and an object written
/// before one of them counts even where the end map says clean. nullopt when `chain` is
/// empty or a map is smaller than its snapshot needs (librbd then refuses the fast diff).
std::optional<std::uint64_t> fast_diff_used_bytes(const SizedObjectMap* from,
                                                  const std::vector<SizedObjectMap>& chain,
                                                  std::uint64_t object_size);

/// Objects an image of `size_bytes` spans (Striper::get_num_objects); nullopt for a
/// zero figure or when the count overflows.
std::optional<std::uint64_t> object_count(std::uint64_t size_bytes, std::uint64_t object_size,
                                          std::uint64_t stripe_unit, std::uint64_t stripe_count);

/// The objects of the map of `header`'s image at `size_bytes` (object_count() of its
/// layout); nullopt when the count overflows.
std::optional<std::uint64_t> map_objects(const DecodedHeader& header, std::uint64_t size_bytes);

/// The bytes of the object map of `header`'s image at `size_bytes` (2 bits an object,
/// librbd's BitVector data without its small header and footer); nullopt when the object
/// count overflows.
std::optional<std::uint64_t> object_map_bytes(const DecodedHeader& header,
                                              std::uint64_t size_bytes);

/// Snapshot object maps to read ahead, and what they come to together.
struct MapReadAhead {
  std::vector<std::uint64_t> snapshot_ids;
  std::uint64_t bytes = 0;  ///< 2 bits an object, as object_map_bytes()
};

/// The snapshots of `header` whose object maps may be read ahead, all at once, before the
/// fast diff walks them: the first ones, in the header's order, whose maps come to at
/// most `budget_bytes` together; none without fast-diff. The walk reads the others, if it
/// needs them, one at a time.
MapReadAhead snapshot_maps_read_ahead(const DecodedHeader& header, std::uint64_t budget_bytes);

}  // namespace rbdsync::ceph
