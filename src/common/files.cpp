#include "common/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "common/error.hpp"
#include "common/uuid.hpp"

namespace rbdsync {

namespace {

/// `path` split into its directory ("." when it has none) and its last component.
std::pair<std::string, std::string> split(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) {
    return {".", path};
  }
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

[[noreturn]] void fail(const std::string& what, const std::string& path, int error_number,
                       const std::string& hint) {
  throw Error(ExitCode::cant_create, what + " '" + path + "': " + errno_text(error_number), hint);
}

/// True when `fd` is a regular file (not a FIFO, device or directory).
bool is_regular(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

bool write_all(int fd, std::string_view bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  return true;
}

Fd open_for_append(const std::string& path, mode_t mode, const std::string& hint) {
  // O_NONBLOCK: a FIFO planted there must not hang the open; it is refused below.
  constexpr int k_flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Fd fd(::open(path.c_str(), k_flags));
    if (!fd && errno == ENOENT) {
      fd.reset(::open(path.c_str(), k_flags | O_CREAT | O_EXCL, mode));
      if (!fd && errno == EEXIST) {
        continue;  // made by someone else meanwhile: open it as it is
      }
    }
    if (!fd) {
      // ELOOP: a symlink (O_NOFOLLOW); ENXIO: a FIFO nobody reads.
      fail("cannot open", path, errno, hint);
    }
    if (!is_regular(fd.get())) {
      throw Error(ExitCode::cant_create, "cannot open '" + path + "': not a regular file", hint);
    }
    if (::fcntl(fd.get(), F_SETFL, O_APPEND) != 0) {  // blocking again
      fail("cannot open", path, errno, hint);
    }
    return fd;
  }
  fail("cannot open", path, EEXIST, hint);
}

std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK));
  if (!fd || !is_regular(fd.get())) {
    return std::nullopt;
  }
  std::string contents;
  char buffer[4096];
  while (contents.size() < max_bytes) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return std::nullopt;
    }
    if (n == 0) {
      break;
    }
    contents.append(buffer, static_cast<std::size_t>(n));
  }
  contents.resize(std::min(contents.size(), max_bytes));
  return contents;
}

void replace_file(const std::string& path, const std::string& contents, mode_t mode,
                  const std::string& hint) {
  const auto [directory, name] = split(path);
  const Fd dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) {
    fail("cannot open the directory of", path, errno, hint);
  }
  // A random name: one another user cannot guess and plant a symlink at beforehand (the
  // pid was guessable); O_EXCL|O_NOFOLLOW refuse whatever is there anyway.
  const std::string temporary = "." + name + "." + random_uuid() + ".tmp";
  const Fd out(::openat(dir.get(), temporary.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode));
  if (!out) {
    fail("cannot create a temporary file beside", path, errno, hint);
  }
  if (!write_all(out.get(), contents) || ::fsync(out.get()) != 0 ||
      ::renameat(dir.get(), temporary.c_str(), dir.get(), name.c_str()) != 0) {
    const int error_number = errno;
    (void)::unlinkat(dir.get(), temporary.c_str(), 0);  // best effort; the error says it all
    fail("cannot replace", path, error_number, hint);
  }
  // The rename itself on disk: a crash then leaves the old file or the new, never none.
  (void)::fsync(dir.get());
}

}  // namespace rbdsync
