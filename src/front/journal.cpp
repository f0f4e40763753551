#include "front/journal.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace rbdsync::front {

bool stderr_is_journal() {
  // rbd-sync never changes its environment. NOLINTNEXTLINE(concurrency-mt-unsafe)
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) {
    return false;
  }
  // "DEVICE:INODE", both decimal (systemd.exec(5)).
  char* end = nullptr;
  const unsigned long long device = std::strtoull(stream, &end, 10);
  if (end == stream || *end != ':') {
    return false;
  }
  const char* inode_text = end + 1;
  const unsigned long long inode = std::strtoull(inode_text, &end, 10);
  if (end == inode_text || *end != '\0') {
    return false;
  }
  struct stat status {};
  return ::fstat(STDERR_FILENO, &status) == 0 && status.st_dev == device && status.st_ino == inode;
}

std::string stderr_prefix(Priority priority) {
  return stderr_is_journal() ? "<" + std::to_string(static_cast<int>(priority)) + ">"
                             : std::string();
}

}  // namespace rbdsync::front
