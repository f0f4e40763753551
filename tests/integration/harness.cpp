#include "integration/harness.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "common/fd.hpp"

namespace rbdsync::testing {

namespace {

void check(int r, const std::string& what) {
  if (r < 0) {
    throw std::runtime_error(what + " failed: " + std::to_string(r));
  }
}

std::string quote_ident(const std::string& name) {
  return "\"" + name + "\"";
}

}  // namespace

std::string required_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') {
    throw std::runtime_error(std::string(name) +
                             " is not set: run the integration tests through ./scripts/test.sh, "
                             "which starts the throwaway Ceph cluster and PostgreSQL server");
  }
  return value;
}

std::string unique_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

RunResult run_program(const std::vector<std::string>& argv, int timeout_seconds,
                      const OnStart& on_start, const std::vector<std::string>& env) {
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe2 failed");
  }
  Fd out_read(out_pipe[0]);
  Fd out_write(out_pipe[1]);
  Fd err_read(err_pipe[0]);
  Fd err_write(err_pipe[1]);

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
      ::setenv(setting.substr(0, equals).c_str(), setting.substr(equals + 1).c_str(), 1);
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
  ::waitpid(pid, &status, 0);
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
  std::vector<std::string> argv{RBDSYNC_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, timeout_seconds, on_start, env);
}

void run_script(const std::string& name, const std::vector<std::string>& args) {
  std::vector<std::string> argv{std::string(RBDSYNC_SOURCE_DIR) + "/scripts/" + name};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult result = run_program(argv, 120);
  if (result.exit_code != 0) {
    throw std::runtime_error("scripts/" + name + " failed: " + result.err);
  }
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

void CephAdmin::remove_image(const std::string& pool, const std::string& name) {
  librados::IoCtx pool_io = io(pool);
  librbd::RBD api;
  check(api.remove(pool_io, name.c_str()), "removing image " + name);
}

void CephAdmin::resize_image(const std::string& pool, const std::string& name, std::uint64_t size) {
  librados::IoCtx pool_io = io(pool);
  librbd::RBD api;
  librbd::Image image;
  check(api.open(pool_io, image, name.c_str()), "opening image " + name);
  check(image.resize(size), "resizing image " + name);
}

void CephAdmin::snapshot(const std::string& pool, const std::string& image_name,
                         const std::string& snap, bool protect) {
  librados::IoCtx pool_io = io(pool);
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
    work.exec("DROP DATABASE IF EXISTS " + quote_ident(m_name) + " WITH (FORCE)");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "dropping test database " << m_name << ": " << e.what();
  }
}

std::unique_ptr<pqxx::connection> TestDatabase::connect() const {
  return std::make_unique<pqxx::connection>(m_conninfo);
}

std::vector<std::string> TestDatabase::rows(const std::string& sql) const {
  auto connection = connect();
  pqxx::nontransaction work(*connection);
  std::vector<std::string> result;
  for (const auto& row : work.exec(sql)) {
    std::string line;
    for (const auto& field : row) {
      if (!line.empty() || field.num() > 0) {
        line += '|';
      }
      line += field.is_null() ? "NULL" : field.c_str();
    }
    result.push_back(line);
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::string TestDatabase::checksum() const {
  std::string all;
  for (const char* table : {"rbdsync.clusters", "rbdsync.pools", "rbdsync.images"}) {
    const auto table_rows = rows(std::string("SELECT md5(coalesce(string_agg(t::text, ',' "
                                             "ORDER BY t::text), '')) FROM ") +
                                 table + " t");
    all += table_rows.empty() ? "" : table_rows.front();
    all += ';';
  }
  return all;
}

// ---------------------------------------------------------------------------- fixture

std::vector<std::string> IntegrationTest::run_args(const std::vector<std::string>& extra) const {
  std::vector<std::string> args{"run",
                                "--db",
                                db.conninfo(),
                                "--ceph-conf",
                                required_env("RBDSYNC_TEST_CEPH_CONF"),
                                "--id",
                                required_env("RBDSYNC_TEST_CEPH_ID"),
                                "--lock-file",
                                lock_file,
                                "--ceph-timeout",
                                "20"};
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

nlohmann::json IntegrationTest::lock_status(const std::string& lock) const {
  const RunResult result = run_rbd_sync({"status", "--json", "--lock-file", lock});
  return nlohmann::json::parse(result.out);
}

void IntegrationTest::wait_for_phase(const std::string& lock, const std::string& phase,
                                     int min_done) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto holder = lock_status(lock)["holder"];
    if (holder.is_object() && holder.value("phase", "") == phase &&
        holder.value("done", 0) >= min_done) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("the sync never reached phase '" + phase + "'");
}

}  // namespace rbdsync::testing
