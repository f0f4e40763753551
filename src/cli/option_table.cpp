#include "cli/option_table.hpp"

#include <array>

namespace rbdsync::cli {

namespace {

constexpr CommandSet k_run = bit(Command::run);
constexpr CommandSet k_migrate = bit(Command::migrate);
constexpr CommandSet k_status = bit(Command::status);
constexpr CommandSet k_serve = bit(Command::serve);

// Which command takes which option follows what front/commands.cpp and main.cpp read:
// logging is set up for every command; migrate opens the database and prints a result;
// status reads only the lock file and always prints its answer (so no --quiet).

/// One row of the table, field by field by name, so that no row is a run of bare values
/// to count along. What a row does not name keeps OptionSpec's "none": no letter, a
/// switch, no default, not in the synopsis, no alias. Its group is the list it is in.
class OptionRow {
 public:
  OptionRow(const char* long_name, CommandSet commands, const char* help) {
    spec_.long_name = long_name;
    spec_.commands = commands;
    spec_.help = help;
  }

  OptionRow& letter(const char* short_name) {
    spec_.short_name = short_name;
    return *this;
  }
  OptionRow& text(const char* value_name) { return takes(ValueKind::text, value_name); }
  OptionRow& number(const char* value_name, int low, int high) {
    spec_.low = low;
    spec_.high = high;
    return takes(ValueKind::number, value_name);
  }
  OptionRow& repeated(const char* value_name) { return takes(ValueKind::repeated, value_name); }

  /// The value the parser assumes when the option is absent, told as "(default: ...)".
  OptionRow& defaults_to(const char* value) { return tells_default(value, true); }
  /// What happens when the option is absent, told as "(default: ...)": no one value.
  OptionRow& when_absent(const char* what_happens) { return tells_default(what_happens, false); }

  OptionRow& in_synopsis() {
    spec_.in_synopsis = true;
    return *this;
  }
  OptionRow& alias(const char* older_name) {
    spec_.alias = older_name;
    return *this;
  }

  OptionSpec in_group(OptionGroup group) const {
    OptionSpec spec = spec_;
    spec.group = group;
    return spec;
  }

 private:
  OptionRow& takes(ValueKind kind, const char* value_name) {
    spec_.kind = kind;
    spec_.value_name = value_name;
    return *this;
  }
  OptionRow& tells_default(const char* text, bool is_value) {
    spec_.default_text = text;
    spec_.default_is_value = is_value;
    return *this;
  }

  OptionSpec spec_;
};

/// Where the lock file is and how a run meets another.
std::vector<OptionRow> guard_options() {
  return {
      OptionRow(
          flag::k_lock_file, k_run | k_status,
          "the lock file every caller for this cluster shares; its directory is shared through "
          "the group rbd-sync")
          .text("PATH")
          .when_absent(
              "/run/lock/rbd-sync/sync.lock, or sync@NAME.lock for a cluster NAME other than ceph")
          .in_synopsis(),
      OptionRow(flag::k_wait, k_run,
                "wait up to this many seconds for a running sync on this host to finish instead of "
                "exiting 75")
          .number("SECONDS", 0, 86400)
          .defaults_to("0"),
      OptionRow(flag::k_conflict_exit_code, k_run,
                "the exit status when another sync holds the guard, as in 'flock -E'; the answer "
                "printed is the same but for its exit_code (0 suits a Kubernetes CronJob, where 75 "
                "would count as a failed Job)")
          .number("CODE", 0, 255)
          .defaults_to("75"),
      OptionRow(
          flag::k_trigger, k_run,
          "who started this run, as the holder record, the run history and the result tell it")
          .text("cron|web|manual")
          .defaults_to("manual"),
      OptionRow(
          flag::k_requested_by, k_run,
          "who asked for this run (the console's signed-in user), recorded beside the trigger; "
          "printable, at most 256 bytes")
          .text("NAME"),
      OptionRow(
          flag::k_detach, k_run,
          "answer once this run holds both guards ('started', exit 0) or found one busy (exit "
          "75); the sync goes on in the background, logging to --log-file or beside the lock "
          "file to detached.log (detached@NAME.log for --cluster NAME); not with --wait"),
  };
}

/// Which cluster, as which client, and how its images are read.
std::vector<OptionRow> ceph_options() {
  return {
      OptionRow(flag::k_cluster, k_run | k_status,
                "the Ceph cluster name, as in 'rbd --cluster': it names the ceph.conf, the keyring "
                "and the lock file")
          .text("NAME")
          .defaults_to(k_default_cluster),
      OptionRow(flag::k_conf, k_run, "the ceph.conf to read, as in 'rbd -c'")
          .letter("c")
          .text("PATH")
          .when_absent("$CEPH_CONF, then /etc/ceph/NAME.conf and ~/.ceph/NAME.conf; none is needed "
                       "when --mon-host and a key are given")
          .alias(flag::k_ceph_conf),
      OptionRow(flag::k_mon_host, k_run,
                "the mon addresses, as in 'rbd -m', in place of ceph.conf's mon_host; Rook's form "
                "(a=ADDR,b=ADDR) is taken, the names dropped")
          .letter("m")
          .text("HOST[,HOST]"),
      OptionRow(flag::k_id, k_run, "the Ceph client id, as in 'rbd --id'")
          .letter("i")
          .text("ID")
          .when_absent("admin"),
      OptionRow(flag::k_name, k_run,
                "the Ceph client name, as in 'rbd --name'; give --id or --name, not both")
          .letter("n")
          .text("client.ID"),
      OptionRow(flag::k_keyring, k_run, "the keyring holding the client's key")
          .letter("k")
          .text("PATH")
          .when_absent("'keyring' from ceph.conf, else /etc/ceph/NAME.client.ID.keyring and the "
                       "others rbd looks at"),
      OptionRow(
          flag::k_keyfile, k_run,
          "a file holding only the client's base64 key, as in 'rbd --keyfile' (a key file beats "
          "the keyring)")
          .text("PATH"),
      OptionRow(flag::k_pool, k_run,
                "a pool to sync, repeatable; the stored rows of other pools are left alone")
          .letter("p")
          .repeated("NAME")
          .when_absent("every pool with the rbd application that the client may read")
          .in_synopsis(),
      OptionRow(flag::k_ceph_timeout, k_run,
                "how many seconds to wait for a mon or an OSD before failing")
          .number("SECONDS", 1, 3600)
          .defaults_to("30"),
      OptionRow(flag::k_exact_usage, k_run,
                "also compute the used bytes of images without a valid fast-diff map, as 'rbd du' "
                "does (reads every object: slow)"),
      OptionRow(
          flag::k_reader, k_run,
          "how images are read: direct decodes each header object itself and asks librbd only "
          "for what it does not understand; librbd opens every image")
          .text("direct|librbd")
          .defaults_to("direct"),
  };
}

/// Where the inventory is written.
std::vector<OptionRow> database_options() {
  return {
      OptionRow(
          flag::k_db, k_run | k_migrate,
          "libpq conninfo or URI, without a password: that comes from ~/.pgpass, PGPASSFILE or "
          "pg_service.conf")
          .text("CONNINFO")
          .defaults_to(k_default_db)
          .in_synopsis(),
      OptionRow(flag::k_db_timeout, k_run | k_migrate,
                "how many seconds any one database statement may run")
          .number("SECONDS", 1, 86400)
          .defaults_to("300"),
      OptionRow(
          flag::k_history_days, k_run,
          "keep this many days (0 keeps all) of run history and usage history: a "
          "run deletes older rows of its cluster in its own transaction, but the usage row that "
          "still holds at the window's start")
          .number("DAYS", 0, 36500)
          .when_absent("what the cluster's last committed run kept, else 400"),
  };
}

/// What the run says, and where.
std::vector<OptionRow> output_options() {
  return {
      OptionRow(flag::k_format, k_admin_commands, "the result on stdout")
          .text("plain|json")
          .defaults_to("plain"),
      OptionRow(flag::k_json, k_admin_commands, "same as --format json"),
      OptionRow(flag::k_quiet, k_run | k_migrate, "print no result line; errors still go to stderr")
          .letter("q"),
      OptionRow(flag::k_verbose, k_admin_commands, "log debug messages, as --log-level debug")
          .letter("v"),
      OptionRow(flag::k_log_level, k_admin_commands,
                "log this level and above: trace, debug, info, warn, error, critical or off")
          .text("LEVEL")
          .defaults_to("warn"),
      OptionRow(flag::k_log_file, k_admin_commands, "append the log to this file instead of stderr")
          .text("PATH"),
      OptionRow(flag::k_metrics_file, k_run,
                "write Prometheus textfile metrics of the run to this file (atomically)")
          .text("PATH"),
  };
}

/// Help and version.
std::vector<OptionRow> general_options() {
  return {
      OptionRow(
          flag::k_settings_dir, k_serve,
          "the directory of the settings files the units read: rbd-sync, and rbd-sync@NAME for "
          "a cluster NAME other than ceph")
          .text("DIR")
          .defaults_to(k_default_settings_dir),
      OptionRow(
          flag::k_connection, k_serve,
          "the name systemd gives the connection's unit instance (%i), whose caller's pid and "
          "uid the log names (inside the unit's user namespace the socket reports nobody)")
          .text("NUMBER-PID-UID"),
      OptionRow(flag::k_help, k_all_commands,
                "print the help of the command, or the list of commands, and exit")
          .letter("h"),
      OptionRow(flag::k_version, k_all_commands, "print the version and exit"),
  };
}

/// A group of options: its heading and its options.
struct GroupEntry {
  OptionGroup group;
  const char* heading;
  std::vector<OptionRow> (*options)();
};

/// Every group, in the order shown.
constexpr std::array<GroupEntry, 5> k_groups = {{
    {OptionGroup::guard, "Guard", guard_options},
    {OptionGroup::ceph, "Ceph", ceph_options},
    {OptionGroup::database, "Database", database_options},
    {OptionGroup::output, "Output", output_options},
    {OptionGroup::general, "General", general_options},
}};

}  // namespace

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> k_table = [] {
    std::vector<OptionSpec> table;
    for (const GroupEntry& entry : k_groups) {
      for (const OptionRow& option : entry.options()) {
        table.push_back(option.in_group(entry.group));
      }
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

std::string help_sentence(const OptionSpec& option) {
  std::string sentence = option.help;
  if (*option.alias != '\0') {
    sentence += std::string(" (also --") + option.alias + ")";
  }
  std::string notes;
  if (option.kind == ValueKind::number) {
    notes = std::to_string(option.low) + " to " + std::to_string(option.high);
  }
  if (*option.default_text != '\0') {
    notes += (notes.empty() ? "" : "; ") + std::string("default: ") + option.default_text;
  }
  return notes.empty() ? sentence : sentence + " (" + notes + ")";
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

std::string quoted_command_names(CommandSet commands, const std::string& before,
                                 const char* last_joiner) {
  std::vector<std::string> names;
  for (const CommandSpec& command : command_table()) {
    if ((commands & bit(command.command)) != 0) {
      names.push_back("'" + before + command.name + "'");
    }
  }
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) {
      text += i + 1 == names.size() ? last_joiner : ", ";
    }
    text += names[i];
  }
  return text;
}

}  // namespace rbdsync::cli
