#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "common/run_status.hpp"

namespace rbdsync {

/// How far a run got, in order: connecting to Ceph and PostgreSQL, then the sync's own
/// phases (sync::ProgressObserver is told listing to committing), then done.
enum class Phase { connecting, listing, reading, writing, committing, done };

/// Every phase with its name as holder records, JSON and the database tell it.
inline constexpr std::array<std::pair<Phase, const char*>, 6> k_phase_names = {{
    {Phase::connecting, "connecting"},
    {Phase::listing, "listing"},
    {Phase::reading, "reading"},
    {Phase::writing, "writing"},
    {Phase::committing, "committing"},
    {Phase::done, "done"},
}};

/// The name of `phase` (k_phase_names).
constexpr const char* phase_name(Phase phase) {
  for (const auto& entry : k_phase_names) {
    if (entry.first == phase) {
      return entry.second;
    }
  }
  return "unknown";
}

/// The most bytes of RunRecord::requested_by (--requested-by): room for any Django user
/// name (150 characters of ASCII), bounded so that a holder record and a log line stay
/// short.
inline constexpr std::size_t k_max_requested_by = 256;

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
  std::string phase;            ///< phase_name(): "connecting", "reading", ...
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
