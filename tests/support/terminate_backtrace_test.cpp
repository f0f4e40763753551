// support/terminate_backtrace.cpp is linked into this binary: an exception no one
// catches, on a thread of its own, must end the process with the thread's name and a
// stack on stderr ahead of the usual line, or the next abort inside librados is as
// blind as the last one.
#include <pthread.h>

#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

namespace {

// "(.|\n)*" and not ".*" between the lines: with RE2 (a gtest built with abseil) "."
// does not match a newline.
void throw_on_a_named_thread() {
  std::thread thrower([] {
    ::pthread_setname_np(::pthread_self(), "thrower");
    throw std::runtime_error("nobody catches this");
  });
  thrower.join();
}

TEST(TerminateBacktraceDeathTest, AnUncaughtExceptionPrintsItsThreadAndStackBeforeTheAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(throw_on_a_named_thread(),
               "std::terminate in thread \"thrower\"; its stack, innermost first:\n"
               "(.|\n)*\\[0x[0-9a-f]+\\]\n"
               "(.|\n)*terminate called after throwing an instance of 'std::runtime_error'\n"
               "  what\\(\\):  nobody catches this");
}

}  // namespace
