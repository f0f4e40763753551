#include "common/fd.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace rbdsync {

namespace {

/// close_range(2) of [first, last]; false when the kernel refuses the call itself.
bool close_range_of(unsigned first, unsigned last) {
  return ::close_range(first, last, 0) == 0;
}

/// Closes each descriptor above 2 but `keep` that /proc/self/fd lists, read with
/// getdents64(2) into a buffer on the stack. False when /proc cannot be read.
bool close_listed(int keep) {
  const int directory = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory < 0) {
    return false;
  }
  // Closing while listing is safe: the directory is read again from where it was, and a
  // closed descriptor only disappears from what is still to come.
  alignas(8) char buffer[4096];
  for (;;) {
    const long got = ::syscall(SYS_getdents64, directory, buffer, sizeof buffer);
    if (got <= 0) {
      break;
    }
    for (long at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const dirent64*>(buffer + at);
      at += entry->d_reclen;
      int fd = 0;
      bool number = entry->d_name[0] != '\0';
      for (const char* c = entry->d_name; number && *c != '\0'; ++c) {
        number = *c >= '0' && *c <= '9' && fd < 200000000;  // below 2^31 after * 10
        fd = fd * 10 + (*c - '0');
      }
      if (number && fd > 2 && fd != keep && fd != directory) {
        ::close(fd);
      }
    }
  }
  ::close(directory);
  return true;
}

}  // namespace

void close_inherited_descriptors(int keep) noexcept {
  bool closed = false;
  if (keep < 3) {
    closed = close_range_of(3, ~0U);
  } else {
    closed = (keep == 3 || close_range_of(3, static_cast<unsigned>(keep) - 1)) &&
             close_range_of(static_cast<unsigned>(keep) + 1, ~0U);
  }
  if (closed || close_listed(keep)) {
    return;
  }
  // No /proc (a chroot without it): every number the process may have open, up to the
  // kernel's default fs.nr_open (a limit of 10^9, as some containers set, is far too many
  // numbers to try one by one).
  constexpr std::uint64_t k_most = std::uint64_t{1} << 20;
  rlimit limit{};
  const std::uint64_t last =
      ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
          ? std::min<std::uint64_t>(limit.rlim_cur, k_most)
          : k_most;
  for (std::uint64_t fd = 3; fd < last; ++fd) {
    if (static_cast<int>(fd) != keep) {
      ::close(static_cast<int>(fd));
    }
  }
}

void Fd::reset(int fd) noexcept {
  if (m_fd >= 0) {
    // close(2) on Linux releases the descriptor even when it reports EINTR, so it is
    // never retried (a retry could close a descriptor another thread just opened).
    ::close(m_fd);
  }
  m_fd = fd;
}

}  // namespace rbdsync
