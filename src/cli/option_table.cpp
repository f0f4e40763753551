#include "cli/option_table.hpp"

#include <array>

namespace rbdsync::cli {

namespace {

constexpr CommandSet k_run = bit(Command::run);
constexpr CommandSet k_migrate = bit(Command::migrate);
constexpr CommandSet k_status = bit(Command::status);
constexpr CommandSet k_serve = bit(Command::serve);

using G = OptionGroup;
using V = ValueKind;

// Which command takes which option follows what front/commands.cpp and main.cpp read:
// logging is set up for every command; migrate opens the database and prints a result;
// status reads only the lock file and always prints its answer (so no --quiet).
// An option is: long name, short, value, value name, help, default, default is the
// value, group, commands, in synopsis.

/// Where the lock file is and how a run meets another.
std::vector<OptionSpec> guard_options() {
  return {
      {flag::k_lock_file, "", V::text, "PATH",
       "the lock file every caller for this cluster shares; its directory is shared through the "
       "group rbd-sync",
       "/run/lock/rbd-sync/sync.lock, or sync@NAME.lock for a cluster NAME other than ceph", false,
       G::guard, k_run | k_status, true},
      {flag::k_wait, "", V::number, "SECONDS",
       "wait up to this many seconds (at most 86400) for a running sync on this host to finish "
       "instead of exiting 75",
       "0", true, G::guard, k_run, false},
      {flag::k_conflict_exit_code, "", V::number, "CODE",
       "the exit status when another sync holds the guard, as in 'flock -E'; the answer printed "
       "is the same but for its exit_code (0 suits a Kubernetes CronJob, where 75 would count "
       "as a failed Job)",
       "75", true, G::guard, k_run, false},
      {flag::k_trigger, "", V::text, "cron|web|manual",
       "who started this run, as the holder record, the run history and the result tell it",
       "manual", true, G::guard, k_run, false},
      {flag::k_requested_by, "", V::text, "NAME",
       "who asked for this run (the console's signed-in user), recorded beside the trigger; "
       "printable, at most 256 bytes",
       "", false, G::guard, k_run, false},
      {flag::k_detach, "", V::none, "",
       "answer once this run holds both guards ('started', exit 0) or found one busy (exit 75); "
       "the sync goes on in the background, logging to --log-file or to detached.log beside the "
       "lock file",
       "", false, G::guard, k_run, false},
  };
}

/// Which cluster, as which client, and how its images are read.
std::vector<OptionSpec> ceph_options() {
  return {
      {flag::k_cluster, "", V::text, "NAME",
       "the Ceph cluster name, as in 'rbd --cluster': it names the ceph.conf, the keyring and "
       "the lock file",
       k_default_cluster, true, G::ceph, k_run | k_status, false},
      {flag::k_conf, "c", V::text, "PATH", "the ceph.conf to read, as in 'rbd -c'",
       "$CEPH_CONF, then /etc/ceph/NAME.conf and ~/.ceph/NAME.conf; none is needed when "
       "--mon-host and a key are given",
       false, G::ceph, k_run, false, flag::k_ceph_conf},
      {flag::k_mon_host, "m", V::text, "HOST[,HOST]",
       "the mon addresses, as in 'rbd -m', in place of ceph.conf's mon_host; Rook's form "
       "(a=ADDR,b=ADDR) is taken, the names dropped",
       "", false, G::ceph, k_run, false},
      {flag::k_id, "i", V::text, "ID", "the Ceph client id, as in 'rbd --id'", "admin", false,
       G::ceph, k_run, false},
      {flag::k_name, "n", V::text, "client.ID",
       "the Ceph client name, as in 'rbd --name'; give --id or --name, not both", "", false,
       G::ceph, k_run, false},
      {flag::k_keyring, "k", V::text, "PATH", "the keyring holding the client's key",
       "'keyring' from ceph.conf, else /etc/ceph/NAME.client.ID.keyring and the others rbd "
       "looks at",
       false, G::ceph, k_run, false},
      {flag::k_keyfile, "", V::text, "PATH",
       "a file holding only the client's base64 key, as in 'rbd --keyfile' (a key file beats "
       "the keyring)",
       "", false, G::ceph, k_run, false},
      {flag::k_pool, "p", V::repeated, "NAME",
       "a pool to sync, repeatable; the stored rows of other pools are left alone",
       "every pool with the rbd application that the client may read", false, G::ceph, k_run, true},
      {flag::k_ceph_timeout, "", V::number, "SECONDS",
       "how many seconds (1 to 3600) to wait for a mon or an OSD before failing", "30", true,
       G::ceph, k_run, false},
      {flag::k_exact_usage, "", V::none, "",
       "also compute the used bytes of images without a valid fast-diff map, as 'rbd du' does "
       "(reads every object: slow)",
       "", false, G::ceph, k_run, false},
      {flag::k_reader, "", V::text, "direct|librbd",
       "how images are read: direct decodes each header object itself and asks librbd only "
       "for what it does not understand; librbd opens every image",
       "direct", true, G::ceph, k_run, false},
  };
}

/// Where the inventory is written.
std::vector<OptionSpec> database_options() {
  return {
      {flag::k_db, "", V::text, "CONNINFO",
       "libpq conninfo or URI, without a password: that comes from ~/.pgpass, PGPASSFILE or "
       "pg_service.conf",
       k_default_db, true, G::database, k_run | k_migrate, true},
      {flag::k_db_timeout, "", V::number, "SECONDS",
       "how many seconds (1 to 86400) any one database statement may run", "300", true, G::database,
       k_run | k_migrate, false},
      {flag::k_history_days, "", V::number, "DAYS",
       "keep this many days (0 to 36500; 0 keeps all) of run history and usage history: a run "
       "deletes older rows of its cluster in its own transaction, but the usage row that still "
       "holds at the window's start",
       "what the cluster's last committed run kept, else 400", false, G::database, k_run, false},
  };
}

/// What the run says, and where.
std::vector<OptionSpec> output_options() {
  return {
      {flag::k_format, "", V::text, "plain|json", "the result on stdout", "plain", true, G::output,
       k_every_command, false},
      {flag::k_json, "", V::none, "", "same as --format json", "", false, G::output,
       k_every_command, false},
      {flag::k_quiet, "q", V::none, "", "print no result line; errors still go to stderr", "",
       false, G::output, k_run | k_migrate, false},
      {flag::k_verbose, "v", V::none, "", "log debug messages, as --log-level debug", "", false,
       G::output, k_every_command, false},
      {flag::k_log_level, "", V::text, "LEVEL",
       "log this level and above: trace, debug, info, warn, error, critical or off", "warn", true,
       G::output, k_every_command, false},
      {flag::k_log_file, "", V::text, "PATH", "append the log to this file instead of stderr", "",
       false, G::output, k_every_command, false},
      {flag::k_metrics_file, "", V::text, "PATH",
       "write Prometheus textfile metrics of the run to this file (atomically)", "", false,
       G::output, k_run, false},
  };
}

/// Help and version.
std::vector<OptionSpec> general_options() {
  return {
      {flag::k_settings_dir, "", V::text, "DIR",
       "the directory of the settings files the units read: rbd-sync, and rbd-sync@NAME for "
       "a cluster NAME other than ceph",
       k_default_settings_dir, true, G::general, k_serve, false},
      {flag::k_connection, "", V::text, "NUMBER-PID-UID",
       "the name systemd gives the connection's unit instance (%i), whose caller's pid and uid "
       "the log names (inside the unit's user namespace the socket reports nobody)",
       "", false, G::general, k_serve, false},
      {flag::k_help, "h", V::none, "",
       "print the help of the command, or the list of commands, and exit", "", false, G::general,
       k_all_commands, false},
      {flag::k_version, "", V::none, "", "print the version and exit", "", false, G::general,
       k_all_commands, false},
  };
}

/// A group of options: its heading and its options.
struct GroupEntry {
  OptionGroup group;
  const char* heading;
  std::vector<OptionSpec> (*options)();
};

/// Every group, in the order shown.
constexpr std::array<GroupEntry, 5> k_groups = {{
    {G::guard, "Guard", guard_options},
    {G::ceph, "Ceph", ceph_options},
    {G::database, "Database", database_options},
    {G::output, "Output", output_options},
    {G::general, "General", general_options},
}};

}  // namespace

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> k_table = [] {
    std::vector<OptionSpec> table;
    for (const GroupEntry& entry : k_groups) {
      const std::vector<OptionSpec> options = entry.options();
      table.insert(table.end(), options.begin(), options.end());
    }
    return table;
  }();
  return k_table;
}

const std::vector<CommandSpec>& command_table() {
  static const std::vector<CommandSpec> k_table = {
      {Command::run, "run", "sync the RBD images of a Ceph cluster into PostgreSQL",
       "Takes the lock file, then the cluster's lock in PostgreSQL, and exits 75 at once when "
       "another sync holds either. Then reads the inventory through librados and writes it in "
       "one transaction: the database shows the whole new inventory or the old one."},
      {Command::migrate, "migrate", "bring the database schema up to this version",
       "Applies the schema migrations compiled into the binary that the database lacks, in one "
       "transaction. Run it once after each upgrade, before the next sync."},
      {Command::status, "status", "show whether a sync holds the lock file, and the last run",
       "Reads the lock file's holder record without taking the lock: who runs, how far, and "
       "how the last run on this host ended. Exit 0: no sync is running; 75: one is."},
      {Command::serve, "serve", "answer one \"Sync now\" request on the socket that is stdin",
       "Run by rbd-sync-trigger@.service for each connection to the trigger socket (or by "
       "systemd-socket-activate --accept --inetd). Reads one line of JSON, {\"cluster\": NAME, "
       "\"requested_by\": "
       "USER, \"trigger\": web|cron|manual}, and runs 'rbd-sync run' with the settings of that "
       "cluster's unit "
       "(RBDSYNC_ARGS and the variables of the settings files). Answers on the socket exactly "
       "what 'run --detach --json' prints: started, already running, or the error; then closes "
       "it and goes on with the sync in the same process, logging to stderr."},
  };
  return k_table;
}

const CommandSpec* find_command(const std::string& name) {
  for (const CommandSpec& command : command_table()) {
    if (name == command.name) {
      return &command;
    }
  }
  return nullptr;
}

const OptionSpec* find_option(const std::string& long_name) {
  for (const OptionSpec& option : option_table()) {
    if (long_name == option.long_name) {
      return &option;
    }
  }
  return nullptr;
}

bool applies_to(const OptionSpec& option, Command command) {
  return (option.commands & bit(command)) != 0;
}

const char* group_name(OptionGroup group) {
  for (const GroupEntry& entry : k_groups) {
    if (entry.group == group) {
      return entry.heading;
    }
  }
  return "";
}

const std::vector<OptionGroup>& option_groups() {
  static const std::vector<OptionGroup> k_in_order = [] {
    std::vector<OptionGroup> groups;
    groups.reserve(k_groups.size());
    for (const GroupEntry& entry : k_groups) {
      groups.push_back(entry.group);
    }
    return groups;
  }();
  return k_in_order;
}

std::string quoted_command_names(CommandSet commands) {
  std::vector<std::string> names;
  for (const CommandSpec& command : command_table()) {
    if ((commands & bit(command.command)) != 0) {
      names.push_back("'" + std::string(command.name) + "'");
    }
  }
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) {
      text += i + 1 == names.size() ? " and " : ", ";
    }
    text += names[i];
  }
  return text;
}

}  // namespace rbdsync::cli
