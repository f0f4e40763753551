#pragma once

#include <cstddef>

#include "common/run_record.hpp"

namespace rbdsync::sync {

/// Told how far a sync got: at each phase change (listing to committing, Phase) and after
/// every image read.
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
