#pragma once

#include <optional>
#include <string>

#include "common/fd.hpp"

namespace rbdsync::lock {

/// The guard that keeps two syncs from running at once: an exclusive flock(2) on one
/// lock file, held for as long as this object lives.
///
/// flock(2) locks belong to the open file description, not to the process, so two
/// guards on one path exclude each other even inside one process, and the lock goes
/// away with the descriptor when the holder exits or is killed. POSIX fcntl(2) record
/// locks would be wrong here: they belong to the process and vanish when *any*
/// descriptor of the file is closed.
///
/// The lock file is never deleted. A process that deletes it while another waits to
/// lock it lets the two lock different inodes and both "hold" the guard.
class FlockGuard {
 public:
  /// Opens the lock file (creating it, and its missing parent directory, with mode
  /// 0660/0770) and tries `flock(LOCK_EX | LOCK_NB)` once.
  /// Returns the held guard, or std::nullopt when another holder has it.
  /// Throws Error(ExitCode::cant_create) when the file cannot be opened or created
  /// (missing permissions, a symlink, not a regular file): never "already running".
  [[nodiscard]] static std::optional<FlockGuard> try_acquire(const std::string& path);

  FlockGuard(FlockGuard&&) noexcept = default;
  FlockGuard& operator=(FlockGuard&&) noexcept = default;
  FlockGuard(const FlockGuard&) = delete;
  FlockGuard& operator=(const FlockGuard&) = delete;
  /// Closing the descriptor releases the lock; no explicit unlock is needed.
  ~FlockGuard() = default;

  const std::string& path() const noexcept { return m_path; }

 private:
  FlockGuard(Fd fd, std::string path) : m_fd(std::move(fd)), m_path(std::move(path)) {}

  Fd m_fd;
  std::string m_path;
};

}  // namespace rbdsync::lock
