// One lock directory for every caller (issue #15): root (cron), a member of the shared
// group (the web server's user, admins) and a user outside it, as real accounts made
// for the test, running the real binary against the test services. Needs root, as CI
// has: it adds and removes system users and a group.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "common/fd.hpp"
#include "integration/harness.hpp"
#include "lock/file_lock.hpp"
#include "support/poll.hpp"

namespace rbdsync::testing {
namespace {

/// Runs a command and throws when it fails.
void must_run(const std::vector<std::string>& argv) {
  const RunResult result = run_program(argv, 60);
  if (result.exit_code != 0) {
    std::string line;
    for (const auto& arg : argv) {
      line += arg + " ";
    }
    throw std::runtime_error(line + "failed: " + result.err);
  }
}

/// Held for a LockDirTest's whole life. Another suite on this machine may be adding
/// users meanwhile (useradd fails while /etc/passwd is locked), or setting the same
/// sysctl; the package test (deb_test.sh) takes it too.
class MachineWideLock {
 public:
  MachineWideLock() : m_fd(::open(k_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (!m_fd || ::flock(m_fd.get(), LOCK_EX) != 0) {
      throw std::runtime_error(std::string("cannot lock ") + k_path);
    }
  }

 private:
  static constexpr const char* k_path = "/tmp/rbd-sync-test-accounts.lock";
  Fd m_fd;
};

/// A sysctl set for the test's lifetime, then put back.
class SysctlSetting {
 public:
  SysctlSetting(std::string name, const std::string& value) : m_name(std::move(name)) {
    m_old = read_file("/proc/sys/" + path());
    write(value);
  }
  ~SysctlSetting() { write(m_old); }
  SysctlSetting(const SysctlSetting&) = delete;
  SysctlSetting& operator=(const SysctlSetting&) = delete;

 private:
  std::string path() const {
    std::string path = m_name;
    std::replace(path.begin(), path.end(), '.', '/');
    return path;
  }
  void write(const std::string& value) const {
    std::ofstream out("/proc/sys/" + path());
    out << value;
    out.flush();
    if (!out) {
      throw std::runtime_error("cannot set " + m_name + " to " + value);
    }
  }

  std::string m_name;
  std::string m_old;
};

/// chown OWNER then chmod MODE (chown may clear the setgid bit).
void set_owner(const std::string& path, const std::string& owner, mode_t mode) {
  must_run({"chown", owner, path});
  if (::chmod(path.c_str(), mode) != 0) {
    throw std::runtime_error("chmod " + path + " failed");
  }
}

/// A system group and three system users, two in it and one not; removed on destruction.
class Accounts {
 public:
  Accounts()
      : group(unique_name("rbdsync-g")),
        member(unique_name("rbdsync-m")),
        second_member(unique_name("rbdsync-m")),
        outsider(unique_name("rbdsync-o")) {
    must_run({"groupadd", "--system", group});
    for (const auto& [user, groups] : {std::pair{member, std::string("--groups=") + group},
                                       std::pair{second_member, std::string("--groups=") + group},
                                       std::pair{outsider, std::string()}}) {
      std::vector<std::string> argv{
          "useradd",          "--system",   "--no-user-group", "--gid",   "nogroup",
          "--no-create-home", "--home-dir", "/nonexistent",    "--shell", "/usr/sbin/nologin"};
      if (!groups.empty()) {
        argv.push_back(groups);
      }
      argv.push_back(user);
      must_run(argv);
    }
  }
  ~Accounts() {
    run_program({"userdel", member});
    run_program({"userdel", second_member});
    run_program({"userdel", outsider});
    run_program({"groupdel", group});
  }
  Accounts(const Accounts&) = delete;
  Accounts& operator=(const Accounts&) = delete;

  const std::string group;
  const std::string member;
  const std::string second_member;
  const std::string outsider;
};

/// dir (root, 0755) / lock (root:group, 3770), as the package's tmpfiles.d entry makes
/// /run/lock/rbd-sync, and a copy of the test services' credentials each user can read.
/// With fs.protected_regular = 2, as Debian's procps sets it: in a sticky directory its
/// group may write, an O_CREAT open of another user's file fails (EACCES).
class LockDirTest : public IntegrationTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0U) << "these tests add users and a group: run them as root (CI does)";
    machine_lock = std::make_unique<MachineWideLock>();
    protected_regular = std::make_unique<SysctlSetting>("fs.protected_regular", "2");
    accounts = std::make_unique<Accounts>();
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    lock_dir = dir.file("lock");
    lock_file = lock_dir + "/sync.lock";
    std::filesystem::create_directory(lock_dir);
    set_owner(lock_dir, "root:" + accounts->group, 03770);

    // The services' own files are root's alone; each user gets a copy, as a deployment
    // gives the web server's user its keyring and .pgpass.
    const std::string ceph_dir = required_env("RBDSYNC_TEST_CEPH_DIR");
    const std::string ceph_id = required_env("RBDSYNC_TEST_CEPH_ID");
    for (const auto& user : {accounts->member, accounts->second_member, accounts->outsider}) {
      const std::string home = dir.file("creds-" + user);
      std::filesystem::create_directory(home);
      std::filesystem::copy_file(required_env("RBDSYNC_TEST_CEPH_CONF"), home + "/ceph.conf");
      std::filesystem::copy_file(ceph_dir + "/ceph.client." + ceph_id + ".keyring",
                                 home + "/keyring");
      std::filesystem::copy_file(required_env("PGPASSFILE"), home + "/pgpass");
      must_run({"chown", "-R", user + ":nogroup", home});
      must_run({"chmod", "-R", "u=rwX,go=", home});
    }
    pool = migrate_and_create_pool("lockdir");
    ceph.create_images(pool, "img", 3, 4ULL << 20);
  }

  /// `rbd-sync ARGS` as `user` (runuser), with that user's copy of the credentials.
  RunResult as(const std::string& user, const std::vector<std::string>& args) const {
    const std::string home = dir.file("creds-" + user);
    std::vector<std::string> argv{
        "runuser", "-u", user, "--", "env", "PGPASSFILE=" + home + "/pgpass", RBDSYNC_TEST_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    // A FIFO or a hang must not stop the suite: 30 s is far more than any answer here.
    return run_program(argv, 30);
  }

  /// `run` arguments for `user`'s copy of the credentials, this test's pool only.
  std::vector<std::string> user_run(const std::string& user) const {
    const std::string home = dir.file("creds-" + user);
    return {"run",
            "--db",
            db.conninfo(),
            "--conf",
            home + "/ceph.conf",
            "--keyring",
            home + "/keyring",
            "--id",
            required_env("RBDSYNC_TEST_CEPH_ID"),
            "--lock-file",
            lock_file,
            "--ceph-timeout",
            "20",
            "--pool",
            pool};
  }

  RunResult status_as(const std::string& user) const {
    return as(user, {"status", "--lock-file", lock_file});
  }

  // Members are destroyed in reverse: the accounts and the sysctl go before the lock.
  std::unique_ptr<MachineWideLock> machine_lock;
  std::unique_ptr<SysctlSetting> protected_regular;
  std::unique_ptr<Accounts> accounts;
  std::string lock_dir;
  std::string pool;
};

TEST_F(LockDirTest, RootRunsFirstThenAMemberRunsStatusAndRun) {
  const RunResult root = sync({"--pool", pool});
  ASSERT_EQ(root.exit_code, 0) << root.err;
  struct stat made {};
  ASSERT_EQ(::stat(lock_file.c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, 0U);
  EXPECT_EQ(made.st_mode & 07777, 0660U);

  const RunResult status = status_as(accounts->member);
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("succeeded"), std::string::npos) << status.out;
  const RunResult run = as(accounts->member, user_run(accounts->member));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("images=3"), std::string::npos) << run.out;

  // While root holds the lock, the member is told so (75), never refused (73).
  lock::FileLock held(lock_file);
  ASSERT_TRUE(held.try_lock());
  const RunResult busy = as(accounts->member, user_run(accounts->member));
  EXPECT_EQ(busy.exit_code, 75) << busy.err;
  EXPECT_NE(busy.err.find("already running"), std::string::npos) << busy.err;
  const RunResult busy_status = status_as(accounts->member);
  EXPECT_EQ(busy_status.exit_code, 75) << busy_status.err;
  held.unlock();
}

TEST_F(LockDirTest, AMemberRunsFirstThenRootAndTheMemberShareTheLockFile) {
  const RunResult first = as(accounts->member, user_run(accounts->member));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  struct stat made {};
  ASSERT_EQ(::stat(lock_file.c_str(), &made), 0);
  EXPECT_NE(made.st_uid, 0U) << "the member made it";
  EXPECT_EQ(made.st_mode & 07777, 0660U);

  const RunResult root = sync({"--pool", pool});
  EXPECT_EQ(root.exit_code, 0) << root.err;
  const RunResult status = run_rbd_sync({"status", "--lock-file", lock_file});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  const RunResult again = as(accounts->member, user_run(accounts->member));
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

TEST_F(LockDirTest, DetachedRunsOfRootThenAMemberBothLogBesideTheLockFile) {
  // detached.log lives in the shared directory too: root's run makes it, the member's
  // run must be able to take it over (before, it was 0640 root's under root's umask,
  // and the member's output was discarded).
  const auto detached = [this](const std::string& user) {
    std::vector<std::string> args = user == "root" ? run_args({"--pool", pool}) : user_run(user);
    args.insert(args.end(), {"--detach", "--json"});
    const RunResult answer = user == "root" ? run_rbd_sync(args) : as(user, args);
    EXPECT_EQ(answer.exit_code, 0) << answer.out << answer.err;
    const std::string run_id = nlohmann::json::parse(answer.out).at("run_id");
    // Each poll is a new connection or an `rbd-sync status`: not too often.
    testing::wait_for(
        "detached run " + run_id + " to end",
        [&] {
          return db.rows("SELECT status FROM rbdsync.runs WHERE run_id = '" + run_id + "'") !=
                 std::vector<std::string>{"running"};
        },
        std::chrono::seconds(60), std::chrono::milliseconds(100));
    // The row ends before the process does; the lock file says when it let go.
    testing::wait_for(
        "detached run " + run_id + " to let go of the lock file",
        [&] { return !lock_status(lock_file)["running"].get<bool>(); }, std::chrono::seconds(60),
        std::chrono::milliseconds(50));
    return run_id;
  };
  const mode_t old_umask = ::umask(022);
  const std::string root_run = detached("root");
  ::umask(old_umask);
  const std::string member_run = detached(accounts->member);
  std::ifstream log(lock_dir + "/detached.log");
  const std::string text(std::istreambuf_iterator<char>(log), {});
  EXPECT_NE(text.find("\"run_id\":\"" + member_run + "\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"status\":\"succeeded\""), std::string::npos) << text;
  EXPECT_EQ(text.find(root_run), std::string::npos) << "emptied when the member's run started";
}

TEST_F(LockDirTest, AMemberCannotReplaceTheLockFileASyncHoldsAndSoCannotStartASecondSync) {
  // The directory as an older version's tmpfiles.d entry left it (2770): root's first
  // run makes it sticky.
  set_owner(lock_dir, "root:" + accounts->group, 02770);
  const RunResult first = sync({"--pool", pool});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  struct stat made {};
  ASSERT_EQ(::stat(lock_dir.c_str(), &made), 0);
  EXPECT_EQ(made.st_mode & 07777, 03770U);

  // A sync of root's holds the lock file; a member replaces it with a file of its own.
  lock::FileLock held(lock_file);
  ASSERT_TRUE(held.try_lock());
  const RunResult replaced =
      run_program({"runuser", "-u", accounts->member, "--", "sh", "-c",
                   "rm -f \"$0\" && touch \"$0\" && chmod 0660 \"$0\"", lock_file});
  EXPECT_NE(replaced.exit_code, 0) << "the member removed root's lock file";
  // Whatever happened to the name, a second member's sync is told that one is running.
  const RunResult second = as(accounts->second_member, user_run(accounts->second_member));
  EXPECT_EQ(second.exit_code, 75) << second.err;
  EXPECT_NE(second.err.find("already running"), std::string::npos) << second.err;
  held.unlock();
}

TEST_F(LockDirTest, ANonMemberGets73NamingTheGroup) {
  ASSERT_EQ(sync({"--pool", pool}).exit_code, 0);
  for (const auto& args : {std::vector<std::string>{"status", "--lock-file", lock_file},
                           user_run(accounts->outsider)}) {
    const RunResult refused = as(accounts->outsider, args);
    EXPECT_EQ(refused.exit_code, 73) << args[0] << ": " << refused.err;
    EXPECT_NE(refused.err.find("group '" + accounts->group + "'"), std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("usermod -a -G " + accounts->group + " " + accounts->outsider),
              std::string::npos)
        << refused.err;
  }
  std::vector<std::string> json = user_run(accounts->outsider);
  json.emplace_back("--json");
  const RunResult refused = as(accounts->outsider, json);
  EXPECT_EQ(refused.exit_code, 73);
  const auto object = nlohmann::json::parse(refused.out);
  EXPECT_NE(object.at("hint").get<std::string>().find(accounts->group), std::string::npos)
      << refused.out;
}

TEST_F(LockDirTest, ALockDirectoryOwnedByAnotherUserIsRefusedForRootAndMembers) {
  // What a user who got to /run/lock first (before root) would leave there.
  set_owner(lock_dir, accounts->outsider + ":" + accounts->group, 03770);
  const RunResult root = sync({"--pool", pool});
  EXPECT_EQ(root.exit_code, 73) << root.err;
  EXPECT_NE(root.err.find("belongs to user '" + accounts->outsider + "'"), std::string::npos)
      << root.err;
  const RunResult status = run_rbd_sync({"status", "--lock-file", lock_file});
  EXPECT_EQ(status.exit_code, 73) << status.err;
  const RunResult member = as(accounts->member, user_run(accounts->member));
  EXPECT_EQ(member.exit_code, 73) << member.err;
  EXPECT_FALSE(std::filesystem::exists(lock_file)) << "nothing is created in it";
}

TEST_F(LockDirTest, ASymlinkedLockDirectoryInAStickyWorldWritableDirectoryIsRefused) {
  // /run/lock's situation: a sticky directory of root's that everybody may write to,
  // where another user planted the lock directory as a symlink to one of their own.
  const std::string shared = dir.file("shared");
  std::filesystem::create_directory(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  const RunResult made =
      run_program({"runuser", "-u", accounts->outsider, "--", "sh", "-c",
                   "mkdir -m 0777 \"$0/theirs\" && ln -s \"$0/theirs\" \"$0/rbd-sync\"", shared});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  lock_file = shared + "/rbd-sync/sync.lock";

  const RunResult root = sync({"--pool", pool});
  EXPECT_EQ(root.exit_code, 73) << root.err;
  EXPECT_NE(root.err.find("is a symbolic link"), std::string::npos) << root.err;
  const RunResult status = run_rbd_sync({"status", "--lock-file", lock_file});
  EXPECT_EQ(status.exit_code, 73) << status.err;
  const RunResult member = status_as(accounts->member);
  EXPECT_EQ(member.exit_code, 73) << member.err;
  EXPECT_FALSE(std::filesystem::exists(shared + "/theirs/sync.lock"));
}

TEST_F(LockDirTest, AFifoAsTheLockFileMakesStatusExit73AtOnce) {
  ASSERT_EQ(::mkfifo(lock_file.c_str(), 0660), 0);
  must_run({"chgrp", accounts->group, lock_file});
  // Opening a FIFO with no writer blocks for ever: a run that did so would be killed at
  // the 30 s limit and could not exit 73 by itself. The bounds below only say so plainly;
  // they are not timings (a loaded host stretches an answer, never to 20 s).
  const RunResult root = run_rbd_sync({"status", "--lock-file", lock_file}, 30);
  EXPECT_EQ(root.exit_code, 73) << root.err;
  EXPECT_LT(root.seconds, 20.0);
  EXPECT_NE(root.err.find("not a regular file"), std::string::npos) << root.err;
  const RunResult member = status_as(accounts->member);
  EXPECT_EQ(member.exit_code, 73) << member.err;
  EXPECT_LT(member.seconds, 20.0);
  const RunResult run = sync({"--pool", pool});
  EXPECT_EQ(run.exit_code, 73) << run.err;
}

}  // namespace
}  // namespace rbdsync::testing
