// The direct reader's bound on object map bytes in flight (ceph/direct/map_budget.hpp, #18):
// maps start while they fit, wait in the order they asked, start as others are done
// with, and a wait always ends, even for maps larger than the whole budget.

#include "ceph/direct/map_budget.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace rbdsync::ceph {
namespace {

using Slots = std::vector<std::size_t>;

/// release(`bytes`), and the slots it started, in order.
Slots release(MapBudget& budget, std::uint64_t bytes) {
  Slots started;
  budget.release(bytes, [&](std::size_t slot) { started.push_back(slot); });
  return started;
}

TEST(MapBudget, MapsStartWhileTheyFitAndWaitInTheOrderTheyAskedOnceTheyDoNot) {
  MapBudget budget(100);
  EXPECT_TRUE(budget.ask(0, 60));
  EXPECT_TRUE(budget.ask(1, 40));
  EXPECT_EQ(budget.in_flight(), 100U);
  EXPECT_FALSE(budget.ask(2, 1));
  // Once one waits, later ones wait behind it even when they would fit: none overtakes.
  EXPECT_EQ(release(budget, 40), Slots{2});
  EXPECT_FALSE(budget.ask(3, 50));
  EXPECT_FALSE(budget.ask(4, 1));
  EXPECT_EQ(budget.waiting(), 2U);
  EXPECT_EQ(budget.in_flight(), 61U);
  EXPECT_EQ(release(budget, 60), (Slots{3, 4}));
  EXPECT_EQ(budget.in_flight(), 52U);
  EXPECT_EQ(budget.waiting(), 0U);
}

TEST(MapBudget, MapsLargerThanTheBudgetStartAloneAndOthersWaitForThem) {
  MapBudget budget(100);
  EXPECT_TRUE(budget.ask(0, 10));
  EXPECT_FALSE(budget.ask(1, 1000));
  EXPECT_FALSE(budget.ask(2, 10));
  EXPECT_EQ(release(budget, 10), Slots{1});
  EXPECT_EQ(budget.in_flight(), 1000U);
  EXPECT_EQ(release(budget, 1000), Slots{2});
  // With nothing in flight, anything starts at once.
  EXPECT_EQ(release(budget, 10), Slots{});
  EXPECT_TRUE(budget.ask(3, 5000));
}

TEST(MapBudget, EveryWaitEndsWhateverTheSizesAndTheOrderOfRelease) {
  // Slots asking with sizes around the budget, released in an order of their own: all
  // start, the bound holds but for one lone large map, and nothing waits at the end.
  constexpr std::uint64_t k_limit = 1000;
  MapBudget budget(k_limit);
  std::vector<std::uint64_t> bytes_of;
  std::vector<std::size_t> running;
  std::size_t started = 0;
  const auto started_now = [&](std::size_t slot) {
    running.push_back(slot);
    ++started;
    EXPECT_TRUE(budget.in_flight() <= k_limit || running.size() == 1) << budget.in_flight();
  };
  std::uint64_t seed = 12345;
  for (std::size_t slot = 0; slot < 2000; ++slot) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    bytes_of.push_back(1 + (seed >> 33U) % (k_limit + k_limit / 2));
    if (budget.ask(slot, bytes_of.back())) {
      started_now(slot);
    }
    // Every third ask, the oldest running maps are done with.
    if (slot % 3 == 2 && !running.empty()) {
      const std::size_t done = running.front();
      running.erase(running.begin());
      for (const std::size_t next : release(budget, bytes_of[done])) {
        started_now(next);
      }
    }
    // Whenever one waits, maps are in flight: their release will start it.
    EXPECT_TRUE(budget.waiting() == 0 || !running.empty());
  }
  while (!running.empty()) {
    const std::size_t done = running.front();
    running.erase(running.begin());
    for (const std::size_t next : release(budget, bytes_of[done])) {
      started_now(next);
    }
  }
  EXPECT_EQ(started, bytes_of.size());
  EXPECT_EQ(budget.waiting(), 0U);
  EXPECT_EQ(budget.in_flight(), 0U);
}

TEST(MapBudget, ASlotWhoseStartThrowsIsStillWaitingAndSoAreThoseBehindIt) {
  MapBudget budget(100);
  EXPECT_TRUE(budget.ask(0, 100));
  EXPECT_FALSE(budget.ask(1, 10));
  EXPECT_FALSE(budget.ask(2, 10));
  EXPECT_THROW(budget.release(100, [](std::size_t) { throw std::runtime_error("no start"); }),
               std::runtime_error);
  // The reader's loop counts waiting slots as parked: none may be lost by the throw.
  EXPECT_EQ(budget.waiting(), 2U);
  EXPECT_EQ(budget.in_flight(), 0U);
  EXPECT_EQ(release(budget, 0), (Slots{1, 2}));
}

}  // namespace
}  // namespace rbdsync::ceph
