#pragma once

#include <cstdint>
#include <string>

#include "common/run_status.hpp"

namespace rbdsync {

/// One sync run: who runs it, how far it got and how it ended. The holder record in
/// the lock file, the row in rbdsync.runs, the busy answer, `rbd-sync status` and the
/// metrics all read it; each keeps the fields it has room for.
struct RunRecord {
  std::string run_id;  ///< a UUID
  std::int64_t pid = 0;
  std::string host;
  std::string trigger;          ///< cron | web | manual
  std::string requested_by;     ///< who asked for the run (the console's user); "" unsaid
  std::int64_t started_at = 0;  ///< Unix seconds
  std::string fsid;             ///< once connected; not in the holder record
  std::string phase;            ///< e.g. "reading"
  std::uint64_t done = 0;       ///< images read so far
  std::uint64_t total = 0;      ///< images listed
  RunStatus status = RunStatus::running;
  // Set once the run has ended.
  std::int64_t ended_at = 0;  ///< Unix seconds; 0 for an abandoned run's holder record
  int exit_code = 0;
  std::string message;            ///< why it failed; "" when it committed
  double duration_seconds = 0.0;  ///< not in the holder record
};

}  // namespace rbdsync
