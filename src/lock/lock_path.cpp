#include "lock/lock_path.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <vector>

#include "common/error.hpp"

namespace rbdsync::lock {

namespace {

/// For a call whose failure leaves a usable result (a group or mode that could not be
/// shared stays the caller's): the result is looked at, and deliberately dropped.
/// glibc marks fchown warn_unused_result, which a cast to void does not silence.
void best_effort(int /*result*/) {}

constexpr mode_t k_file_mode = 0660;
// setgid: files made in the directory get its group, whoever makes them. Sticky: a
// member may remove or rename only what it made itself. Without it, any member could
// unlink root's lock file and make its own, and the next run would lock that new inode
// while a sync still held the old one: two syncs at once.
constexpr mode_t k_dir_mode = 03770;
// O_PATH: a step through a directory needs search permission on it, not read
// permission, and opening it has no other effect.
constexpr int k_dir_flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// O_NONBLOCK: opening a FIFO read-only would otherwise wait for a writer (it is
// refused after fstat). It changes nothing for a regular file's pread/pwrite/flock.
constexpr int k_file_flags = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
constexpr const char* k_tmpfiles_fix =
    "the package's tmpfiles.d entry makes /run/lock/rbd-sync root:rbd-sync, mode 3770: as "
    "root, run systemd-tmpfiles --create rbd-sync.conf";

/// A directory on the way to the lock file, open and checked.
struct Dir {
  Fd fd;
  struct stat st {};
  std::string path;  ///< as the caller wrote it, for messages
};

[[noreturn]] void refuse(const std::string& message, const std::string& hint) {
  throw Error(ExitCode::cant_create, message, hint);
}

/// The name the user or group database (getpwuid_r, getgrgid_r) gives `id`, or the
/// number when it has none.
template <typename Entry, typename Id, typename LookUp>
std::string entry_name(Id id, LookUp look_up, char* Entry::*name) {
  std::vector<char> buffer(16384);
  Entry entry{};
  Entry* found = nullptr;
  if (look_up(id, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    return found->*name;
  }
  return std::to_string(id);
}

std::string user_name(uid_t uid) {
  return entry_name(uid, ::getpwuid_r, &passwd::pw_name);
}

std::string group_name(gid_t gid) {
  return entry_name(gid, ::getgrgid_r, &group::gr_name);
}

std::optional<gid_t> group_id(const std::string& name) {
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  if (::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) == 0 &&
      found != nullptr) {
    return found->gr_gid;
  }
  return std::nullopt;
}

bool caller_in_group(gid_t gid) {
  if (::getegid() == gid) {
    return true;
  }
  const int count = ::getgroups(0, nullptr);
  if (count <= 0) {
    return false;
  }
  std::vector<gid_t> groups(static_cast<std::size_t>(count));
  const int got = ::getgroups(count, groups.data());
  groups.resize(static_cast<std::size_t>(std::max(got, 0)));
  return std::find(groups.begin(), groups.end(), gid) != groups.end();
}

std::string mode_text(mode_t mode) {
  char text[8];
  static_cast<void>(
      std::snprintf(text, sizeof text, "%04o", static_cast<unsigned int>(mode & 07777)));
  return text;
}

std::string join(const std::string& directory, const std::string& name) {
  if (directory == ".") {
    return name;
  }
  return directory.back() == '/' ? directory + name : directory + "/" + name;
}

/// No permission on `path` (stat `st`): the hint says which group shares it.
[[noreturn]] void refuse_permission(const std::string& lock_path, const std::string& path,
                                    const struct stat& st) {
  const std::string group = group_name(st.st_gid);
  const std::string user = user_name(::geteuid());
  const std::string needs = S_ISDIR(st.st_mode) ? "rwx" : "rw";
  std::string hint;
  if (st.st_gid == 0) {
    hint = "'" + path + "' is not shared with a group (group root, mode " + mode_text(st.st_mode) +
           "); " + k_tmpfiles_fix + ", and add user '" + user + "' to group " + k_shared_group;
  } else if (!caller_in_group(st.st_gid)) {
    hint = "'" + path + "' is shared through group '" + group + "' (mode " + mode_text(st.st_mode) +
           "); user '" + user + "' is not in it: add it (usermod -a -G " + group + " " + user +
           ", effective in its next session) or start rbd-sync as a member";
  } else {
    hint = "user '" + user + "' is in group '" + group + "', but '" + path + "' is mode " +
           mode_text(st.st_mode) + " and the group needs " + needs + "; " + k_tmpfiles_fix;
  }
  refuse("cannot open lock file '" + lock_path + "': " + errno_text(EACCES), hint);
}

/// The lock file's directory, writable by its group without the sticky bit: any member
/// could remove the lock file another member or root made, and make its own. A
/// directory the caller owns gets the bit (an older version made it 2770); any other is
/// refused.
void require_sticky_if_shared(Dir& dir) {
  if ((dir.st.st_mode & S_IWGRP) == 0 || (dir.st.st_mode & S_ISVTX) != 0) {
    return;
  }
  if (dir.st.st_uid == ::geteuid()) {
    // O_PATH descriptors cannot be fchmod'ed: through /proc, which reopens this very
    // directory (no name is looked up again).
    const std::string self = "/proc/self/fd/" + std::to_string(dir.fd.get());
    if (::chmod(self.c_str(), (dir.st.st_mode & 07777) | S_ISVTX) == 0 &&
        ::fstat(dir.fd.get(), &dir.st) == 0 && (dir.st.st_mode & S_ISVTX) != 0) {
      return;
    }
  }
  refuse("lock directory '" + dir.path + "' is writable by its group '" +
             group_name(dir.st.st_gid) + "' but not sticky (mode " + mode_text(dir.st.st_mode) +
             ")",
         "any member could replace the lock file another run holds; " +
             std::string(k_tmpfiles_fix) + ", or chmod +t '" + dir.path + "' as its owner");
}

/// Who may have changed this directory, and so what lies beyond it. The lock file's own
/// directory, when its group may write to it, is made sticky or refused
/// (require_sticky_if_shared).
void check_directory(Dir& dir, bool holds_lock_file) {
  const std::string what = holds_lock_file ? "lock directory '" : "directory '";
  if (dir.st.st_uid != 0 && dir.st.st_uid != ::geteuid()) {
    refuse(what + dir.path + "' belongs to user '" + user_name(dir.st.st_uid) +
               "', neither root nor this user",
           "its owner could swap the lock file under every other caller; have root recreate "
           "it (" +
               std::string(k_tmpfiles_fix) + "), or choose another --lock-file");
  }
  if ((dir.st.st_mode & S_IWOTH) == 0) {
    if (holds_lock_file) {
      require_sticky_if_shared(dir);
    }
    return;
  }
  if (holds_lock_file) {
    refuse(what + dir.path + "' is writable by every user (mode " + mode_text(dir.st.st_mode) + ")",
           "anyone could replace the lock file there; give it a directory of its own that only "
           "its group may write, such as /run/lock/rbd-sync (root:rbd-sync, mode 3770)");
  }
  // /tmp and /run/lock are world-writable, but sticky and root's: nobody can rename or
  // remove what another user made in them.
  if ((dir.st.st_mode & S_ISVTX) == 0 || dir.st.st_uid != 0) {
    refuse(what + dir.path + "' on the way to the lock file is writable by every user (mode " +
               mode_text(dir.st.st_mode) + ") and not a sticky directory of root's",
           "anyone could replace what follows it in the path; choose a --lock-file under "
           "directories only root or this user can change, such as /run/lock/rbd-sync");
  }
}

/// Why `name` in `parent` could not be opened, as the Error to throw.
[[noreturn]] void refuse_component(const std::string& lock_path, const Dir& parent,
                                   const std::string& name, int error_number) {
  const std::string path = join(parent.path, name);
  struct stat st {};
  if (::fstatat(parent.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) {
      refuse("'" + path + "' in the lock file's path is a symbolic link",
             "symbolic links on the way to the lock file are refused, so that nobody can "
             "redirect the lock; give the real path (realpath(1) prints it) to --lock-file");
    }
    if (!S_ISDIR(st.st_mode)) {
      refuse("'" + path + "' in the lock file's path is not a directory", "check --lock-file");
    }
  }
  if (error_number == EACCES) {
    refuse_permission(lock_path, parent.path, parent.st);
  }
  refuse("cannot open '" + path + "' on the way to lock file '" + lock_path +
             "': " + errno_text(error_number),
         "check that the directories of --lock-file exist and this user may search them");
}

Dir open_start(const std::string& lock_path) {
  const bool absolute = !lock_path.empty() && lock_path.front() == '/';
  Dir start{Fd(::open(absolute ? "/" : ".", k_dir_flags)), {}, absolute ? "/" : "."};
  if (!start.fd || ::fstat(start.fd.get(), &start.st) != 0) {
    const int error_number = errno;
    refuse("cannot open lock file '" + lock_path + "': " + errno_text(error_number),
           "check --lock-file");
  }
  return start;
}

/// Makes the missing directory `name` that will hold the lock file, shared by
/// `shared_group` where that group exists and the caller may give it.
void make_lock_directory(const std::string& lock_path, const Dir& parent, const std::string& name,
                         const std::string& shared_group) {
  const std::string path = join(parent.path, name);
  if (parent.st.st_uid != ::geteuid()) {
    refuse("lock directory '" + path + "' does not exist",
           std::string(k_tmpfiles_fix) +
               "; or run rbd-sync once as root. Other users do not "
               "make it in '" +
               parent.path +
               "': a directory they own there would be refused by every other caller");
  }
  if (::mkdirat(parent.fd.get(), name.c_str(), 0770) != 0) {
    const int error_number = errno;
    if (error_number == EEXIST) {
      return;  // made meanwhile: checked like any other
    }
    if (error_number == EACCES) {
      refuse_permission(lock_path, parent.path, parent.st);
    }
    refuse("cannot create lock directory '" + path + "': " + errno_text(error_number),
           "create it, shared by the group of every user that starts syncs (mode 3770), or "
           "choose another --lock-file");
  }
  // Read access, unlike O_PATH, so that fchown/fchmod work. Only the caller (who owns
  // the parent) could have swapped it since; the walk checks it again anyway.
  const Fd made(
      ::openat(parent.fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!made) {
    return;
  }
  if (const auto gid = group_id(shared_group)) {
    // Allowed for root and for a member of the group; otherwise the directory stays
    // the caller's own group, as a plain mkdir would leave it.
    best_effort(::fchown(made.get(), static_cast<uid_t>(-1), *gid));
  }
  // After fchown, which may clear setgid; mkdirat's mode went through the umask.
  static_cast<void>(::fchmod(made.get(), k_dir_mode));
}

/// Opens (or, in OpenMode::create, makes) the next directory of the walk.
std::optional<Dir> open_directory(const std::string& lock_path, const Dir& parent,
                                  const std::string& name, bool holds_lock_file, OpenMode mode,
                                  const std::string& shared_group) {
  Dir dir{Fd(::openat(parent.fd.get(), name.c_str(), k_dir_flags)), {}, join(parent.path, name)};
  if (!dir.fd && errno == ENOENT) {
    if (mode == OpenMode::inspect) {
      return std::nullopt;
    }
    if (!holds_lock_file) {
      refuse("directory '" + dir.path + "' of lock file '" + lock_path + "' does not exist",
             "create it, or choose another --lock-file");
    }
    make_lock_directory(lock_path, parent, name, shared_group);
    dir.fd.reset(::openat(parent.fd.get(), name.c_str(), k_dir_flags));
  }
  if (!dir.fd) {
    refuse_component(lock_path, parent, name, errno);
  }
  if (::fstat(dir.fd.get(), &dir.st) != 0) {
    refuse_component(lock_path, parent, name, errno);
  }
  check_directory(dir, holds_lock_file);
  return dir;
}

/// What a lock file found in `dir` must be, whoever made it.
void check_lock_file(const std::string& lock_path, const Dir& dir, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) {
    refuse("lock file '" + lock_path + "' is not a regular file",
           "point --lock-file at a regular file (or a name that does not exist yet)");
  }
  if (st.st_nlink != 1) {
    refuse("lock file '" + lock_path + "' has " + std::to_string(st.st_nlink) + " links",
           "a hard link there could make rbd-sync write into another file; remove that name "
           "(the next run creates a fresh lock file) or choose another --lock-file");
  }
  if ((st.st_mode & S_IWOTH) != 0) {
    refuse("lock file '" + lock_path + "' is writable by every user (mode " +
               mode_text(st.st_mode) + ")",
           "make it mode 0660 (chmod 0660), or remove it: the next run creates it so");
  }
  // In a shared directory any member may have made the file: it then has the
  // directory's group. Anything else from another user is not ours to trust.
  if (st.st_uid != 0 && st.st_uid != ::geteuid() && st.st_gid != dir.st.st_gid) {
    refuse("lock file '" + lock_path + "' belongs to user '" + user_name(st.st_uid) +
               "' and group '" + group_name(st.st_gid) +
               "', not to root, this user or the group of '" + dir.path + "'",
           "remove it (the next run creates it) or choose another --lock-file");
  }
}

/// An older version made lock files 0660 of the maker's group; a file we own gets the
/// shared directory's group and mode back, so that every member can open it again.
void share_like_directory(int fd, const Dir& dir, const struct stat& st) {
  if (st.st_uid != ::geteuid()) {
    return;
  }
  if ((dir.st.st_mode & S_ISGID) != 0 && st.st_gid != dir.st.st_gid) {
    best_effort(::fchown(fd, static_cast<uid_t>(-1), dir.st.st_gid));
  }
  if ((st.st_mode & 07777) != k_file_mode) {
    static_cast<void>(::fchmod(fd, k_file_mode));
  }
}

/// Creates the lock file `name` in `dir`, opened read-write; an empty Fd when another
/// process made it meanwhile (then it is opened as an existing file).
Fd create_file(const std::string& lock_path, const Dir& dir, const std::string& name) {
  // O_EXCL, so that only the process that really creates the file sets its mode.
  Fd fd(
      ::openat(dir.fd.get(), name.c_str(), O_RDWR | O_CREAT | O_EXCL | k_file_flags, k_file_mode));
  if (fd) {
    // The umask may have cleared the group bits openat(2) was asked for.
    static_cast<void>(::fchmod(fd.get(), k_file_mode));
    return fd;
  }
  if (errno == EEXIST) {
    return {};
  }
  if (errno == EACCES) {
    refuse_permission(lock_path, dir.path, dir.st);
  }
  const int create_error = errno;
  refuse("cannot create lock file '" + lock_path + "': " + errno_text(create_error),
         "check that this user may write to '" + dir.path + "', or choose another --lock-file");
}

/// Opens the existing lock file `name` in `dir` (what fstatat found: `st`), checked
/// before and after; an empty Fd when it was removed meanwhile.
Fd open_existing(const std::string& lock_path, const Dir& dir, const std::string& name,
                 struct stat st, OpenMode mode) {
  if (S_ISLNK(st.st_mode)) {
    refuse("lock file '" + lock_path + "' is a symbolic link",
           "point --lock-file at a regular file; symlinks are refused so nobody can "
           "redirect the lock");
  }
  check_lock_file(lock_path, dir, st);
  const int access = mode == OpenMode::create ? O_RDWR : O_RDONLY;
  Fd fd(::openat(dir.fd.get(), name.c_str(), access | k_file_flags));
  if (!fd) {
    const int error_number = errno;
    if (error_number == ENOENT) {
      return {};
    }
    if (error_number == EACCES) {
      refuse_permission(lock_path, lock_path, st);
    }
    refuse("cannot open lock file '" + lock_path + "': " + errno_text(error_number),
           "check --lock-file and this user's permissions on it");
  }
  // Checked again on what was opened: the name may point elsewhere by now.
  if (::fstat(fd.get(), &st) != 0) {
    const int error_number = errno;
    refuse("cannot open lock file '" + lock_path + "': " + errno_text(error_number),
           "check --lock-file");
  }
  check_lock_file(lock_path, dir, st);
  if (mode == OpenMode::create) {
    share_like_directory(fd.get(), dir, st);
  }
  return fd;
}

/// Opens the lock file `name` in `dir`; an empty Fd when it does not exist and `mode`
/// is OpenMode::inspect.
Fd open_file(const std::string& lock_path, const Dir& dir, const std::string& name, OpenMode mode) {
  // Looked at before it is opened: opening a device can have effects of its own. Made
  // or removed by another process between the look and the open, it is looked at again.
  for (int attempt = 0; attempt < 2; ++attempt) {
    struct stat st {};
    Fd fd;
    if (::fstatat(dir.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      fd = open_existing(lock_path, dir, name, st, mode);
    } else {
      const int error_number = errno;
      if (error_number == EACCES) {
        refuse_permission(lock_path, dir.path, dir.st);
      }
      if (error_number != ENOENT) {
        refuse("cannot open lock file '" + lock_path + "': " + errno_text(error_number),
               "check --lock-file");
      }
      if (mode == OpenMode::inspect) {
        return {};
      }
      fd = create_file(lock_path, dir, name);
    }
    if (fd) {
      return fd;
    }
  }
  refuse("lock file '" + lock_path + "' keeps appearing and disappearing",
         "something else is creating and removing it; choose another --lock-file");
}

/// The path's components; "" and "." are dropped.
std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> names;
  std::size_t at = 0;
  while (at <= path.size()) {
    const std::size_t slash = std::min(path.find('/', at), path.size());
    std::string name = path.substr(at, slash - at);
    if (!name.empty() && name != ".") {
      names.push_back(std::move(name));
    }
    at = slash + 1;
  }
  return names;
}

}  // namespace

Fd open_lock_path(const std::string& path, OpenMode mode, const std::string& shared_group) {
  const std::vector<std::string> names = components(path);
  if (names.empty() || path.back() == '/' || names.back() == "..") {
    refuse("lock file '" + path + "' names no file", "point --lock-file at a file");
  }
  Dir dir = open_start(path);
  check_directory(dir, names.size() == 1);
  for (std::size_t i = 0; i + 1 < names.size(); ++i) {
    const bool holds_lock_file = i + 2 == names.size();
    auto next = open_directory(path, dir, names[i], holds_lock_file, mode, shared_group);
    if (!next) {
      return {};  // inspect: a missing directory holds no lock file
    }
    dir = std::move(*next);
  }
  return open_file(path, dir, names.back(), mode);
}

bool names_open_file(const std::string& path, int fd, const std::string& shared_group) {
  struct stat held {};
  if (::fstat(fd, &held) != 0) {
    return false;
  }
  const Fd named = open_lock_path(path, OpenMode::inspect, shared_group);
  struct stat now {};
  return named && ::fstat(named.get(), &now) == 0 && now.st_dev == held.st_dev &&
         now.st_ino == held.st_ino;
}

}  // namespace rbdsync::lock
