#include "front/serve.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/environment_file.hpp"
#include "common/error.hpp"
#include "common/fd.hpp"
#include "common/text.hpp"
#include "front/answers.hpp"
#include "front/commands.hpp"
#include "front/journal.hpp"

namespace rbdsync::front {

namespace {

/// A request is one short line; a caller that sends more, or nothing for this long, is
/// answered with an error rather than waited for.
constexpr std::size_t k_max_request_bytes = 4096;
constexpr std::chrono::seconds k_request_timeout{10};
constexpr const char* k_request_hint =
    R"(send one line of JSON: {"cluster": "ceph", "requested_by": "alice", "trigger": "web"})";
/// The settings variable the units put on `rbd-sync run`'s command line.
constexpr const char* k_args_variable = "RBDSYNC_ARGS";

Error bad_request(const std::string& what) {
  return {ExitCode::usage, "bad request on the trigger socket: " + what, k_request_hint};
}

/// The first line the caller sends (without its newline), or all it sent before it shut
/// down its side.
std::string read_request_line(int fd) {
  const auto deadline = std::chrono::steady_clock::now() + k_request_timeout;
  std::string text;
  char buffer[1024];
  for (;;) {
    if (const auto newline = text.find('\n'); newline != std::string::npos) {
      return text.substr(0, newline);
    }
    if (text.size() > k_max_request_bytes) {
      throw bad_request("longer than " + std::to_string(k_max_request_bytes) + " bytes");
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      throw bad_request("no request line within " + std::to_string(k_request_timeout.count()) +
                        " seconds");
    }
    pollfd ready{fd, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(left.count()));
    if (polled <= 0) {
      if (polled < 0 && errno != EINTR) {
        throw bad_request(std::string("cannot wait for it: ") + errno_text(errno));
      }
      continue;
    }
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) {
      return text;
    }
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw bad_request(std::string("cannot read it: ") + errno_text(errno));
    }
    text.append(buffer, static_cast<std::size_t>(got));
  }
}

/// "uid 33 (www-data), pid 4242": who connected, for the log. From the instance name
/// systemd gives the connection's unit (`connection`: NUMBER-PID-UID), since inside the
/// unit's user namespace (PrivateUsers=yes) the kernel reports every peer but root and
/// rbd-sync as nobody; else from the socket (SO_PEERCRED).
std::string peer_text(int fd, const std::string& connection) {
  unsigned long long number = 0;
  long long pid = 0;
  long long uid = -1;
  char end = 0;
  ucred peer{};
  socklen_t size = sizeof peer;
  if (std::sscanf(connection.c_str(), "%llu-%lld-%lld%c", &number, &pid, &uid, &end) == 3 &&
      pid > 0 && uid >= 0) {
    peer.pid = static_cast<pid_t>(pid);
    peer.uid = static_cast<uid_t>(uid);
  } else if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) {
    return "a caller that is not a Unix socket peer";
  }
  std::string text = "uid " + std::to_string(peer.uid);
  passwd entry{};
  passwd* found = nullptr;
  char buffer[1024];
  if (::getpwuid_r(peer.uid, &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr) {
    text += std::string(" (") + found->pw_name + ")";
  }
  return text + ", pid " + std::to_string(peer.pid);
}

/// The settings files of `cluster`, as its unit reads them: their variables go into the
/// environment (libpq's and Ceph's: PGSERVICEFILE, PGPASSFILE, CEPH_CONF, CEPH_ARGS), and
/// the last RBDSYNC_ARGS among them is returned split into words. Also names the files.
/// Only the default cluster and those an admin wrote a settings file for are served: a
/// caller must not make runs (and lock files) of any name it likes.
std::vector<std::string> apply_settings(const std::string& directory, const std::string& cluster,
                                        std::string& files) {
  std::vector<std::string> paths{directory + "/rbd-sync"};
  if (cluster != cli::k_default_cluster) {
    paths.push_back(directory + "/rbd-sync@" + cluster);
    if (::access(paths.back().c_str(), F_OK) != 0) {
      throw Error(ExitCode::usage,
                  "cluster '" + cluster + "' is not served here: there is no " + paths.back(),
                  "ask for a cluster the admin configured; an admin serves another cluster by "
                  "writing its settings file, as for rbd-sync@NAME.timer");
    }
  }
  std::string arguments;
  for (const std::string& path : paths) {
    files += (files.empty() ? "" : " and ") + path;
    std::vector<std::string> warnings;
    for (const auto& [name, value] : cli::read_environment_file(path, &warnings)) {
      // Single-threaded still: nothing has started a thread before the run.
      ::setenv(name.c_str(), value.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
      if (name == k_args_variable) {
        arguments = value;
      }
    }
    for (const std::string& warning : warnings) {
      std::cerr << stderr_prefix(Priority::warning) << "rbd-sync: warning: " << warning
                << std::endl;
    }
  }
  if (arguments.find_first_of("'\"\\") != std::string::npos) {
    // systemd would unquote them, the cron job's shell would not: each schedule would run
    // with other arguments.
    throw Error(ExitCode::config,
                std::string(k_args_variable) + " of " + files +
                    " holds a quote or a backslash, which systemd, the cron job and serve "
                    "would split differently",
                "keep every argument free of blanks and quotes: name the database by a "
                "service (--db service=NAME)");
  }
  return cli::split_words(arguments);
}

/// The `run` configuration of the request; an error in the settings is the admin's
/// configuration, named as such (not a caller's usage error).
cli::Config run_config_of(const TriggerRequest& request, const std::vector<std::string>& words,
                          const std::string& files) {
  std::vector<std::string> arguments = trigger_run_arguments(request, words);
  std::vector<const char*> argv{"rbd-sync"};
  for (const std::string& argument : arguments) {
    argv.push_back(argument.c_str());
  }
  cli::Config config;
  try {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): single-threaded, as above
    config = cli::parse(static_cast<int>(argv.size()), argv.data(), std::getenv("CEPH_ARGS"));
  } catch (const Error& error) {
    throw Error(ExitCode::config,
                std::string(k_args_variable) + " of " + files + ": " + error.what(),
                "fix the settings file; the timer unit of the cluster runs with them too");
  }
  // The button answers at once and never queues, whatever the settings say; and a busy
  // guard is 75, as its client reads it, even where the settings make it 0 for the timer.
  config.detach = false;
  config.wait_seconds = 0;
  config.conflict_exit_code = to_int(ExitCode::already_running);
  config.format = cli::OutputFormat::json;
  return config;
}

/// The caller's connection. Until the run holds its guards (or cannot), stdout is the
/// connection, so that every answer of `run --json` (started, already running, an
/// error) reaches the caller as it is printed; then stdout goes where stderr goes (the
/// unit's journal, or --log-file's) and the connection closes.
///
/// Closing our descriptors is not enough to end the answer: systemd passes an Accept=yes
/// connection as fd 3 too (LISTEN_FDS) and keeps a copy of its own until the unit
/// stops, which is when the run ends. shutdown(2) ends the connection itself, for every
/// copy, so the caller reads end of file as soon as it has the answer.
class Connection {
 public:
  Connection() : m_socket(::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, k_systemd_first_fd + 1)) {
    if (!m_socket) {
      const int error = errno;
      throw Error(ExitCode::unavailable,
                  std::string("cannot take the connection on stdin: ") + errno_text(error),
                  error == EBADF ? "serve answers the connection systemd passes as stdin "
                                   "(rbd-sync-trigger@.service, StandardInput=socket)"
                                 : "the host is out of file descriptors; try again");
    }
    const Fd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (null) {
      ::dup2(null.get(), STDIN_FILENO);
    }
    ::dup2(m_socket.get(), STDOUT_FILENO);
    drop_systemd_copy();
  }

  int fd() const { return m_socket.get(); }

  /// Ends the answer: the caller sees end of file. The sync's own output goes on.
  void close() noexcept {
    if (!m_socket) {
      return;
    }
    std::cout.flush();
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    std::cout.clear();  // a caller gone early made the last write fail: not our problem
    ::shutdown(m_socket.get(), SHUT_RDWR);
    m_socket.reset();
  }

 private:
  /// The connection as systemd also passes it (fd 3, LISTEN_FDS=1 for this process):
  /// closed, and the variables unset, so that nothing the run starts inherits either.
  static void drop_systemd_copy() {
    // NOLINTBEGIN(concurrency-mt-unsafe): single-threaded still
    const char* listen_pid = std::getenv("LISTEN_PID");
    const char* listen_fds = std::getenv("LISTEN_FDS");
    if (listen_pid != nullptr && listen_fds != nullptr &&
        std::string(listen_pid) == std::to_string(::getpid()) && std::string(listen_fds) == "1") {
      ::close(k_systemd_first_fd);
    }
    for (const char* name : {"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"}) {
      ::unsetenv(name);
    }
    // NOLINTEND(concurrency-mt-unsafe)
  }

  static constexpr int k_systemd_first_fd = 3;  // SD_LISTEN_FDS_START

  Fd m_socket;
};

}  // namespace

TriggerRequest parse_trigger_request(const std::string& line) {
  const auto object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) {
    throw bad_request("not one JSON object");
  }
  TriggerRequest request;
  for (const auto& [key, value] : object.items()) {
    if (key != "cluster" && key != "requested_by" && key != "trigger") {
      throw bad_request("unknown field '" + display_text(key.substr(0, 64), Controls::escape) +
                        "' (it takes cluster, requested_by and trigger)");
    }
    if (!value.is_string()) {
      throw bad_request(key + " must be a string");
    }
    const auto& text = value.get_ref<const std::string&>();
    if (key == "cluster") {
      if (!cli::is_cluster_name(text)) {
        throw bad_request("cluster must be " + cli::cluster_name_rule() + ", not '" +
                          display_text(text.substr(0, 64), Controls::escape) + "'");
      }
      request.cluster = text;
    } else if (key == "trigger") {
      if (!cli::is_trigger_name(text)) {
        throw bad_request("trigger must be web, cron or manual, not '" +
                          display_text(text.substr(0, 64), Controls::escape) + "'");
      }
      request.trigger = text;
    } else {
      if (!cli::is_requester_name(text)) {
        throw bad_request("requested_by must be " + cli::requester_name_rule() + ", not '" +
                          display_text(text.substr(0, 64), Controls::escape) + "'");
      }
      request.requested_by = text;
    }
  }
  return request;
}

std::vector<std::string> trigger_run_arguments(const TriggerRequest& request,
                                               const std::vector<std::string>& settings_words) {
  std::vector<std::string> arguments{"run"};
  arguments.insert(arguments.end(), settings_words.begin(), settings_words.end());
  for (const char* argument :
       {"--cluster", request.cluster.c_str(), "--trigger", request.trigger.c_str(), "--json"}) {
    arguments.emplace_back(argument);
  }
  if (!request.requested_by.empty()) {
    arguments.emplace_back("--requested-by");
    arguments.push_back(request.requested_by);
  }
  return arguments;
}

int serve_trigger(const cli::Config& config) {
  // A caller that hangs up early must not kill the run with SIGPIPE.
  static_cast<void>(std::signal(SIGPIPE, SIG_IGN));
  Connection connection;
  int code = to_int(ExitCode::internal);
  try {
    const TriggerRequest request = parse_trigger_request(read_request_line(connection.fd()));
    std::cerr << stderr_prefix(Priority::info) << "rbd-sync: request from "
              << peer_text(connection.fd(), config.connection) << ": sync cluster "
              << request.cluster << " (trigger " << request.trigger << ")"
              << (request.requested_by.empty()
                      ? std::string()
                      : ", requested by " + display_text(request.requested_by, Controls::escape))
              << std::endl;
    std::string files;
    const std::vector<std::string> words =
        apply_settings(config.settings_dir, request.cluster, files);
    const cli::Config run = run_config_of(request, words, files);
    code = to_int(run_sync(run, [&run, &connection](const std::string& run_id) {
      print_started(run_id, static_cast<int>(::getpid()), run.log_file, run);
      connection.close();
    }));
  } catch (...) {
    // Still on the connection when the run never got its guards: the caller reads why.
    code = print_caught(std::current_exception(), cli::OutputFormat::json);
  }
  connection.close();
  return code;
}

}  // namespace rbdsync::front
