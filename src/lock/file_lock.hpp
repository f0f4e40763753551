#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/fd.hpp"
#include "lock/lock_path.hpp"

namespace rbdsync::lock {

/// The guard that keeps two syncs from running at once: an exclusive flock(2) on one
/// lock file. Linux only (CMakeLists.txt refuses other systems).
///
/// flock(2) locks belong to the open file description. So two FileLock objects on one
/// path exclude each other even inside one process, and the lock disappears with the
/// descriptor when the holder exits or is killed, even by SIGKILL. POSIX fcntl(2)
/// record locks would be wrong here: they belong to the process (two objects in one
/// process would not exclude each other) and vanish when *any* descriptor of the file
/// is closed, e.g. by a library that merely reads it.
///
/// The lock file is never deleted. Deleting it lets a process that opened the old
/// inode and one that creates a new one each hold "the" lock at the same time.
///
/// Threads: the thread that holds the lock may take it again; this nests (only the
/// outermost acquire and release touch the file). Another thread of this process
/// gets "busy" from a non-blocking try, or waits for the release when it may wait.
class FileLock {
 public:
  using Clock = std::chrono::steady_clock;

  /// Opens (or creates) the lock file without locking it, read-write, through
  /// open_lock_path() (lock/lock_path.hpp): mode 0660 in a directory of mode 3770
  /// shared by `shared_group`, so every member of the group can take it. Throws
  /// Error(ExitCode::cant_create) for a path that cannot be opened or created, or that
  /// open_lock_path() refuses (a symlink on the way, a directory another user owns, a
  /// file that is not regular, ...).
  explicit FileLock(std::string path, std::string shared_group = k_shared_group);
  ~FileLock() = default;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  /// Takes the lock if it is free now. Returns false (at once) when another process,
  /// another FileLock object or another thread holds it; true when this thread now
  /// holds it (again). Throws Error(ExitCode::cant_create) if flock(2) itself fails.
  [[nodiscard]] bool try_lock() { return try_lock_until(Clock::now()); }

  /// Like try_lock(), but keeps trying until `deadline`.
  [[nodiscard]] bool try_lock_until(Clock::time_point deadline);

  /// Releases one level; the outermost release unlocks the file. Only the holding
  /// thread may call it (Error(ExitCode::internal) otherwise).
  void unlock();

  /// How many times the calling thread holds the lock (0: not at all).
  int depth() const;

  const std::string& path() const noexcept { return m_path; }
  /// The descriptor, for reading and writing the holder record.
  int fd() const noexcept { return m_fd.get(); }

 private:
  /// flock(2) on the file the path names: when the name was meanwhile given to another
  /// file, lets go and takes the lock on that one. False (errno set by flock) when busy.
  bool flock_named_file();

  std::string m_path;
  std::string m_shared_group;
  Fd m_fd;
  mutable std::mutex m_mutex;
  std::condition_variable m_released;
  std::thread::id m_owner;
  int m_depth = 0;
};

/// One acquisition of a FileLock, released on destruction.
class ScopedLock {
 public:
  /// Tries to take `lock`, waiting up to `wait` (zero: do not wait).
  /// Returns std::nullopt when it stayed busy.
  [[nodiscard]] static std::optional<ScopedLock> acquire(
      FileLock& lock, std::chrono::milliseconds wait = std::chrono::milliseconds(0));

  ScopedLock(ScopedLock&& other) noexcept : m_lock(other.m_lock) { other.m_lock = nullptr; }
  ScopedLock& operator=(ScopedLock&&) = delete;
  ScopedLock(const ScopedLock&) = delete;
  ScopedLock& operator=(const ScopedLock&) = delete;
  ~ScopedLock();

 private:
  explicit ScopedLock(FileLock& lock) : m_lock(&lock) {}
  FileLock* m_lock;
};

}  // namespace rbdsync::lock
