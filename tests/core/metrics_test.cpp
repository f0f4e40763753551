#include "core/metrics.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "support/files.hpp"
#include "support/other_user.hpp"
#include "support/scoped_temp_dir.hpp"
#include "support/source_file.hpp"

namespace rbdsync::core {
namespace {

using testing::read_file;

/// A run that ended at `ended_at` with `status` and its exit code.
RunRecord ended_run(RunStatus status, ExitCode code, std::int64_t ended_at) {
  RunRecord run;
  run.status = status;
  run.exit_code = to_int(code);
  run.ended_at = ended_at;
  return run;
}

TEST(Metrics, SuccessfulRunReportsItsCountsAndTimes) {
  RunRecord run = ended_run(RunStatus::succeeded, ExitCode::ok, 1764800000);
  run.duration_seconds = 1.5;
  sync::SyncReport report;
  report.images = 9;
  report.counts.images.added = 3;
  const std::string text = format_metrics(run, "ceph", &report);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_success"), 1.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_exit_code"), 0.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_images"), 9.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_duration_seconds"), 1.5);
  EXPECT_NE(text.find("rbd_sync_last_run_changes{cluster=\"ceph\",kind=\"added\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE rbd_sync_images gauge\n"), std::string::npos);
}

// Ops read the list in docs/operations.md to write their alerts: every metric written
// is there.
TEST(Metrics, EveryMetricWrittenIsDocumented) {
  sync::SyncReport report;
  report.images = 1;
  const std::string text = format_metrics(ended_run(RunStatus::succeeded, ExitCode::ok, 1000),
                                          "ceph", &report, LastSuccess{1000, 1});
  const std::string doc = testing::read_source_file("docs/operations.md");
  std::istringstream lines(text);
  std::set<std::string> names;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      names.insert(line.substr(7, line.find(' ', 7) - 7));
    }
  }
  EXPECT_GE(names.size(), 8U) << text;
  for (const std::string& name : names) {
    EXPECT_NE(doc.find("`" + name), std::string::npos) << name << " is not in docs/operations.md";
  }
}

TEST(Metrics, TextOfAPartialRunIsUnchanged) {
  // node_exporter and its alerts read these names and values: issue #20 pins the text;
  // issue #34 added the cluster label.
  RunRecord run = ended_run(RunStatus::partial, ExitCode::partial, 1764800100);
  run.duration_seconds = 12.5;
  sync::SyncReport report;
  report.images = 7;
  report.counts.images = {3, 2, 1, 4};
  report.stale.resize(1);
  // A committed run is its own last success: what the previous file said is not used.
  const LastSuccess earlier{1764700000, 5};
  EXPECT_EQ(
      format_metrics(run, "backup", &report, earlier),
      "# HELP rbd_sync_last_run_success Whether the last sync run succeeded (1) or not (0).\n"
      "# TYPE rbd_sync_last_run_success gauge\n"
      "rbd_sync_last_run_success{cluster=\"backup\"} 0\n"
      "# HELP rbd_sync_last_run_exit_code Exit code of the last sync run.\n"
      "# TYPE rbd_sync_last_run_exit_code gauge\n"
      "rbd_sync_last_run_exit_code{cluster=\"backup\"} 3\n"
      "# HELP rbd_sync_last_run_timestamp_seconds When the last sync run ended.\n"
      "# TYPE rbd_sync_last_run_timestamp_seconds gauge\n"
      "rbd_sync_last_run_timestamp_seconds{cluster=\"backup\"} 1764800100\n"
      "# HELP rbd_sync_last_run_duration_seconds How long the last sync run took.\n"
      "# TYPE rbd_sync_last_run_duration_seconds gauge\n"
      "rbd_sync_last_run_duration_seconds{cluster=\"backup\"} 12.5\n"
      "# HELP rbd_sync_last_success_timestamp_seconds When a sync run last succeeded.\n"
      "# TYPE rbd_sync_last_success_timestamp_seconds gauge\n"
      "rbd_sync_last_success_timestamp_seconds{cluster=\"backup\"} 1764800100\n"
      "# HELP rbd_sync_images Images in the inventory after the last successful run.\n"
      "# TYPE rbd_sync_images gauge\n"
      "rbd_sync_images{cluster=\"backup\"} 7\n"
      "# HELP rbd_sync_last_run_stale_images Images the last sync run could not read; their rows "
      "were kept, marked stale.\n"
      "# TYPE rbd_sync_last_run_stale_images gauge\n"
      "rbd_sync_last_run_stale_images{cluster=\"backup\"} 1\n"
      "# HELP rbd_sync_last_run_changes Image rows the last sync run added, changed or removed.\n"
      "# TYPE rbd_sync_last_run_changes gauge\n"
      "rbd_sync_last_run_changes{cluster=\"backup\",kind=\"added\"} 3\n"
      "rbd_sync_last_run_changes{cluster=\"backup\",kind=\"changed\"} 2\n"
      "rbd_sync_last_run_changes{cluster=\"backup\",kind=\"removed\"} 1\n");
}

/// The metrics file after a run of `succeeded` that committed 42 images at 1000 and a
/// run of `failed` that failed (exit 69) at 2000.
std::string after_a_success_and_a_failure(const std::string& succeeded, const std::string& failed) {
  testing::ScopedTempDir dir;
  const std::string path = dir.file("rbd_sync.prom");
  sync::SyncReport report;
  report.images = 42;
  write_metrics_file(path, succeeded, ended_run(RunStatus::succeeded, ExitCode::ok, 1000), &report);
  write_metrics_file(path, failed, ended_run(RunStatus::failed, ExitCode::unavailable, 2000),
                     nullptr);
  return read_file(path);
}

TEST(Metrics, FailedRunKeepsTheLastSuccessOfThePreviousFile) {
  const std::string text = after_a_success_and_a_failure("ceph", "ceph");
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_success"), 0.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_exit_code"), 69.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_timestamp_seconds"), 2000.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_success_timestamp_seconds"), 1000.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_images"), 42.0);
}

TEST(Metrics, AFileOfAVersionWithoutLabelsStillGivesTheLastSuccess) {
  testing::ScopedTempDir dir;
  const std::string path = dir.file("rbd_sync.prom");
  std::ofstream(path) << "rbd_sync_last_success_timestamp_seconds 1000\nrbd_sync_images 42\n";
  write_metrics_file(path, "ceph", ended_run(RunStatus::failed, ExitCode::unavailable, 2000),
                     nullptr);
  const std::string text = read_file(path);
  EXPECT_NE(text.find("rbd_sync_last_success_timestamp_seconds{cluster=\"ceph\"} 1000\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(metric_value(text, "rbd_sync_images"), 42.0);
}

// The previous file sits in a directory others may write: a value that is no finite
// number, or a count beyond int64, is no last success rather than undefined behaviour.
TEST(Metrics, APreviousFileWithValuesOutOfRangeGivesNoLastSuccess) {
  for (const char* images : {"1e300", "-5", "inf", "nan"}) {
    testing::ScopedTempDir dir;
    const std::string path = dir.file("rbd_sync.prom");
    std::ofstream(path) << "rbd_sync_last_success_timestamp_seconds{cluster=\"ceph\"} inf\n"
                        << "rbd_sync_images{cluster=\"ceph\"} " << images << "\n";
    write_metrics_file(path, "ceph", ended_run(RunStatus::failed, ExitCode::unavailable, 2000),
                       nullptr);
    const std::string text = read_file(path);
    EXPECT_EQ(metric_value(text, "rbd_sync_last_success_timestamp_seconds"), std::nullopt)
        << images << "\n"
        << text;
    EXPECT_EQ(metric_value(text, "rbd_sync_images"), std::nullopt) << images << "\n" << text;
    EXPECT_EQ(metric_value(text, "rbd_sync_last_run_exit_code"), 69.0) << text;
  }
}

// Two clusters pointed at one file (a shared --metrics-file): a failed run of one never
// reports the other's last success as its own.
TEST(Metrics, AFailedRunTakesNoLastSuccessOfAnotherCluster) {
  const std::string text = after_a_success_and_a_failure("ceph", "backup");
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_exit_code", "backup"), 69.0);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_success_timestamp_seconds", "backup"), std::nullopt)
      << text;
  EXPECT_EQ(metric_value(text, "rbd_sync_images", "backup"), std::nullopt) << text;
}

TEST(Metrics, UnwritableDirectoryIsACantCreateError) {
  try {
    write_metrics_file("/nonexistent-dir/rbd_sync.prom", "ceph",
                       ended_run(RunStatus::failed, ExitCode::internal, 1000), nullptr);
    FAIL() << "writing into a missing directory must fail";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::cant_create);
  }
}

/// A file of another user's: what a planted symlink points rbd-sync at.
std::string victim_file(const testing::ScopedTempDir& dir) {
  const std::string victim = dir.file("victim");
  std::ofstream(victim)
      << "rbd_sync_last_success_timestamp_seconds{cluster=\"backup\"} 12345\nrbd_sync_images 7\n";
  return victim;
}

/// The textfile directory as the shipped /etc/default suggests it: group-writable, so
/// that any member of its group can plant names in it. Not sticky, so that
/// fs.protected_symlinks does not stand in for what rbd-sync must do itself.
void plant_symlinks(const std::string& path, const std::string& victim) {
  // The temporary name of 731a07e (PATH.tmp.<pid>: guessable), and the name itself.
  ASSERT_EQ(::symlink(victim.c_str(), (path + ".tmp." + std::to_string(::getpid())).c_str()), 0);
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
}

TEST(Metrics, NothingIsWrittenOrReadThroughSymlinksPlantedInTheDirectory) {
  testing::ScopedTempDir dir;
  const std::string victim = victim_file(dir);
  const std::string before = read_file(victim);
  const std::string path = dir.file("rbd_sync.prom");
  plant_symlinks(path, victim);

  // A failed run reads the previous file for the last success: not through the link.
  write_metrics_file(path, "ceph", ended_run(RunStatus::failed, ExitCode::unavailable, 2000),
                     nullptr);
  EXPECT_EQ(read_file(victim), before) << "the planted file was written";
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the link at the name is replaced by the metrics file";
  const std::string text = read_file(path);
  EXPECT_EQ(metric_value(text, "rbd_sync_last_success_timestamp_seconds"), std::nullopt)
      << "read through the planted link:\n"
      << text;
  EXPECT_EQ(metric_value(text, "rbd_sync_images"), std::nullopt) << text;
  EXPECT_EQ(metric_value(text, "rbd_sync_last_run_exit_code"), 69.0);
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    names.insert(entry.path().filename().string());
  }
  EXPECT_EQ(names, (std::set<std::string>{"victim", "rbd_sync.prom",
                                          "rbd_sync.prom.tmp." + std::to_string(::getpid())}))
      << "no temporary file is left behind";
}

TEST(Metrics, AMemberWritingTheFileIsNotLedIntoAnotherMembersFile) {
  if (::geteuid() != 0) {
    GTEST_FAIL() << "needs root, to act as two users of the textfile directory's group";
  }
  using testing::k_member_uid;
  using testing::k_other_uid;
  using testing::k_shared_gid;
  testing::ScopedTempDir dir;
  ASSERT_EQ(::chown(dir.path().c_str(), 0, k_shared_gid), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0775), 0);
  const std::string victim = victim_file(dir);
  ASSERT_EQ(::chown(victim.c_str(), k_other_uid, k_shared_gid), 0);
  ASSERT_EQ(::chmod(victim.c_str(), 0664), 0);  // the group may write it: so may the writer
  const std::string before = read_file(victim);
  const std::string path = dir.file("rbd_sync.prom");
  plant_symlinks(path, victim);
  // The one the writer's pid makes guessable, planted for the child's pid below too.
  const int status = testing::exit_status_as(k_member_uid, k_shared_gid, {k_shared_gid}, [&] {
    const std::string guessed = path + ".tmp." + std::to_string(::getpid());
    static_cast<void>(::symlink(victim.c_str(), guessed.c_str()));
    write_metrics_file(path, "ceph", ended_run(RunStatus::failed, ExitCode::unavailable, 2000),
                       nullptr);
    return 0;
  });
  EXPECT_EQ(status, 0) << "the member's write failed";
  EXPECT_EQ(read_file(victim), before) << "the other member's file was written";
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_uid, k_member_uid);
}

}  // namespace
}  // namespace rbdsync::core
