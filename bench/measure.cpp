// Runs one command and reports its wall time and peak RSS (getrusage of the child, via
// wait4), so bench/scale.sh depends on no `time` package and no shell in between.
//
//   measure RESULT_FILE COMMAND [ARG ...]
//
// Writes "SECONDS MAX_RSS_KIB EXIT_CODE CPU_SECONDS" (CPU: user + system of the command) to
// RESULT_FILE; the command's stdin, stdout and
// stderr are this program's. Exits with the command's exit code (128+N if killed by N).
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s RESULT_FILE COMMAND [ARG ...]\n", argv[0]);
    return 64;
  }
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[2], nullptr, nullptr, argv + 2, environ);
  if (spawned != 0) {
    std::fprintf(stderr, "measure: cannot run %s: error %d\n", argv[2], spawned);
    return 127;
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) {
    std::perror("measure: wait4");
    return 70;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) {
    std::perror(argv[1]);
    return 73;
  }
  // ru_maxrss is in KiB on Linux. CPU time says what bounds a way that is not waiting
  // on the cluster: the client's own work.
  const auto cpu = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  std::fprintf(out, "%.6f %ld %d %.3f\n", seconds, usage.ru_maxrss, exit_code,
               cpu(usage.ru_utime) + cpu(usage.ru_stime));
  std::fclose(out);
  return exit_code;
}
