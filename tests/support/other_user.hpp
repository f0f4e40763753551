#pragma once

#include <grp.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <vector>

namespace rbdsync::testing {

// Ids nobody on a test machine uses: the kernel needs no passwd or group entry for
// them, so tests can be "another user" or "a member" without useradd. Needs root.
constexpr uid_t k_other_uid = 61234;
constexpr uid_t k_member_uid = 61235;
constexpr gid_t k_shared_gid = 61236;
constexpr gid_t k_other_gid = 61237;

/// In a child process: becomes `uid`:`gid` with supplementary `groups`, as another user
/// on the machine, or exits 125.
inline void become(uid_t uid, gid_t gid, const std::vector<gid_t>& groups) {
  if (::setgroups(groups.size(), groups.data()) != 0 || ::setresgid(gid, gid, gid) != 0 ||
      ::setresuid(uid, uid, uid) != 0) {
    ::_exit(125);
  }
}

/// Runs `body` in a child process as `uid`:`gid` with supplementary `groups`; its
/// return value is the child's exit status (an exception is 124, a signal 70).
inline int exit_status_as(uid_t uid, gid_t gid, const std::vector<gid_t>& groups,
                          const std::function<int()>& body) {
  const pid_t child = ::fork();
  if (child == 0) {
    become(uid, gid, groups);
    int status = 124;
    try {
      status = body();
    } catch (...) {
    }
    ::_exit(status);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 70;
}

}  // namespace rbdsync::testing
