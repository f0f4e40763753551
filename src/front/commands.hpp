#pragma once

#include <functional>
#include <string>

#include "cli/options.hpp"
#include "common/exit_code.hpp"

namespace rbdsync::front {

/// Called with the run id once a run holds both guards and its row is recorded.
using OnGuarded = std::function<void(const std::string& run_id)>;

/// The front's commands (the `rbd-sync` executable): what needs Ceph or PostgreSQL runs
/// in the core, librbdsync-core.so (front/core_abi.hpp), loaded only when needed.

/// `rbd-sync run`: takes the guard before anything else (the lock file on this host,
/// then, in the core, the cluster's advisory lock in PostgreSQL), then syncs Ceph into
/// PostgreSQL in one transaction. A busy lock file is answered without loading the core. Returns
/// the exit code; failures throw Error. `on_guarded`, when given, is called with the run id once
/// the run holds both guards and its row is recorded (`run --detach` answers "started" there).
ExitCode run_sync(const cli::Config& config, const OnGuarded& on_guarded = {});

/// The exit status of a run that ended with `code`: --conflict-exit-code when the guard
/// was busy, the code itself otherwise.
int run_exit_status(ExitCode code, const cli::Config& config);

/// `rbd-sync migrate`: brings the database schema up to this binary's version (in the
/// core; no guard).
ExitCode run_migrate(const cli::Config& config);

/// `rbd-sync status`: ExitCode::ok when no sync holds the lock file,
/// ExitCode::already_running when one does.
ExitCode run_status(const cli::Config& config);

}  // namespace rbdsync::front
