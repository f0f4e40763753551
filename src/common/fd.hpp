#pragma once

namespace rbdsync {

/// Owns one file descriptor: move-only, closes it on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : m_fd(fd) {}
  ~Fd() { reset(); }

  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : m_fd(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset(other.release());
    }
    return *this;
  }

  /// The descriptor, or -1 when empty.
  int get() const noexcept { return m_fd; }
  explicit operator bool() const noexcept { return m_fd >= 0; }
  /// Gives up ownership without closing.
  int release() noexcept {
    const int fd = m_fd;
    m_fd = -1;
    return fd;
  }
  /// Closes the owned descriptor (if any) and takes `fd`.
  void reset(int fd = -1) noexcept;

 private:
  int m_fd = -1;
};

/// Closes every descriptor from 3 up but `keep` (below 3: none kept), for a child of
/// fork() that must not hold what its parent left open. close_range(2) where the kernel
/// allows it; where it does not (a kernel before 5.9: ENOSYS; a seccomp filter that
/// refuses it: EPERM, ENOSYS), each open descriptor, as /proc/self/fd lists them, or
/// failing that every number below the descriptor limit. Async-signal-safe: no
/// allocation (the parent may have had other threads).
void close_inherited_descriptors(int keep) noexcept;

}  // namespace rbdsync
