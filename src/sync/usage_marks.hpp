#pragma once

/// The header versions at which the stored usage of images was read: what lets a sync
/// keep an idle image's stored usage instead of reading its object maps again.
///
/// Why that is safe. An image's object maps (the head's and its snapshots') are written
/// only by the holder of the image's exclusive lock (object-map requires exclusive-lock),
/// and taking or giving up that lock writes the lock's xattr on the header object, which
/// raises the header's RADOS version; so does any change of the header itself (a
/// snapshot, a resize, a flag). So when the header still has the version it had just
/// before the maps were read, and no one holds the lock now, no one wrote the maps since.
/// The source reads the maps only after the header read that gave the version, so a
/// mark never claims maps older than it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inventory/inventory.hpp"

namespace rbdsync::sync {

/// Makes `image` one whose stored usage is to be kept: usage_carried, and no usage of
/// its head or of any snapshot (the sink takes the stored one).
inline void keep_stored_usage(inventory::Image& image) {
  image.usage_carried = true;
  image.usage = {};
  for (inventory::Snapshot& snap : image.snapshots) {
    snap.usage = {};
  }
}

/// Image -> header version, for the images of a cluster whose stored usage was read from
/// their object maps. Held as a sorted vector of 16-byte entries, so a million images
/// cost 16 MiB, not a map of strings. Keys are 64-bit hashes: two stored images whose
/// keys collide are both dropped (read again). An image that meets another's entry by a
/// collision and also has a header of that very version (odds below 1e-7 a sync at a
/// million images) keeps its own stored usage, or gets unknown usage if it has none,
/// never the other image's: the sink keeps usage only from the same image's rows.
class UsageMarks {
 public:
  /// Adds one image's mark; call seal() when all are in.
  void add(std::int64_t pool_id, const std::string& pool_namespace, const std::string& image_id,
           std::uint64_t header_version) {
    m_marks.emplace_back(key(pool_id, pool_namespace, image_id), header_version);
  }

  /// Sorts the marks and drops every key met more than once. In place: a copy would be
  /// another 16 MiB at a million images.
  void seal() {
    std::sort(m_marks.begin(), m_marks.end());
    std::size_t kept = 0;
    for (std::size_t at = 0; at < m_marks.size();) {
      std::size_t end = at + 1;
      while (end < m_marks.size() && m_marks[end].first == m_marks[at].first) {
        ++end;
      }
      if (end == at + 1) {
        m_marks[kept++] = m_marks[at];
      }
      at = end;
    }
    m_marks.resize(kept);
  }

  /// The header version stored with the image's usage; none when it has none.
  std::optional<std::uint64_t> find(std::int64_t pool_id, const std::string& pool_namespace,
                                    const std::string& image_id) const {
    const std::uint64_t wanted = key(pool_id, pool_namespace, image_id);
    const auto at = std::lower_bound(m_marks.begin(), m_marks.end(), wanted,
                                     [](const std::pair<std::uint64_t, std::uint64_t>& mark,
                                        std::uint64_t k) { return mark.first < k; });
    if (at == m_marks.end() || at->first != wanted) {
      return std::nullopt;
    }
    return at->second;
  }

  std::size_t size() const { return m_marks.size(); }

 private:
  static std::uint64_t key(std::int64_t pool_id, const std::string& pool_namespace,
                           const std::string& image_id) {
    // The namespace's length keeps ("a", "bc") and ("ab", "c") apart.
    std::string whole = std::to_string(pool_id) + '/' + std::to_string(pool_namespace.size()) +
                        '/' + pool_namespace + '/' + image_id;
    return std::hash<std::string>{}(whole);
  }

  std::vector<std::pair<std::uint64_t, std::uint64_t>> m_marks;
};

}  // namespace rbdsync::sync
