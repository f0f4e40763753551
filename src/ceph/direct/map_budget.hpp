#pragma once

/// Inside ceph/ only: how many object map bytes the direct reader reads at once. A slot
/// count bounds the images in flight, not their maps, and a large image's map is large
/// (the example at direct_reader.hpp's k_map_bytes_in_flight, the budget's size). Images
/// whose maps would pass the budget wait, in the order they asked, until maps in flight
/// are done with.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>

namespace rbdsync::ceph {

class MapBudget {
 public:
  explicit MapBudget(std::uint64_t limit) : m_limit(limit) {}

  /// Slot `at` asks to read maps of `bytes`: true when they may start now (counted in
  /// flight from here on); false when they wait for release() to hand them out. Maps
  /// larger than the whole budget start when no other maps are in flight, so a wait
  /// always ends: whenever one waits, maps are in flight, and their release comes.
  bool ask(std::size_t at, std::uint64_t bytes) {
    if (m_waiting.empty() && fits(bytes)) {
      m_in_flight += bytes;
      return true;
    }
    m_waiting.emplace_back(at, bytes);
    return false;
  }

  /// Maps of `bytes` that were in flight are done with. Starts the waiting slots that fit
  /// now, in the order they asked: `start(slot)`, after which each counts in flight. A
  /// slot leaves the queue only once `start` returned, so one whose start throws is still
  /// waiting (waiting() still counts it), and so are those behind it.
  template <typename Start>
  void release(std::uint64_t bytes, Start start) {
    m_in_flight -= bytes;
    while (!m_waiting.empty() && fits(m_waiting.front().second)) {
      start(m_waiting.front().first);
      m_in_flight += m_waiting.front().second;
      m_waiting.pop_front();
    }
  }

  std::uint64_t in_flight() const { return m_in_flight; }
  std::size_t waiting() const { return m_waiting.size(); }

 private:
  bool fits(std::uint64_t bytes) const {
    return m_in_flight == 0 || (m_in_flight <= m_limit && bytes <= m_limit - m_in_flight);
  }

  const std::uint64_t m_limit;
  std::uint64_t m_in_flight = 0;
  std::deque<std::pair<std::size_t, std::uint64_t>> m_waiting;  ///< (slot, bytes)
};

}  // namespace rbdsync::ceph
