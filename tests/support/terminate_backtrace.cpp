// Linked into the unit and integration test binaries: when something calls
// std::terminate (an exception that no one catches, on any thread), print the thread's
// name and the stack before the usual "terminate called after throwing ..." line and
// the abort. An exception no frame catches is not unwound first, so the frames name the
// thrower; one that reaches a noexcept function first is unwound to that function,
// which the frames then name instead. A test binary once died this way inside librados
// ("std::system_error: Invalid argument", 2 s into a fixture), and stderr alone could
// not say where; Ceph names its threads (io_context_pool, msgr-worker-0, ...), and the
// frames give the library and offset to resolve with addr2line.
#include <execinfo.h>
#include <pthread.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace {

std::terminate_handler g_usual_handler = nullptr;

void print_stack_then_terminate() {
  std::array<char, 32> thread_name{};
  if (::pthread_getname_np(::pthread_self(), thread_name.data(), thread_name.size()) != 0) {
    thread_name[0] = '\0';
  }
  // Nothing is left to do if stderr is gone: the process ends either way.
  (void)std::fprintf(stderr, "std::terminate in thread \"%s\"; its stack, innermost first:\n",
                     thread_name.data());
  (void)std::fflush(stderr);
  std::array<void*, 64> frames{};
  const int depth = ::backtrace(frames.data(), static_cast<int>(frames.size()));
  ::backtrace_symbols_fd(frames.data(), depth, STDERR_FILENO);
  if (g_usual_handler != nullptr) {
    g_usual_handler();
  }
  std::abort();
}

[[maybe_unused]] const bool k_installed =
    (g_usual_handler = std::set_terminate(print_stack_then_terminate), true);

}  // namespace
