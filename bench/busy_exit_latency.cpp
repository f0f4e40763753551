// How fast does `rbd-sync run` answer "already running"? Holds a lock file, then times
// `rbd-sync run` and util-linux `flock -n` against it, alternating, and prints the
// median, 90th percentile and minimum wall time of each, and the ratio of the medians
// against issue #18's target (the busy answer costs at most 3x what `flock -n` costs). A
// missed target is reported, never an exit status: timings on a shared host are figures.
//
//   busy_exit_latency RBD_SYNC_BINARY [RUNS]     (RUNS default 30, at least 20)
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Sample {
  double seconds;
  int exit_code;
};

Sample time_command(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) {
    std::perror(args[0]);
    std::exit(1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  posix_spawn_file_actions_destroy(&actions);
  return {seconds, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

constexpr double k_target_ratio = 3.0;

/// Prints one line of figures; returns the median.
double report(const char* name, std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  const auto at = [&](double q) {
    return seconds[static_cast<std::size_t>(q * static_cast<double>(seconds.size() - 1))];
  };
  std::printf("%-28s runs=%zu median=%.2fms p90=%.2fms min=%.2fms\n", name, seconds.size(),
              at(0.5) * 1e3, at(0.9) * 1e3, seconds.front() * 1e3);
  return at(0.5);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s RBD_SYNC_BINARY [RUNS]\n", argv[0]);
    return 64;
  }
  const std::string binary = argv[1];
  const int runs = argc > 2 ? std::max(20, std::atoi(argv[2])) : 30;

  char dir_template[] = "/tmp/rbd-sync-bench.XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string lock_file = dir + "/sync.lock";
  const int held = open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (held < 0 || flock(held, LOCK_EX | LOCK_NB) != 0) {
    std::perror("holding the lock file");
    return 1;
  }

  // Unreachable endpoints: a busy run must not get as far as using them.
  const std::vector<std::string> rbd_sync = {binary,        "run",
                                             "--lock-file", lock_file,
                                             "--conf",      "/nonexistent/ceph.conf",
                                             "--db",        "host=127.0.0.1 port=1 dbname=x"};
  const std::vector<std::string> flock_n = {"flock", "-n", lock_file, "true"};

  std::vector<double> rbd_sync_seconds;
  std::vector<double> flock_seconds;
  for (int i = 0; i < runs; ++i) {
    const Sample ours = time_command(rbd_sync);
    const Sample theirs = time_command(flock_n);
    if (ours.exit_code != 75 || theirs.exit_code != 1) {
      std::fprintf(stderr, "unexpected exit codes: rbd-sync %d (want 75), flock -n %d (want 1)\n",
                   ours.exit_code, theirs.exit_code);
      return 1;
    }
    rbd_sync_seconds.push_back(ours.seconds);
    flock_seconds.push_back(theirs.seconds);
  }
  std::printf("busy-exit latency against a held lock file (%d runs each, alternating)\n", runs);
  const double ours = report("rbd-sync run (exit 75)", rbd_sync_seconds);
  const double theirs = report("flock -n (exit 1)", flock_seconds);
  const double ratio = ours / theirs;
  std::printf("ratio=%.1fx (median rbd-sync / median flock -n); target <= %.0fx: %s\n", ratio,
              k_target_ratio, ratio <= k_target_ratio ? "PASS" : "MISS");

  close(held);
  unlink(lock_file.c_str());
  rmdir(dir.c_str());
  return 0;
}
