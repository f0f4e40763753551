#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rbdsync::cli {

/// Every flag name, in one place, so each command spells them the same way.
/// Where a flag means what it means in `rbd` or `flock(1)`, the spelling is theirs.
namespace flag {
inline constexpr const char* k_db = "db";
inline constexpr const char* k_lock_file = "lock-file";
inline constexpr const char* k_wait = "wait";
inline constexpr const char* k_trigger = "trigger";
inline constexpr const char* k_detach = "detach";
/// flock(1)'s spelling: the exit status of a run that finds the guard busy.
inline constexpr const char* k_conflict_exit_code = "conflict-exit-code";
inline constexpr const char* k_requested_by = "requested-by";
inline constexpr const char* k_settings_dir = "settings-dir";
inline constexpr const char* k_connection = "connection";
inline constexpr const char* k_conf = "conf";
/// The spelling of --conf before rbd-sync took rbd's; kept for scripts that use it.
inline constexpr const char* k_ceph_conf = "ceph-conf";
inline constexpr const char* k_cluster = "cluster";
inline constexpr const char* k_mon_host = "mon-host";
inline constexpr const char* k_id = "id";
inline constexpr const char* k_name = "name";
inline constexpr const char* k_keyring = "keyring";
inline constexpr const char* k_keyfile = "keyfile";
inline constexpr const char* k_pool = "pool";
inline constexpr const char* k_ceph_timeout = "ceph-timeout";
inline constexpr const char* k_exact_usage = "exact-usage";
inline constexpr const char* k_reader = "reader";
inline constexpr const char* k_db_timeout = "db-timeout";
inline constexpr const char* k_history_days = "history-days";
inline constexpr const char* k_log_file = "log-file";
inline constexpr const char* k_metrics_file = "metrics-file";
inline constexpr const char* k_format = "format";
inline constexpr const char* k_json = "json";
inline constexpr const char* k_verbose = "verbose";
inline constexpr const char* k_quiet = "quiet";
inline constexpr const char* k_log_level = "log-level";
inline constexpr const char* k_help = "help";
inline constexpr const char* k_version = "version";
}  // namespace flag

/// Where the lock file lives unless --lock-file says otherwise. /run/lock is on every
/// Linux host and writable by root; the package gives the directory to the group
/// that cron, the web backend and admins share.
inline constexpr const char* k_lock_directory = "/run/lock/rbd-sync";
inline constexpr const char* k_default_lock_file = "/run/lock/rbd-sync/sync.lock";
/// --history-days not given: the run keeps what the cluster's last committed run kept
/// (rbdsync.runs.history_days), so that a caller that does not say (the console's
/// button, an admin by hand) never prunes more than the schedule does.
inline constexpr int k_history_days_unset = -1;
/// ... and the first run of a cluster keeps this many: a year and a month, for
/// year-on-year charts.
inline constexpr int k_default_history_days = 400;
/// The Ceph cluster name unless --cluster (or CEPH_ARGS) says otherwise, as in Ceph.
inline constexpr const char* k_default_cluster = "ceph";

/// The lock file of cluster `cluster` unless --lock-file says otherwise: sync.lock for
/// the default cluster, as before clusters had names here, and sync@NAME.lock for any
/// other, so that two clusters sync side by side while two runs for one exclude each
/// other.
std::string default_lock_file(const std::string& cluster);
/// The cluster NAME a lock file's name `file_name` (no directory) gives, sync@NAME.lock;
/// std::nullopt for any other name (sync.lock, or a --lock-file of the caller's own).
std::optional<std::string> cluster_of_lock_file_name(const std::string& file_name);
/// Whether `name` may name a Ceph cluster here: Ceph puts it into file names
/// ($cluster.conf, $cluster.$name.keyring) and so does rbd-sync (the lock file, the
/// settings file): cluster_name_rule(), not starting with '-'.
bool is_cluster_name(const std::string& name);
/// What a cluster name must be, as an error tells it: "1 to 64 letters, ...".
std::string cluster_name_rule();
/// Whether `name` is a trigger a run may record: cron, web or manual.
bool is_trigger_name(const std::string& name);
/// Whether `name` may be recorded as who asked: 1 to k_max_requested_by
/// (common/run_record.hpp) bytes of one printable line (common/text.hpp).
bool is_requester_name(const std::string& name);
/// What a requester's name must be, as an error tells it: "1 to 256 bytes of ...".
std::string requester_name_rule();
/// The libpq service used unless --db says otherwise (pg_service.conf + .pgpass).
inline constexpr const char* k_default_db = "service=rbd-sync";

/// Where `rbd-sync serve` reads the settings files of the units (rbd-sync, rbd-sync@NAME).
inline constexpr const char* k_default_settings_dir = "/etc/default";

enum class Command { run, migrate, status, serve, help, version };
enum class OutputFormat { plain, json };
/// How images are read: librbd opens each one; direct decodes its header object.
enum class ImageReader { librbd, direct };

/// The command line, checked and turned into plain values. Strings first, then the
/// numbers, then the small ones: the order clang-tidy's padding check asks for.
struct Config {
  std::string db = k_default_db;
  std::string lock_file = k_default_lock_file;
  std::string trigger = "manual";                ///< cron | web | manual
  std::string requested_by;                      ///< who asked (the console's user); "" unsaid
  std::string ceph_cluster = k_default_cluster;  ///< names the conf, keyring and lock file
  std::string ceph_conf;                         ///< empty: librados' own search
  std::string ceph_client = "client.admin";      ///< as `rbd`: --id admin
  std::string keyring;                           ///< empty: from ceph.conf
  std::string mon_host;                          ///< empty: from ceph.conf
  std::string keyfile;                           ///< empty: the keyring holds the key
  std::vector<std::string> pools;                ///< empty: every pool with the rbd application
  std::string log_file;                          ///< empty: log to stderr
  std::string metrics_file;                      ///< empty: no Prometheus textfile
  std::string log_level = "warn";
  std::string settings_dir = k_default_settings_dir;  ///< serve
  std::string connection;  ///< serve: systemd's instance name of the connection (%i)
  std::string help_text;   ///< filled for Command::help
  Command command = Command::help;
  int wait_seconds = 0;  ///< 0: do not wait for a busy guard
  /// run: the exit status of "already running" (0 for a scheduler that would count 75
  /// as a failure and retry, as a Kubernetes Job does); the answer printed is the same
  /// but for its exit_code. `serve` always answers 75.
  int conflict_exit_code = 75;
  int ceph_timeout_seconds = 30;
  int db_timeout_seconds = 300;  ///< PostgreSQL statement_timeout
  /// Days of run and usage history a run keeps (older rows are deleted in its
  /// transaction); 0 keeps everything; k_history_days_unset: what the cluster's last
  /// committed run kept, else k_default_history_days.
  int history_days = k_history_days_unset;
  ImageReader reader = ImageReader::direct;
  OutputFormat format = OutputFormat::plain;
  /// run: answer once both guards are taken (or one is busy) and go on in the background
  bool detach = false;
  bool exact_usage = false;  ///< scan images without a valid fast-diff map too
  bool quiet = false;
};

/// Parses argv. `ceph_args` is the environment's CEPH_ARGS (nullptr when unset): as
/// for `rbd`, its --cluster, -c/--conf, --id/--user and -n/--name apply where argv gives
/// none (librados reads the rest of it itself). Throws Error(ExitCode::usage) naming the
/// bad option and the fix.
Config parse(int argc, const char* const argv[], const char* ceph_args = nullptr);

}  // namespace rbdsync::cli
