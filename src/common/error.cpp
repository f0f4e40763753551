#include "common/error.hpp"

#include <cstring>

namespace rbdsync {

std::string errno_text(int error_number) {
  char buffer[256];
  // GNU strerror_r returns the message, which may or may not live in `buffer`.
  const char* text = strerror_r(error_number, buffer, sizeof buffer);
  return text;
}

}  // namespace rbdsync
