#pragma once

#include <string>

#include "common/fd.hpp"

namespace rbdsync::front {

/// The --log-file `path` opened to append to, as both the logger (core/logging.cpp) and a
/// detached run's stdout and stderr (front/detach.cpp) use it: never through a symlink
/// planted at its name, only a regular file, made 0640 when missing
/// (common/files.hpp). Throws Error(cant_create) with a hint.
Fd open_log_file(const std::string& path);

}  // namespace rbdsync::front
