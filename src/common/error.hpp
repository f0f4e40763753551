#pragma once

#include <exception>
#include <stdexcept>
#include <string>

#include "common/exit_code.hpp"

namespace rbdsync {

/// The one error type of rbd-sync: what failed (naming the object: pool, image, lock
/// path, database host), what the operator should do about it, and the exit code.
/// Library error styles (negative errno from librados, pqxx exceptions) are turned
/// into an Error at the edge of the module that calls the library.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message, std::string hint = {})
      : std::runtime_error(message), m_code(code), m_hint(std::move(hint)) {}

  /// The exit code the process should end with.
  ExitCode code() const noexcept { return m_code; }
  /// What to do about it; may be empty when there is nothing useful to say.
  const std::string& hint() const noexcept { return m_hint; }

 private:
  ExitCode m_code;
  std::string m_hint;
};

/// The Error `caught` stands for: itself when it is one; any other exception is a bug
/// (exit 70) and says what it was. Where a run's failures are sorted (the front's
/// answer, the core's run record), so that both tell an unexpected exception alike.
Error error_of(const std::exception_ptr& caught);

/// `strerror` text for a positive errno value (thread-safe).
std::string errno_text(int error_number);

}  // namespace rbdsync
