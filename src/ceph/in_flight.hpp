#pragma once

/// Inside ceph/ only: the bookkeeping of asynchronous operations in flight, shared by the
/// librbd batch (opens and closes) and the direct reader (header and object map reads).
/// A fixed set of slots, each free, in flight or ready; completion callbacks, which run
/// on librados/librbd threads and must never block there (ceph-notes.md, aio pitfalls),
/// only change their slot under the lock and wake the calling thread, which does the
/// real work.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace rbdsync::ceph {

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
  /// whoever waits. For callbacks and the calling thread alike.
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
    m_changed.notify_all();
  }

  /// Gives a slot the calling thread is done with back to the free ones.
  void release(std::size_t at) {
    update(at, [](Slot&) { return Then::free; });
  }

  /// Waits for a ready slot and returns it.
  std::size_t wait_ready() {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [this] { return !m_ready.empty(); });
    const std::size_t at = m_ready.front();
    m_ready.pop_front();
    return at;
  }

  /// Waits until a slot is free.
  void wait_free() {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [this] { return !m_free.empty(); });
  }

  /// Waits until `done(free_slots)` holds; it runs under the lock, so it may read any
  /// slot, each time one changes.
  template <typename Done>
  void wait_until(Done done) {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return done(m_free.size()); });
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
};

}  // namespace rbdsync::ceph
