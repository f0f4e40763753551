#pragma once

/// What the integration tests share: the real throwaway Ceph cluster and PostgreSQL
/// server that scripts/test.sh starts (found through RBDSYNC_TEST_* variables), and a
/// way to run the real rbd-sync binary.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <rados/librados.hpp>
#include <rbd/librbd.hpp>

#include "ceph/ceph_source.hpp"
#include "support/files.hpp"
#include "support/scoped_temp_dir.hpp"

namespace rbdsync::testing {

/// The value of an environment variable that scripts/test.sh sets. Throws when it is
/// unset: a missing service fails the test, it never skips it.
std::string required_env(const char* name);

/// The configuration of an in-process CephSource on the test cluster, as its admin.
ceph::CephConfig admin_ceph_config(ceph::ReaderKind reader = ceph::ReaderKind::direct);

/// A name no other test (or test run) uses: "<prefix>-<pid>-<n>".
std::string unique_name(const std::string& prefix);

/// A SQL string literal (standard_conforming_strings is on).
std::string literal(const std::string& text);

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  double seconds = 0.0;
  long peak_rss_kib = 0;  ///< the child's largest resident set (getrusage's ru_maxrss)
};

/// Called with the child's pid as soon as it has been started.
using OnStart = std::function<void(pid_t)>;

/// Runs the rbd-sync binary under test with `args` and waits for it (killing it after
/// `timeout_seconds`). `env` holds extra NAME=VALUE settings for the child, and NAME
/// alone for a variable the child must not have.
RunResult run_rbd_sync(const std::vector<std::string>& args, int timeout_seconds = 120,
                       const OnStart& on_start = {}, const std::vector<std::string>& env = {});

/// Runs any program and waits for it; stdout and stderr are captured.
RunResult run_program(const std::vector<std::string>& argv, int timeout_seconds = 120,
                      const OnStart& on_start = {}, const std::vector<std::string>& env = {});

/// Runs one of the project's scripts (scripts/NAME) and fails the test if it fails.
void run_script(const std::string& name, const std::vector<std::string>& args);

/// Runs `rbd ARGS --format json` as the admin client (times in UTC, as Ceph prints
/// ctime-style strings in local time) and parses its output; throws when it fails.
nlohmann::json rbd_json(const std::vector<std::string>& args);

/// A librados or librbd call of a test's set-up: throws naming `what` when it failed
/// (`r` < 0, a negative errno).
void check(int r, const std::string& what);

/// Runs `rados ARGS` as the admin client; throws when it fails.
std::string rados(const std::vector<std::string>& args);

/// Seconds since the epoch of a ctime-style time as `rbd` prints it in UTC
/// ("Thu Dec  3 07:42:29 2026").
std::int64_t parse_ctime(const std::string& text);

/// Keeps an image open, as a VM would, in a child process (Debian's python3-rbd) that
/// also writes to it (so it holds the exclusive lock). Closes it on destruction.
class ImageHolder {
 public:
  ImageHolder(const std::string& pool, const std::string& ns, const std::string& image);
  ~ImageHolder();
  ImageHolder(const ImageHolder&) = delete;
  ImageHolder& operator=(const ImageHolder&) = delete;

 private:
  pid_t m_pid = 0;
  int m_stdin = -1;
};

/// rbd-sync running in the background, e.g. a long sync other runs collide with.
class BackgroundRun {
 public:
  explicit BackgroundRun(const std::vector<std::string>& args,
                         const std::vector<std::string>& env = {});
  ~BackgroundRun();
  pid_t pid() const { return m_pid; }
  /// Waits for it to end.
  RunResult wait();

 private:
  std::future<RunResult> m_result;
  pid_t m_pid = 0;
  bool m_waited = false;
};

/// What CephAdmin::create_inventory_fixture() made that tests look at afterwards.
struct InventoryFixture {
  std::size_t images = 0;    ///< images in both pools (not counting the two in the trash)
  std::string longest_name;  ///< an image name exactly as long as the OSD accepts
  std::unique_ptr<ImageHolder> holder;  ///< keeps "watched" open, as a VM would
};

/// Waits until the sync `pid` that holds `lock_path` has listed every image and started
/// reading them, then stops it (SIGSTOP) before it gets far: the direct reader reads
/// hundreds of images in a few milliseconds, too fast to catch any other way. The
/// caller sends SIGCONT. Throws when the sync does not start reading within 60 s.
void stop_when_reading_starts(pid_t pid, const std::string& lock_path);

/// Waits until process `pid` has the file `path` open. Throws after 30 s.
void wait_until_open(pid_t pid, const std::string& path);

/// An admin connection to the test cluster, for making fixtures.
class CephAdmin {
 public:
  CephAdmin();
  ~CephAdmin();

  /// Creates a pool; with `rbd`, initialises it for RBD as `rbd pool init` does.
  void create_pool(const std::string& name, bool rbd = true);
  void delete_pool(const std::string& name);
  std::int64_t pool_id(const std::string& name);
  std::string fsid();
  librados::IoCtx io(const std::string& pool, const std::string& ns = "");

  void create_namespace(const std::string& pool, const std::string& ns);
  /// Creates an image and returns its id.
  std::string create_image(const std::string& pool, const std::string& name, std::uint64_t size,
                           std::uint64_t features = 0x3d, int order = 22,
                           const std::string& ns = "");
  /// Creates an image with fancy striping (features layering + striping); returns its id.
  std::string create_striped_image(const std::string& pool, const std::string& name,
                                   std::uint64_t size, int order, std::uint64_t stripe_unit,
                                   std::uint64_t stripe_count);
  /// `rbd config image set`: an option set on the image itself.
  void set_image_config(const std::string& pool, const std::string& image,
                        const std::string& option, const std::string& value);
  /// Creates `count` images "<prefix>-<n>" quickly, several in flight.
  void create_images(const std::string& pool, const std::string& prefix, int count,
                     std::uint64_t size);
  void remove_image(const std::string& pool, const std::string& name, const std::string& ns = "");
  void resize_image(const std::string& pool, const std::string& name, std::uint64_t size,
                    const std::string& ns = "");
  void snapshot(const std::string& pool, const std::string& image, const std::string& snap,
                bool protect, const std::string& ns = "");
  void remove_snapshot(const std::string& pool, const std::string& image, const std::string& snap,
                       const std::string& ns = "");
  /// Clones pool/image@snap to pool/clone; returns the clone's id.
  std::string clone(const std::string& pool, const std::string& image, const std::string& snap,
                    const std::string& clone_name);
  /// Clones pool/ns/image@snap to child_pool/child_ns/clone_name in clone format 2 (no
  /// protection needed, may cross namespaces); returns the clone's id.
  std::string clone_v2(const std::string& pool, const std::string& ns, const std::string& image,
                       const std::string& snap, const std::string& child_pool,
                       const std::string& child_ns, const std::string& clone_name);
  /// The id of an image, found by name.
  std::string image_id(const std::string& pool, const std::string& name,
                       const std::string& ns = "");
  /// Writes `length` bytes of a pattern at `offset`.
  void write(const std::string& pool, const std::string& image, std::uint64_t offset,
             std::uint64_t length, const std::string& ns = "");
  void rename_image(const std::string& pool, const std::string& from, const std::string& to);
  /// `rbd trash mv` with no deferment; returns the image id.
  std::string trash_move(const std::string& pool, const std::string& image,
                         const std::string& ns = "");
  void trash_restore(const std::string& pool, const std::string& id, const std::string& name);
  /// `ceph osd pool rename`; the pool is still deleted on destruction.
  void rename_pool(const std::string& from, const std::string& to);
  /// Runs a mon command (JSON) and returns its output; throws when it fails.
  std::string mon_command(const std::string& command);
  /// The major version of the mon's Ceph release (16 Pacific, 18 Reef, 20 Tentacle).
  int release();
  /// Whether the cluster has an active mgr (pool usage figures come from it).
  bool has_mgr();

  /// Every kind of image the inventory tests check (issue #6), in the existing rbd
  /// pools `pool` and `second`: "fast" (fast-diff, data, config override, protected
  /// snapshot s1 with a clone format 1 "child" and a format 2 "cross-child" in
  /// `second`, a later snapshot s2), "snap-trasher" (its snapshot in the trash
  /// namespace, kept by "orphan-child"), "plain" (no fast-diff, fancy striping),
  /// "broken-map" (object map deleted, flagged invalid), "in-tenant" in namespace
  /// "tenant", "binned" and "binned-in-tenant" in the trash, "other" in `second`,
  /// names that need quoting or are as long as allowed, and "watched", held open.
  InventoryFixture create_inventory_fixture(const std::string& pool, const std::string& second);

 private:
  librados::Rados m_rados;
  std::vector<std::string> m_pools;  ///< deleted on destruction
};

/// A fresh database on the test server, migrated or not, dropped on destruction.
class TestDatabase {
 public:
  TestDatabase();
  ~TestDatabase();

  /// The conninfo rbd-sync gets with --db (no password: it comes from PGPASSFILE).
  const std::string& conninfo() const { return m_conninfo; }
  /// The conninfo of the server's superuser on this database, for what a test makes as
  /// another role.
  std::string admin_conninfo() const;
  /// The database's name (a plain identifier: no quoting needed).
  const std::string& name() const { return m_name; }
  /// A new connection, for checking what rbd-sync wrote.
  std::unique_ptr<pqxx::connection> connect() const;
  /// Runs `sql` and returns every row's columns joined by '|', rows sorted.
  std::vector<std::string> rows(const std::string& sql) const;
  /// md5 of every inventory table's sorted contents: equal before and after means
  /// nothing changed.
  std::string checksum() const;
  /// Every row of `sql` as a JSON object (column name -> value, jsonb columns nested).
  std::vector<nlohmann::json> json_rows(const std::string& sql) const;
  /// n_tup_ins/upd/del of every inventory table ("table|ins|upd|del", sorted), once the
  /// statistics have settled: PostgreSQL flushes a backend's counters asynchronously
  /// (when it goes idle or exits), so this waits until no rbd-sync session is left on
  /// the database and the figures have stopped moving.
  std::vector<std::string> settled_write_counts() const;
  /// Migrates the database and records a running run of cluster `fsid` in rbdsync.runs,
  /// as a sync has before it stores anything (the usage history names it); its run id.
  std::string migrate_and_start_run(const std::string& fsid) const;

 private:
  std::string m_name;
  std::string m_conninfo;
};

/// A session of the test's own that holds a lock every sync's writes wait for (the
/// images table, exclusively), the way a long report query on the console could, until
/// release(): a run is held in its write phase by the lock itself, never by a sleep.
class BlockingSession {
 public:
  explicit BlockingSession(const TestDatabase& db) : m_connection(db.connect()) {
    m_work = std::make_unique<pqxx::work>(*m_connection);
    m_work->exec("LOCK TABLE rbdsync.images IN EXCLUSIVE MODE");
  }
  void release() { m_work.reset(); }

 private:
  std::unique_ptr<pqxx::connection> m_connection;
  std::unique_ptr<pqxx::work> m_work;
};

/// A test whose name holds this syncs every pool, and tests/CMakeLists.txt runs it
/// alone; every other test names its pools (run_args() refuses a sync without --pool).
inline constexpr const char* k_every_pool_marker = "EveryPool";
/// The suite whose tests stop the shared mon, OSD or PostgreSQL server: run alone too.
inline constexpr const char* k_serial_suite = "FaultTest";

/// Each test gets its own database, lock file and pool names.
class IntegrationTest : public ::testing::Test {
 protected:
  /// `run` arguments pointing at the test services, as client.rbdsync.
  std::vector<std::string> run_args(const std::vector<std::string>& extra = {}) const;
  RunResult migrate() const;
  /// Migrates the test database and creates a fresh rbd pool "<prefix>-<pid>-<n>";
  /// returns its name. Throws when either fails.
  std::string migrate_and_create_pool(const std::string& prefix);
  RunResult sync(const std::vector<std::string>& extra = {}) const;
  /// sync(extra + --json): the exit code and the parsed JSON object. Fails the test
  /// (throws) when stdout is not one JSON object.
  std::pair<int, nlohmann::json> sync_json(const std::vector<std::string>& extra = {}) const;
  /// `rbd-sync status --json` for `lock`.
  nlohmann::json lock_status(const std::string& lock) const;
  /// Waits until the sync holding `lock` reports `phase` with at least `min_done`
  /// images done; fails the test after 30 s.
  void wait_for_phase(const std::string& lock, const std::string& phase, int min_done = 0) const;

  CephAdmin ceph;
  TestDatabase db;
  ScopedTempDir dir;
  std::string lock_file = dir.file("sync.lock");
  std::string reader;  ///< run_args() adds `--reader <reader>` unless empty (the default)
};

}  // namespace rbdsync::testing
