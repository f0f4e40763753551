#pragma once

#include <chrono>

#include "cli/options.hpp"
#include "common/exit_code.hpp"
#include "front/commands.hpp"
#include "lock/file_lock.hpp"

namespace rbdsync::core {

/// The core's side of the commands (librbdsync-core.so; front/commands.hpp is the front's).

/// `rbd-sync run` from the moment this process holds `lock_file`: connects, claims the
/// cluster in PostgreSQL, syncs, and records how the run ended. `start`: when the run
/// began waiting for the lock file.
ExitCode sync_holding_lock(const cli::Config& config, const lock::FileLock& lock_file,
                           std::chrono::steady_clock::time_point start,
                           const front::OnGuarded& on_guarded);

/// `rbd-sync migrate`: brings the database schema up to this binary's version.
ExitCode migrate_schema(const cli::Config& config);

}  // namespace rbdsync::core
