#include "common/fd.hpp"

#include <unistd.h>

namespace rbdsync {

void Fd::reset(int fd) noexcept {
  if (m_fd >= 0) {
    // close(2) on Linux releases the descriptor even when it reports EINTR, so it is
    // never retried (a retry could close a descriptor another thread just opened).
    ::close(m_fd);
  }
  m_fd = fd;
}

}  // namespace rbdsync
