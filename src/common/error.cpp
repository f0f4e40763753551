#include "common/error.hpp"

#include <cstring>

namespace rbdsync {

Error error_of(const std::exception_ptr& caught) {
  try {
    std::rethrow_exception(caught);
  } catch (const Error& error) {
    return error;
  } catch (const std::exception& e) {
    return {ExitCode::internal, std::string("unexpected: ") + e.what(),
            "report this as a bug with the log"};
  } catch (...) {
    return {ExitCode::internal, "unexpected non-standard exception",
            "report this as a bug with the log"};
  }
}

std::string errno_text(int error_number) {
  char buffer[256];
  // GNU strerror_r returns the message, which may or may not live in `buffer`.
  const char* text = strerror_r(error_number, buffer, sizeof buffer);
  return text;
}

}  // namespace rbdsync
