#include "ceph/direct/map_usage.hpp"

#include <utility>

#include "ceph/librbd_rules.hpp"
#include "ceph/wire/pool_objects.hpp"

namespace rbdsync::ceph {

using inventory::Image;

OrFallback<RangeUsage> MapUsage::usage(bool fast_diff, std::uint64_t range_flags,
                                       const MapRange& range, const Image& image) {
  RangeUsage result;
  result.usage.unknown_reason = unknown_usage_reason(fast_diff, range_flags);
  if (!result.usage.unknown_reason.empty()) {
    if (m_exact_usage) {
      return OrFallback<RangeUsage>::fall_back(Fallback::exact_usage_without_map);
    }
    if (fast_diff && range.end_snapshot != nullptr &&
        (range.end_snapshot->flags & k_invalid_map_flags) == 0) {
      // An invalid map earlier in the range makes this usage unknown, not the next
      // one's, which diffs from this snapshot's own valid map (as librbd does).
      return end_map_only(*range.end_snapshot, std::move(result));
    }
    return OrFallback<RangeUsage>::of(std::move(result));
  }
  if (!range.from_unusable.empty()) {
    // The root reason travels on unchanged: a prefix added again at every snapshot
    // would grow without end.
    return unusable(std::move(result), "the snapshot before: " + range.from_unusable,
                    range.from_unusable);
  }
  std::vector<ObjectStates> maps;
  maps.reserve(range.between->size() + 1);
  for (const HeaderSnapshot* snap : *range.between) {
    auto map = snapshot_map(*snap);
    if (!map.ok()) {
      return map.carry<RangeUsage>();
    }
    if (!map.value->unusable.empty()) {
      return unusable(std::move(result), map.value->unusable);
    }
    maps.push_back(std::move(map.value->states));
  }
  CheckedMap end;
  if (range.end_snapshot != nullptr) {
    auto map = snapshot_map(*range.end_snapshot);
    if (!map.ok()) {
      return map.carry<RangeUsage>();
    }
    end = std::move(*map.value);
  } else {
    end = checked_map(m_header, *range.end_bytes, range.end_size);
  }
  if (!end.unusable.empty()) {
    return unusable(std::move(result), end.unusable);
  }
  maps.push_back(std::move(end.states));
  std::vector<SizedObjectMap> chain;
  for (std::size_t at = 0; at < range.between->size(); ++at) {
    chain.push_back({&maps[at], (*range.between)[at]->size_bytes});
  }
  chain.push_back({&maps.back(), range.end_size});
  const auto used = fast_diff_used_bytes(range.from, chain, image.object_size);
  if (!used) {
    return unusable(std::move(result), "object map smaller than the image");
  }
  result.usage.used_bytes = used;
  result.end_map = std::move(maps.back());
  return OrFallback<RangeUsage>::of(std::move(result));
}

OrFallback<RangeUsage> MapUsage::unusable(RangeUsage result, const std::string& reason,
                                          const std::string& root) const {
  if (m_exact_usage) {
    return OrFallback<RangeUsage>::fall_back(Fallback::exact_usage_without_map);
  }
  result.usage.unknown_reason = reason;
  result.unusable_map = root.empty() ? reason : root;
  return OrFallback<RangeUsage>::of(std::move(result));
}

OrFallback<RangeUsage> MapUsage::end_map_only(const HeaderSnapshot& end, RangeUsage result) {
  auto map = snapshot_map(end);
  if (!map.ok()) {
    return map.carry<RangeUsage>();
  }
  if (map.value->unusable.empty()) {
    result.end_map = std::move(map.value->states);
  } else {
    result.unusable_map = map.value->unusable;
  }
  return OrFallback<RangeUsage>::of(std::move(result));
}

MapUsage::CheckedMap MapUsage::checked_map(const DecodedHeader& header, const std::string& bytes,
                                           std::uint64_t size_bytes) {
  const std::optional<std::uint64_t> objects = map_objects(header, size_bytes);
  if (!objects || *objects > k_max_object_map_objects) {
    return {{}, "object map of more objects than librbd allows"};
  }
  // The read asked for one byte more than such a map can hold. Got it, the object is
  // larger: an interrupted shrink (librbd writes the header's size first), or bytes
  // planted behind it. Its first objects are the image's, as librbd's fast diff cuts
  // it; the rest was never read.
  std::optional<ObjectStates> states = bytes.size() > object_map_object_bytes(*objects)
                                           ? decode_object_map_head(bytes, *objects)
                                           : decode_object_map(bytes);
  if (!states) {
    return {{}, "object map does not decode"};
  }
  if (states->size() < *objects) {
    return {{}, "object map smaller than the image"};  // librbd: "object map too small"
  }
  return {std::move(*states), {}};
}

OrFallback<MapUsage::CheckedMap> MapUsage::snapshot_map(const HeaderSnapshot& snap) {
  librados::bufferlist now;
  const librados::bufferlist* bytes = &now;
  int r = 0;
  const auto read = m_slot.snapshot_maps.find(snap.id);
  if (read != m_slot.snapshot_maps.end()) {
    r = read->second.done->get_return_value() < 0 ? read->second.done->get_return_value()
                                                  : read->second.r;
    bytes = &read->second.bytes;
  } else {
    r = m_io.read(object_map_name(m_image_id, snap.id), now,
                  object_map_read_bytes(m_header, snap.size_bytes), 0);
  }
  if (r < 0) {
    return OrFallback<CheckedMap>::fall_back(Fallback::snapshot_map_unreadable);
  }
  return OrFallback<CheckedMap>::of(checked_map(m_header, bytes->to_str(), snap.size_bytes));
}

}  // namespace rbdsync::ceph
