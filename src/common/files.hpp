#pragma once

/// Files rbd-sync writes where other users may write too: a textfile collector's
/// directory (the shipped /etc/default suggests making it group-writable), a log
/// directory. Root or the user rbd-sync must not be made to write into a file of
/// another user's choosing, so the last component of a path is never followed when it
/// is a symlink, nothing is created through one, and only regular files are used.
/// The directories on the way are the admin's choice and are followed.

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/fd.hpp"

namespace rbdsync {

/// Writes all of `bytes` to `fd`, retrying short writes and EINTR; false on an error.
bool write_all(int fd, std::string_view bytes);

/// Opens `path` to append to (a log), close-on-exec. An existing regular file is opened
/// without O_CREAT, so that Debian's fs.protected_regular lets a member of a shared
/// directory's group append to a file another member made; a missing one is made with
/// `mode` (O_EXCL). A symlink, FIFO, device or directory there is refused. Throws
/// Error(cant_create) naming the path and the reason, with `hint`.
Fd open_for_append(const std::string& path, mode_t mode, const std::string& hint);

/// What the regular file `path` holds, at most `max_bytes` of it; std::nullopt when it
/// is missing, unreadable, a symlink or not a regular file.
std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes);

/// Replaces `path` with `contents` in one step for its readers: a temporary file of a
/// random name beside it, made with O_CREAT|O_EXCL|O_NOFOLLOW in the directory's
/// descriptor, written, fsync'ed and renamed over `path` (a symlink at `path` is
/// replaced, never followed). Throws Error(cant_create) naming the path and the reason,
/// with `hint`; the temporary file is removed then.
void replace_file(const std::string& path, const std::string& contents, mode_t mode,
                  const std::string& hint);

}  // namespace rbdsync
