#pragma once

#include <array>
#include <cstddef>
#include <utility>

namespace rbdsync::sync {

/// The phases of a sync, in order.
enum class Phase { listing, reading, writing, committing };

/// Every phase with its name as it appears in holder records, JSON and the database.
inline constexpr std::array<std::pair<Phase, const char*>, 4> k_phase_names = {{
    {Phase::listing, "listing"},
    {Phase::reading, "reading"},
    {Phase::writing, "writing"},
    {Phase::committing, "committing"},
}};

/// The name of `phase` (k_phase_names).
constexpr const char* phase_name(Phase phase) {
  for (const auto& entry : k_phase_names) {
    if (entry.first == phase) {
      return entry.second;
    }
  }
  return "unknown";
}

/// Told how far a sync got: at each phase change and after every image read.
/// Implementations decide how often to pass it on (files, rows, a terminal line).
class ProgressObserver {
 public:
  virtual ~ProgressObserver() = default;
  /// `done` of `total` images; total is 0 until the images have been counted. The count
  /// comes before the reads: when images created since make done reach it, total grows
  /// with done (never done > total), and once reading is over total is what was met.
  virtual void on_progress(Phase phase, std::size_t done, std::size_t total) = 0;
};

}  // namespace rbdsync::sync
