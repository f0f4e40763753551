#include "lock/file_lock.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/fd.hpp"
#include "support/scoped_temp_dir.hpp"

extern char** environ;

namespace rbdsync::lock {
namespace {

using std::chrono::milliseconds;
using testing::ScopedTempDir;

ExitCode error_code_of(const std::string& path) {
  try {
    FileLock lock(path);
    (void)lock.try_lock();
  } catch (const Error& error) {
    return error.code();
  }
  return ExitCode::ok;
}

TEST(FileLock, FirstLockOnAFreeFileIsAcquired) {
  ScopedTempDir dir;
  FileLock lock(dir.file("sync.lock"));
  EXPECT_TRUE(lock.try_lock());
  EXPECT_EQ(lock.depth(), 1);
  lock.unlock();
  EXPECT_EQ(lock.depth(), 0);
}

TEST(FileLock, TwoObjectsOnOnePathExcludeEachOtherInOneProcess) {
  ScopedTempDir dir;
  FileLock first(dir.file("sync.lock"));
  FileLock second(dir.file("sync.lock"));
  ASSERT_TRUE(first.try_lock());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(second.try_lock());
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(500));
  first.unlock();
  EXPECT_TRUE(second.try_lock());
  second.unlock();
}

TEST(FileLock, SameThreadNestsAndOnlyTheOutermostReleaseUnlocks) {
  ScopedTempDir dir;
  FileLock lock(dir.file("sync.lock"));
  FileLock other(dir.file("sync.lock"));
  ASSERT_TRUE(lock.try_lock());
  ASSERT_TRUE(lock.try_lock());  // nests; no deadlock
  EXPECT_EQ(lock.depth(), 2);
  lock.unlock();
  EXPECT_FALSE(other.try_lock()) << "an inner release must not unlock the file";
  lock.unlock();
  EXPECT_TRUE(other.try_lock());
  other.unlock();
}

TEST(FileLock, AnotherThreadGetsBusyFromANonBlockingTry) {
  ScopedTempDir dir;
  FileLock lock(dir.file("sync.lock"));
  ASSERT_TRUE(lock.try_lock());
  // The descriptor is shared by the threads, so flock(2) alone would let it in.
  const bool got = std::async(std::launch::async, [&] { return lock.try_lock(); }).get();
  EXPECT_FALSE(got);
  lock.unlock();
}

TEST(FileLock, AnotherThreadThatMayWaitGetsTheLockWhenItIsReleased) {
  ScopedTempDir dir;
  FileLock lock(dir.file("sync.lock"));
  ASSERT_TRUE(lock.try_lock());
  std::atomic<bool> released{false};
  auto waiter = std::async(std::launch::async, [&] {
    const bool got = lock.try_lock_until(FileLock::Clock::now() + std::chrono::seconds(10));
    const bool after_release = released.load();
    if (got) {
      lock.unlock();
    }
    return got && after_release;
  });
  std::this_thread::sleep_for(milliseconds(100));
  released = true;
  lock.unlock();
  EXPECT_TRUE(waiter.get()) << "the waiter must get the lock, and only after the release";
}

TEST(FileLock, BoundedWaitGivesUpAfterItsTimeout) {
  ScopedTempDir dir;
  FileLock holder(dir.file("sync.lock"));
  FileLock waiter(dir.file("sync.lock"));
  ASSERT_TRUE(holder.try_lock());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(waiter.try_lock_until(start + milliseconds(300)));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, milliseconds(300));
  EXPECT_LT(waited, milliseconds(2000));
  holder.unlock();
}

TEST(FileLock, BoundedWaitSucceedsWhenTheHolderLetsGoInTime) {
  ScopedTempDir dir;
  FileLock holder(dir.file("sync.lock"));
  FileLock waiter(dir.file("sync.lock"));
  std::promise<bool> locked;
  std::promise<void> seen_busy;
  std::thread holding([&] {
    const bool got = holder.try_lock();
    locked.set_value(got);
    if (got) {
      // Lets go only once the waiter saw it busy, however slow this host is. Then holds
      // on a little, so that the bounded wait most likely has to wait; it gets the lock
      // whether it starts before or after the release, so no assertion rests on this.
      seen_busy.get_future().wait();
      std::this_thread::sleep_for(milliseconds(100));
      holder.unlock();
    }
  });
  ASSERT_TRUE(locked.get_future().get());
  EXPECT_FALSE(waiter.try_lock());
  seen_busy.set_value();
  EXPECT_TRUE(waiter.try_lock_until(FileLock::Clock::now() + std::chrono::seconds(5)));
  waiter.unlock();
  holding.join();
}

TEST(FileLock, UnlockByAThreadThatDoesNotHoldItIsRefused) {
  ScopedTempDir dir;
  FileLock lock(dir.file("sync.lock"));
  ASSERT_TRUE(lock.try_lock());
  auto other = std::async(std::launch::async, [&] {
    try {
      lock.unlock();
    } catch (const Error& error) {
      return error.code();
    }
    return ExitCode::ok;
  });
  EXPECT_EQ(other.get(), ExitCode::internal);
  lock.unlock();
}

TEST(FileLock, ScopedLockReleasesOnDestructionAndKeepsTheFile) {
  ScopedTempDir dir;
  const std::string path = dir.file("sync.lock");
  FileLock lock(path);
  FileLock other(path);
  {
    const auto held = ScopedLock::acquire(lock);
    ASSERT_TRUE(held);
    EXPECT_FALSE(ScopedLock::acquire(other).has_value());
  }
  EXPECT_TRUE(std::filesystem::exists(path)) << "the lock file must never be deleted";
  EXPECT_TRUE(ScopedLock::acquire(other).has_value());
}

TEST(FileLock, ALockHeldByAnotherOpenFileDescriptionIsBusy) {
  // What util-linux flock(1) or another process does: its own open() of the file.
  ScopedTempDir dir;
  const std::string path = dir.file("sync.lock");
  Fd other(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(other);
  ASSERT_EQ(::flock(other.get(), LOCK_EX | LOCK_NB), 0);
  FileLock lock(path);
  EXPECT_FALSE(lock.try_lock());
  other.reset();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(FileLock, ClosingAnotherDescriptorOfTheFileKeepsTheLock) {
  // The fcntl(2) record-lock pitfall: closing any descriptor of the file drops the
  // process's locks. flock(2) locks belong to the open file description instead.
  ScopedTempDir dir;
  const std::string path = dir.file("sync.lock");
  FileLock lock(path);
  ASSERT_TRUE(lock.try_lock());
  {
    Fd reader(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(reader);
  }
  FileLock other(path);
  EXPECT_FALSE(other.try_lock());
  lock.unlock();
}

TEST(FileLock, DescriptorIsNotInheritedByAChildProcess) {
  ScopedTempDir dir;
  const std::string path = dir.file("sync.lock");
  auto lock = std::make_unique<FileLock>(path);
  ASSERT_TRUE(lock->try_lock());

  // A child that outlives our lock object: had it inherited the descriptor (no
  // O_CLOEXEC), it would keep the lock after we let go.
  pid_t child = 0;
  const char* argv[] = {"sleep", "3", nullptr};
  ASSERT_EQ(::posix_spawnp(&child, "sleep", nullptr, nullptr, const_cast<char**>(argv), environ),
            0);
  lock.reset();
  FileLock after(path);
  EXPECT_TRUE(after.try_lock()) << "the child must not keep the lock";
  after.unlock();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

TEST(FileLock, ALockFileReplacedBeforeTheFlockIsLockedWhereItsNameNowPoints) {
  // A holder's lock file replaced under it (by whoever may remove it) while another run
  // had already opened the old one: a lock on the old inode would exclude nobody who
  // opens the name from now on.
  ScopedTempDir dir;
  const std::string path = dir.file("sync.lock");
  FileLock opened_first(path);
  { std::ofstream(dir.file("planted")) << ""; }
  ASSERT_EQ(::chmod(dir.file("planted").c_str(), 0660), 0);
  ASSERT_EQ(::rename(dir.file("planted").c_str(), path.c_str()), 0);
  ASSERT_TRUE(opened_first.try_lock());
  struct stat held {};
  struct stat named {};
  ASSERT_EQ(::fstat(opened_first.fd(), &held), 0);
  ASSERT_EQ(::stat(path.c_str(), &named), 0);
  EXPECT_EQ(held.st_ino, named.st_ino) << "the lock is on the file the name points at";
  FileLock opened_later(path);
  EXPECT_FALSE(opened_later.try_lock()) << "two runs held the lock at once";
  opened_first.unlock();
}

TEST(FileLock, MissingParentDirectoryIsCreatedWithGroupAccess) {
  ScopedTempDir dir;
  FileLock lock(dir.file("run/sync.lock"));
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0770U);
}

TEST(FileLock, NewLockFileIsGroupWritableWhateverTheUmask) {
  ScopedTempDir dir;
  const mode_t old_umask = ::umask(0077);
  { FileLock lock(dir.file("sync.lock")); }
  ::umask(old_umask);
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("sync.lock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660U);
}

TEST(FileLock, SymlinkIsRefusedAsCantCreateNotBusy) {
  ScopedTempDir dir;
  std::filesystem::create_symlink(dir.file("target"), dir.file("sync.lock"));
  EXPECT_EQ(error_code_of(dir.file("sync.lock")), ExitCode::cant_create);
  EXPECT_FALSE(std::filesystem::exists(dir.file("target")));
}

TEST(FileLock, DirectoryIsRefusedAsCantCreate) {
  ScopedTempDir dir;
  std::filesystem::create_directory(dir.file("sync.lock"));
  EXPECT_EQ(error_code_of(dir.file("sync.lock")), ExitCode::cant_create);
}

TEST(FileLock, FifoIsRefusedAsNotARegularFile) {
  ScopedTempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("sync.lock").c_str(), 0600), 0);
  EXPECT_EQ(error_code_of(dir.file("sync.lock")), ExitCode::cant_create);
}

TEST(FileLock, UncreatableDirectoryIsRefusedAsCantCreate) {
  ScopedTempDir dir;
  EXPECT_EQ(error_code_of(dir.file("no/such/dir/sync.lock")), ExitCode::cant_create);
}

TEST(FileLock, ErrorMessageNamesTheLockPathAndAFix) {
  ScopedTempDir dir;
  std::filesystem::create_directory(dir.file("sync.lock"));
  try {
    FileLock lock(dir.file("sync.lock"));
    FAIL() << "a directory must be refused";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(dir.file("sync.lock")), std::string::npos);
    EXPECT_FALSE(error.hint().empty());
  }
}

}  // namespace
}  // namespace rbdsync::lock
