#pragma once

#include <array>
#include <csignal>

#include <sysexits.h>

/// Exit codes of rbd-sync. Values are <sysexits.h>'s so that cron wrappers and the
/// web backend can tell "try again later" (75) from "fix something" (64-78); a signal
/// ends a run with the shell's 128 + its number.
/// k_exit_codes below says what each means; the man page's EXIT STATUS is made from it.
/// Keep this enum, k_exit_codes and the table in README.md in step.

namespace rbdsync {

enum class ExitCode : int {
  ok = 0,
  partial = 3,
  usage = EX_USAGE,                  // 64
  data = EX_DATAERR,                 // 65
  unavailable = EX_UNAVAILABLE,      // 69
  internal = EX_SOFTWARE,            // 70
  cant_create = EX_CANTCREAT,        // 73
  already_running = EX_TEMPFAIL,     // 75
  no_permission = EX_NOPERM,         // 77
  config = EX_CONFIG,                // 78
  interrupted_int = 128 + SIGINT,    // 130
  interrupted_term = 128 + SIGTERM,  // 143
};

/// The integer a process returns for `code`.
constexpr int to_int(ExitCode code) {
  return static_cast<int>(code);
}

/// One exit code as the documentation tells it.
struct ExitCodeInfo {
  ExitCode code;
  const char* name;     ///< the enumerator's name
  const char* meaning;  ///< one line, for the man page and the tests
};

/// Every ExitCode, in ascending order.
inline constexpr std::array<ExitCodeInfo, 12> k_exit_codes{{
    {ExitCode::ok, "ok",
     "success: the inventory was committed, or the schema migrated; status: no sync is running"},
    {ExitCode::partial, "partial",
     "committed, but some images could not be read even on a retry, or a pool's image list is "
     "damaged; their previous rows were kept (an unreadable image's marked stale), and each is "
     "named on stderr and in --json"},
    {ExitCode::usage, "usage",
     "bad command line: an unknown option or command, a bad value, an option of another "
     "command, a password in --db; or a CEPH_ARGS Ceph cannot take: a bad --cluster, --id or "
     "--name, an option without its value, Ceph's show_conf"},
    {ExitCode::data, "data", "bad data from Ceph that cannot be stored"},
    {ExitCode::unavailable, "unavailable",
     "Ceph or PostgreSQL unreachable or timed out; nothing was committed"},
    {ExitCode::internal, "internal",
     "a bug, including unexpected exceptions, or the core module librbdsync-core.so missing, "
     "unloadable or of another build (reinstall rbd-sync); nothing was committed"},
    {ExitCode::cant_create, "cant_create",
     "the lock file or its directory cannot be created or opened, or is refused as unsafe: a "
     "symlink in the path, a directory of another user, a world-writable directory, not a "
     "regular file, no permission"},
    {ExitCode::already_running, "already_running",
     "another sync holds the guard (this host's lock file or the cluster's lock in "
     "PostgreSQL); try again later (--conflict-exit-code changes this status for a run); "
     "status: a sync is running"},
    {ExitCode::no_permission, "no_permission",
     "Ceph or PostgreSQL refused authentication or authorisation: a wrong key, no caps, a "
     "--pool the client may not read, or no rbd pool it may read"},
    {ExitCode::config, "config",
     "configuration: no ceph.conf or keyring, a bad --db, an unknown database or pool, a "
     "schema not migrated or newer than the binary"},
    {ExitCode::interrupted_int, "interrupted_int",
     "SIGINT before commit; the database is unchanged"},
    {ExitCode::interrupted_term, "interrupted_term",
     "SIGTERM before commit; the database is unchanged"},
}};

}  // namespace rbdsync
