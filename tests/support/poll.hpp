#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

namespace rbdsync::testing {

/// Polls `condition` until it holds. `limit` only says when to give up: then it throws,
/// naming `what`, so that a test never goes on as if the event had come. `interval`
/// keeps the polling from crowding out what it waits for (a server ending a backend).
inline void wait_for(const std::string& what, const std::function<bool()>& condition,
                     std::chrono::seconds limit = std::chrono::seconds(30),
                     std::chrono::microseconds interval = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("waited " + std::to_string(limit.count()) + " s for " + what);
    }
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace rbdsync::testing
