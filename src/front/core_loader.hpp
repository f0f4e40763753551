#pragma once

#include <string>

#include "common/exit_code.hpp"
#include "front/core_abi.hpp"

namespace rbdsync::front {

/// Where the core module is looked for: librbdsync-core.so next to the running
/// executable (a build tree: tests, benches and scripts run build/rbd-sync in place),
/// else the installed k_core_path (common/version.hpp). No environment variable can
/// point elsewhere, so nothing but these two places is ever loaded.
std::string core_path();

/// Loads the core (once; it is never unloaded) and runs `call` in it. Returns its exit
/// code; the core has printed the answer or the error. Throws Error (ExitCode::internal)
/// when the core cannot be loaded or comes from another build.
ExitCode call_core(const CoreCall& call);

}  // namespace rbdsync::front
