// What the web backend and ops rely on: the run row and its progress, the --json
// objects, the Prometheus textfile, and the example web-backend call.
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "integration/harness.hpp"
#include "lock/file_lock.hpp"

namespace rbdsync::testing {
namespace {

constexpr int k_images = 400;
const char* const k_python = "/usr/bin/python3";  // Debian's, with its python3-* packages

class OpsTest : public IntegrationTest {
 protected:
  void SetUp() override { pool = migrate_and_create_pool("ops"); }
  std::string pool;
};

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
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    pqxx::nontransaction work(*connection);
    const auto rows = work.exec(
        "SELECT status, coalesce(done, 0), coalesce(total, 0) "
        "FROM rbdsync.runs");
    if (!rows.empty()) {
      const std::string status = rows[0][0].as<std::string>();
      if (status == "running") {
        const long done = rows[0][1].as<long>();
        if (done_while_running.empty() || done != done_while_running.back()) {
          done_while_running.push_back(done);
        }
      } else {
        final_status = status;
        final_done = rows[0][1].as<long>();
        final_total = rows[0][2].as<long>();
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
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
    std::string command = RBDSYNC_BINARY;
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
  EXPECT_TRUE(has("rbd_sync_last_run_success{} 0")) << parsed.out;
  EXPECT_TRUE(has("rbd_sync_last_run_exit_code{} 78")) << parsed.out;
  EXPECT_TRUE(has("rbd_sync_images{} 2")) << "kept from the last success:\n" << parsed.out;
  EXPECT_NE(parsed.out.find("rbd_sync_last_success_timestamp_seconds{} "), std::string::npos);
  EXPECT_TRUE(has("rbd_sync_last_run_changes{kind=added} 0")) << parsed.out;
}

TEST_F(OpsTest, WebBackendExamplePressedTwiceStartsOneRunAndReportsTheOtherBusy) {
  ceph.create_images(pool, "img", k_images, 8ULL << 20);
  std::vector<std::string> press{
      k_python, std::string(RBDSYNC_SOURCE_DIR) + "/examples/web_backend.py",
      "press",  "--times",
      "2",      "--"};
  for (const auto& arg : run_args({"--pool", pool})) {
    if (arg != "run") {
      press.push_back(arg);
    }
  }
  // The direct reader syncs these images in well under the 0.5 s the backend waits
  // before it says "started" (it then reports the finished run instead), so a session
  // of the test's own holds the first run in its write phase, as a long report query
  // on the console could, until both presses have answered.
  auto blocker_connection = db.connect();
  auto blocker = std::make_unique<pqxx::work>(*blocker_connection);
  blocker->exec("LOCK TABLE rbdsync.images IN EXCLUSIVE MODE");
  const RunResult pressed = run_program(press, 60, {}, {std::string("RBD_SYNC=") + RBDSYNC_BINARY});
  blocker.reset();
  ASSERT_EQ(pressed.exit_code, 0) << pressed.err;
  std::istringstream lines(pressed.out);
  std::string first;
  std::string second;
  std::getline(lines, first);
  std::getline(lines, second);
  ASSERT_EQ(first.rfind("started pid ", 0), 0U) << pressed.out;
  const auto result_at = first.find(" result ");
  ASSERT_NE(result_at, std::string::npos) << first;
  const std::string pid = first.substr(12, result_at - 12);
  const std::string result_file = first.substr(result_at + 8);
  EXPECT_EQ(second.rfind("already running: pid " + pid + " on ", 0), 0U) << pressed.out;
  EXPECT_NE(second.find("trigger web"), std::string::npos) << second;

  const RunResult watched =
      run_program({k_python, std::string(RBDSYNC_SOURCE_DIR) + "/examples/web_backend.py", "watch",
                   pid, "--db", db.conninfo(), "--result", result_file},
                  120);
  EXPECT_EQ(watched.exit_code, 0) << watched.out << watched.err;
  EXPECT_NE(watched.out.find("succeeded done"), std::string::npos) << watched.out;
  EXPECT_NE(watched.out.find("\"status\":\"succeeded\""), std::string::npos) << watched.out;
  EXPECT_NE(::access(result_file.c_str(), F_OK), 0) << "watch removes the result file";
}

}  // namespace
}  // namespace rbdsync::testing
