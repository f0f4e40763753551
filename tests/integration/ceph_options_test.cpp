// The Ceph options as the rbd CLI has them: a run with only a mon address and a key (no
// ceph.conf), CEPH_ARGS below the command line, and two clusters synced from one host,
// each under its own lock file, into one database.
#include <sys/stat.h>

#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "integration/harness.hpp"
#include "lock/file_lock.hpp"

namespace rbdsync::testing {
namespace {

/// The value of `key` in the [section] of the ini text `text` (ceph.conf, a keyring).
std::string ini_value(const std::string& text, const std::string& key) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex("\\n\\s*" + key + "\\s*=\\s*([^\\n]+)"))) {
    throw std::runtime_error("no '" + key + "' in:\n" + text);
  }
  return match[1].str();
}

class CephOptionsTest : public IntegrationTest {
 protected:
  void SetUp() override {
    pool = migrate_and_create_pool("options");
    ceph.create_image(pool, "a", 8ULL << 20);
    mon_host = ini_value(read_file(required_env("RBDSYNC_TEST_CEPH_CONF")), "mon_host");
    const std::string keyring = required_env("RBDSYNC_TEST_CEPH_DIR") + "/ceph.client." +
                                required_env("RBDSYNC_TEST_CEPH_ID") + ".keyring";
    // As a pod gets it: the key alone, in a file only its user reads.
    std::ofstream(key_file) << ini_value(read_file(keyring), "key") << "\n";
    ::chmod(key_file.c_str(), 0600);
  }

  /// `run` as a host without ceph.conf runs it: no --conf and no CEPH_CONF; `extra`
  /// gives the mons and the key.
  std::vector<std::string> args_without_conf(const std::vector<std::string>& extra) const {
    std::vector<std::string> args{"run",     "--db",           db.conninfo(), "--lock-file",
                                  lock_file, "--ceph-timeout", "20",          "--pool",
                                  pool,      "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  /// A keyring holding the test client's key under the name `client` ("client.ID").
  std::string keyring_of(const std::string& client) const {
    return "[" + client + "]\n\tkey = " + read_file(key_file);
  }

  std::string pool;
  std::string mon_host;
  std::string key_file = dir.file("rbdsync.key");
  /// The child's environment: no CEPH_CONF, and a HOME without ~/.ceph.
  std::vector<std::string> no_conf_env{"CEPH_CONF", "HOME=" + dir.path()};
};

TEST_F(CephOptionsTest, AMonAddressAndAKeyFileAreEnoughWithoutCephConf) {
  const RunResult result =
      run_rbd_sync(args_without_conf({"-m", mon_host, "--keyfile", key_file, "-i",
                                      required_env("RBDSYNC_TEST_CEPH_ID")}),
                   120, {}, no_conf_env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out).at("images"), 1);
}

TEST_F(CephOptionsTest, WithoutConfAndMonAddressTheErrorSaysWhatToGive) {
  const RunResult result = run_rbd_sync(
      args_without_conf({"--keyfile", key_file, "--id", required_env("RBDSYNC_TEST_CEPH_ID")}), 120,
      {}, no_conf_env);
  EXPECT_EQ(result.exit_code, 78) << result.err;
  EXPECT_NE(result.err.find("no Ceph config for cluster 'ceph'"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("-m/--mon-host"), std::string::npos) << result.err;
}

TEST_F(CephOptionsTest, AMissingKeyFileIsNamed) {
  const RunResult result =
      run_rbd_sync(args_without_conf({"-m", mon_host, "--keyfile", dir.file("nosuch.key")}), 120,
                   {}, no_conf_env);
  EXPECT_EQ(result.exit_code, 78) << result.err;
  EXPECT_NE(result.err.find("cannot read --keyfile '" + dir.file("nosuch.key") + "'"),
            std::string::npos)
      << result.err;
}

// As rbd 16.2 measured: CEPH_ARGS configures the client, and the command line wins.
TEST_F(CephOptionsTest, CephArgsConfigureTheClientBelowTheCommandLine) {
  std::vector<std::string> env = no_conf_env;
  env.push_back("CEPH_ARGS=-m " + mon_host + " --keyfile " + key_file + " --id " +
                required_env("RBDSYNC_TEST_CEPH_ID"));
  const RunResult from_env = run_rbd_sync(args_without_conf({}), 120, {}, env);
  ASSERT_EQ(from_env.exit_code, 0) << from_env.err;

  // The command line's client, unknown to the cluster, is the one that is refused.
  const RunResult overridden =
      run_rbd_sync(args_without_conf({"--id", "nosuch-client"}), 120, {}, env);
  EXPECT_EQ(overridden.exit_code, 77) << overridden.err;
  EXPECT_NE(overridden.err.find("'client.nosuch-client'"), std::string::npos) << overridden.err;
}

// librados would read a keyring given as a key file as a key that does not parse, and a
// directory given as --conf as a file that is not there (ENOENT).
TEST_F(CephOptionsTest, AKeyringGivenAsKeyFileAndADirectoryGivenAsConfAreNamed) {
  const std::string id = required_env("RBDSYNC_TEST_CEPH_ID");
  const std::string keyring_file = dir.file("a.keyring");
  std::ofstream(keyring_file) << "\n" << keyring_of("client." + id);
  const RunResult keyring =
      run_rbd_sync(args_without_conf({"-m", mon_host, "--id", id, "--keyfile", keyring_file}), 120,
                   {}, no_conf_env);
  EXPECT_EQ(keyring.exit_code, 78) << keyring.err;
  EXPECT_NE(keyring.err.find("the key file '" + keyring_file +
                             "' holds a keyring, not a bare key (hint: give a keyring with "
                             "--keyring PATH"),
            std::string::npos)
      << keyring.err;
  // CEPH_ARGS' --keyfile sets the key option to the file's text.
  std::vector<std::string> env = no_conf_env;
  env.push_back("CEPH_ARGS=--keyfile " + keyring_file);
  const RunResult from_env =
      run_rbd_sync(args_without_conf({"-m", mon_host, "--id", id}), 120, {}, env);
  EXPECT_EQ(from_env.exit_code, 78) << from_env.err;
  EXPECT_NE(from_env.err.find("holds a keyring, not a bare key"), std::string::npos)
      << from_env.err;
  EXPECT_EQ(from_env.err.find("\tkey = "), std::string::npos) << "the key is not printed";

  std::filesystem::create_directory(dir.file("conf.d"));
  const RunResult directory = run_rbd_sync(
      args_without_conf({"--conf", dir.file("conf.d"), "--keyfile", key_file, "--id", id}), 120, {},
      no_conf_env);
  EXPECT_EQ(directory.exit_code, 78) << directory.err;
  EXPECT_NE(
      directory.err.find("cannot read Ceph config '" + dir.file("conf.d") + "': it is a directory"),
      std::string::npos)
      << directory.err;
}

// Without a key librados goes on without cephx, and the mons refuse it (EACCES with
// 16.2), which used to read as a wrong key (77): a typo in --keyring is named instead.
TEST_F(CephOptionsTest, AKeyringThatIsNotThereIsNamed) {
  const std::string id = required_env("RBDSYNC_TEST_CEPH_ID");
  const std::string keyring = dir.file("nosuch.keyring");
  const RunResult result = run_rbd_sync(
      args_without_conf({"-m", mon_host, "--id", id, "--keyring", keyring}), 120, {}, no_conf_env);
  EXPECT_EQ(result.exit_code, 78) << result.err;
  EXPECT_NE(result.err.find("no key for Ceph client 'client." + id +
                            "' in a file this user can read (keyring: " + keyring + ")"),
            std::string::npos)
      << result.err;
}

// librados reads only the first file of the keyring list that opens: a key in a later
// one is no key, and is told as none, not as a refused one.
TEST_F(CephOptionsTest, OnlyTheFirstKeyringFileThatOpensIsRead) {
  const std::string id = required_env("RBDSYNC_TEST_CEPH_ID");
  std::ofstream(dir.file("other.keyring")) << keyring_of("client.other");
  std::ofstream(dir.file("good.keyring")) << keyring_of("client." + id);
  const auto run_with = [&](const std::string& keyring) {
    return run_rbd_sync(args_without_conf({"-m", mon_host, "--id", id, "--keyring", keyring}), 120,
                        {}, no_conf_env);
  };
  const RunResult second = run_with(dir.file("nosuch") + "," + dir.file("other.keyring") + "," +
                                    dir.file("good.keyring"));
  EXPECT_EQ(second.exit_code, 78) << second.err;
  EXPECT_NE(second.err.find("no key for Ceph client 'client." + id + "'"), std::string::npos)
      << second.err;
  const RunResult first = run_with(dir.file("nosuch") + "," + dir.file("good.keyring"));
  EXPECT_EQ(first.exit_code, 0) << first.err;
}

// librados reads CEPH_KEYRING as rbd does (measured with 16.2: above ceph.conf's
// keyring, below CEPH_ARGS' -k); the man page lists it.
TEST_F(CephOptionsTest, CephKeyringNamesTheKeyring) {
  const std::string id = required_env("RBDSYNC_TEST_CEPH_ID");
  std::ofstream(dir.file("env.keyring")) << keyring_of("client." + id);
  const std::vector<std::string> args = args_without_conf({"-m", mon_host, "--id", id});
  const auto run_with = [&](const std::string& keyring) {
    std::vector<std::string> env = no_conf_env;
    env.push_back("CEPH_KEYRING=" + keyring);
    return run_rbd_sync(args, 120, {}, env);
  };
  // The keyring it names is the one looked for (not /etc/ceph's defaults).
  const RunResult missing = run_with(dir.file("nosuch.keyring"));
  EXPECT_EQ(missing.exit_code, 78) << missing.err;
  EXPECT_NE(missing.err.find("(keyring: " + dir.file("nosuch.keyring") + ")"), std::string::npos)
      << missing.err;
  const RunResult result = run_with(dir.file("env.keyring"));
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

// Measured with librados 16.2: an option it reads itself, last in CEPH_ARGS without its
// value, makes conf_parse_env() print "Option --keyring requires an argument." and exit
// 1 (no documented code). rbd-sync names it before loading librados.
TEST_F(CephOptionsTest, CephArgsOnWhichLibradosWouldExitAreRefusedFirst) {
  std::vector<std::string> env = no_conf_env;
  env.push_back("CEPH_ARGS=-m " + mon_host + " --keyfile " + key_file + " --keyring");
  const RunResult result = run_rbd_sync(args_without_conf({}), 120, {}, env);
  EXPECT_EQ(result.exit_code, 64) << result.err;
  EXPECT_NE(result.err.find("CEPH_ARGS ends in --keyring, an option that takes a value"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs"), std::vector<std::string>{"0"});
}

// A cluster named "backup" is found as rbd finds it: ~/.ceph/backup.conf (the search
// path's $cluster), whose keyring setting names backup.client.ID.keyring.
TEST_F(CephOptionsTest, ANamedClusterReadsItsOwnConfAndIsStoredUnderItsName) {
  std::filesystem::create_directory(dir.file(".ceph"));
  const std::string id = required_env("RBDSYNC_TEST_CEPH_ID");
  std::ofstream(dir.file(".ceph/backup.conf"))
      << "[global]\nmon_host = " << mon_host << "\nkeyring = " << dir.path()
      << "/$cluster.$name.keyring\n";
  std::ofstream(dir.file("backup.client." + id + ".keyring")) << keyring_of("client." + id);
  const RunResult result =
      run_rbd_sync(args_without_conf({"--cluster", "backup", "--id", id}), 120, {}, no_conf_env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(db.rows("SELECT name FROM rbdsync.clusters"), std::vector<std::string>{"backup"});
}

/// A second throwaway cluster, started by the project's script and stopped at the end.
class SecondCluster {
 public:
  SecondCluster() { run_script("ceph-cluster.sh", {"start", m_dir.path()}); }
  ~SecondCluster() {
    try {
      run_script("ceph-cluster.sh", {"stop", m_dir.path()});
    } catch (const std::exception& e) {
      ADD_FAILURE() << "stopping the second cluster: " << e.what();
    }
  }
  SecondCluster(const SecondCluster&) = delete;
  SecondCluster& operator=(const SecondCluster&) = delete;

  std::string conf() const { return m_dir.file("ceph.conf"); }
  std::string keyring() const { return m_dir.file("ceph.client.admin.keyring"); }
  /// Runs `tool` (ceph, rbd) against it as client.admin; fails the test when it fails.
  void admin(const char* tool, const std::vector<std::string>& args) const {
    std::vector<std::string> argv{tool, "--conf", conf(), "--id", "admin"};
    argv.insert(argv.end(), args.begin(), args.end());
    const RunResult result = run_program(argv);
    ASSERT_EQ(result.exit_code, 0) << tool << ": " << result.err;
  }

 private:
  ScopedTempDir m_dir;
};

TEST_F(CephOptionsTest, TwoClustersSyncSideBySideEachUnderItsOwnLock) {
  const SecondCluster backup;
  backup.admin("ceph", {"osd", "pool", "create", "vms", "8"});
  backup.admin("rbd", {"pool", "init", "vms"});
  backup.admin("rbd", {"create", "--size", "8M", "vms/b1"});
  backup.admin("rbd", {"create", "--size", "8M", "vms/b2"});
  // The lock files the two clusters get by default, in this test's directory.
  const std::string main_lock = dir.file("sync.lock");
  const std::string backup_lock = dir.file("sync@backup.lock");
  const std::vector<std::string> backup_run{
      "run",   "--db",        db.conninfo(), "--cluster",      "backup",
      "-c",    backup.conf(), "-k",          backup.keyring(), "--id",
      "admin", "--lock-file", backup_lock,   "--json"};

  // A sync of the main cluster holds its lock: the backup cluster's sync goes on.
  lock::FileLock main_holder(main_lock);
  ASSERT_TRUE(main_holder.try_lock());
  const RunResult backup_result = run_rbd_sync(backup_run);
  ASSERT_EQ(backup_result.exit_code, 0) << backup_result.err;
  EXPECT_EQ(nlohmann::json::parse(backup_result.out).at("images"), 2);
  // ...while a second run for the main cluster is turned away by that lock.
  EXPECT_EQ(sync({"--pool", pool, "--lock-file", main_lock}).exit_code, 75);
  main_holder.unlock();
  const RunResult main_result = sync({"--pool", pool, "--lock-file", main_lock});
  ASSERT_EQ(main_result.exit_code, 0) << main_result.err;

  // And a second run for the backup cluster is turned away by its own.
  lock::FileLock backup_holder(backup_lock);
  ASSERT_TRUE(backup_holder.try_lock());
  EXPECT_EQ(run_rbd_sync(backup_run).exit_code, 75);
  backup_holder.unlock();

  EXPECT_EQ(db.rows("SELECT name FROM rbdsync.clusters ORDER BY name"),
            (std::vector<std::string>{"backup", "ceph"}));
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.images"), std::vector<std::string>{"3"});
}

}  // namespace
}  // namespace rbdsync::testing
