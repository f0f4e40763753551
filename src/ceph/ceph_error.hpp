#pragma once

#include <string>

namespace rbdsync::ceph {

/// What an errno (positive) from librados/librbd says is in trouble.
enum class ErrnoClass {
  permission,  ///< the caps refuse: EPERM (an OSD), EACCES (a mon)
  cluster,     ///< the cluster or the connection: timeouts, a lost or blocklisted one
  image,       ///< anything else: the one image or object asked about
};
ErrnoClass errno_class(int error_number);

/// True for the errno values (positive) that say the cluster or our access to it is in
/// trouble, not one image: refused caps, timeouts, a lost or blocklisted connection.
bool is_beyond_one_image(int error_number);

/// Throws the Error for a negative errno from librados/librbd, naming what was being
/// attempted: ExitCode::no_permission for EACCES/EPERM, otherwise ExitCode::unavailable.
/// An empty `hint` gets the usual one for that errno class.
[[noreturn]] void throw_ceph_error(int r, const std::string& what, std::string hint = {});

/// Calls throw_ceph_error() when `r` is negative.
void check(int r, const std::string& what, std::string hint = {});

}  // namespace rbdsync::ceph
