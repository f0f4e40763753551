// `rbd-sync serve` as the trigger unit runs it: the connection is stdin, stdout and
// stderr are the journal (here a file), the settings come from files as the units read
// them. The answer is the guard's own; the run goes on after the connection closes.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

/// One connection to a `rbd-sync serve` process started for it, as systemd's
/// Accept=yes socket starts an instance per connection: the connection as stdin and as
/// fd 3 (LISTEN_FDS=1), and a copy kept by the starter (PID 1 keeps one until the unit
/// stops), so that only shutdown(2) by serve ends the answer for the caller.
class ServeConnection {
 public:
  ServeConnection(const std::string& settings_dir, const std::string& journal,
                  const std::string& connection = "") {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
      throw std::runtime_error("socketpair failed");
    }
    m_pid = ::fork();
    if (m_pid == 0) {
      ::setsid();
      ::dup2(ends[1], STDIN_FILENO);
      ::dup2(ends[1], 3);
      ::setenv("LISTEN_FDS", "1", 1);
      ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
      const int log = ::open(journal.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      ::dup2(log, STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
      std::vector<const char*> argv{"rbd-sync", "serve", "--settings-dir", settings_dir.c_str()};
      if (!connection.empty()) {
        argv.insert(argv.end(), {"--connection", connection.c_str()});
      }
      argv.push_back(nullptr);
      ::execv(RBDSYNC_TEST_BINARY, const_cast<char* const*>(argv.data()));
      ::_exit(127);
    }
    m_starters_copy = ends[1];
    m_socket = ends[0];
  }
  /// A test that failed early may leave the run waiting (a blocking session): kill it
  /// rather than wait for ever.
  ~ServeConnection() {
    hang_up();
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      exit_code();
    }
    ::close(m_starters_copy);
  }
  ServeConnection(const ServeConnection&) = delete;
  ServeConnection& operator=(const ServeConnection&) = delete;

  void send(const std::string& line) const {
    const std::string text = line + "\n";
    if (::write(m_socket, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      throw std::runtime_error("cannot send the request");
    }
  }

  /// Everything the process sends until it closes the connection (fails after 60 s).
  std::string answer() const {
    std::string text;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    char buffer[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd ready{m_socket, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) == 0) {
        ADD_FAILURE() << "no end of the answer within 60 s; so far: " << text;
        return text;
      }
      const ssize_t got = ::read(m_socket, buffer, sizeof buffer);
      if (got <= 0) {
        return text;
      }
      text.append(buffer, static_cast<std::size_t>(got));
    }
  }

  nlohmann::json answer_json() const {
    const std::string text = answer();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "one line: " << text;
    return nlohmann::json::parse(text);
  }

  void shut_down_sending() const { ::shutdown(m_socket, SHUT_WR); }

  void hang_up() {
    if (m_socket >= 0) {
      ::close(m_socket);
      m_socket = -1;
    }
  }

  /// Waits for the process: its exit code (128 + signal when killed).
  int exit_code() {
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    m_pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  pid_t pid() const { return m_pid; }

 private:
  pid_t m_pid = -1;
  int m_socket = -1;
  int m_starters_copy = -1;
};

class ServeTest : public IntegrationTest {
 protected:
  void SetUp() override {
    pool = migrate_and_create_pool("serve");
    ceph.create_images(pool, "img", 3, 1ULL << 20);
    settings = dir.file("default");
    ASSERT_EQ(::mkdir(settings.c_str(), 0755), 0);
    // The settings split RBDSYNC_ARGS at blanks, as systemd does: the database is named
    // by a service, as the shipped settings file advises.
    // The test's conninfo names dbname twice (libpq takes the last); a service file
    // takes the first of a key, so each key goes in once, with its last value.
    std::map<std::string, std::string> keys;
    std::istringstream words(db.conninfo());
    for (std::string word; words >> word;) {
      const auto equals = word.find('=');
      keys[word.substr(0, equals)] = word.substr(equals + 1);
    }
    std::ofstream service(dir.file("pg_service.conf"));
    service << "[serve_test]\n";
    for (const auto& [key, value] : keys) {
      service << key << "=" << value << "\n";
    }
    write_settings("rbd-sync", "--lock-file " + lock_file);
  }

  /// A settings file as /etc/default/NAME: RBDSYNC_ARGS pointing at the test services,
  /// then `more`.
  void write_settings(const std::string& name, const std::string& more) const {
    std::ofstream file(settings + "/" + name);
    file << "# as /etc/default/" << name << "\n"
         << "RBDSYNC_ARGS=\"--db service=serve_test --conf "
         << required_env("RBDSYNC_TEST_CEPH_CONF") << " --id "
         << required_env("RBDSYNC_TEST_CEPH_ID") << " --pool " << pool
         << " --ceph-timeout 20 --log-level info " << more << "\"\n"
         << "PGSERVICEFILE='" << dir.file("pg_service.conf") << "'\n";
  }

  std::string journal() const { return read_file(dir.file("journal")); }

  std::string pool;
  std::string settings;
};

TEST_F(ServeTest, AnswersStartedFromTheGuardThenAnotherRequestIsToldWhoRuns) {
  // Settings shared with a timer that counts a busy guard as success: the button is still
  // told 75, which its clients read as "already running".
  write_settings("rbd-sync", "--lock-file " + lock_file + " --conflict-exit-code 0");
  BlockingSession blocker(db);
  ServeConnection first(settings, dir.file("journal"));
  first.send(R"({"cluster": "ceph", "requested_by": "alice"})");
  // The whole answer, connection closed, while the run is still held in its writes.
  const nlohmann::json started = first.answer_json();
  ASSERT_EQ(started.at("status"), "started") << started;
  EXPECT_EQ(started.at("exit_code"), 0);
  EXPECT_EQ(started.at("trigger"), "web");
  EXPECT_EQ(started.at("requested_by"), "alice");
  EXPECT_EQ(started.at("pid"), first.pid()) << "the process that answered is the run";
  EXPECT_EQ(started.at("lock_file"), lock_file);
  EXPECT_TRUE(started.at("log_file").is_null()) << "it logs to the unit's journal";
  const std::string run_id = started.at("run_id");
  EXPECT_EQ(::kill(first.pid(), 0), 0) << "the run goes on after answering";

  ServeConnection second(settings, dir.file("journal"));
  second.send(R"({"requested_by": "bob"})");
  const nlohmann::json busy = second.answer_json();
  EXPECT_EQ(second.exit_code(), 75);
  ASSERT_EQ(busy.at("status"), "already_running") << busy;
  EXPECT_EQ(busy.at("exit_code"), 75);
  EXPECT_EQ(busy.at("holder").at("run_id"), run_id);
  EXPECT_EQ(busy.at("holder").at("requested_by"), "alice");
  EXPECT_NE(busy.at("message").get<std::string>().find("trigger web (requested by alice)"),
            std::string::npos)
      << busy;

  blocker.release();
  EXPECT_EQ(first.exit_code(), 0) << journal();
  EXPECT_EQ(db.rows("SELECT trigger || '|' || requested_by || '|' || status FROM rbdsync.runs"),
            std::vector<std::string>{"web|alice|succeeded"});
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.images"), std::vector<std::string>{"3"});
  // The journal has who connected, and the run's log and result after the answer.
  const std::string log = journal();
  EXPECT_NE(log.find("rbd-sync: request from uid " + std::to_string(::getuid())), std::string::npos)
      << log;
  EXPECT_NE(log.find(": sync cluster ceph (trigger web), requested by alice"), std::string::npos)
      << log;
  EXPECT_NE(log.find("\"status\":\"succeeded\""), std::string::npos) << log;
}

TEST_F(ServeTest, ACallerThatHangsUpAtOnceDoesNotStopTheRun) {
  BlockingSession blocker(db);
  ServeConnection connection(settings, dir.file("journal"));
  connection.send(R"({"requested_by": "carol"})");
  connection.hang_up();
  // Held in its writes until the test lets go: by then the caller is long gone.
  wait_for_phase(lock_file, "writing");
  blocker.release();
  EXPECT_EQ(connection.exit_code(), 0) << journal();
  EXPECT_EQ(db.rows("SELECT requested_by || '|' || status FROM rbdsync.runs"),
            std::vector<std::string>{"carol|succeeded"});
}

TEST_F(ServeTest, AnotherClusterRunsWithItsOwnSettingsFileAfterTheSharedOne) {
  // As rbd-sync@backup.service: /etc/default/rbd-sync, then rbd-sync@backup, whose
  // RBDSYNC_ARGS replaces the shared one.
  const std::string backup_lock = dir.file("sync@backup.lock");
  // The test cluster's conf names its keyring by $cluster: name it for "backup".
  write_settings("rbd-sync@backup", "--lock-file " + backup_lock + " --keyring " +
                                        required_env("RBDSYNC_TEST_CEPH_DIR") + "/ceph.client." +
                                        required_env("RBDSYNC_TEST_CEPH_ID") + ".keyring");
  ServeConnection connection(settings, dir.file("journal"));
  connection.send(R"({"cluster": "backup", "requested_by": "dave"})");
  const nlohmann::json started = connection.answer_json();
  ASSERT_EQ(started.at("status"), "started") << started << journal();
  EXPECT_EQ(started.at("lock_file"), backup_lock);
  EXPECT_EQ(connection.exit_code(), 0) << journal();
  EXPECT_EQ(db.rows("SELECT name FROM rbdsync.clusters"), std::vector<std::string>{"backup"});
}

TEST_F(ServeTest, AClusterWithoutASettingsFileIsNotServedAndGetsNoLockFile) {
  ServeConnection connection(settings, dir.file("journal"));
  connection.send(R"({"cluster": "made-up"})");
  const nlohmann::json answer = connection.answer_json();
  EXPECT_EQ(connection.exit_code(), 64);
  EXPECT_EQ(answer.at("message"),
            "cluster 'made-up' is not served here: there is no " + settings + "/rbd-sync@made-up");
  EXPECT_NE(::access("/run/lock/rbd-sync/sync@made-up.lock", F_OK), 0);
}

TEST_F(ServeTest, TheLogNamesTheCallerSystemdNamedTheConnectionFor) {
  ServeConnection connection(settings, dir.file("journal"), "7-4242-0");
  connection.send(R"({"cluster": "no-such"})");
  connection.answer();
  EXPECT_EQ(connection.exit_code(), 64);
  EXPECT_NE(journal().find("rbd-sync: request from uid 0 (root), pid 4242: sync cluster no-such"),
            std::string::npos)
      << journal();
}

TEST_F(ServeTest, ABadRequestOrBadSettingsAreAnsweredWithTheErrorAndStartNoRun) {
  {
    ServeConnection connection(settings, dir.file("journal"));
    connection.send(R"({"cluster": "ceph", "args": "--db host=evil"})");
    const nlohmann::json answer = connection.answer_json();
    EXPECT_EQ(connection.exit_code(), 64);
    EXPECT_EQ(answer.at("status"), "failed");
    EXPECT_EQ(answer.at("message"),
              "bad request on the trigger socket: unknown field 'args' (it takes cluster, "
              "requested_by and trigger)");
  }
  {
    write_settings("rbd-sync", "--no-such-option");
    ServeConnection connection(settings, dir.file("journal"));
    connection.send("{}");
    const nlohmann::json answer = connection.answer_json();
    EXPECT_EQ(connection.exit_code(), 78);
    const std::string message = answer.at("message");
    EXPECT_EQ(message.rfind("RBDSYNC_ARGS of " + settings + "/rbd-sync: ", 0), 0U) << message;
    EXPECT_NE(message.find("no-such-option"), std::string::npos) << message;
  }
  {
    // Quotes in RBDSYNC_ARGS: systemd would unquote them, the cron job's shell not.
    write_settings("rbd-sync", "--log-file '/var/log/a b'");
    ServeConnection connection(settings, dir.file("journal"));
    connection.send("{}");
    const nlohmann::json answer = connection.answer_json();
    EXPECT_EQ(connection.exit_code(), 78);
    EXPECT_NE(answer.at("message").get<std::string>().find("holds a quote or a backslash"),
              std::string::npos)
        << answer;
  }
  {
    // A caller that shuts its side without a request line.
    ServeConnection connection(settings, dir.file("journal"));
    connection.shut_down_sending();
    const nlohmann::json answer = connection.answer_json();
    EXPECT_EQ(connection.exit_code(), 64);
    EXPECT_EQ(answer.at("message"), "bad request on the trigger socket: not one JSON object");
  }
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs"), std::vector<std::string>{"0"});
}

}  // namespace
}  // namespace rbdsync::testing
