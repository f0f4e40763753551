#pragma once

#include <chrono>

namespace rbdsync {

/// Seconds elapsed since `start`, on the monotonic clock: what a run reports as its
/// duration, unaffected by the wall clock being set meanwhile.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace rbdsync
