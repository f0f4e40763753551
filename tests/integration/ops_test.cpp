// What the web backend and ops rely on: the run row and its progress, the --json
// objects, the Prometheus textfile, and the example web-backend call.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "common/run_status.hpp"
#include "db/pqxx_compat.hpp"
#include "integration/harness.hpp"
#include "lock/file_lock.hpp"
#include "support/poll.hpp"

namespace rbdsync::testing {

using db::exec;
using db::exec_one_row;
namespace {

constexpr int k_images = 400;
const char* const k_python = "/usr/bin/python3";  // Debian's, with its python3-* packages

class OpsTest : public IntegrationTest {
 protected:
  void SetUp() override { pool = migrate_and_create_pool("ops"); }
  std::string pool;
};

TEST_F(OpsTest, RunsCheckConstraintAllowsExactlyTheRunStatuses) {
  // The binary writes names from k_run_statuses; the schema's CHECK must allow each of
  // them and nothing more, or a run could end in a status the database refuses.
  std::string allowed;
  for (const RunStatusInfo& status : k_run_statuses) {
    allowed += std::string(allowed.empty() ? "" : ", ") + "'" + status.name + "'::text";
  }
  auto connection = db.connect();
  pqxx::nontransaction work(*connection);
  const auto definition =
      exec_one_row(work,
                   "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                   "WHERE conname = 'runs_status_check' AND conrelid = 'rbdsync.runs'::regclass")[0]
          .as<std::string>();
  EXPECT_EQ(definition, "CHECK ((status = ANY (ARRAY[" + allowed + "])))");
}

TEST_F(OpsTest, RunRowGoesRunningThenProgressesThenSucceeds) {
  ceph.create_images(pool, "img", k_images, 8ULL << 20);
  // The row's progress is written at most every 0.5 s. The librbd reader takes seconds
  // over these images; the direct reader (the default) reads them in well under 0.5 s,
  // so its row would jump from 0 to done: nothing to see move.
  BackgroundRun run(run_args({"--pool", pool, "--reader", "librbd"}));

  // A second connection, as the web page has, polls the row.
  auto connection = db.connect();
  std::vector<long> done_while_running;
  std::string final_status;
  long final_done = -1;
  long final_total = -1;
  testing::wait_for(
      "the run's row to end, sampling its progress",
      [&] {
        pqxx::nontransaction work(*connection);
        const auto rows = work.exec(
            "SELECT status, coalesce(done, 0), coalesce(total, 0) "
            "FROM rbdsync.runs");
        if (rows.empty()) {
          return false;
        }
        const std::string status = rows[0][0].as<std::string>();
        if (status == "running") {
          const long done = rows[0][1].as<long>();
          if (done_while_running.empty() || done != done_while_running.back()) {
            done_while_running.push_back(done);
          }
          return false;
        }
        final_status = status;
        final_done = rows[0][1].as<long>();
        final_total = rows[0][2].as<long>();
        return true;
      },
      std::chrono::seconds(120), std::chrono::milliseconds(50));
  const RunResult result = run.wait();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(final_status, "succeeded");
  EXPECT_EQ(final_done, k_images);
  EXPECT_EQ(final_total, k_images);
  ASSERT_GE(done_while_running.size(), 3U) << "the row's progress should be seen moving";
  for (std::size_t i = 1; i < done_while_running.size(); ++i) {
    EXPECT_GT(done_while_running[i], done_while_running[i - 1]);
  }
}

TEST_F(OpsTest, ManualRunOnATerminalDrawsAProgressLineAndJsonDoesNot) {
  ceph.create_images(pool, "img", 50, 8ULL << 20);
  // script(1) gives the run a pseudo-terminal, as an admin's shell would.
  const auto on_terminal = [&](const std::vector<std::string>& extra) {
    std::string command = RBDSYNC_TEST_BINARY;
    for (const auto& arg : run_args(extra)) {
      command += " '" + arg + "'";
    }
    return run_program({"script", "--quiet", "--return", "--command", command, "/dev/null"});
  };
  const RunResult plain = on_terminal({"--pool", pool});
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  EXPECT_NE(plain.out.find("\r\033[Kreading "), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("synced fsid="), std::string::npos) << plain.out;

  const RunResult json = on_terminal({"--pool", pool, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
  EXPECT_EQ(json.out.find("\033[K"), std::string::npos) << json.out;
}

TEST_F(OpsTest, JsonObjectsOfSuccessFailureAndBusyHaveTheDocumentedFields) {
  ceph.create_image(pool, "a", 8ULL << 20);
  const auto success = nlohmann::json::parse(sync({"--pool", pool, "--json"}).out);
  EXPECT_EQ(success.at("status"), "succeeded");
  EXPECT_EQ(success.at("exit_code"), 0);
  EXPECT_TRUE(success.at("run_id").is_string());
  EXPECT_EQ(success.at("trigger"), "manual");
  EXPECT_EQ(success.at("fsid"), ceph.fsid());
  for (const char* count : {"pools", "images", "added", "changed", "removed", "skipped"}) {
    EXPECT_TRUE(success.at(count).is_number_unsigned()) << count;
  }
  EXPECT_TRUE(success.at("seconds").is_number());

  const RunResult failed_run = sync({"--pool", "no-such-pool", "--json"});
  EXPECT_EQ(failed_run.exit_code, 78);
  const auto failure = nlohmann::json::parse(failed_run.out);
  EXPECT_EQ(failure.at("status"), "failed");
  EXPECT_EQ(failure.at("exit_code"), 78);
  EXPECT_TRUE(failure.at("run_id").is_string());
  EXPECT_NE(failure.at("message").get<std::string>().find("no-such-pool"), std::string::npos);
  EXPECT_FALSE(failure.at("hint").get<std::string>().empty());

  auto holder = std::make_unique<lock::FileLock>(lock_file);
  ASSERT_TRUE(holder->try_lock());
  const RunResult busy_run = sync({"--pool", pool, "--json"});
  holder->unlock();
  EXPECT_EQ(busy_run.exit_code, 75);
  const auto busy = nlohmann::json::parse(busy_run.out);
  EXPECT_EQ(busy.at("status"), "already_running");
  EXPECT_EQ(busy.at("exit_code"), 75);
  EXPECT_EQ(busy.at("guard"), "lock file " + lock_file);
  EXPECT_EQ(busy.at("holder").at("pid"), ::getpid());
  EXPECT_NE(busy.at("message").get<std::string>().find("already running"), std::string::npos);
}

TEST_F(OpsTest, MetricsFileIsValidPrometheusTextAndKeepsTheLastSuccess) {
  ceph.create_image(pool, "a", 8ULL << 20);
  ceph.create_image(pool, "b", 8ULL << 20);
  const std::string metrics = dir.file("rbd_sync.prom");
  ASSERT_EQ(sync({"--pool", pool, "--metrics-file", metrics}).exit_code, 0);
  ASSERT_EQ(sync({"--pool", "no-such-pool", "--metrics-file", metrics}).exit_code, 78);

  // Parsed by the Prometheus client library's own parser, not by us.
  const std::string parse =
      "import sys\n"
      "from prometheus_client.parser import text_string_to_metric_families\n"
      "for family in text_string_to_metric_families(open(sys.argv[1]).read()):\n"
      "    for sample in family.samples:\n"
      "        labels = ','.join(f'{k}={v}' for k, v in sorted(sample.labels.items()))\n"
      "        print(f'{sample.name}{{{labels}}} {sample.value:g}')\n";
  const RunResult parsed = run_program({k_python, "-c", parse, metrics});
  ASSERT_EQ(parsed.exit_code, 0) << parsed.err;
  const auto has = [&](const std::string& sample) {
    return parsed.out.find(sample + "\n") != std::string::npos;
  };
  EXPECT_TRUE(has("rbd_sync_last_run_success{cluster=ceph} 0")) << parsed.out;
  EXPECT_TRUE(has("rbd_sync_last_run_exit_code{cluster=ceph} 78")) << parsed.out;
  EXPECT_TRUE(has("rbd_sync_images{cluster=ceph} 2")) << "kept from the last success:\n"
                                                      << parsed.out;
  EXPECT_NE(parsed.out.find("rbd_sync_last_success_timestamp_seconds{cluster=ceph} "),
            std::string::npos);
  EXPECT_TRUE(has("rbd_sync_last_run_changes{cluster=ceph,kind=added} 0")) << parsed.out;
}

/// `examples/web_backend.py press --times N -- <run args>` against the test services.
std::vector<std::string> press_command(const std::vector<std::string>& run_args, int times) {
  std::vector<std::string> press{k_python,
                                 std::string(RBDSYNC_TEST_SOURCE_DIR) + "/examples/web_backend.py",
                                 "--rbd-sync",
                                 RBDSYNC_TEST_BINARY,
                                 "press",
                                 "--times",
                                 std::to_string(times),
                                 "--"};
  for (const auto& arg : run_args) {
    if (arg != "run") {
      press.push_back(arg);
    }
  }
  return press;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

/// Waits until run `run_id` has ended and returns its final status.
std::string wait_for_end(const TestDatabase& db, const std::string& run_id) {
  std::string status;
  testing::wait_for(
      "run " + run_id + " to end",
      [&] {
        const auto rows =
            db.rows("SELECT status FROM rbdsync.runs WHERE run_id = '" + run_id + "'");
        status = rows.empty() ? "" : rows[0];
        return !status.empty() && status != "running";
      },
      std::chrono::seconds(120), std::chrono::milliseconds(100));
  return status;
}

TEST_F(OpsTest, WebBackendExamplePressedTwiceStartsOneRunAndReportsTheOtherBusy) {
  ceph.create_images(pool, "img", 20, 8ULL << 20);
  BlockingSession blocker(db);
  const RunResult pressed = run_program(press_command(run_args({"--pool", pool}), 2), 60);
  blocker.release();
  ASSERT_EQ(pressed.exit_code, 0) << pressed.out << pressed.err;
  const auto lines = lines_of(pressed.out);
  ASSERT_EQ(lines.size(), 2U) << pressed.out;
  // "started run <id> pid <pid>": only once the run holds both guards, never a guess.
  std::istringstream first(lines[0]);
  std::string started, run_word, run_id, pid_word, pid;
  first >> started >> run_word >> run_id >> pid_word >> pid;
  ASSERT_EQ(started + " " + run_word + " " + pid_word, "started run pid") << lines[0];
  EXPECT_EQ(lines[1].rfind("already running: pid " + pid + " on ", 0), 0U) << pressed.out;
  EXPECT_NE(lines[1].find("trigger web"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("(run " + run_id + ", "), std::string::npos) << lines[1];

  const RunResult watched =
      run_program({k_python, std::string(RBDSYNC_TEST_SOURCE_DIR) + "/examples/web_backend.py",
                   "watch", run_id, "--db", db.conninfo()},
                  120);
  EXPECT_EQ(watched.exit_code, 0) << watched.out << watched.err;
  EXPECT_NE(watched.out.find("succeeded done 20/20 exit 0"), std::string::npos) << watched.out;
  // The detached run's result went to its log beside the lock file.
  const std::string log = read_file(dir.file("detached.log"));
  EXPECT_NE(log.find("\"status\":\"succeeded\""), std::string::npos) << log;
}

TEST_F(OpsTest, TwentyPressesStartExactlyOneRunAndEveryOtherNamesIt) {
  ceph.create_images(pool, "img", 20, 8ULL << 20);
  BlockingSession blocker(db);
  const RunResult pressed = run_program(press_command(run_args({"--pool", pool}), 20), 120);
  const auto lines = lines_of(pressed.out);
  blocker.release();
  ASSERT_EQ(pressed.exit_code, 0) << pressed.out << pressed.err;
  ASSERT_EQ(lines.size(), 20U) << pressed.out;
  std::istringstream first(lines[0]);
  std::string started, run_word, run_id;
  first >> started >> run_word >> run_id;
  ASSERT_EQ(started + " " + run_word, "started run") << lines[0];
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind("already running: ", 0), 0U) << "press " << i + 1 << ": " << lines[i];
    EXPECT_NE(lines[i].find("(run " + run_id + ", "), std::string::npos)
        << "press " << i + 1 << ": " << lines[i];
  }
  EXPECT_EQ(wait_for_end(db, run_id), "succeeded");
  EXPECT_EQ(
      db.rows("SELECT count(*), count(*) FILTER (WHERE status = 'running') FROM rbdsync.runs"),
      std::vector<std::string>{"1|0"});
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.images"), std::vector<std::string>{"20"});
}

TEST_F(OpsTest, DetachedRunOutlivesTheWebServerKilledWithItsProcessGroup) {
  ceph.create_images(pool, "img", 20, 8ULL << 20);
  BlockingSession blocker(db);
  // A "web server": leads its own session and process group, presses the button, then
  // is restarted the hard way: SIGTERM, then SIGKILL, to its whole process group.
  std::vector<std::string> server{
      k_python, "-c",
      "import os, signal, subprocess, sys\n"
      "os.setsid()\n"
      "answer = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
      "print(answer.returncode, answer.stdout.strip(), flush=True)\n"
      "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
      "os.killpg(0, signal.SIGTERM)\n"
      "os.killpg(0, signal.SIGKILL)\n",
      RBDSYNC_TEST_BINARY};
  for (const auto& arg : run_args({"--pool", pool, "--detach", "--json", "--trigger", "web"})) {
    server.push_back(arg);
  }
  const RunResult restarted = run_program(server, 60);
  EXPECT_EQ(restarted.exit_code, 128 + SIGKILL) << restarted.out << restarted.err;
  const auto space = restarted.out.find(' ');
  ASSERT_NE(space, std::string::npos) << restarted.out;
  ASSERT_EQ(restarted.out.substr(0, space), "0") << restarted.out;
  const nlohmann::json answer = nlohmann::json::parse(restarted.out.substr(space + 1));
  ASSERT_EQ(answer.at("status"), "started") << answer;
  const std::string run_id = answer.at("run_id");
  // The run survived the restart: still running, holding the guard.
  EXPECT_EQ(::kill(answer.at("pid").get<pid_t>(), 0), 0) << "the detached run was killed";
  EXPECT_EQ(lock_status(lock_file).at("running"), true);
  blocker.release();
  EXPECT_EQ(wait_for_end(db, run_id), "succeeded");
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.images"), std::vector<std::string>{"20"});
}

TEST_F(OpsTest, WhoAskedIsInTheAnswerTheHolderRecordTheBusyAnswerAndTheRunsRow) {
  ceph.create_images(pool, "img", 3, 1ULL << 20);
  BlockingSession blocker(db);
  const RunResult started = run_rbd_sync(run_args(
      {"--pool", pool, "--detach", "--json", "--trigger", "web", "--requested-by", "Jos\xc3\xa9"}));
  ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
  const nlohmann::json answer = nlohmann::json::parse(started.out);
  EXPECT_EQ(answer.at("requested_by"), "Jos\xc3\xa9") << answer;
  const std::string run_id = answer.at("run_id");

  const RunResult busy =
      run_rbd_sync(run_args({"--pool", pool, "--json", "--requested-by", "bob"}));
  ASSERT_EQ(busy.exit_code, 75) << busy.out << busy.err;
  const nlohmann::json holder = nlohmann::json::parse(busy.out).at("holder");
  EXPECT_EQ(holder.at("run_id"), run_id) << holder;
  EXPECT_EQ(holder.at("requested_by"), "Jos\xc3\xa9") << holder;
  EXPECT_NE(nlohmann::json::parse(busy.out).at("message").get<std::string>().find(
                "trigger web (requested by Jos\xc3\xa9)"),
            std::string::npos)
      << busy.out;
  blocker.release();
  EXPECT_EQ(wait_for_end(db, run_id), "succeeded");
  EXPECT_EQ(db.rows("SELECT trigger || '|' || requested_by FROM rbdsync.runs"),
            std::vector<std::string>{"web|Jos\xc3\xa9"});
  // A run nobody named records NULL, not an empty name.
  ASSERT_EQ(sync({"--pool", pool}).exit_code, 0);
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs WHERE requested_by IS NULL"),
            std::vector<std::string>{"1"});
}

TEST_F(OpsTest, DetachedRunThatCannotStartAnswersWithItsOwnExitCodeAndMessage) {
  const RunResult result = run_rbd_sync({"run", "--detach", "--json", "--db",
                                         "host=127.0.0.1 port=1 dbname=none connect_timeout=2",
                                         "--lock-file", lock_file});
  EXPECT_EQ(result.exit_code, 69) << result.out << result.err;
  const nlohmann::json answer = nlohmann::json::parse(result.out);
  EXPECT_EQ(answer.at("status"), "failed");
  EXPECT_FALSE(answer.at("message").get<std::string>().empty());
  EXPECT_FALSE(answer.at("hint").get<std::string>().empty());
  EXPECT_EQ(lock_status(lock_file).at("running"), false);
}

// Under systemd, stderr is the journal and JOURNAL_STREAM names it: every line then
// starts with its syslog priority, so `journalctl -p err -u rbd-sync` shows the failure
// and a busy guard is a notice, not an error. The same run with stderr elsewhere (cron
// under a unit, a shell) writes plain lines.
TEST_F(OpsTest, StderrThatIsTheJournalGetsSyslogPrioritiesAndOtherStderrPlainLines) {
  const std::string journal = dir.file("journal.txt");
  const std::string elsewhere = dir.file("elsewhere.txt");
  const auto run_with_stderr_in = [&](const std::string& file, const std::string& named,
                                      const std::string& args) {
    // stat -c '%d:%i' is the device and inode as systemd writes them.
    const std::string script = ": >" + file + " && : >" + named +
                               " && JOURNAL_STREAM=$(stat -c '%d:%i' " + named + ") exec " +
                               RBDSYNC_TEST_BINARY + " " + args + " 2>>" + file;
    return run_program({"/bin/sh", "-c", script}, 60);
  };
  const std::string failing = "run --log-level info --lock-file " + lock_file +
                              " --db 'host=127.0.0.1 port=1 dbname=none connect_timeout=2'";

  const RunResult failed = run_with_stderr_in(journal, journal, failing);
  EXPECT_EQ(failed.exit_code, 69) << failed.out << failed.err;
  const auto lines = lines_of(read_file(journal));
  ASSERT_FALSE(lines.empty());
  for (const std::string& line : lines) {
    EXPECT_TRUE(line.size() > 3 && line[0] == '<' && line[1] >= '0' && line[1] <= '7' &&
                line[2] == '>')
        << "no priority prefix: " << line;
  }
  EXPECT_NE(read_file(journal).find("<3>rbd-sync: error: cannot connect to PostgreSQL"),
            std::string::npos)
      << read_file(journal);
  EXPECT_NE(read_file(journal).find("<6>info: run "), std::string::npos) << read_file(journal);

  // JOURNAL_STREAM inherited, but stderr redirected: plain, timestamped lines.
  const RunResult plain = run_with_stderr_in(elsewhere, journal, failing);
  EXPECT_EQ(plain.exit_code, 69) << plain.out << plain.err;
  const std::string plain_text = read_file(elsewhere);
  EXPECT_EQ(plain_text.find('<'), std::string::npos) << plain_text;
  EXPECT_NE(plain_text.find("rbd-sync: error: cannot connect to PostgreSQL"), std::string::npos)
      << plain_text;

  // A busy guard is a notice (5): not among the errors.
  lock::FileLock held(lock_file);
  ASSERT_TRUE(held.try_lock());
  const RunResult busy = run_with_stderr_in(journal, journal, "run --lock-file " + lock_file);
  EXPECT_EQ(busy.exit_code, 75) << busy.out << busy.err;
  EXPECT_EQ(read_file(journal).rfind("<5>rbd-sync: already running: ", 0), 0U)
      << read_file(journal);
}

TEST_F(OpsTest, ALogFilePlantedAsASymlinkIsRefusedAndWhatItPointsAtIsUntouched) {
  // A log directory other users may write to: a link at the log's name would have had
  // root append to a file of their choosing (spdlog's file sink follows it).
  const std::string victim = dir.file("victim");
  std::ofstream(victim) << "not rbd-sync's\n";
  const std::string log = dir.file("rbd-sync.log");
  ASSERT_EQ(::symlink(victim.c_str(), log.c_str()), 0);
  const RunResult refused = sync({"--pool", pool, "--log-file", log, "-v"});
  EXPECT_EQ(refused.exit_code, 73) << refused.err;
  EXPECT_NE(refused.err.find("cannot open '" + log + "'"), std::string::npos) << refused.err;
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "not rbd-sync's\n");

  // The same name as a file of its own: appended to, line by line.
  ASSERT_EQ(::unlink(log.c_str()), 0);
  ASSERT_EQ(sync({"--pool", pool, "--log-file", log, "-v"}).exit_code, 0);
  ASSERT_EQ(sync({"--pool", pool, "--log-file", log, "-v"}).exit_code, 0);
  std::ifstream written(log);
  const std::string text(std::istreambuf_iterator<char>(written), {});
  EXPECT_GE(lines_of(text).size(), 4U) << text;
  EXPECT_NE(text.find(" rbd-sync["), std::string::npos) << text;
  struct stat st {};
  ASSERT_EQ(::stat(log.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0137, 0U) << "made 0640 (less with a umask)";
}

}  // namespace
}  // namespace rbdsync::testing
