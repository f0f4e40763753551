#pragma once

#include <cstddef>

namespace rbdsync::sync {

/// The phases of a sync, in order.
enum class Phase { listing, reading, writing, committing };

/// The name of `phase` as it appears in holder records, JSON and the database.
constexpr const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::listing:
      return "listing";
    case Phase::reading:
      return "reading";
    case Phase::writing:
      return "writing";
    case Phase::committing:
      return "committing";
  }
  return "unknown";
}

/// Told how far a sync got: at each phase change and after every image read.
/// Implementations decide how often to pass it on (files, rows, a terminal line).
class ProgressObserver {
 public:
  virtual ~ProgressObserver() = default;
  /// `done` of `total` images; total is 0 until the images have been listed.
  virtual void on_progress(Phase phase, std::size_t done, std::size_t total) = 0;
};

}  // namespace rbdsync::sync
