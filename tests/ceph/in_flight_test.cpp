// InFlight::run_all() with threads standing in for librados/librbd completions: each job
// completes on its own thread after a delay that scrambles the order.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ceph/direct/map_budget.hpp"
#include "ceph/in_flight.hpp"

namespace rbdsync::ceph {
namespace {

struct Job {
  std::size_t number = 0;
};
using Jobs = InFlight<Job>;

/// Completes the job in slot `at` on a thread of its own after `delay`, as a callback would.
class Completions {
 public:
  explicit Completions(Jobs& jobs) : m_jobs(jobs) {}
  Completions(const Completions&) = delete;
  Completions& operator=(const Completions&) = delete;
  ~Completions() {
    for (std::thread& thread : m_threads) {
      thread.join();
    }
  }

  void complete_later(std::size_t at, std::chrono::milliseconds delay) {
    m_threads.emplace_back([this, at, delay] {
      std::this_thread::sleep_for(delay);
      ++m_completed;
      m_jobs.update(at, [](Job&) { return Jobs::Then::ready; });
    });
  }

  /// Frees slot `at` on a thread of its own after `delay`, as a librbd close does.
  void free_later(std::size_t at, std::chrono::milliseconds delay) {
    m_threads.emplace_back([this, at, delay] {
      std::this_thread::sleep_for(delay);
      m_jobs.update(at, [](Job&) { return Jobs::Then::free; });
    });
  }

  int completed() const { return m_completed; }

 private:
  Jobs& m_jobs;
  std::atomic<int> m_completed{0};
  std::vector<std::thread> m_threads;
};

std::chrono::milliseconds scrambled_delay(std::size_t job) {
  return std::chrono::milliseconds((job * 7) % 5);
}

TEST(InFlight, EveryJobIsReadyOnceWhateverOrderTheyComplete) {
  constexpr std::size_t k_jobs = 40;
  Jobs jobs(4);
  std::vector<int> times_ready(k_jobs, 0);
  {
    Completions completions(jobs);
    jobs.run_all(
        k_jobs,
        [&](std::size_t job) {
          if (job % 9 == 0) {
            ++times_ready[job];  // handled at once, as a format 1 image is
            return false;
          }
          const std::size_t at = jobs.take_free(/*renew=*/true);
          jobs.slot(at).number = job;
          completions.complete_later(at, scrambled_delay(job));
          return true;
        },
        [&](std::size_t at) {
          ++times_ready[jobs.slot(at).number];
          jobs.release(at);
        });
  }
  EXPECT_EQ(times_ready, std::vector<int>(k_jobs, 1));
}

/// Jobs of two stages in `slot_count` slots, each stage completing on a thread of its
/// own after a scrambled delay, and how many times each job came ready.
struct TwoStageJobs {
  TwoStageJobs(std::size_t job_count, std::size_t slot_count)
      : jobs(slot_count), times_ready(job_count, 0), second_stage(slot_count, false) {}

  /// run_all's `start`: job `job` takes a slot and its first stage begins.
  bool start(std::size_t job) {
    const std::size_t at = jobs.take_free(/*renew=*/true);
    jobs.slot(at).number = job;
    second_stage[at] = false;
    completions.complete_later(at, scrambled_delay(job));
    return true;
  }
  void start_second_stage(std::size_t at) {
    second_stage[at] = true;
    completions.complete_later(at, scrambled_delay(jobs.slot(at).number + 1));
  }
  /// Counts slot `at`'s job ready once more; its number.
  std::size_t came_ready(std::size_t at) {
    const std::size_t job = jobs.slot(at).number;
    ++times_ready[job];
    return job;
  }

  Jobs jobs;
  std::vector<int> times_ready;
  std::vector<bool> second_stage;  ///< by slot
  Completions completions{jobs};   ///< last: its threads are joined before the rest goes
};

/// Runs `job_count` jobs in `slot_count` slots, each completing on a thread of its own;
/// every `second_every`-th job starts a second completion once ready, as the direct
/// reader reads an image's snapshot maps once its header is in. A handled slot is given
/// back at once, or with `free_elsewhere` later on another thread, as a librbd close
/// frees it. How many times each job came ready.
std::vector<int> run_two_stage_jobs(std::size_t job_count, std::size_t slot_count,
                                    std::size_t second_every, bool free_elsewhere) {
  TwoStageJobs run(job_count, slot_count);
  run.jobs.run_all(
      job_count, [&](std::size_t job) { return run.start(job); },
      [&](std::size_t at) {
        const std::size_t job = run.came_ready(at);
        if (job % second_every == 0 && !run.second_stage[at]) {
          run.start_second_stage(at);
          return false;
        }
        if (free_elsewhere) {
          run.completions.free_later(at, scrambled_delay(job + 2));
        } else {
          run.jobs.release(at);
        }
        return true;
      });
  return run.times_ready;
}

TEST(InFlight, AJobWhoseReadyStartsMoreComesReadyAgainAndStillHoldsItsSlot) {
  const std::vector<int> times_ready = run_two_stage_jobs(30, 3, 2, /*free_elsewhere=*/false);
  // Twice for the even jobs: had a slot been handed to another job between its two
  // stages, that job's number would have replaced it and the counts would differ.
  for (std::size_t job = 0; job < times_ready.size(); ++job) {
    EXPECT_EQ(times_ready[job], job % 2 == 0 ? 2 : 1) << "job " << job;
  }
}

TEST(InFlight, ManySlotsWithSecondStagesAndSlotsFreedOnOtherThreadsRunEveryJob) {
  // As both readers at their size: 16 slots, so the calling thread waits for 4 ready at a
  // time; every slot is freed later on another thread (the librbd batch's closes), which
  // must wake the calling thread while jobs are left to start.
  const std::vector<int> times_ready = run_two_stage_jobs(150, 16, 3, /*free_elsewhere=*/true);
  for (std::size_t job = 0; job < times_ready.size(); ++job) {
    EXPECT_EQ(times_ready[job], job % 3 == 0 ? 2 : 1) << "job " << job;
  }
}

TEST(InFlight, AThreadWithNoReadySlotSleepsUntilAsManyAsItAskedForAreReady) {
  Jobs jobs(4);
  for (int i = 0; i < 4; ++i) {
    jobs.take_free(/*renew=*/false);
  }
  std::mutex log_mutex;
  std::vector<std::string> log;
  const auto note = [&](const char* what) {
    const std::lock_guard<std::mutex> lock(log_mutex);
    log.emplace_back(what);
  };
  std::thread completer([&] {
    for (std::size_t at = 0; at < 4; ++at) {
      // Spaced out, so that a waiter woken by the first would note so before the third.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      // Noted under the slots' lock, before the slot counts ready: never after a wake-up
      // it caused.
      jobs.update(at, [&](Job&) {
        note("ready");
        return Jobs::Then::ready;
      });
    }
  });
  EXPECT_EQ(jobs.wait_ready(3), 0U);
  note("woke");
  completer.join();
  const auto woke = std::find(log.begin(), log.end(), "woke");
  EXPECT_GE(std::count(log.begin(), woke, "ready"), 3);
  // With slots ready, it takes one at once, however many it asks for.
  EXPECT_EQ(jobs.wait_ready(3), 1U);
  EXPECT_EQ(jobs.wait_ready(3), 2U);
  EXPECT_EQ(jobs.wait_ready(3), 3U);
}

TEST(InFlight, AThrowingReadyWaitsForEveryJobInFlight) {
  Jobs jobs(4);
  Completions completions(jobs);
  int started = 0;
  EXPECT_THROW(jobs.run_all(
                   10,
                   [&](std::size_t job) {
                     const std::size_t at = jobs.take_free(/*renew=*/true);
                     // The first completes at once, the others while its ready() throws.
                     completions.complete_later(at, std::chrono::milliseconds(job == 0 ? 0 : 30));
                     ++started;
                     return true;
                   },
                   [&](std::size_t /*at*/) -> void { throw std::runtime_error("ready failed"); }),
               std::runtime_error);
  EXPECT_EQ(started, 4);
  EXPECT_EQ(completions.completed(), started);
}

/// Runs `job_count` jobs in `slot_count` slots as the direct reader runs images: once a
/// job's first stage is ready it asks a MapBudget of `budget` for one unit and, when none
/// is left, is parked until a finishing job's release starts it. `throw_at`: the ready of
/// that job's second stage throws. How many times each job came ready.
std::vector<int> run_parking_jobs(std::size_t job_count, std::size_t slot_count,
                                  std::uint64_t budget_units, std::size_t throw_at = SIZE_MAX) {
  TwoStageJobs run(job_count, slot_count);
  MapBudget budget(budget_units);
  run.jobs.run_all(
      job_count, [&](std::size_t job) { return run.start(job); },
      [&](std::size_t at) {
        const std::size_t job = run.came_ready(at);
        if (!run.second_stage[at]) {
          if (budget.ask(at, 1)) {
            run.start_second_stage(at);
          }
          return false;  // started, or parked until a release starts it
        }
        if (job == throw_at) {
          throw std::runtime_error("ready failed");
        }
        run.jobs.release(at);
        budget.release(1, [&](std::size_t next) { run.start_second_stage(next); });
        return true;
      },
      [&budget] { return budget.waiting(); });
  return run.times_ready;
}

TEST(InFlight, JobsParkedByTheirReadyAreStartedByALaterOneAndEveryJobRuns) {
  // 16 slots and one unit: nearly every job waits parked for the one in its second stage.
  // Were the thread to sleep for a quarter of all jobs holding a slot (4), it would wait
  // for ever for the one that can come.
  const std::vector<int> times_ready = run_parking_jobs(60, 16, 1);
  EXPECT_EQ(times_ready, std::vector<int>(60, 2));
  // More units than slots: nothing parks.
  EXPECT_EQ(run_parking_jobs(60, 16, 100), std::vector<int>(60, 2));
}

TEST(InFlight, AThrowingReadyWithJobsParkedWaitsOnlyForThoseReallyInFlight) {
  // Job 3's second stage throws while most others are parked: they never come ready, and
  // waiting for them would never end; every completion started still comes in (the
  // Completions' threads are joined) before the exception leaves.
  EXPECT_THROW(run_parking_jobs(60, 16, 1, /*throw_at=*/3), std::runtime_error);
}

TEST(InFlight, AllJobsParkedIsAnErrorNotAHang) {
  Jobs jobs(2);
  Completions completions(jobs);
  EXPECT_THROW(jobs.run_all(
                   2,
                   [&](std::size_t /*job*/) {
                     completions.complete_later(jobs.take_free(/*renew=*/true),
                                                std::chrono::milliseconds(0));
                     return true;
                   },
                   [](std::size_t /*at*/) { return false; },  // parks, and never starts
                   [] { return std::size_t{2}; }),
               std::logic_error);
}

}  // namespace
}  // namespace rbdsync::ceph
