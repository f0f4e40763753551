#include "common/files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "common/error.hpp"
#include "support/scoped_temp_dir.hpp"

namespace rbdsync {
namespace {

using testing::ScopedTempDir;

/// The ExitCode open_for_append() threw, or ok.
ExitCode append_outcome(const std::string& path) {
  try {
    const Fd fd = open_for_append(path, 0640, "hint");
  } catch (const Error& error) {
    return error.code();
  }
  return ExitCode::ok;
}

TEST(Files, AppendRefusesWhatIsNotARegularFileWithoutBlocking) {
  ScopedTempDir dir;
  // A FIFO nobody reads would block a plain open forever; a directory cannot hold lines.
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_EQ(append_outcome(dir.file("fifo")), ExitCode::cant_create);
  ASSERT_EQ(::mkdir(dir.file("directory").c_str(), 0700), 0);
  EXPECT_EQ(append_outcome(dir.file("directory")), ExitCode::cant_create);
  ASSERT_EQ(::symlink(dir.file("missing").c_str(), dir.file("dangling").c_str()), 0);
  EXPECT_EQ(append_outcome(dir.file("dangling")), ExitCode::cant_create);
  EXPECT_NE(::access(dir.file("missing").c_str(), F_OK), 0) << "made through the link";
  EXPECT_EQ(append_outcome(dir.file("no-such-dir/log")), ExitCode::cant_create);
}

TEST(Files, AppendKeepsWhatIsThereAndMakesAMissingFile) {
  ScopedTempDir dir;
  const std::string path = dir.file("log");
  {
    const Fd made = open_for_append(path, 0640, "hint");
    ASSERT_TRUE(write_all(made.get(), "one\n"));
  }
  {
    const Fd again = open_for_append(path, 0640, "hint");
    ASSERT_TRUE(write_all(again.get(), "two\n"));
  }
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "one\ntwo\n");
}

TEST(Files, ReadingGivesNothingForALinkOrAFifoAndCutsAtTheLimit) {
  ScopedTempDir dir;
  std::ofstream(dir.file("file")) << "0123456789";
  EXPECT_EQ(read_regular_file(dir.file("file"), 4), "0123");
  EXPECT_EQ(read_regular_file(dir.file("file"), 100), "0123456789");
  ASSERT_EQ(::symlink(dir.file("file").c_str(), dir.file("link").c_str()), 0);
  EXPECT_EQ(read_regular_file(dir.file("link"), 100), std::nullopt);
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_EQ(read_regular_file(dir.file("fifo"), 100), std::nullopt);
}

TEST(Files, ReplacingAFileInAMissingDirectoryIsACantCreateError) {
  try {
    replace_file("/nonexistent-dir/x.prom", "x", 0644, "hint");
    FAIL() << "must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::cant_create);
    EXPECT_NE(std::string(error.what()).find("/nonexistent-dir/x.prom"), std::string::npos);
  }
}

}  // namespace
}  // namespace rbdsync
