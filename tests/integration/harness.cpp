#include "integration/harness.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "common/fd.hpp"
#include "common/uuid.hpp"
#include "db/pg_store.hpp"
#include "db/pqxx_compat.hpp"
#include "lock/holder_record.hpp"
#include "support/pipe.hpp"
#include "support/poll.hpp"

namespace rbdsync::testing {

using db::exec;
using db::exec_one_row;

namespace {

constexpr std::uint64_t k_all_features = 0x3d;  // rbd create's default: up to deep-flatten
constexpr std::uint64_t k_layering_only = 1;
// An image's name is part of the object name "rbd_id.<name>", and the OSD refuses
// object names longer than osd_max_object_name_len (2048) bytes.
constexpr std::size_t k_longest_image_name = 2048 - std::string_view("rbd_id.").size();

std::string quote_ident(const std::string& name) {
  return "\"" + name + "\"";
}

}  // namespace

void check(int r, const std::string& what) {
  if (r < 0) {
    throw std::runtime_error(what + " failed: " + std::to_string(r));
  }
}

std::string required_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') {
    throw std::runtime_error(std::string(name) +
                             " is not set: run the integration tests through ./scripts/test.sh, "
                             "which starts the throwaway Ceph cluster and PostgreSQL server");
  }
  return value;
}

ceph::CephConfig admin_ceph_config(ceph::ReaderKind reader) {
  ceph::CephConfig config;
  config.reader = reader;
  config.conf_path = required_env("RBDSYNC_TEST_CEPH_CONF");
  config.client_name = "client." + required_env("RBDSYNC_TEST_CEPH_ADMIN_ID");
  return config;
}

std::string literal(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    quoted += c;
    if (c == '\'') {
      quoted += '\'';
    }
  }
  return quoted + "'";
}

std::string unique_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

RunResult run_program(const std::vector<std::string>& argv, int timeout_seconds,
                      const OnStart& on_start, const std::vector<std::string>& env) {
  auto [out_read, out_write] = cloexec_pipe();
  auto [err_read, err_write] = cloexec_pipe();

  std::vector<char*> args;
  for (const auto& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    ::dup2(out_write.get(), STDOUT_FILENO);
    ::dup2(err_write.get(), STDERR_FILENO);
    for (const auto& setting : env) {
      const auto equals = setting.find('=');
      if (equals == std::string::npos) {
        ::unsetenv(setting.c_str());
      } else {
        ::setenv(setting.substr(0, equals).c_str(), setting.substr(equals + 1).c_str(), 1);
      }
    }
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  out_write.reset();
  err_write.reset();
  if (on_start) {
    on_start(pid);
  }

  RunResult result;
  const auto deadline = start + std::chrono::seconds(timeout_seconds);
  bool killed = false;
  pollfd fds[2] = {{out_read.get(), POLLIN, 0}, {err_read.get(), POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !killed) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    if (::poll(fds, 2, killed ? 1000 : static_cast<int>(left.count())) < 0) {
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) {
        continue;
      }
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buffer, static_cast<std::size_t>(n));
      } else {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  result.peak_rss_kib = usage.ru_maxrss;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  if (killed) {
    result.err += "\n[test harness: killed after " + std::to_string(timeout_seconds) + "s]";
  }
  return result;
}

RunResult run_rbd_sync(const std::vector<std::string>& args, int timeout_seconds,
                       const OnStart& on_start, const std::vector<std::string>& env) {
  std::vector<std::string> argv{RBDSYNC_TEST_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, timeout_seconds, on_start, env);
}

void run_script(const std::string& name, const std::vector<std::string>& args) {
  std::vector<std::string> argv{std::string(RBDSYNC_TEST_SOURCE_DIR) + "/scripts/" + name};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult result = run_program(argv, 120);
  if (result.exit_code != 0) {
    throw std::runtime_error("scripts/" + name + " failed: " + result.err);
  }
}

namespace {

/// The argv of Ceph's CLI `tool` with the test cluster's conf and admin user: the
/// cluster's own release's (RBDSYNC_TEST_CEPH_ROOT: a cluster started from a root of
/// scripts/debian-root.sh, whose tools are run in there), else the host's.
std::vector<std::string> ceph_cli(const char* tool) {
  std::vector<std::string> argv;
  const char* root = std::getenv("RBDSYNC_TEST_CEPH_ROOT");
  if (root != nullptr && *root != '\0') {
    argv = {std::string(RBDSYNC_TEST_SOURCE_DIR) + "/scripts/debian-root.sh", "run", root};
  }
  argv.insert(argv.end(), {tool, "--conf", required_env("RBDSYNC_TEST_CEPH_CONF"), "--id",
                           required_env("RBDSYNC_TEST_CEPH_ADMIN_ID")});
  return argv;
}

}  // namespace

nlohmann::json rbd_json(const std::vector<std::string>& args) {
  std::vector<std::string> argv = ceph_cli("rbd");
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--format", "json"});
  std::string command;
  for (const std::string& arg : argv) {
    command += (command.empty() ? "" : " ") + arg;
  }
  // The reference tool itself sometimes aborts on a loaded host (pacific's rbd: "terminate
  // called after throwing std::system_error: Invalid argument" in librados'
  // io_context_pool thread, exit 134). These are read-only queries, so a crash of the
  // oracle gets a fresh invocation; an error it reports (any other exit) does not.
  constexpr int k_attempts = 3;
  constexpr int k_aborted = 128 + SIGABRT;
  RunResult result = run_program(argv, 60, {}, {"TZ=UTC"});
  for (int attempt = 2; attempt <= k_attempts && result.exit_code == k_aborted; ++attempt) {
    std::cerr << "harness: " << command << " aborted (exit " << result.exit_code << "); attempt "
              << attempt << " of " << k_attempts << std::endl;
    result = run_program(argv, 60, {}, {"TZ=UTC"});
  }
  if (result.exit_code != 0) {
    throw std::runtime_error(command + ": exit " + std::to_string(result.exit_code) + ": " +
                             result.err);
  }
  try {
    return nlohmann::json::parse(result.out);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(command + " printed no JSON: " + result.out);
  }
}

std::string rados(const std::vector<std::string>& args) {
  std::vector<std::string> argv = ceph_cli("rados");
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult result = run_program(argv, 60);
  if (result.exit_code != 0) {
    throw std::runtime_error("rados failed (exit " + std::to_string(result.exit_code) +
                             "): " + result.err);
  }
  return result.out;
}

std::int64_t parse_ctime(const std::string& text) {
  std::tm time{};
  const char* end = ::strptime(text.c_str(), "%a %b %d %H:%M:%S %Y", &time);
  if (end == nullptr || *end != '\0') {
    throw std::runtime_error("not a ctime-style time: '" + text + "'");
  }
  return static_cast<std::int64_t>(::timegm(&time));
}

ImageHolder::ImageHolder(const std::string& pool, const std::string& ns, const std::string& image) {
  // Opens the image read-write and writes a block, so it shows as a watcher and holds
  // the exclusive lock; says "ready", then keeps it open until stdin closes.
  static const char* const k_script = R"(
import sys, rados, rbd
conf, user, pool, ns, name = sys.argv[1:6]
cluster = rados.Rados(conffile=conf, rados_id=user)
cluster.connect()
io = cluster.open_ioctx(pool)
io.set_namespace(ns)
image = rbd.Image(io, name)
image.write(b'w' * 4096, 0)
print('ready', flush=True)
sys.stdin.read()
image.close()
io.close()
cluster.shutdown()
)";
  auto [in_read, in_write] = cloexec_pipe();
  auto [out_read, out_write] = cloexec_pipe();
  const std::string conf = required_env("RBDSYNC_TEST_CEPH_CONF");
  const std::string user = required_env("RBDSYNC_TEST_CEPH_ADMIN_ID");
  // Debian's interpreter: the python3-rbd package is installed for it only.
  std::vector<std::string> argv{"/usr/bin/python3", "-c", k_script, conf, user, pool, ns, image};
  std::vector<char*> args;
  for (auto& arg : argv) {
    args.push_back(arg.data());
  }
  args.push_back(nullptr);
  m_pid = ::fork();
  if (m_pid < 0) {
    throw std::runtime_error("fork failed");
  }
  if (m_pid == 0) {
    ::dup2(in_read.get(), STDIN_FILENO);
    ::dup2(out_write.get(), STDOUT_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  in_read.reset();
  out_write.reset();
  m_stdin = in_write.release();
  std::string said;
  pollfd fd{out_read.get(), POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (said.find("ready\n") == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    char buffer[256];
    ssize_t n = 0;
    if (left.count() <= 0 || ::poll(&fd, 1, static_cast<int>(left.count())) <= 0 ||
        (n = ::read(fd.fd, buffer, sizeof buffer)) <= 0) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
      ::close(m_stdin);
      throw std::runtime_error("the python3-rbd process never opened " + pool + "/" + image +
                               " (is python3-rbd installed for /usr/bin/python3?)");
    }
    said.append(buffer, static_cast<std::size_t>(n));
  }
}

ImageHolder::~ImageHolder() {
  ::close(m_stdin);  // EOF: it closes the image and exits
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (::waitpid(m_pid, nullptr, WNOHANG) == m_pid) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(m_pid, SIGKILL);
  ::waitpid(m_pid, nullptr, 0);
}

BackgroundRun::BackgroundRun(const std::vector<std::string>& args,
                             const std::vector<std::string>& env) {
  auto started = std::make_shared<std::promise<pid_t>>();
  auto pid = started->get_future();
  m_result = std::async(std::launch::async, [args, env, started] {
    return run_rbd_sync(
        args, 300, [started](pid_t child) { started->set_value(child); }, env);
  });
  m_pid = pid.get();
}

BackgroundRun::~BackgroundRun() {
  if (!m_waited) {
    ::kill(m_pid, SIGKILL);
    m_result.wait();
  }
}

RunResult BackgroundRun::wait() {
  m_waited = true;
  return m_result.get();
}

void stop_when_reading_starts(pid_t pid, const std::string& lock_path) {
  // Polled often: the sync is to be stopped near the start of its reading.
  wait_for(
      "the sync to start reading images",
      [&] {
        const Fd fd(::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC));
        const auto record = fd.get() >= 0 ? lock::read_record(fd.get()) : std::nullopt;
        if (!record || !record->holder || record->holder->pid != pid ||
            record->holder->phase != "reading") {
          return false;
        }
        ::kill(pid, SIGSTOP);
        std::cout << "[harness] stopped the sync after " << record->holder->done << " of "
                  << record->holder->total << " images read" << std::endl;
        return true;
      },
      std::chrono::seconds(60), std::chrono::microseconds(500));
}

void wait_until_open(pid_t pid, const std::string& path) {
  const std::string wanted = std::filesystem::weakly_canonical(path).string();
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  wait_for(
      "process " + std::to_string(pid) + " to open " + path,
      [&] {
        std::error_code error;
        for (const auto& entry : std::filesystem::directory_iterator(fds, error)) {
          std::error_code link_error;
          if (std::filesystem::read_symlink(entry.path(), link_error).string() == wanted) {
            return true;
          }
        }
        return false;
      },
      std::chrono::seconds(30), std::chrono::milliseconds(5));
}

// ---------------------------------------------------------------------------- Ceph

CephAdmin::CephAdmin() {
  const std::string conf = required_env("RBDSYNC_TEST_CEPH_CONF");
  const std::string id = required_env("RBDSYNC_TEST_CEPH_ADMIN_ID");
  check(m_rados.init(id.c_str()), "rados init");
  check(m_rados.conf_read_file(conf.c_str()), "reading " + conf);
  m_rados.conf_set("client_mount_timeout", "30");
  m_rados.conf_set("log_to_stderr", "false");
  check(m_rados.connect(), "connecting to the test cluster (is it running?)");
}

CephAdmin::~CephAdmin() {
  for (const auto& pool : m_pools) {
    m_rados.pool_delete(pool.c_str());
  }
}

void CephAdmin::create_pool(const std::string& name, bool rbd) {
  check(m_rados.pool_create(name.c_str()), "creating pool " + name);
  m_pools.push_back(name);
  if (rbd) {
    librados::IoCtx pool_io = io(name);
    librbd::RBD api;
    check(api.pool_init(pool_io, false), "rbd pool init " + name);
  }
}

void CephAdmin::delete_pool(const std::string& name) {
  check(m_rados.pool_delete(name.c_str()), "deleting pool " + name);
  m_pools.erase(std::remove(m_pools.begin(), m_pools.end(), name), m_pools.end());
}

std::int64_t CephAdmin::pool_id(const std::string& name) {
  const std::int64_t id = m_rados.pool_lookup(name.c_str());
  check(static_cast<int>(id), "looking up pool " + name);
  return id;
}

std::string CephAdmin::fsid() {
  std::string fsid;
  check(m_rados.cluster_fsid(&fsid), "reading fsid");
  return fsid;
}

librados::IoCtx CephAdmin::io(const std::string& pool, const std::string& ns) {
  librados::IoCtx io;
  check(m_rados.ioctx_create(pool.c_str(), io), "opening pool " + pool);
  io.set_namespace(ns);
  return io;
}

void CephAdmin::create_namespace(const std::string& pool, const std::string& ns) {
  librados::IoCtx pool_io = io(pool);
  librbd::RBD api;
  check(api.namespace_create(pool_io, ns.c_str()), "creating namespace " + ns);
}

std::string CephAdmin::create_image(const std::string& pool, const std::string& name,
                                    std::uint64_t size, std::uint64_t features, int order,
                                    const std::string& ns) {
  librados::IoCtx pool_io = io(pool, ns);
  librbd::RBD api;
  check(api.create2(pool_io, name.c_str(), size, features, &order), "creating image " + name);
  librbd::Image image;
  check(api.open_read_only(pool_io, image, name.c_str(), nullptr), "opening image " + name);
  std::string id;
  check(image.get_id(&id), "reading the id of " + name);
  return id;
}

std::string CephAdmin::create_striped_image(const std::string& pool, const std::string& name,
                                            std::uint64_t size, int order,
                                            std::uint64_t stripe_unit, std::uint64_t stripe_count) {
  librados::IoCtx pool_io = io(pool);
  librbd::RBD api;
  constexpr std::uint64_t k_layering_and_striping = RBD_FEATURE_LAYERING | RBD_FEATURE_STRIPINGV2;
  check(api.create3(pool_io, name.c_str(), size, k_layering_and_striping, &order, stripe_unit,
                    stripe_count),
        "creating image " + name);
  return image_id(pool, name);
}

void CephAdmin::set_image_config(const std::string& pool, const std::string& image_name,
                                 const std::string& option, const std::string& value) {
  librados::IoCtx pool_io = io(pool);
  librbd::RBD api;
  librbd::Image image;
  check(api.open(pool_io, image, image_name.c_str()), "opening image " + image_name);
  // What `rbd config image set` stores: image metadata with the "conf_" prefix.
  check(image.metadata_set("conf_" + option, value), "setting " + option + " on " + image_name);
}

void CephAdmin::create_images(const std::string& pool, const std::string& prefix, int count,
                              std::uint64_t size) {
  librados::IoCtx pool_io = io(pool);
  librbd::RBD api;
  // create2 is synchronous; a few threads keep the OSD busy enough.
  constexpr int k_threads = 8;
  std::vector<std::future<int>> workers;
  for (int t = 0; t < k_threads; ++t) {
    workers.push_back(std::async(std::launch::async, [&, t] {
      for (int n = t; n < count; n += k_threads) {
        int order = 22;
        const std::string name = prefix + "-" + std::to_string(n);
        const int r = api.create2(pool_io, name.c_str(), size, 0x3d, &order);
        if (r < 0) {
          return r;
        }
      }
      return 0;
    }));
  }
  for (auto& worker : workers) {
    check(worker.get(), "creating images " + prefix + "-*");
  }
}

void CephAdmin::remove_image(const std::string& pool, const std::string& name,
                             const std::string& ns) {
  librados::IoCtx pool_io = io(pool, ns);
  librbd::RBD api;
  check(api.remove(pool_io, name.c_str()), "removing image " + name);
}

void CephAdmin::resize_image(const std::string& pool, const std::string& name, std::uint64_t size,
                             const std::string& ns) {
  librados::IoCtx pool_io = io(pool, ns);
  librbd::RBD api;
  librbd::Image image;
  check(api.open(pool_io, image, name.c_str()), "opening image " + name);
  check(image.resize(size), "resizing image " + name);
}

void CephAdmin::snapshot(const std::string& pool, const std::string& image_name,
                         const std::string& snap, bool protect, const std::string& ns) {
  librados::IoCtx pool_io = io(pool, ns);
  librbd::RBD api;
  librbd::Image image;
  check(api.open(pool_io, image, image_name.c_str()), "opening image " + image_name);
  check(image.snap_create(snap.c_str()), "creating snapshot " + snap);
  if (protect) {
    check(image.snap_protect(snap.c_str()), "protecting snapshot " + snap);
  }
}

std::string CephAdmin::clone(const std::string& pool, const std::string& image,
                             const std::string& snap, const std::string& clone_name) {
  librados::IoCtx pool_io = io(pool);
  librbd::RBD api;
  int order = 0;
  check(api.clone(pool_io, image.c_str(), snap.c_str(), pool_io, clone_name.c_str(), 0x3d, &order),
        "cloning " + image + "@" + snap);
  librbd::Image cloned;
  check(api.open_read_only(pool_io, cloned, clone_name.c_str(), nullptr), "opening clone");
  std::string id;
  check(cloned.get_id(&id), "reading the id of the clone");
  return id;
}

void CephAdmin::remove_snapshot(const std::string& pool, const std::string& image_name,
                                const std::string& snap, const std::string& ns) {
  librados::IoCtx pool_io = io(pool, ns);
  librbd::RBD api;
  librbd::Image image;
  check(api.open(pool_io, image, image_name.c_str()), "opening image " + image_name);
  bool is_protected = false;
  check(image.snap_is_protected(snap.c_str(), &is_protected), "reading snapshot " + snap);
  if (is_protected) {
    check(image.snap_unprotect(snap.c_str()), "unprotecting snapshot " + snap);
  }
  check(image.snap_remove(snap.c_str()), "removing snapshot " + snap);
}

std::string CephAdmin::clone_v2(const std::string& pool, const std::string& ns,
                                const std::string& image, const std::string& snap,
                                const std::string& child_pool, const std::string& child_ns,
                                const std::string& clone_name) {
  librados::IoCtx parent_io = io(pool, ns);
  librados::IoCtx child_io = io(child_pool, child_ns);
  librbd::RBD api;
  librbd::ImageOptions options;
  check(options.set(RBD_IMAGE_OPTION_CLONE_FORMAT, static_cast<std::uint64_t>(2)),
        "setting the clone format");
  check(options.set(RBD_IMAGE_OPTION_FEATURES, static_cast<std::uint64_t>(0x3d)),
        "setting the clone's features");
  check(api.clone3(parent_io, image.c_str(), snap.c_str(), child_io, clone_name.c_str(), options),
        "cloning " + image + "@" + snap + " to " + clone_name);
  return image_id(child_pool, clone_name, child_ns);
}

std::string CephAdmin::image_id(const std::string& pool, const std::string& name,
                                const std::string& ns) {
  librados::IoCtx pool_io = io(pool, ns);
  librbd::RBD api;
  librbd::Image image;
  check(api.open_read_only(pool_io, image, name.c_str(), nullptr), "opening image " + name);
  std::string id;
  check(image.get_id(&id), "reading the id of " + name);
  return id;
}

void CephAdmin::write(const std::string& pool, const std::string& image_name, std::uint64_t offset,
                      std::uint64_t length, const std::string& ns) {
  librados::IoCtx pool_io = io(pool, ns);
  librbd::RBD api;
  librbd::Image image;
  check(api.open(pool_io, image, image_name.c_str()), "opening image " + image_name);
  std::string pattern(length, '\0');
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    pattern[i] = static_cast<char>('a' + i % 26);
  }
  librados::bufferlist data;
  data.append(pattern);
  const ssize_t written = image.write(offset, length, data);
  check(written < 0 ? static_cast<int>(written) : 0, "writing to image " + image_name);
}

void CephAdmin::rename_image(const std::string& pool, const std::string& from,
                             const std::string& to) {
  librados::IoCtx pool_io = io(pool);
  librbd::RBD api;
  check(api.rename(pool_io, from.c_str(), to.c_str()), "renaming image " + from);
}

std::string CephAdmin::trash_move(const std::string& pool, const std::string& image,
                                  const std::string& ns) {
  const std::string id = image_id(pool, image, ns);
  librados::IoCtx pool_io = io(pool, ns);
  librbd::RBD api;
  check(api.trash_move(pool_io, image.c_str(), 0), "moving image " + image + " to the trash");
  return id;
}

void CephAdmin::trash_restore(const std::string& pool, const std::string& id,
                              const std::string& name) {
  librados::IoCtx pool_io = io(pool);
  librbd::RBD api;
  check(api.trash_restore(pool_io, id.c_str(), name.c_str()), "restoring image " + id);
}

void CephAdmin::rename_pool(const std::string& from, const std::string& to) {
  mon_command(
      nlohmann::json{{"prefix", "osd pool rename"}, {"srcpool", from}, {"destpool", to}}.dump());
  std::replace(m_pools.begin(), m_pools.end(), from, to);
  // librados checks a new pool's name against its own OSD map first.
  check(m_rados.wait_for_latest_osdmap(), "waiting for the OSD map");
}

std::string CephAdmin::mon_command(const std::string& command) {
  librados::bufferlist in;
  librados::bufferlist out;
  std::string status;
  const int r = m_rados.mon_command(command, in, &out, &status);
  check(r, "mon command " + command + " (" + status + ")");
  return out.to_str();
}

int CephAdmin::release() {
  // "ceph version 18.2.7 (6b0e98...) reef (stable)"
  const auto answer =
      nlohmann::json::parse(mon_command(R"({"prefix": "version", "format": "json"})"));
  const std::string version = answer.at("version").get<std::string>();
  const std::string prefix = "ceph version ";
  if (version.rfind(prefix, 0) != 0) {
    throw std::runtime_error("unexpected mon version answer: " + version);
  }
  return std::stoi(version.substr(prefix.size()));
}

bool CephAdmin::has_mgr() {
  const auto stat =
      nlohmann::json::parse(mon_command(R"({"prefix": "mgr stat", "format": "json"})"));
  return stat.value("available", false);
}

InventoryFixture CephAdmin::create_inventory_fixture(const std::string& pool,
                                                     const std::string& second) {
  InventoryFixture fixture;
  create_namespace(pool, "tenant");

  // fast-diff, data, a protected snapshot with two clones and a later snapshot.
  create_image(pool, "fast", 64 * k_mib);
  write(pool, "fast", 0, 4 * k_mib);
  snapshot(pool, "fast", "s1", /*protect=*/true);
  write(pool, "fast", 8 * k_mib, 4 * k_mib);
  snapshot(pool, "fast", "s2", /*protect=*/false);
  write(pool, "fast", 16 * k_mib, k_mib);
  set_image_config(pool, "fast", "rbd_qos_iops_limit", "100");
  clone(pool, "fast", "s1", "child");                           // clone format 1
  clone_v2(pool, "", "fast", "s1", second, "", "cross-child");  // format 2, other pool
  // A snapshot removed while a format 2 clone needs it: kept in the "trash" snapshot
  // namespace under a new name.
  create_image(pool, "snap-trasher", 8 * k_mib);
  snapshot(pool, "snap-trasher", "doomed", /*protect=*/false);
  clone_v2(pool, "", "snap-trasher", "doomed", pool, "", "orphan-child");
  remove_snapshot(pool, "snap-trasher", "doomed");
  // No fast-diff, 1 MiB objects, fancy striping.
  create_striped_image(pool, "plain", 32 * k_mib, 20, 64 * 1024, 4);
  write(pool, "plain", 0, 2 * k_mib);
  // fast-diff whose object map is gone: flagged invalid on the next write.
  const std::string broken_id = create_image(pool, "broken-map", 16 * k_mib);
  rados({"-p", pool, "rm", "rbd_object_map." + broken_id});
  write(pool, "broken-map", 0, k_mib);
  // A namespace, the trash (in both namespaces), a second pool.
  create_image(pool, "in-tenant", 8 * k_mib, k_all_features, 22, "tenant");
  write(pool, "in-tenant", 0, k_mib, "tenant");
  create_image(pool, "binned", 8 * k_mib);
  trash_move(pool, "binned");
  create_image(pool, "binned-in-tenant", 8 * k_mib, k_all_features, 22, "tenant");
  trash_move(pool, "binned-in-tenant", "tenant");
  create_image(second, "other", 4 * k_mib, k_layering_only);
  // Names.
  fixture.longest_name = std::string(k_longest_image_name, 'n');
  for (const std::string& name : {std::string("it's \"quoted\""), std::string(" two  spaces "),
                                  std::string("диск-💾-ünïcødé"), fixture.longest_name}) {
    create_image(pool, name, 4 * k_mib);
  }
  // A client that has an image open (and holds its exclusive lock).
  create_image(pool, "watched", 8 * k_mib);
  fixture.holder = std::make_unique<ImageHolder>(pool, "", "watched");
  fixture.images = 14;
  return fixture;
}

// ---------------------------------------------------------------------------- PostgreSQL

TestDatabase::TestDatabase() {
  const std::string base = required_env("RBDSYNC_TEST_DB");
  required_env("PGPASSFILE");
  m_name = unique_name("rbdsync_it");
  for (char& c : m_name) {
    if (c == '-') {
      c = '_';
    }
  }
  pqxx::connection admin(base);
  pqxx::nontransaction work(admin);
  work.exec("CREATE DATABASE " + quote_ident(m_name));
  // libpq keeps the last value of a repeated keyword.
  m_conninfo = base + " dbname=" + m_name;
}

TestDatabase::~TestDatabase() {
  try {
    pqxx::connection admin(required_env("RBDSYNC_TEST_DB"));
    pqxx::nontransaction work(admin);
    // Not WITH (FORCE): that refuses outright when an autovacuum worker happens to be
    // in the database (it is not ours to terminate). Our own leftover sessions are
    // ended here; a plain DROP DATABASE then waits for them (up to 5 s) and makes
    // autovacuum step aside by itself.
    exec(work,
         "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
         "WHERE datname = $1 AND usename = current_user AND pid <> pg_backend_pid()",
         m_name);
    work.exec("DROP DATABASE IF EXISTS " + quote_ident(m_name));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "dropping test database " << m_name << ": " << e.what();
  }
}

std::string TestDatabase::admin_conninfo() const {
  // libpq keeps the last value of a repeated keyword.
  return required_env("RBDSYNC_TEST_DB_ADMIN") + " dbname=" + m_name;
}

std::unique_ptr<pqxx::connection> TestDatabase::connect() const {
  return std::make_unique<pqxx::connection>(m_conninfo);
}

std::string TestDatabase::migrate_and_start_run(const std::string& fsid) const {
  db::PgStore(m_conninfo).migrate();
  const std::string run_id = random_uuid();
  auto connection = connect();
  pqxx::work work(*connection);
  work.exec(
      "INSERT INTO rbdsync.runs (run_id, fsid, trigger, host, pid, started_at, status) "
      "VALUES (" +
      literal(run_id) + ", " + literal(fsid) + ", 'manual', 'test', 1, now(), 'running')");
  work.commit();
  return run_id;
}

std::vector<std::string> TestDatabase::rows(const std::string& sql) const {
  auto connection = connect();
  pqxx::nontransaction work(*connection);
  std::vector<std::string> result;
  for (const auto& row : work.exec(sql)) {
    std::string line;
    bool first = true;
    for (const auto& field : row) {
      if (!first) {
        line += '|';
      }
      first = false;
      line += field.is_null() ? "NULL" : field.c_str();
    }
    result.push_back(line);
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::string TestDatabase::checksum() const {
  std::string all;
  for (const char* table : {"rbdsync.clusters", "rbdsync.pools", "rbdsync.namespaces",
                            "rbdsync.images", "rbdsync.snapshots", "rbdsync.trash"}) {
    const auto table_rows = rows(std::string("SELECT md5(coalesce(string_agg(t::text, ',' "
                                             "ORDER BY t::text), '')) FROM ") +
                                 table + " t");
    all += table_rows.empty() ? "" : table_rows.front();
    all += ';';
  }
  return all;
}

std::vector<nlohmann::json> TestDatabase::json_rows(const std::string& sql) const {
  auto connection = connect();
  pqxx::nontransaction work(*connection);
  std::vector<nlohmann::json> result;
  for (const auto& row : work.exec("SELECT to_jsonb(t)::text FROM (" + sql + ") AS t")) {
    result.push_back(nlohmann::json::parse(row[0].c_str()));
  }
  return result;
}

std::vector<std::string> TestDatabase::settled_write_counts() const {
  const std::string sql =
      "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables "
      "WHERE schemaname = 'rbdsync' AND relname IN "
      "('clusters', 'pools', 'namespaces', 'images', 'snapshots', 'trash')";
  auto connection = connect();
  const auto read = [&] {
    pqxx::nontransaction work(*connection);
    // A fresh look each time, not the snapshot this session took first.
    work.exec("SELECT pg_stat_clear_snapshot()");
    std::vector<std::string> counts;
    for (const auto& row : work.exec(sql)) {
      counts.push_back(std::string(row[0].c_str()) + "|" + row[1].c_str() + "|" + row[2].c_str() +
                       "|" + row[3].c_str());
    }
    std::sort(counts.begin(), counts.end());
    const bool rbd_sync_connected =
        exec_one_row(work,
                     "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                     "AND application_name = 'rbd-sync'")[0]
            .as<int>() > 0;
    return std::make_pair(counts, rbd_sync_connected);
  };
  // A backend leaves pg_stat_activity before it flushes its counters at exit, so only
  // figures that stayed the same for a while are final.
  constexpr auto k_quiet = std::chrono::milliseconds(1500);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto last = read();
  auto last_change = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto now = read();
    if (now != last) {
      last = std::move(now);
      last_change = std::chrono::steady_clock::now();
    } else if (!now.second && std::chrono::steady_clock::now() - last_change >= k_quiet) {
      return now.first;
    }
  }
  throw std::runtime_error("the table statistics never settled");
}

// ---------------------------------------------------------------------------- fixture

std::vector<std::string> IntegrationTest::run_args(const std::vector<std::string>& extra) const {
  // Tests run side by side on one cluster (tests/CMakeLists.txt): a sync of every pool
  // would read what other tests make and delete meanwhile. Those that mean to sync every
  // pool say so in their name, and CTest runs them alone.
  const bool names_pools = std::find_if(extra.begin(), extra.end(), [](const std::string& arg) {
                             return arg == "--pool" || arg == "-p";
                           }) != extra.end();
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  if (!names_pools && test != nullptr &&
      std::string(test->name()).find(k_every_pool_marker) == std::string::npos &&
      std::string(test->test_suite_name()) != k_serial_suite) {
    throw std::logic_error(std::string("a sync of every pool in a test that runs beside others: "
                                       "give it --pool, or put '") +
                           k_every_pool_marker + "' in the test's name (it then runs alone)");
  }
  std::vector<std::string> args{"run",
                                "--db",
                                db.conninfo(),
                                "--conf",
                                required_env("RBDSYNC_TEST_CEPH_CONF"),
                                "--id",
                                required_env("RBDSYNC_TEST_CEPH_ID"),
                                "--lock-file",
                                lock_file,
                                "--ceph-timeout",
                                "20"};
  if (!reader.empty()) {
    args.insert(args.end(), {"--reader", reader});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

RunResult IntegrationTest::migrate() const {
  return run_rbd_sync({"migrate", "--db", db.conninfo()});
}

std::string IntegrationTest::migrate_and_create_pool(const std::string& prefix) {
  const RunResult migrated = migrate();
  if (migrated.exit_code != 0) {
    throw std::runtime_error("rbd-sync migrate failed: " + migrated.err);
  }
  const std::string pool = unique_name(prefix);
  ceph.create_pool(pool);
  return pool;
}

RunResult IntegrationTest::sync(const std::vector<std::string>& extra) const {
  return run_rbd_sync(run_args(extra));
}

std::pair<int, nlohmann::json> IntegrationTest::sync_json(
    const std::vector<std::string>& extra) const {
  std::vector<std::string> args = extra;
  args.emplace_back("--json");
  const RunResult result = sync(args);
  try {
    return {result.exit_code, nlohmann::json::parse(result.out)};
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("rbd-sync run --json (exit " + std::to_string(result.exit_code) +
                             ") printed no JSON object: '" + result.out +
                             "'; stderr: " + result.err);
  }
}

nlohmann::json IntegrationTest::lock_status(const std::string& lock) const {
  const RunResult result = run_rbd_sync({"status", "--json", "--lock-file", lock});
  return nlohmann::json::parse(result.out);
}

void IntegrationTest::wait_for_phase(const std::string& lock, const std::string& phase,
                                     int min_done) const {
  wait_for(
      "the sync to reach phase '" + phase + "'",
      [&] {
        const auto holder = lock_status(lock)["holder"];
        return holder.is_object() && holder.value("phase", "") == phase &&
               holder.value("done", 0) >= min_done;
      },
      std::chrono::seconds(30), std::chrono::milliseconds(20));
}

}  // namespace rbdsync::testing
