#include "front/log_file.hpp"

#include "common/files.hpp"

namespace rbdsync::front {

Fd open_log_file(const std::string& path) {
  return open_for_append(path, 0640, "check the directory and permissions, or drop --log-file");
}

}  // namespace rbdsync::front
