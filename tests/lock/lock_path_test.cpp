#include "lock/lock_path.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/fd.hpp"
#include "lock/file_lock.hpp"
#include "lock/holder_record.hpp"
#include "support/other_user.hpp"
#include "support/pipe.hpp"
#include "support/scoped_temp_dir.hpp"

namespace rbdsync::lock {
namespace {

using testing::ScopedTempDir;

using testing::become;
using testing::exit_status_as;
using testing::k_member_uid;
using testing::k_other_gid;
using testing::k_other_uid;
using testing::k_shared_gid;

/// What open_lock_path() said: ok, or the Error's code and text.
struct Outcome {
  ExitCode code = ExitCode::ok;
  std::string text;  ///< message and hint
};

Outcome open_as_caller(const std::string& path, OpenMode mode = OpenMode::create,
                       const std::string& group = k_shared_group) {
  try {
    const Fd fd = open_lock_path(path, mode, group);
  } catch (const Error& error) {
    return {error.code(), std::string(error.what()) + " | " + error.hint()};
  }
  return {};
}

/// Expects `outcome` to be a refusal (cant_create) whose text says `why`.
void expect_refused(const Outcome& outcome, const std::string& why) {
  EXPECT_EQ(outcome.code, ExitCode::cant_create);
  EXPECT_NE(outcome.text.find(why), std::string::npos) << outcome.text;
}

/// Runs open_lock_path() in a child process as `uid`:`gid` with supplementary
/// `groups`, as another user on the machine would. Needs root.
Outcome open_as(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, const std::string& path,
                OpenMode mode = OpenMode::create) {
  auto [read_end, write_end] = testing::cloexec_pipe();
  const pid_t child = ::fork();
  if (child == 0) {
    become(uid, gid, groups);
    const Outcome outcome = open_as_caller(path, mode);
    const ssize_t written = ::write(write_end.get(), outcome.text.data(), outcome.text.size());
    ::_exit(written < 0 ? 124 : to_int(outcome.code));
  }
  write_end.reset();
  Outcome outcome;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(read_end.get(), buffer, sizeof buffer)) > 0) {
    outcome.text.append(buffer, static_cast<std::size_t>(got));
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  outcome.code = static_cast<ExitCode>(WIFEXITED(status) ? WEXITSTATUS(status) : 70);
  return outcome;
}

/// unlink(2) of `path` in a child process as `uid`:`gid` with supplementary `groups`;
/// 0 or the errno it failed with. Needs root.
int unlink_as(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, const std::string& path) {
  return exit_status_as(uid, gid, groups, [&] { return ::unlink(path.c_str()) == 0 ? 0 : errno; });
}

void set_owner(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
  ASSERT_EQ(::lchown(path.c_str(), uid, gid), 0) << path;
  ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

struct stat stat_of(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    throw std::runtime_error("cannot stat " + path);
  }
  return st;
}

/// A symlink that removes itself, for links outside a ScopedTempDir.
class ScopedSymlink {
 public:
  ScopedSymlink(const std::string& target, std::string link) : m_link(std::move(link)) {
    std::filesystem::create_directory_symlink(target, m_link);
  }
  ~ScopedSymlink() { ::unlink(m_link.c_str()); }
  ScopedSymlink(const ScopedSymlink&) = delete;
  ScopedSymlink& operator=(const ScopedSymlink&) = delete;

 private:
  std::string m_link;
};

// As metrics_test's: acting as several users needs root. CI runs as root; elsewhere this
// fails, saying so, rather than skip what it checks.
#define REQUIRE_ROOT()                                                                 \
  if (::geteuid() != 0) {                                                              \
    GTEST_FAIL() << "needs root (as in CI): it acts as several users or owns as root"; \
  }

// ----------------------------------------------------------------- symlinks and FIFOs

TEST(LockPath, SymlinkedDirectoryOnTheWayIsRefusedAndNothingIsCreated) {
  ScopedTempDir dir;
  std::filesystem::create_directory(dir.file("real"));
  std::filesystem::create_directory_symlink(dir.file("real"), dir.file("link"));
  expect_refused(open_as_caller(dir.file("link/sync.lock")), "symbolic link");
  EXPECT_FALSE(std::filesystem::exists(dir.file("real/sync.lock")));
}

TEST(LockPath, SymlinkedLockDirectoryInAStickyWorldWritableDirectoryIsRefused) {
  // The attack on /run/lock: any user may make rbd-sync there first, as a symlink to a
  // directory of their own. /tmp is the same kind of directory (root's, 1777).
  const struct stat tmp = stat_of("/tmp");
  ASSERT_TRUE(tmp.st_uid == 0 && (tmp.st_mode & 07777) == 01777) << "/tmp is not root's 1777";
  ScopedTempDir theirs;
  const std::string link = "/tmp/rbdsync-lock-link-" + std::to_string(::getpid());
  const ScopedSymlink planted(theirs.path(), link);
  for (const OpenMode mode : {OpenMode::create, OpenMode::inspect}) {
    expect_refused(open_as_caller(link + "/sync.lock", mode),
                   "'" + link + "' in the lock file's path is a symbolic link");
  }
  EXPECT_FALSE(std::filesystem::exists(theirs.file("sync.lock")));
}

TEST(LockPath, FifoIsRefusedByInspectionAtOnce) {
  // `rbd-sync status` opens read-only: without O_NONBLOCK a FIFO would block it until
  // some writer came along.
  ScopedTempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("sync.lock").c_str(), 0660), 0);
  auto inspected = std::make_shared<std::promise<ExitCode>>();
  auto answer = inspected->get_future();
  std::thread([inspected, path = dir.file("sync.lock")] {
    try {
      static_cast<void>(inspect_lock_file(path));
      inspected->set_value(ExitCode::ok);
    } catch (const Error& error) {
      inspected->set_value(error.code());
    }
  }).detach();
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "inspecting a FIFO hangs";
  EXPECT_EQ(answer.get(), ExitCode::cant_create);
}

TEST(LockPath, HardLinkedLockFileIsRefusedAndTheOtherFileIsUntouched) {
  // A hard link planted as the lock file would make root write its holder record into
  // the linked file (say /etc/shadow, where fs.protected_hardlinks is off).
  ScopedTempDir dir;
  { std::ofstream(dir.file("precious")) << "keep me"; }
  ASSERT_EQ(::link(dir.file("precious").c_str(), dir.file("sync.lock").c_str()), 0);
  expect_refused(open_as_caller(dir.file("sync.lock")), "2 links");
  std::ifstream precious(dir.file("precious"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(precious), {}), "keep me");
}

// ------------------------------------------------------------ modes and world writes

TEST(LockPath, WorldWritableLockDirectoryIsRefusedEvenWhenSticky) {
  ScopedTempDir dir;
  std::filesystem::create_directory(dir.file("lock"));
  ASSERT_EQ(::chmod(dir.file("lock").c_str(), 01777), 0);
  expect_refused(open_as_caller(dir.file("lock/sync.lock")), "writable by every user");
}

TEST(LockPath, WorldWritableDirectoryOnTheWayIsRefusedUnlessStickyAndRoots) {
  ScopedTempDir dir;
  std::filesystem::create_directories(dir.file("open/lock"));
  ASSERT_EQ(::chmod(dir.file("open").c_str(), 0777), 0);
  expect_refused(open_as_caller(dir.file("open/lock/sync.lock")),
                 "not a sticky directory of root's");
  // As /run/lock is: sticky and root's.
  REQUIRE_ROOT();
  ASSERT_EQ(::chmod(dir.file("open").c_str(), 01777), 0);
  EXPECT_EQ(open_as_caller(dir.file("open/lock/sync.lock")).code, ExitCode::ok);
}

TEST(LockPath, WorldWritableLockFileIsRefused) {
  ScopedTempDir dir;
  { std::ofstream(dir.file("sync.lock")) << ""; }
  ASSERT_EQ(::chmod(dir.file("sync.lock").c_str(), 0666), 0);
  expect_refused(open_as_caller(dir.file("sync.lock")), "writable by every user");
}

TEST(LockPath, MissingLockDirectoryIsMadeSetgidAndStickyForTheSharedGroup) {
  ScopedTempDir dir;
  const mode_t old_umask = ::umask(0077);
  const Outcome outcome = open_as_caller(dir.file("lock/sync.lock"), OpenMode::create, "nogroup");
  ::umask(old_umask);
  ASSERT_EQ(outcome.code, ExitCode::ok) << outcome.text;
  const struct stat made = stat_of(dir.file("lock"));
  EXPECT_EQ(made.st_mode & 07777, 03770U) << "setgid and sticky";
  const struct stat file = stat_of(dir.file("lock/sync.lock"));
  EXPECT_EQ(file.st_mode & 07777, 0660U);
  EXPECT_EQ(file.st_gid, made.st_gid) << "the lock file inherits the directory's group";
  REQUIRE_ROOT();
  const group* nogroup = ::getgrnam("nogroup");
  ASSERT_NE(nogroup, nullptr);
  EXPECT_EQ(made.st_gid, nogroup->gr_gid);
}

TEST(LockPath, InspectionOfAMissingDirectoryCreatesNothing) {
  ScopedTempDir dir;
  EXPECT_FALSE(inspect_lock_file(dir.file("lock/sync.lock")).exists);
  EXPECT_FALSE(std::filesystem::exists(dir.file("lock")));
}

TEST(LockPath, RelativePathIsWalkedFromTheWorkingDirectory) {
  ScopedTempDir dir;
  const auto old = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const Outcome outcome = open_as_caller("lock/./sync.lock");
  std::filesystem::current_path(old);
  EXPECT_EQ(outcome.code, ExitCode::ok) << outcome.text;
  EXPECT_TRUE(std::filesystem::exists(dir.file("lock/sync.lock")));
}

TEST(LockPath, PathThatNamesNoFileIsRefused) {
  ScopedTempDir dir;
  EXPECT_EQ(open_as_caller(dir.path() + "/").code, ExitCode::cant_create);
  EXPECT_EQ(open_as_caller(dir.file("..")).code, ExitCode::cant_create);
}

// ------------------------------------------------------------------- several users

TEST(LockPath, DirectoryOwnedByAnotherUserIsRefusedNamingTheOwner) {
  REQUIRE_ROOT();
  ScopedTempDir dir;
  std::filesystem::create_directory(dir.file("lock"));
  set_owner(dir.file("lock"), k_other_uid, k_shared_gid, 02770);
  for (const OpenMode mode : {OpenMode::create, OpenMode::inspect}) {
    expect_refused(
        open_as_caller(dir.file("lock/sync.lock"), mode),
        "belongs to user '" + std::to_string(k_other_uid) + "', neither root nor this user");
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("lock/sync.lock")));
}

TEST(LockPath, LockFileOfAnotherUserOutsideTheDirectorysGroupIsRefused) {
  REQUIRE_ROOT();
  ScopedTempDir dir;
  { std::ofstream(dir.file("sync.lock")) << ""; }
  set_owner(dir.file("sync.lock"), k_other_uid, k_other_gid, 0660);
  expect_refused(open_as_caller(dir.file("sync.lock")), "belongs to user");
}

/// /base (root, 0755) / lock (root:shared, 3770), as the package's tmpfiles.d entry
/// makes /run/lock/rbd-sync.
class SharedLockDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT();
    ASSERT_EQ(::chmod(base.path().c_str(), 0755), 0);
    std::filesystem::create_directory(base.file("lock"));
    set_owner(base.file("lock"), 0, k_shared_gid, 03770);
  }

  Outcome as_member(OpenMode mode = OpenMode::create) const {
    return open_as(k_member_uid, k_other_gid, {k_shared_gid}, lock_file, mode);
  }
  Outcome as_outsider(OpenMode mode = OpenMode::create) const {
    return open_as(k_other_uid, k_other_gid, {}, lock_file, mode);
  }

  ScopedTempDir base;
  std::string lock_file = base.file("lock/sync.lock");
};

TEST_F(SharedLockDirectory, MemberOpensTheLockFileRootMadeFirst) {
  ASSERT_EQ(open_as_caller(lock_file).code, ExitCode::ok);
  const struct stat made = stat_of(lock_file);
  EXPECT_EQ(made.st_uid, 0U);
  EXPECT_EQ(made.st_gid, k_shared_gid);
  EXPECT_EQ(made.st_mode & 07777, 0660U);
  const Outcome created = as_member();
  EXPECT_EQ(created.code, ExitCode::ok) << created.text;
  const Outcome inspected = as_member(OpenMode::inspect);
  EXPECT_EQ(inspected.code, ExitCode::ok) << inspected.text;
}

TEST_F(SharedLockDirectory, RootAndOtherMembersOpenTheLockFileAMemberMadeFirst) {
  const Outcome member = as_member();
  ASSERT_EQ(member.code, ExitCode::ok) << member.text;
  const struct stat made = stat_of(lock_file);
  EXPECT_EQ(made.st_uid, k_member_uid);
  EXPECT_EQ(made.st_gid, k_shared_gid);
  const Outcome root = open_as_caller(lock_file);
  EXPECT_EQ(root.code, ExitCode::ok) << root.text;
  const Outcome another =
      open_as(k_member_uid + 100, k_other_gid, {k_shared_gid}, lock_file, OpenMode::create);
  EXPECT_EQ(another.code, ExitCode::ok) << another.text;
}

TEST_F(SharedLockDirectory, NonMemberIsRefusedWithAHintNamingTheGroup) {
  ASSERT_EQ(open_as_caller(lock_file).code, ExitCode::ok);
  for (const OpenMode mode : {OpenMode::create, OpenMode::inspect}) {
    const Outcome outcome = as_outsider(mode);
    expect_refused(outcome, "Permission denied");
    EXPECT_NE(outcome.text.find("shared through group '" + std::to_string(k_shared_gid) + "'"),
              std::string::npos)
        << outcome.text;
  }
}

TEST_F(SharedLockDirectory, LockFileAnOlderVersionLeftToRootsGroupIsSharedAgainByRoot) {
  { std::ofstream(lock_file) << ""; }
  set_owner(lock_file, 0, 0, 0640);
  const Outcome before = as_member();
  EXPECT_EQ(before.code, ExitCode::cant_create) << before.text;
  EXPECT_NE(before.text.find("not shared with a group"), std::string::npos) << before.text;
  ASSERT_EQ(open_as_caller(lock_file).code, ExitCode::ok);
  const struct stat after = stat_of(lock_file);
  EXPECT_EQ(after.st_gid, k_shared_gid);
  EXPECT_EQ(after.st_mode & 07777, 0660U);
  EXPECT_EQ(as_member().code, ExitCode::ok);
}

TEST_F(SharedLockDirectory, MissingDirectoryIsNotMadeByAUserInADirectoryOfRoots) {
  std::filesystem::remove(base.file("lock"));
  const Outcome outcome = as_member();
  expect_refused(outcome, "does not exist");
  EXPECT_NE(outcome.text.find("tmpfiles"), std::string::npos) << outcome.text;
  EXPECT_FALSE(std::filesystem::exists(base.file("lock")));
}

TEST_F(SharedLockDirectory, NoMemberCanRemoveTheLockFileRootOrAnotherMemberMade) {
  // Removing it would let a member put a file of its own in its place while a sync
  // holds the old one; the next run would lock the new one (two syncs at once).
  ASSERT_EQ(open_as_caller(lock_file).code, ExitCode::ok);
  EXPECT_EQ(unlink_as(k_member_uid, k_other_gid, {k_shared_gid}, lock_file), EPERM);
  ASSERT_EQ(::unlink(lock_file.c_str()), 0);
  ASSERT_EQ(as_member().code, ExitCode::ok);
  EXPECT_EQ(unlink_as(k_member_uid + 100, k_other_gid, {k_shared_gid}, lock_file), EPERM);
}

TEST_F(SharedLockDirectory, ANonStickyDirectoryIsRefusedToMembersAndMadeStickyByItsOwner) {
  // What the tmpfiles.d entry of an older version made: 2770.
  set_owner(base.file("lock"), 0, k_shared_gid, 02770);
  for (const OpenMode mode : {OpenMode::create, OpenMode::inspect}) {
    const Outcome member = as_member(mode);
    EXPECT_EQ(member.code, ExitCode::cant_create);
    EXPECT_NE(member.text.find("is writable by its group '" + std::to_string(k_shared_gid) +
                               "' but not sticky (mode 2770)"),
              std::string::npos)
        << member.text;
    EXPECT_NE(member.text.find("chmod +t"), std::string::npos) << member.text;
  }
  EXPECT_EQ(stat_of(base.file("lock")).st_mode & 07777, 02770U) << "a member changes nothing";
  ASSERT_EQ(open_as_caller(lock_file).code, ExitCode::ok);
  EXPECT_EQ(stat_of(base.file("lock")).st_mode & 07777, 03770U);
  const Outcome member = as_member();
  EXPECT_EQ(member.code, ExitCode::ok) << member.text;
}

}  // namespace
}  // namespace rbdsync::lock
