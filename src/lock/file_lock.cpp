#include "lock/file_lock.hpp"

#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "common/error.hpp"
#include "lock/lock_path.hpp"

namespace rbdsync::lock {

namespace {

// How often a waiting acquire retries a lock held by another process. flock(2) has no
// timed form; a blocking call would need a signal to interrupt it.
constexpr auto k_poll_interval = std::chrono::milliseconds(20);

// How many times a lock taken on a file whose name now points elsewhere is let go and
// taken again on what the name points at. More means someone keeps replacing it.
constexpr int k_max_replaced = 3;

}  // namespace

FileLock::FileLock(std::string path, std::string shared_group)
    : m_path(std::move(path)),
      m_shared_group(std::move(shared_group)),
      m_fd(open_lock_path(m_path, OpenMode::create, m_shared_group)) {}

bool FileLock::flock_named_file() {
  for (int replaced = 0;; ++replaced) {
    if (::flock(m_fd.get(), LOCK_EX | LOCK_NB) != 0) {
      return false;
    }
    // The name may have been given to another file between our open and the flock
    // (before the directory was sticky, or by the file's owner): a run that opens the
    // name now would lock that one, and both would go ahead. Lock what it names.
    if (names_open_file(m_path, m_fd.get(), m_shared_group)) {
      return true;
    }
    ::flock(m_fd.get(), LOCK_UN);
    if (replaced + 1 >= k_max_replaced) {
      throw Error(ExitCode::cant_create,
                  "lock file '" + m_path + "' was replaced by another file " +
                      std::to_string(k_max_replaced) + " times while it was being locked",
                  "something removes and recreates it: find it (the directory must be sticky, "
                  "mode 3770, so that members cannot remove each other's files)");
    }
    m_fd = open_lock_path(m_path, OpenMode::create, m_shared_group);
  }
}

bool FileLock::try_lock_until(Clock::time_point deadline) {
  std::unique_lock<std::mutex> guard(m_mutex);
  const auto me = std::this_thread::get_id();
  if (m_depth > 0 && m_owner == me) {
    ++m_depth;
    return true;
  }
  while (true) {
    // Another thread of ours holds it: the descriptor is shared, so flock(2) would
    // "succeed" for us too. Wait for that thread to let go instead.
    if (m_depth > 0) {
      if (Clock::now() >= deadline) {
        return false;
      }
      m_released.wait_until(guard, deadline);
      continue;
    }
    if (flock_named_file()) {
      m_owner = me;
      m_depth = 1;
      return true;
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno != EWOULDBLOCK) {
      const int error_number = errno;
      throw Error(ExitCode::cant_create,
                  "cannot lock '" + m_path + "': " + errno_text(error_number),
                  "put the lock file on a local filesystem that supports flock(2)");
    }
    if (Clock::now() >= deadline) {
      return false;
    }
    // Held by another process: retry soon. Waiting on the condition variable also
    // lets another thread of ours take its turn meanwhile.
    m_released.wait_until(guard, std::min(deadline, Clock::now() + k_poll_interval));
  }
}

void FileLock::unlock() {
  std::lock_guard<std::mutex> guard(m_mutex);
  if (m_depth == 0 || m_owner != std::this_thread::get_id()) {
    throw Error(ExitCode::internal,
                "lock '" + m_path + "' released by a thread that does not hold it",
                "report this as a bug");
  }
  if (--m_depth > 0) {
    return;
  }
  ::flock(m_fd.get(), LOCK_UN);
  m_owner = std::thread::id();
  m_released.notify_all();
}

int FileLock::depth() const {
  std::lock_guard<std::mutex> guard(m_mutex);
  return m_owner == std::this_thread::get_id() ? m_depth : 0;
}

std::optional<ScopedLock> ScopedLock::acquire(FileLock& lock, std::chrono::milliseconds wait) {
  if (!lock.try_lock_until(FileLock::Clock::now() + wait)) {
    return std::nullopt;
  }
  return ScopedLock(lock);
}

ScopedLock::~ScopedLock() {
  if (m_lock != nullptr) {
    try {
      m_lock->unlock();
    } catch (const Error&) {
      // Destructors never throw; the descriptor still releases the lock at exit.
    }
  }
}

}  // namespace rbdsync::lock
