#pragma once

#include <string>

#include "common/run_record.hpp"

namespace rbdsync::testing {

/// A run of cron's, reading: what the holder record and the busy answer show of a run
/// that holds the lock. Tests change the fields they are about.
inline RunRecord sample_run() {
  RunRecord run;
  run.run_id = "5f0c8a7e-0000-4000-8000-000000000001";
  run.pid = 4242;
  run.host = "web-1";
  run.trigger = "cron";
  run.started_at = 1764800000;
  run.phase = "reading";
  run.done = 3120;
  run.total = 10000;
  return run;
}

/// `run` as it ended: with `status`, `exit_code` and `message`, 100 seconds after its
/// start.
inline RunRecord ended(RunRecord run, RunStatus status, int exit_code, const std::string& message) {
  run.status = status;
  run.exit_code = exit_code;
  run.message = message;
  run.ended_at = run.started_at + 100;
  return run;
}

}  // namespace rbdsync::testing
