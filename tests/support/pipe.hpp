#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <stdexcept>

#include "common/fd.hpp"

namespace rbdsync::testing {

/// A pipe's two ends, both close-on-exec: a child dup2()s the one it keeps.
struct Pipe {
  Fd read_end;
  Fd write_end;
};

inline Pipe cloexec_pipe() {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe2 failed");
  }
  return {Fd(ends[0]), Fd(ends[1])};
}

}  // namespace rbdsync::testing
