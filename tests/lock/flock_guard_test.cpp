#include "lock/flock_guard.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/fd.hpp"
#include "support/scoped_temp_dir.hpp"

extern char** environ;

namespace rbdsync::lock {
namespace {

using testing::ScopedTempDir;

ExitCode error_code_of(const std::string& path) {
  try {
    (void)FlockGuard::try_acquire(path);
  } catch (const Error& error) {
    return error.code();
  }
  return ExitCode::ok;
}

TEST(FlockGuard, FirstGuardOnAFreeFileIsAcquired) {
  ScopedTempDir dir;
  const auto guard = FlockGuard::try_acquire(dir.file("sync.lock"));
  ASSERT_TRUE(guard.has_value());
  EXPECT_EQ(guard->path(), dir.file("sync.lock"));
}

TEST(FlockGuard, SecondGuardOnSameFileFailsWithoutWaiting) {
  ScopedTempDir dir;
  const auto first = FlockGuard::try_acquire(dir.file("sync.lock"));
  ASSERT_TRUE(first.has_value());
  const auto start = std::chrono::steady_clock::now();
  const auto second = FlockGuard::try_acquire(dir.file("sync.lock"));
  EXPECT_FALSE(second.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

TEST(FlockGuard, DestroyingTheGuardReleasesTheLockAndKeepsTheFile) {
  ScopedTempDir dir;
  const std::string path = dir.file("sync.lock");
  {
    const auto guard = FlockGuard::try_acquire(path);
    ASSERT_TRUE(guard);
  }
  EXPECT_TRUE(std::filesystem::exists(path)) << "the lock file must never be deleted";
  EXPECT_TRUE(FlockGuard::try_acquire(path).has_value());
}

TEST(FlockGuard, ALockHeldByAnotherOpenFileDescriptionIsBusy) {
  // What util-linux flock(1) or another process does: its own open() of the file.
  ScopedTempDir dir;
  const std::string path = dir.file("sync.lock");
  Fd other(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(other);
  ASSERT_EQ(::flock(other.get(), LOCK_EX | LOCK_NB), 0);
  EXPECT_FALSE(FlockGuard::try_acquire(path).has_value());
  other.reset();
  EXPECT_TRUE(FlockGuard::try_acquire(path).has_value());
}

TEST(FlockGuard, ClosingAnotherDescriptorOfTheFileKeepsTheLock) {
  // The fcntl(2) record-lock pitfall: closing any descriptor of the file drops the
  // process's locks. flock(2) locks belong to the open file description instead.
  ScopedTempDir dir;
  const std::string path = dir.file("sync.lock");
  const auto guard = FlockGuard::try_acquire(path);
  ASSERT_TRUE(guard);
  {
    Fd reader(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(reader);
  }
  EXPECT_FALSE(FlockGuard::try_acquire(path).has_value());
}

TEST(FlockGuard, DescriptorIsNotInheritedByAChildProcess) {
  ScopedTempDir dir;
  const std::string path = dir.file("sync.lock");
  auto guard = FlockGuard::try_acquire(path);
  ASSERT_TRUE(guard);

  // A child that outlives our guard: had it inherited the descriptor (no O_CLOEXEC),
  // it would keep the lock after we let go.
  pid_t child = 0;
  const char* argv[] = {"sleep", "3", nullptr};
  ASSERT_EQ(::posix_spawnp(&child, "sleep", nullptr, nullptr, const_cast<char**>(argv), environ),
            0);
  guard.reset();
  EXPECT_TRUE(FlockGuard::try_acquire(path).has_value());
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
}

TEST(FlockGuard, MissingParentDirectoryIsCreatedWithGroupAccess) {
  ScopedTempDir dir;
  const std::string path = dir.file("run/sync.lock");
  ASSERT_TRUE(FlockGuard::try_acquire(path).has_value());
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0770U);
}

TEST(FlockGuard, NewLockFileIsGroupWritableWhateverTheUmask) {
  ScopedTempDir dir;
  const mode_t old_umask = ::umask(0077);
  const auto guard = FlockGuard::try_acquire(dir.file("sync.lock"));
  ::umask(old_umask);
  ASSERT_TRUE(guard);
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("sync.lock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660U);
}

TEST(FlockGuard, SymlinkIsRefusedAsCantCreateNotBusy) {
  ScopedTempDir dir;
  std::filesystem::create_symlink(dir.file("target"), dir.file("sync.lock"));
  EXPECT_EQ(error_code_of(dir.file("sync.lock")), ExitCode::cant_create);
  EXPECT_FALSE(std::filesystem::exists(dir.file("target")));
}

TEST(FlockGuard, DirectoryIsRefusedAsCantCreate) {
  ScopedTempDir dir;
  std::filesystem::create_directory(dir.file("sync.lock"));
  EXPECT_EQ(error_code_of(dir.file("sync.lock")), ExitCode::cant_create);
}

TEST(FlockGuard, UncreatableDirectoryIsRefusedAsCantCreate) {
  ScopedTempDir dir;
  EXPECT_EQ(error_code_of(dir.file("no/such/dir/sync.lock")), ExitCode::cant_create);
}

TEST(FlockGuard, ErrorMessageNamesTheLockPath) {
  ScopedTempDir dir;
  std::filesystem::create_directory(dir.file("sync.lock"));
  try {
    (void)FlockGuard::try_acquire(dir.file("sync.lock"));
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(dir.file("sync.lock")), std::string::npos);
    EXPECT_FALSE(error.hint().empty());
  }
}

}  // namespace
}  // namespace rbdsync::lock
