#pragma once

/// Opening the lock file without trusting its path. The lock file is shared by users
/// of different privilege (cron as root, the web server's user, admins) and usually
/// lives under /run/lock, which every local user may write to. So the path is opened
/// one component at a time, each directory is checked before the next step goes
/// through it, and anything another user could swap or redirect is refused.

#include <string>

#include "common/fd.hpp"

namespace rbdsync::lock {

/// The group that shares the default lock directory: the package creates it, and its
/// tmpfiles.d entry makes /run/lock/rbd-sync root:rbd-sync, mode 3770, at boot.
inline constexpr const char* k_shared_group = "rbd-sync";

/// What open_lock_path() does with a lock file that does not exist.
enum class OpenMode {
  create,   ///< read-write; creates the file (0660) and, if missing, its directory (3770)
  inspect,  ///< read-only; nothing is created, a missing file gives an empty Fd
};

/// Opens the lock file `path` (absolute, or relative to the working directory) one
/// component at a time: every directory with openat(O_PATH | O_DIRECTORY | O_NOFOLLOW),
/// the file with O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC (a FIFO cannot block
/// the open), then fstat(2).
///
/// Refused, with Error(ExitCode::cant_create) naming the component and a hint:
/// * a symbolic link anywhere in the path;
/// * a directory owned by a user other than root and the caller;
/// * a world-writable directory, unless it is sticky and owned by root (/tmp,
///   /run/lock); the directory that holds the lock file must not be world-writable;
/// * a lock file that is not a regular file, has more than one link (a hard link
///   planted there could make root write the holder record into another file), is
///   world-writable, or belongs to a user other than root and the caller while its
///   group is not its directory's (in a shared directory any member may create it);
/// * no permission (the hint names the group that shares the directory).
///
/// The directory that holds the lock file, when its group may write to it, must be
/// sticky (no member can remove another's lock file and make its own): one the caller
/// owns is made so, any other is refused.
///
/// In OpenMode::create, a missing lock file is created with mode 0660, and a missing
/// directory that holds it is created with mode 3770 (setgid: files inherit its
/// group; sticky) and given `shared_group` when that group exists and the caller may
/// use it.
/// That directory is only created where the caller owns the parent: a directory a
/// non-root user made in a shared place (/run/lock) would be refused by every other
/// caller. A lock file the caller owns is put back to mode 0660 and its directory's
/// group when an older version left it otherwise.
Fd open_lock_path(const std::string& path, OpenMode mode,
                  const std::string& shared_group = k_shared_group);

/// Whether `path`, walked as open_lock_path() walks it (OpenMode::inspect), names the
/// very file open as `fd` (same device and inode). A lock taken on a file whose name
/// was meanwhile given to another file excludes nobody who opens the name now.
bool names_open_file(const std::string& path, int fd,
                     const std::string& shared_group = k_shared_group);

}  // namespace rbdsync::lock
