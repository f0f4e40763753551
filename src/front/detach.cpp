#include "front/detach.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "common/error.hpp"
#include "common/fd.hpp"
#include "front/answers.hpp"
#include "front/log_file.hpp"
#include "lock/lock_path.hpp"

namespace rbdsync::front {

namespace {

constexpr const char* k_default_log_name = "detached.log";

/// The signals a web server's restart sends to its process group.
sigset_t restart_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  return signals;
}

/// Blocks the signals a web server's restart sends, from before fork() until the
/// child has left the server's session (and installed its own handling) and the
/// parent has its child: a restart then stops neither half midway.
class BlockedSignals {
 public:
  BlockedSignals() {
    const sigset_t signals = restart_signals();
    pthread_sigmask(SIG_BLOCK, &signals, &m_previous);
  }
  ~BlockedSignals() { restore(); }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;

  /// Restores the mask from before (once).
  void restore() {
    if (!m_restored) {
      pthread_sigmask(SIG_SETMASK, &m_previous, nullptr);
      m_restored = true;
    }
  }

  /// For the child, which keeps SIGINT and SIGTERM blocked (interrupts::install() waits
  /// for them with sigwait) but must not keep SIGHUP blocked forever.
  void keep_for_child() {
    sigdelset(&m_previous, SIGHUP);
    sigaddset(&m_previous, SIGINT);
    sigaddset(&m_previous, SIGTERM);
  }

 private:
  sigset_t m_previous{};
  bool m_restored = false;
};

/// Discards SIGINT, SIGTERM and SIGHUP sent to the old process group in the moment
/// between fork() and setsid(), while they were blocked.
void drop_pending_signals() {
  const sigset_t signals = restart_signals();
  const timespec no_wait{0, 0};
  while (::sigtimedwait(&signals, nullptr, &no_wait) > 0) {
  }
}

/// The child's exit status as an exit code, as a shell reports it.
int exit_code_of(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return to_int(ExitCode::internal);
}

/// Reads the child's report: its run id, or nothing when it ended without one.
std::string read_report(int fd) {
  std::string report;
  char buffer[256];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got > 0) {
      report.append(buffer, static_cast<std::size_t>(got));
      if (report.find('\n') != std::string::npos) {
        return report.substr(0, report.find('\n'));
      }
    } else if (got == 0 || errno != EINTR) {
      return {};
    }
  }
}

/// The default log, beside the lock file: in the directory every caller shares, so it
/// is opened as the lock file is (lock/lock_path.hpp: nothing planted there is followed,
/// a file another member made is reused, one we own is put back to 0660) and then
/// emptied. It is the last detached run's: this run holds the guard, so no other run on
/// this host is writing it.
Fd open_shared_log(const std::string& path) {
  Fd log = lock::open_lock_path(path, lock::OpenMode::create);
  if (::ftruncate(log.get(), 0) != 0 ||
      ::fcntl(log.get(), F_SETFL, ::fcntl(log.get(), F_GETFL) | O_APPEND) != 0) {
    throw Error(ExitCode::cant_create, "cannot empty " + path + ": " + errno_text(errno));
  }
  return log;
}

}  // namespace

std::string DetachedRun::log_path(const cli::Config& config) {
  if (!config.log_file.empty()) {
    return config.log_file;
  }
  // Runs of two clusters hold two lock files at once: each has its own log, as its
  // lock file is named (sync@NAME.lock: detached@NAME.log), or they would empty each
  // other's.
  const auto slash = config.lock_file.rfind('/');
  const std::string directory =
      slash == std::string::npos ? std::string() : config.lock_file.substr(0, slash + 1);
  if (const auto cluster =
          cli::cluster_of_lock_file_name(config.lock_file.substr(directory.size()))) {
    return directory + "detached@" + *cluster + ".log";
  }
  return directory + k_default_log_name;
}

std::optional<int> DetachedRun::start(const cli::Config& config, DetachedRun& child) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    throw Error(ExitCode::unavailable,
                std::string("cannot start a detached run: pipe: ") + errno_text(errno),
                "the host is out of file descriptors; try again");
  }
  Fd read_end(ends[0]);
  Fd write_end(ends[1]);
  std::cout.flush();
  std::cerr.flush();
  BlockedSignals blocked;
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw Error(ExitCode::unavailable,
                std::string("cannot start a detached run: fork: ") + errno_text(errno),
                "the host is out of processes or memory; try again");
  }
  if (pid == 0) {
    // The run. Its own session: no controlling terminal, and out of the web server's
    // process group and session, so that their SIGTERM or SIGKILL do not reach it.
    ::setsid();
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::close(null);
    }
    // The parent (or the reader of the shared stdout) may be gone by the time the
    // child writes: an EPIPE must not kill the sync.
    static_cast<void>(std::signal(SIGPIPE, SIG_IGN));
    // A daemon has no terminal to hang up; and what was sent to the web server's group
    // before setsid() is the server's business, not this run's.
    static_cast<void>(std::signal(SIGHUP, SIG_IGN));
    drop_pending_signals();
    // Whatever else the web server left open without close-on-exec (its listening
    // socket, pipes) must not live as long as the sync: only the report pipe stays.
    close_inherited_descriptors(write_end.get());
    blocked.keep_for_child();
    child.m_report = std::move(write_end);
    child.m_log_path = log_path(config);
    child.m_truncate_log = config.log_file.empty();
    return std::nullopt;
  }
  // The parent answers for the button: a restart of the web server may stop it.
  blocked.restore();
  write_end.reset();
  const std::string run_id = read_report(read_end.get());
  if (!run_id.empty()) {
    print_started(run_id, pid, log_path(config), config);
    return to_int(ExitCode::ok);
  }
  // Ended before it held both guards: it printed its answer itself.
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return exit_code_of(status);
}

void DetachedRun::report_started(const std::string& run_id) noexcept {
  if (!m_report) {
    return;
  }
  std::cout.flush();
  std::cerr.flush();
  // The default log beside the lock file, or --log-file, opened as configure_logging()
  // opens it; /dev/null (after a warning) when it cannot be used.
  int log = -1;
  try {
    log = (m_truncate_log ? open_shared_log(m_log_path) : open_log_file(m_log_path)).release();
  } catch (const std::exception& error) {
    std::cerr << "rbd-sync: warning: no log for the detached run (" << error.what()
              << "); its output is discarded" << std::endl;
  }
  if (log < 0) {
    log = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  }
  if (log >= 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::close(log);
  }
  const std::string line = run_id + "\n";
  // One small write to a pipe is atomic; a parent that is gone is no reason to stop.
  [[maybe_unused]] const ssize_t written = ::write(m_report.get(), line.data(), line.size());
  m_report.reset();
}

}  // namespace rbdsync::front
