#include "ceph/ceph_error.hpp"

#include <cerrno>
#include <utility>

#include "common/error.hpp"

namespace rbdsync::ceph {

bool is_cluster_errno(int error_number) {
  switch (error_number) {
    case EACCES:
    case EPERM:
    case ETIMEDOUT:
    case ENOTCONN:
    case ECONNREFUSED:
    case ESHUTDOWN:  // also what librados returns once this client is blocklisted
      return true;
    default:
      return false;
  }
}

void throw_ceph_error(int r, const std::string& what, std::string hint) {
  const int error_number = -r;
  ExitCode code = ExitCode::unavailable;
  switch (error_number) {
    case EACCES:
    case EPERM:
      code = ExitCode::no_permission;
      if (hint.empty()) {
        hint = "grant the client 'mon profile rbd, osd profile rbd-read-only' caps";
      }
      break;
    case ETIMEDOUT:
    case ENOTCONN:
    case ECONNREFUSED:
    case ESHUTDOWN:
      code = ExitCode::unavailable;
      if (hint.empty()) {
        hint = "check that the cluster is up and reachable (ceph -s), or raise --ceph-timeout";
      }
      break;
    default:
      break;
  }
  throw Error(code, what + ": " + errno_text(error_number), std::move(hint));
}

void check(int r, const std::string& what, std::string hint) {
  if (r < 0) {
    throw_ceph_error(r, what, std::move(hint));
  }
}

}  // namespace rbdsync::ceph
