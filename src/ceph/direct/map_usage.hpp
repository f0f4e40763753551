#pragma once

/// The usage of an image's snapshots and head through their object maps, as librbd's fast
/// diff computes it: each user snapshot diffed from the one before, the head from the
/// last one, through the maps of the other snapshots between them.

#include <cstdint>
#include <string>
#include <vector>

#include <rados/librados.hpp>

#include "ceph/direct/image_reads.hpp"
#include "ceph/or_fallback.hpp"
#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/object_map.hpp"
#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

/// The usage of one snapshot or the head, the object map it ended with (empty when
/// none was needed), and, when a map of the range could not be used, why: the usage
/// is then unknown, and so is the next range's, which would diff from it.
struct RangeUsage {
  inventory::Usage usage;
  ObjectStates end_map;
  std::string unusable_map;
};

/// The object maps a fast diff loads: from the last user snapshot's (nullptr: from
/// nothing) through the maps of the snapshots `between`, to the end's: the map of
/// `end_snapshot`, or (nullptr) the head's bytes `end_bytes`, already read.
/// `from_unusable`: why the map to diff from could not be used, if it could not.
struct MapRange {
  const SizedObjectMap* from = nullptr;
  const std::vector<const HeaderSnapshot*>* between = nullptr;
  const HeaderSnapshot* end_snapshot = nullptr;
  const std::string* end_bytes = nullptr;
  std::uint64_t end_size = 0;
  std::string from_unusable;
};

/// Where the usage walk through an image's snapshots stands: the last user snapshot's
/// map (states nullptr before one), why it could not be used if it could not, the
/// snapshots since, and their flags.
struct UsageWalk {
  UsageWalk() = default;
  /// `previous` may point at `previous_states`: a copy would point at the original's.
  UsageWalk(const UsageWalk&) = delete;
  UsageWalk& operator=(const UsageWalk&) = delete;

  bool fast_diff = false;
  /// Marked only when the maps gave every usage: a usage left unknown (an invalid map)
  /// is not kept, so that a later --exact-usage computes it.
  bool maps_gave_all = false;
  std::uint64_t range_flags = 0;
  ObjectStates previous_states;
  SizedObjectMap previous;
  std::string previous_unusable;
  std::vector<const HeaderSnapshot*> between;

  /// The range from the last user snapshot to `end_snapshot`, or (nullptr) to the
  /// head's map bytes `end_bytes`.
  MapRange to(const HeaderSnapshot* end_snapshot, const std::string* end_bytes,
              std::uint64_t end_size) const {
    return {previous.states != nullptr ? &previous : nullptr,
            &between,
            end_snapshot,
            end_bytes,
            end_size,
            previous_unusable};
  }
};

/// The usage of ranges of one image, from its decoded header and the maps its slot read
/// (a snapshot's map that was not read ahead is read when the walk needs it).
class MapUsage {
 public:
  MapUsage(librados::IoCtx& io, const std::string& image_id, const DecodedHeader& header,
           const Slot& slot, bool exact_usage)
      : m_io(io),
        m_image_id(image_id),
        m_header(header),
        m_slot(slot),
        m_exact_usage(exact_usage) {}

  /// The usage of one snapshot or the head; a fallback when librbd must compute it.
  OrFallback<RangeUsage> usage(bool fast_diff, std::uint64_t range_flags, const MapRange& range,
                               const inventory::Image& image);

 private:
  /// An object map read as object_map_read_bytes() says, as states; or why it cannot be
  /// used for a snapshot (or head) of `size_bytes`.
  struct CheckedMap {
    ObjectStates states;
    std::string unusable;  ///< empty when `states` hold the map
  };

  /// `result` with its usage unknown because a map of the range cannot be used, for
  /// `reason`. Not librbd's to compute either: it would load the same object, whole,
  /// again. With --exact-usage librbd computes it, as for an invalid map.
  /// `root`: the reason as the next range carries it (default: `reason` itself).
  OrFallback<RangeUsage> unusable(RangeUsage result, const std::string& reason,
                                  const std::string& root = {}) const;
  /// `result` (its usage unknown) with the map of `end`, for the next range to diff from;
  /// or, when that map cannot be used either, why.
  OrFallback<RangeUsage> end_map_only(const HeaderSnapshot& end, RangeUsage result);
  static CheckedMap checked_map(const DecodedHeader& header, const std::string& bytes,
                                std::uint64_t size_bytes);
  /// The object map of snapshot `snap`, checked: read ahead when it was one of
  /// maps_wanted(), else read now, as many bytes as object_map_read_bytes() says; a
  /// fallback when it cannot be read.
  OrFallback<CheckedMap> snapshot_map(const HeaderSnapshot& snap);

  librados::IoCtx& m_io;
  const std::string& m_image_id;
  const DecodedHeader& m_header;
  const Slot& m_slot;
  bool m_exact_usage;
};

}  // namespace rbdsync::ceph
