// error_of(): how the front's answer and the core's run record name a caught exception.
#include "common/error.hpp"

#include <exception>
#include <stdexcept>

#include <gtest/gtest.h>

namespace rbdsync {
namespace {

template <typename Thrown>
Error caught_from(const Thrown& thrown) {
  try {
    throw thrown;
  } catch (...) {
    return error_of(std::current_exception());
  }
}

TEST(ErrorOf, AnErrorIsItself) {
  const Error error = caught_from(Error(ExitCode::config, "no ceph.conf", "give --conf"));
  EXPECT_EQ(error.code(), ExitCode::config);
  EXPECT_STREQ(error.what(), "no ceph.conf");
  EXPECT_EQ(error.hint(), "give --conf");
}

TEST(ErrorOf, AnyOtherExceptionIsABugThatSaysWhatItWas) {
  const Error error = caught_from(std::out_of_range("map::at"));
  EXPECT_EQ(error.code(), ExitCode::internal);
  EXPECT_STREQ(error.what(), "unexpected: map::at");
  EXPECT_EQ(error.hint(), "report this as a bug with the log");
}

TEST(ErrorOf, ANonStandardExceptionIsABugToo) {
  const Error error = caught_from(42);
  EXPECT_EQ(error.code(), ExitCode::internal);
  EXPECT_STREQ(error.what(), "unexpected non-standard exception");
}

}  // namespace
}  // namespace rbdsync
