#pragma once

/// Inside ceph/ only: the bookkeeping of asynchronous operations in flight, shared by the
/// librbd batch (opens and closes) and the direct reader (header and object map reads).
/// A fixed set of slots, each free, in flight or ready; completion callbacks, which run
/// on librados/librbd threads and must never block there (a blocked callback holds up
/// every completion queued behind it on the client's finisher thread),
/// only change their slot under the lock and wake the calling thread, which does the
/// real work. run_all() is the loop both use: start jobs while a slot is free, handle
/// each as it comes ready. A thread that runs out of ready slots sleeps until a quarter
/// of those in flight are ready, not one (or, while jobs are left to start, until a slot
/// comes free): each wake-up is a futex call and a context switch, dear on a VM (#18).

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace rbdsync::ceph {

/// Owns an aio completion: librados' and librbd's are reference-counted and released,
/// never deleted.
template <typename Completion>
struct CompletionRelease {
  void operator()(Completion* completion) const { completion->release(); }
};
template <typename Completion>
using CompletionPtr = std::unique_ptr<Completion, CompletionRelease<Completion>>;

template <typename Slot>
class InFlight {
 public:
  /// What a change of a slot makes of it.
  enum class Then {
    wait,   ///< still in flight
    ready,  ///< queued for wait_ready()
    free,   ///< back to the free slots
  };

  explicit InFlight(std::size_t size) : m_args(size) {
    for (std::size_t i = 0; i < size; ++i) {
      m_slots.push_back(std::make_unique<Slot>());
      m_args[i] = Arg{this, i};
      m_free.push_back(i);
    }
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  ~InFlight() = default;

  /// The argument to give a completion callback of slot `at`; from_callback() undoes it.
  void* callback_arg(std::size_t at) { return &m_args[at]; }
  static std::pair<InFlight&, std::size_t> from_callback(void* arg) {
    auto* found = static_cast<Arg*>(arg);
    return {*found->owner, found->at};
  }

  /// The slot itself. Fields that callbacks change are touched only inside update()
  /// or wait_until().
  Slot& slot(std::size_t at) { return *m_slots[at]; }
  std::size_t size() const { return m_slots.size(); }

  bool has_free() {
    std::lock_guard lock(m_mutex);
    return !m_free.empty();
  }

  /// Takes a free slot (has_free() must hold), as a new Slot when `renew` (an operation
  /// object cannot be reused), and returns its index.
  std::size_t take_free(bool renew) {
    std::size_t at = 0;
    {
      std::lock_guard lock(m_mutex);
      at = m_free.front();
      m_free.pop_front();
    }
    if (renew) {
      m_slots[at] = std::make_unique<Slot>();
    }
    return at;
  }

  /// Runs `change(slot)` under the lock and files the slot as it says (Then), waking
  /// whoever waits for what this change may give. For callbacks and the calling thread
  /// alike.
  template <typename Change>
  void update(std::size_t at, Change change) {
    std::lock_guard lock(m_mutex);
    switch (change(*m_slots[at])) {
      case Then::wait:
        break;
      case Then::ready:
        m_ready.push_back(at);
        break;
      case Then::free:
        m_free.push_back(at);
        break;
    }
    if (m_other_waiters > 0 || m_ready.size() >= m_ready_wanted ||
        (m_wake_on_free && !m_free.empty())) {
      m_changed.notify_all();
    }
  }

  /// Gives a slot the calling thread is done with back to the free ones.
  void release(std::size_t at) {
    update(at, [](Slot&) { return Then::free; });
  }

  /// Returns a ready slot; when there is none, sleeps until `wanted` are (at least one).
  /// `wanted` must not pass the slots that are still to come ready, or this never returns.
  std::size_t wait_ready(std::size_t wanted = 1) {
    return *wait_ready_or_free(wanted, /*or_free=*/false);
  }

  /// As wait_ready(), but with `or_free` it also wakes when a slot comes free (a librbd
  /// close that finished on librbd's thread) and then returns std::nullopt, so that the
  /// caller starts more jobs rather than leave the slot idle.
  std::optional<std::size_t> wait_ready_or_free(std::size_t wanted, bool or_free) {
    std::unique_lock lock(m_mutex);
    if (m_ready.empty()) {
      m_ready_wanted = std::max<std::size_t>(wanted, 1);
      m_wake_on_free = or_free;
      m_changed.wait(
          lock, [&] { return m_ready.size() >= m_ready_wanted || (or_free && !m_free.empty()); });
      m_ready_wanted = 1;
      m_wake_on_free = false;
      if (m_ready.empty()) {
        return std::nullopt;
      }
    }
    const std::size_t at = m_ready.front();
    m_ready.pop_front();
    return at;
  }

  /// Waits until a slot is free.
  void wait_free() {
    wait_until([](std::size_t free_slots) { return free_slots > 0; });
  }

  /// Waits until `done(free_slots)` holds; it runs under the lock, so it may read any
  /// slot, each time one changes.
  template <typename Done>
  void wait_until(Done done) {
    std::unique_lock lock(m_mutex);
    ++m_other_waiters;
    m_changed.wait(lock, [&] { return done(m_free.size()); });
    --m_other_waiters;
  }

  /// Runs jobs 0 .. count-1 with as many in flight as there are slots: `start(job)` says
  /// whether it took a slot (one that will come ready), `ready(at)` handles a ready slot
  /// and gives it back; or, when it returns false, has started more operations on it, so
  /// that it comes ready again. When all slots are busy it waits for a free one. When `start` or
  /// `ready` throws, every job in flight is waited for before the exception leaves; the
  /// slot's owner still cleans up what those jobs left (their destructor).
  template <typename Start, typename Ready>
  void run_all(std::size_t count, Start start, Ready ready) {
    run_all(count, start, ready, [] { return std::size_t{0}; });
  }

  /// As above, for a `ready` that may also park a job: return false having started
  /// nothing on its slot, and start it in a later `ready` call (the direct reader's images
  /// waiting for the map budget). `parked()` says how many jobs are parked. They come
  /// ready only once started, and only this thread starts them: so it sleeps for a
  /// quarter of the jobs really in flight, not of all, and on an exception waits for
  /// those alone. A parked job's slot stays taken; its owner cleans it up.
  template <typename Start, typename Ready, typename Parked>
  void run_all(std::size_t count, Start start, Ready ready, Parked parked) {
    std::size_t next = 0;
    std::size_t in_flight = 0;  ///< jobs holding a slot, parked ones included
    const auto outstanding = [&] { return in_flight - std::min(in_flight, parked()); };
    try {
      while (next < count || in_flight > 0) {
        while (next < count && has_free()) {
          if (start(next++)) {
            ++in_flight;
          }
        }
        if (in_flight == 0) {
          wait_free();  // every slot is busy without a job of ours: one is finishing
          continue;
        }
        const std::size_t coming = outstanding();
        if (coming == 0) {
          // Nothing would ever wake this thread: a bug of the caller's, not a hang.
          throw std::logic_error("every job in flight is parked, so none can come ready");
        }
        // Every job in flight but the parked comes ready: waiting for a quarter is safe.
        const std::optional<std::size_t> ready_at =
            wait_ready_or_free(std::max<std::size_t>(coming / 4, 1), /*or_free=*/next < count);
        if (!ready_at) {
          continue;  // a slot came free: start more
        }
        const std::size_t at = *ready_at;
        --in_flight;  // first: a `ready` that throws has nothing more in flight
        if constexpr (std::is_void_v<std::invoke_result_t<Ready&, std::size_t>>) {
          ready(at);
        } else if (!ready(at)) {
          ++in_flight;
        }
      }
    } catch (...) {
      for (std::size_t coming = outstanding(); coming > 0; --coming) {
        wait_ready();
      }
      throw;
    }
  }

 private:
  struct Arg {
    InFlight* owner = nullptr;
    std::size_t at = 0;
  };

  std::vector<Arg> m_args;  ///< the callbacks' arguments, one per slot; never resized
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<std::unique_ptr<Slot>> m_slots;
  std::deque<std::size_t> m_free;
  std::deque<std::size_t> m_ready;
  std::size_t m_ready_wanted = 1;   ///< ready slots the thread in wait_ready() sleeps for
  bool m_wake_on_free = false;      ///< ... or does it also wake for a free slot
  std::size_t m_other_waiters = 0;  ///< threads in wait_until(), woken by every change
};

}  // namespace rbdsync::ceph
