#include "lock/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/error.hpp"

namespace rbdsync::lock {

namespace {

constexpr mode_t k_file_mode = 0660;
constexpr mode_t k_dir_mode = 0770;
constexpr int k_open_flags = O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW;
// How often a waiting acquire retries a lock held by another process. flock(2) has no
// timed form; a blocking call would need a signal to interrupt it.
constexpr auto k_poll_interval = std::chrono::milliseconds(20);

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) {
    return ".";
  }
  return slash == 0 ? "/" : path.substr(0, slash);
}

[[noreturn]] void throw_open_error(const std::string& path, int error_number) {
  if (error_number == ELOOP) {
    throw Error(ExitCode::cant_create, "lock file '" + path + "' is a symbolic link",
                "point --lock-file at a regular file; symlinks are refused so nobody can "
                "redirect the lock");
  }
  throw Error(ExitCode::cant_create,
              "cannot open lock file '" + path + "': " + errno_text(error_number),
              "check that its directory exists and that this user may write to it, or "
              "choose another path with --lock-file");
}

void make_parent_directory(const std::string& path) {
  const std::string dir = parent_of(path);
  if (::mkdir(dir.c_str(), k_dir_mode) == 0) {
    // mkdir(2) applies the umask; the directory is meant for the whole group.
    ::chmod(dir.c_str(), k_dir_mode);
    return;
  }
  if (errno == EEXIST) {
    return;
  }
  const int error_number = errno;
  throw Error(ExitCode::cant_create,
              "cannot create lock directory '" + dir + "': " + errno_text(error_number),
              "create it, writable by every user that starts syncs, or choose another "
              "path with --lock-file");
}

Fd open_lock_file(const std::string& path) {
  // O_EXCL first, so that only the process that really creates the file sets its mode.
  Fd fd(::open(path.c_str(), k_open_flags | O_CREAT | O_EXCL, k_file_mode));
  if (!fd && errno == ENOENT) {
    make_parent_directory(path);
    fd.reset(::open(path.c_str(), k_open_flags | O_CREAT | O_EXCL, k_file_mode));
  }
  if (fd) {
    // The umask may have cleared the group bits open(2) was asked for.
    ::fchmod(fd.get(), k_file_mode);
    return fd;
  }
  if (errno != EEXIST) {
    throw_open_error(path, errno);
  }
  fd.reset(::open(path.c_str(), k_open_flags));
  if (!fd) {
    throw_open_error(path, errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw_open_error(path, errno);
  }
  if (!S_ISREG(st.st_mode)) {
    throw Error(ExitCode::cant_create, "lock file '" + path + "' is not a regular file",
                "point --lock-file at a regular file");
  }
  return fd;
}

}  // namespace

FileLock::FileLock(std::string path) : m_path(std::move(path)), m_fd(open_lock_file(m_path)) {}

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
    if (::flock(m_fd.get(), LOCK_EX | LOCK_NB) == 0) {
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
