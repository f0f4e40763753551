#pragma once

/// Exit codes of rbd-sync. Values follow <sysexits.h> so that cron wrappers and the
/// web backend can tell "try again later" (75) from "fix something" (64-78).
/// Keep this enum and the table in README.md in step.

namespace rbdsync {

enum class ExitCode : int {
  ok = 0,
  partial = 3,             ///< committed, but some images were unreadable: rows kept, marked stale
  usage = 64,              ///< bad command line
  data = 65,               ///< bad data from Ceph or in the database
  unavailable = 69,        ///< Ceph or PostgreSQL unreachable or timed out
  internal = 70,           ///< a bug, including unexpected exceptions
  cant_create = 73,        ///< the lock file or its directory cannot be created or opened
  already_running = 75,    ///< another sync holds the guard
  no_permission = 77,      ///< cephx or PostgreSQL refused authentication or authorisation
  config = 78,             ///< missing keyring, bad conninfo, unknown pool, schema not migrated
  interrupted_int = 130,   ///< SIGINT before commit; database unchanged
  interrupted_term = 143,  ///< SIGTERM before commit; database unchanged
};

/// The integer a process returns for `code`.
constexpr int to_int(ExitCode code) {
  return static_cast<int>(code);
}

}  // namespace rbdsync
