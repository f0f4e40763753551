#include "ceph/ceph_error.hpp"

#include <cerrno>
#include <utility>

#include "common/error.hpp"

namespace rbdsync::ceph {

ErrnoClass errno_class(int error_number) {
  switch (error_number) {
    case EACCES:
    case EPERM:
      return ErrnoClass::permission;
    case ETIMEDOUT:
    case ENOTCONN:
    case ECONNREFUSED:
    case ESHUTDOWN:  // also what librados returns once this client is blocklisted
      return ErrnoClass::cluster;
    default:
      return ErrnoClass::image;
  }
}

bool is_beyond_one_image(int error_number) {
  return errno_class(error_number) != ErrnoClass::image;
}

void throw_ceph_error(int r, const std::string& what, std::string hint) {
  const int error_number = -r;
  const ErrnoClass trouble = errno_class(error_number);
  if (hint.empty() && trouble == ErrnoClass::permission) {
    hint = "grant the client 'mon profile rbd, osd profile rbd-read-only' caps";
  } else if (hint.empty() && trouble == ErrnoClass::cluster) {
    hint = "check that the cluster is up and reachable (ceph -s), or raise --ceph-timeout";
  }
  const ExitCode code =
      trouble == ErrnoClass::permission ? ExitCode::no_permission : ExitCode::unavailable;
  throw Error(code, what + ": " + errno_text(error_number), std::move(hint));
}

void check(int r, const std::string& what, std::string hint) {
  if (r < 0) {
    throw_ceph_error(r, what, std::move(hint));
  }
}

}  // namespace rbdsync::ceph
