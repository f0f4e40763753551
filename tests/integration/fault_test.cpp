// Faults on the real cluster and database. Each test takes a checksum of every
// inventory table, causes the fault (mid-sync where that makes sense), and checks the
// exit code, the one-line message, and that the checksum did not change. The time
// each run took to fail is printed as "[fault] ..." lines for the issue notes.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/fd.hpp"
#include "integration/harness.hpp"
#include "lock/file_lock.hpp"
#include "support/poll.hpp"

namespace rbdsync::testing {
namespace {

constexpr int k_images = 200;

pid_t pid_from_file(const std::string& path) {
  return std::stoi(read_file(path));
}

int count_lines(const std::string& text) {
  int lines = 0;
  for (const char c : text) {
    lines += c == '\n' ? 1 : 0;
  }
  return lines;
}

/// The "rbd-sync: error: ..." lines of stderr (log lines may come before them).
std::vector<std::string> error_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("rbd-sync: error: ", 0) == 0) {
      lines.push_back(line);
    }
  }
  return lines;
}

/// The Ceph client's operations in flight, asked of its admin socket `asok` (the
/// objecter's own count: sent and unanswered, or queued for an OSD); nullopt while the
/// socket does not answer yet.
std::optional<std::size_t> ops_in_flight(const std::string& asok) {
  const Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (asok.size() >= sizeof address.sun_path) {
    throw std::runtime_error("admin socket path too long: " + asok);
  }
  asok.copy(address.sun_path, asok.size());
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return std::nullopt;
  }
  // The admin socket protocol: a JSON command ending in NUL; a big-endian u32 length,
  // then the answer.
  const std::string request = std::string(R"({"prefix":"objecter_requests"})") + '\0';
  if (::write(fd.get(), request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    return std::nullopt;
  }
  std::string answer;
  char buffer[4096];
  for (ssize_t got = 0; (got = ::read(fd.get(), buffer, sizeof buffer)) > 0;) {
    answer.append(buffer, static_cast<std::size_t>(got));
  }
  if (answer.size() < 4) {
    return std::nullopt;
  }
  const auto parsed = nlohmann::json::parse(answer.substr(4), nullptr, false);
  if (!parsed.is_object() || !parsed.contains("ops")) {
    return std::nullopt;
  }
  return parsed.at("ops").size();
}

/// Whether `signal_number` is pending for process `pid` (not yet taken by any thread).
bool signal_pending(pid_t pid, int signal_number) {
  std::istringstream status(read_file("/proc/" + std::to_string(pid) + "/status"));
  const unsigned long long bit = 1ULL << (signal_number - 1);
  for (std::string line; std::getline(status, line);) {
    if ((line.rfind("ShdPnd:", 0) == 0 || line.rfind("SigPnd:", 0) == 0) &&
        (std::stoull(line.substr(7), nullptr, 16) & bit) != 0) {
      return true;
    }
  }
  return false;
}

void report(const std::string& fault, const RunResult& result) {
  const auto errors = error_lines(result.err);
  std::cout << "[fault] " << fault << ": exit " << result.exit_code << " after " << result.seconds
            << "s: " << (errors.empty() ? "" : errors.front()) << std::endl;
}

class FaultTest : public IntegrationTest {
 protected:
  void SetUp() override {
    pool = migrate_and_create_pool("fault");
    ceph.create_images(pool, "img", k_images, 8ULL << 20);
    const RunResult first = sync({"--pool", pool});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    // Make the next sync want to write: a resize, a removal, an addition.
    ceph.resize_image(pool, "img-0", 16ULL << 20);
    ceph.remove_image(pool, "img-1");
    ceph.create_image(pool, "new", 8ULL << 20);
    before = db.checksum();
  }

  /// Expects a failed run: `exit_code`, one line on stderr containing `message`, and
  /// the inventory exactly as before.
  void expect_failure(const std::string& fault, const RunResult& result, int exit_code,
                      const std::string& message) {
    report(fault, result);
    EXPECT_EQ(result.exit_code, exit_code) << result.err;
    const auto errors = error_lines(result.err);
    ASSERT_EQ(errors.size(), 1U) << "one error line, not:\n" << result.err;
    EXPECT_NE(errors.front().find(message), std::string::npos) << result.err;
    EXPECT_EQ(db.checksum(), before) << "the inventory must be exactly as before";
  }

  std::string ceph_dir() const { return required_env("RBDSYNC_TEST_CEPH_DIR"); }
  std::string pg_dir() const { return required_env("RBDSYNC_TEST_PG_DIR"); }

  std::string pool;
  std::string before;
};

/// A process stopped (SIGSTOP) until thaw() or the end of the scope: a test that fails
/// with the shared OSD frozen must not leave it so for every test after it.
class Frozen {
 public:
  explicit Frozen(pid_t pid) : m_pid(pid) { ::kill(m_pid, SIGSTOP); }
  ~Frozen() { thaw(); }
  Frozen(const Frozen&) = delete;
  Frozen& operator=(const Frozen&) = delete;
  void thaw() { ::kill(m_pid, SIGCONT); }

 private:
  pid_t m_pid;
};

/// Waits until a statement of the sync is blocked on a lock, i.e. mid-write.
void wait_until_write_blocked(const TestDatabase& db) {
  for (int attempt = 0; attempt < 1500; ++attempt) {
    const auto waiting = db.rows(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'rbd-sync' "
        "AND wait_event_type = 'Lock'");
    if (waiting == std::vector<std::string>{"1"}) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("the sync never blocked in its write phase");
}

void signal_during_write_phase(FaultTest& test, const TestDatabase& db,
                               const std::vector<std::string>& args, int signal_number,
                               const std::string& name, RunResult& result,
                               double& seconds_after_signal) {
  BlockingSession blocker(db);
  BackgroundRun run(args);
  wait_until_write_blocked(db);
  const auto signalled = std::chrono::steady_clock::now();
  ::kill(run.pid(), signal_number);
  result = run.wait();
  seconds_after_signal =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  blocker.release();
  std::cout << "[fault] " << name << " in the write phase: exit " << result.exit_code << " "
            << seconds_after_signal
            << "s after the signal: " << result.err.substr(0, result.err.find('\n')) << std::endl;
  (void)test;
}

TEST_F(FaultTest, SigtermInTheWritePhaseRollsBackAndExits143) {
  RunResult result;
  double after = 0;
  signal_during_write_phase(*this, db, run_args({"--pool", pool}), SIGTERM, "SIGTERM", result,
                            after);
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_NE(result.err.find("interrupted by SIGTERM"), std::string::npos) << result.err;
  EXPECT_LT(after, 3.0) << "the running statement is cancelled, not waited for";
  EXPECT_EQ(db.checksum(), before);
  // Not "the latest": started_at has whole seconds, and the fixture's sync may share it.
  EXPECT_EQ(db.rows("SELECT status FROM rbdsync.runs WHERE status <> 'succeeded'"),
            std::vector<std::string>{"interrupted"});
  EXPECT_FALSE(lock_status(lock_file)["running"].get<bool>()) << "the guard is released";
}

TEST_F(FaultTest, SigintInTheWritePhaseRollsBackAndExits130) {
  RunResult result;
  double after = 0;
  signal_during_write_phase(*this, db, run_args({"--pool", pool}), SIGINT, "SIGINT", result, after);
  EXPECT_EQ(result.exit_code, 130) << result.err;
  EXPECT_NE(result.err.find("interrupted by SIGINT"), std::string::npos) << result.err;
  EXPECT_EQ(db.checksum(), before);
}

TEST_F(FaultTest, SigkillInTheWritePhaseLeavesTheDatabaseAsItWas) {
  RunResult result;
  double after = 0;
  signal_during_write_phase(*this, db, run_args({"--pool", pool}), SIGKILL, "SIGKILL", result,
                            after);
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
  EXPECT_EQ(db.checksum(), before);
  // The next run is not blocked by anything the killed one left behind.
  const RunResult next = sync({"--pool", pool});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_NE(next.out.find("changed=1 removed=1"), std::string::npos) << next.out;
}

TEST_F(FaultTest, SignalWhileReadsAreInFlightRollsBackAndExitsWithTheSignalsCode) {
  // Reads are held in flight at a frozen OSD (up to 256 header reads with the direct
  // reader, all 200 here; 32 opens with librbd) when the signal comes; the OSD resumes
  // before the grace period ends, so the run gets to stop on its own: roll back, record,
  // release.
  const pid_t osd = pid_from_file(ceph_dir() + "/run/osd.0.pid");
  // The test cluster's ceph.conf gives clients no admin socket (concurrent ones would
  // share its path); this test's runs get one each, to be asked what is in flight.
  const std::string conf = dir.file("ceph.conf");
  std::ofstream(conf) << read_file(required_env("RBDSYNC_TEST_CEPH_CONF")) << "\n[client]\n"
                      << "admin_socket = " << dir.path() << "/client.$pid.asok\n";
  struct Case {
    const char* reader;
    int signal_number;
    int exit_code;
  };
  for (const Case& c :
       {Case{"direct", SIGTERM, 143}, Case{"direct", SIGINT, 130}, Case{"librbd", SIGTERM, 143}}) {
    const std::string what = std::string("--reader ") + c.reader + ", " +
                             (c.signal_number == SIGTERM ? "SIGTERM" : "SIGINT") +
                             " while reads are in flight";
    SCOPED_TRACE(what);
    std::vector<std::string> args = run_args({"--pool", pool, "--reader", c.reader});
    std::replace(args.begin(), args.end(), required_env("RBDSYNC_TEST_CEPH_CONF"), conf);
    BackgroundRun run(args);
    stop_when_reading_starts(run.pid(), lock_file);
    Frozen frozen_osd(osd);
    ::kill(run.pid(), SIGCONT);
    // Events, not pauses: the client's objecter holds an operation for the frozen OSD;
    // the signal is taken (the watcher thread took it, so the run knows); then the OSD
    // may answer. (Waiting instead for request bytes unread in the OSD's sockets missed
    // the case where the OSD had read them just before it froze, and waited in vain.)
    const std::string asok = dir.file("client." + std::to_string(run.pid()) + ".asok");
    wait_for("a read in flight", [&] { return ops_in_flight(asok).value_or(0) > 0; });
    ::kill(run.pid(), c.signal_number);
    wait_for("the signal to be taken", [&] { return !signal_pending(run.pid(), c.signal_number); });
    frozen_osd.thaw();
    const RunResult result = run.wait();
    report(what, result);
    EXPECT_EQ(result.exit_code, c.exit_code) << result.err;
    EXPECT_NE(result.err.find("interrupted by"), std::string::npos) << result.err;
    EXPECT_EQ(db.checksum(), before);
    // By pid: started_at has whole seconds, and the fixture's own sync may share it.
    EXPECT_EQ(db.rows("SELECT status FROM rbdsync.runs WHERE pid = " + std::to_string(run.pid())),
              std::vector<std::string>{"interrupted"});
    EXPECT_FALSE(lock_status(lock_file)["running"].get<bool>()) << "the guard is released";
  }
}

TEST_F(FaultTest, FrozenOsdWhileReadingFailsWithinTheCephTimeout) {
  const pid_t osd = pid_from_file(ceph_dir() + "/run/osd.0.pid");
  BackgroundRun run(run_args({"--pool", pool, "--ceph-timeout", "3"}));
  stop_when_reading_starts(run.pid(), lock_file);
  Frozen frozen_osd(osd);
  ::kill(run.pid(), SIGCONT);
  RunResult result = run.wait();
  frozen_osd.thaw();
  // The read may have been between two images; either way it must end, not hang.
  expect_failure("OSD frozen (SIGSTOP) while reading, --ceph-timeout 3", result, 69, "timed out");
  EXPECT_LT(result.seconds, 20.0);
}

TEST_F(FaultTest, MonKilledBeforeTheSyncFailsWithinTheCephTimeout) {
  run_script("ceph-cluster.sh", {"kill-mon", ceph_dir()});
  const RunResult result = sync({"--pool", pool, "--ceph-timeout", "3"});
  run_script("ceph-cluster.sh", {"start-mon", ceph_dir()});
  expect_failure("mon killed before the sync, --ceph-timeout 3", result, 69,
                 "cannot connect to the Ceph cluster");
  EXPECT_LT(result.seconds, 10.0);
}

TEST_F(FaultTest, MonKilledWhileReadingEndsWithinTheCephTimeout) {
  BackgroundRun run(run_args({"--pool", pool, "--ceph-timeout", "3"}));
  stop_when_reading_starts(run.pid(), lock_file);
  run_script("ceph-cluster.sh", {"kill-mon", ceph_dir()});
  ::kill(run.pid(), SIGCONT);
  const RunResult result = run.wait();
  run_script("ceph-cluster.sh", {"start-mon", ceph_dir()});
  report("mon killed while reading, --ceph-timeout 3", result);
  // Reads go to the OSD, so the sync may well finish without the mon; what it must not
  // do is hang, or leave half an inventory.
  EXPECT_LT(result.seconds, 20.0);
  if (result.exit_code == 0) {
    EXPECT_NE(result.out.find("changed=1 removed=1"), std::string::npos) << result.out;
  } else {
    EXPECT_EQ(result.exit_code, 69) << result.err;
    EXPECT_EQ(db.checksum(), before);
  }
}

TEST_F(FaultTest, PostgresStoppedBeforeTheSyncFailsAsUnavailable) {
  run_script("pg-server.sh", {"halt", pg_dir()});
  const RunResult result = sync({"--pool", pool});
  run_script("pg-server.sh", {"resume", pg_dir()});
  expect_failure("PostgreSQL stopped before the sync", result, 69, "cannot connect to PostgreSQL");
}

TEST_F(FaultTest, PostgresStoppedWhileReadingFailsAsUnavailable) {
  BackgroundRun run(run_args({"--pool", pool}));
  stop_when_reading_starts(run.pid(), lock_file);
  run_script("pg-server.sh", {"halt", pg_dir()});
  ::kill(run.pid(), SIGCONT);
  const RunResult result = run.wait();
  run_script("pg-server.sh", {"resume", pg_dir()});
  expect_failure("PostgreSQL stopped while reading", result, 69, "PostgreSQL");
}

TEST_F(FaultTest, WrongDatabasePasswordFailsAsNoPermission) {
  std::ofstream(dir.file("pgpass")) << "*:*:*:*:not-the-password\n";
  ::chmod(dir.file("pgpass").c_str(), 0600);
  const RunResult result =
      run_rbd_sync(run_args({"--pool", pool}), 60, {}, {"PGPASSFILE=" + dir.file("pgpass")});
  expect_failure("wrong PostgreSQL password", result, 77, "password authentication failed");
}

TEST_F(FaultTest, WrongCephxKeyFailsAsNoPermission) {
  std::ofstream(dir.file("keyring"))
      << "[client.rbdsync]\n\tkey = AQBYRFdnAAAAABAAd+8mMiIaqG0PCe5Db4CHiQ==\n";
  const RunResult result = sync({"--pool", pool, "--keyring", dir.file("keyring")});
  expect_failure("wrong cephx key", result, 77, "refused to authenticate");
}

// Ceph 20 makes keys of type aes256k ("AgB..."); a client library before it cannot
// read one and fails with EIO. This build's library is Ceph 16 or 18 (the suite runs it
// against the host's Pacific cluster): the error names the key's type and the fix.
TEST_F(FaultTest, AKeyOfATypeTheLibraryCannotReadIsNamedWithTheFix) {
  std::ofstream(dir.file("keyring"))
      << "[client.rbdsync]\n\tkey = AgBYRFdnAAAAABAAd+8mMiIaqG0PCe5Db4CHiQ==\n";
  const RunResult result = sync({"--pool", pool, "--keyring", dir.file("keyring")});
  expect_failure("aes256k key", result, 78, "its key is of type aes256k");
  EXPECT_NE(result.err.find("build rbd-sync against Ceph >= 20"), std::string::npos) << result.err;
}

TEST_F(FaultTest, MissingKeyringFailsAsConfiguration) {
  const RunResult result = sync({"--pool", pool, "--keyring", dir.file("no-such.keyring")});
  expect_failure("missing keyring", result, 78, "keyring");
}

TEST_F(FaultTest, UnknownPoolFailsAsConfiguration) {
  const RunResult result = sync({"--pool", "no-such-pool"});
  expect_failure("unknown pool", result, 78, "pool 'no-such-pool' does not exist");
}

TEST_F(FaultTest, StatementTimeoutEndsAWriteStuckBehindALock) {
  BlockingSession blocker(db);
  const RunResult result = sync({"--pool", pool, "--db-timeout", "2"});
  blocker.release();
  expect_failure("write blocked by another session, --db-timeout 2", result, 69,
                 "cancelled the statement");
  EXPECT_LT(result.seconds, 10.0);
}

TEST_F(FaultTest, BadCommandLinesAreUsageErrorsInOneLine) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"run", "--no-such-option"},
                                             {"run", "--ceph-timeout", "soon"},
                                             {"run", "--lock-file"},
                                             {"run", "--db", "host=x password=secret"}}) {
    const RunResult result = run_rbd_sync(args);
    report("bad command line '" + args[1] + "'", result);
    EXPECT_EQ(result.exit_code, 64) << result.err;
    EXPECT_EQ(count_lines(result.err), 1) << result.err;
    EXPECT_NE(result.err.find("rbd-sync: error: "), std::string::npos) << result.err;
    // A --json caller gets its object even for a bad command line.
    std::vector<std::string> with_json = args;
    with_json.insert(with_json.begin() + 1, "--json");  // before a flag missing its value
    const RunResult json = run_rbd_sync(with_json);
    EXPECT_EQ(json.exit_code, 64);
    EXPECT_EQ(nlohmann::json::parse(json.out).at("exit_code"), 64) << json.out;
  }
  EXPECT_EQ(db.checksum(), before);
}

TEST_F(FaultTest, SecretsAppearNowhereInOutputLogsOrTheCommandLine) {
  const std::string password = "pg-secret-7f3a9c1e";
  const std::string key = "AQBYRFdnAAAAABAAc2VjcmV0LWtleS0xMjM0NQ==";
  std::ofstream(dir.file("pgpass")) << "*:*:*:*:" << password << "\n";
  ::chmod(dir.file("pgpass").c_str(), 0600);
  std::ofstream(dir.file("keyring")) << "[client.rbdsync]\n\tkey = " << key << "\n";
  const std::string log = dir.file("rbd-sync.log");

  const auto expect_no_secret = [&](const std::string& where, const std::string& text) {
    EXPECT_EQ(text.find(password), std::string::npos) << "password in " << where;
    EXPECT_EQ(text.find(key), std::string::npos) << "cephx key in " << where;
  };
  // Each run first waits for the lock file, which the test holds, so there is time to
  // read its command line as ps would show it; then the test lets it go on.
  std::string cmdlines;
  const auto run_and_capture = [&](const std::vector<std::string>& env) {
    auto holder = std::make_unique<lock::FileLock>(lock_file);
    EXPECT_TRUE(holder->try_lock());
    BackgroundRun run(run_args({"--pool", pool, "-v", "--log-file", log, "--keyring",
                                dir.file("keyring"), "--wait", "30"}),
                      env);
    // Until the child has exec'ed, /proc shows the test's own command line.
    const std::string cmdline = "/proc/" + std::to_string(run.pid()) + "/cmdline";
    wait_for(
        "the run's command line",
        [&] { return read_file(cmdline).find("--wait") != std::string::npos; },
        std::chrono::seconds(30), std::chrono::milliseconds(5));
    cmdlines += read_file(cmdline);
    holder->unlock();
    holder.reset();
    return run.wait();
  };

  // Wrong database password: fails at PostgreSQL.
  const RunResult db_failure = run_and_capture({"PGPASSFILE=" + dir.file("pgpass")});
  EXPECT_EQ(db_failure.exit_code, 77) << db_failure.err;
  // Right database password, wrong cephx key: fails at Ceph.
  const RunResult ceph_failure = run_and_capture({});
  EXPECT_EQ(ceph_failure.exit_code, 77) << ceph_failure.err;

  for (const RunResult* result : {&db_failure, &ceph_failure}) {
    expect_no_secret("stdout", result->out);
    expect_no_secret("stderr", result->err);
  }
  const std::string log_text = read_file(log);
  EXPECT_FALSE(log_text.empty()) << "the log file should have the runs' debug lines";
  expect_no_secret("the log file", log_text);
  EXPECT_NE(cmdlines.find("--keyring"), std::string::npos) << "cmdline was not captured";
  expect_no_secret("/proc/<pid>/cmdline", cmdlines);
  EXPECT_EQ(db.checksum(), before);
}

}  // namespace
}  // namespace rbdsync::testing
