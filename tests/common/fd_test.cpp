#include "common/fd.hpp"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include <gtest/gtest.h>

namespace rbdsync {
namespace {

/// From now on in this process, close_range(2) fails with ENOSYS, as on a kernel before
/// 5.9 or under a container runtime's seccomp profile that does not know the call.
bool refuse_close_range() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close_range, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(Fd, InheritedDescriptorsAreClosedEvenWhereCloseRangeIsRefused) {
  for (const bool refused : {false, true}) {
    int first[2];
    int second[2];
    ASSERT_EQ(::pipe(first), 0);
    ASSERT_EQ(::pipe(second), 0);
    const int keep = second[0];
    const pid_t child = ::fork();
    if (child == 0) {
      // 10: the filter did not take; close_range of numbers nobody holds must then fail.
      if (refused && (!refuse_close_range() || ::close_range(~0U - 1, ~0U, 0) == 0)) {
        ::_exit(10);
      }
      close_inherited_descriptors(keep);
      int code = 0;
      for (const int fd : {first[0], first[1], second[1]}) {
        code |= is_open(fd) ? 1 : 0;  // 1: one was left open
      }
      code |= is_open(keep) ? 0 : 2;  // 2: the one to keep was closed
      code |= is_open(0) && is_open(1) && is_open(2) ? 0 : 4;
      ::_exit(code);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << (refused ? "close_range refused" : "close_range allowed")
                                      << ": 1 = left open, 2 = kept closed, 4 = stdio closed";
    for (const int fd : {first[0], first[1], second[0], second[1]}) {
      ::close(fd);
    }
  }
}

}  // namespace
}  // namespace rbdsync
