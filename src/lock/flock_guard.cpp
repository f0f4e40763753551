#include "lock/flock_guard.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/error.hpp"

namespace rbdsync::lock {

namespace {

constexpr mode_t k_file_mode = 0660;
constexpr mode_t k_dir_mode = 0770;

// cron (root), the web backend's user and admins share one lock file, so the file is
// group-writable whatever the umask of whoever created it first.
constexpr int k_open_flags = O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW;

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
              "check that the directory exists and that this user may write to it, or "
              "choose another path with --lock-file");
}

void make_parent_directory(const std::string& path) {
  const std::string dir = parent_of(path);
  if (::mkdir(dir.c_str(), k_dir_mode) == 0) {
    // mkdir(2) applies the umask; the directory is shared by the group on purpose.
    ::chmod(dir.c_str(), k_dir_mode);
    return;
  }
  if (errno == EEXIST) {
    return;
  }
  const int error_number = errno;
  throw Error(ExitCode::cant_create,
              "cannot create lock directory '" + dir + "': " + errno_text(error_number),
              "create it (writable by every user that starts syncs) or choose another "
              "path with --lock-file");
}

Fd open_lock_file(const std::string& path) {
  // O_EXCL first, so that the one process that really creates the file sets its mode.
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
  return fd;
}

}  // namespace

std::optional<FlockGuard> FlockGuard::try_acquire(const std::string& path) {
  Fd fd = open_lock_file(path);

  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw_open_error(path, errno);
  }
  if (!S_ISREG(st.st_mode)) {
    throw Error(ExitCode::cant_create, "lock file '" + path + "' is not a regular file",
                "point --lock-file at a regular file");
  }

  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return std::nullopt;
    }
    if (errno != EINTR) {
      const int error_number = errno;
      throw Error(ExitCode::cant_create, "cannot lock '" + path + "': " + errno_text(error_number),
                  "put the lock file on a local filesystem that supports flock(2)");
    }
  }
  return FlockGuard(std::move(fd), path);
}

}  // namespace rbdsync::lock
