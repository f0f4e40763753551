#include "common/run_status.hpp"

namespace rbdsync {

namespace {

const RunStatusInfo& info(RunStatus status) {
  // The table is in the enum's order; TheTableHoldsEveryStatusOnce checks it.
  return k_run_statuses[static_cast<std::size_t>(status)];
}

}  // namespace

const char* run_status_name(RunStatus status) {
  return info(status).name;
}

const char* run_status_plain_word(RunStatus status) {
  return info(status).plain_word;
}

std::optional<RunStatus> run_status_named(std::string_view name) {
  for (const RunStatusInfo& known : k_run_statuses) {
    if (name == known.name) {
      return known.status;
    }
  }
  return std::nullopt;
}

bool committed(RunStatus status) {
  return info(status).committed;
}

RunStatus run_status_of(ExitCode code) {
  switch (code) {
    case ExitCode::ok:
      return RunStatus::succeeded;
    case ExitCode::partial:
      return RunStatus::partial;
    case ExitCode::interrupted_int:
    case ExitCode::interrupted_term:
      return RunStatus::interrupted;
    default:
      return RunStatus::failed;
  }
}

}  // namespace rbdsync
