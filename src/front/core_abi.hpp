#pragma once

/// The boundary between the front (the `rbd-sync` executable) and the core
/// (librbdsync-core.so, dlopen'ed by the front). The front answers help, version, status
/// and a busy guard without loading Ceph or PostgreSQL, whose libraries cost many times
/// what the busy answer itself does to load and initialise (docs/architecture.md); it loads the
/// core only once the guard is held (or for migrate).
///
/// C++ types cross the boundary: both sides come from one build with one compiler and
/// one libstdc++, and k_core_abi (common/version.hpp, a hash of the files whose types
/// cross it) proves it. Exceptions do not cross it: the entry point catches them.

#include <chrono>

#include "cli/options.hpp"
#include "common/interrupts.hpp"
#include "front/commands.hpp"
#include "lock/file_lock.hpp"

namespace rbdsync::front {

enum class CoreCommand { run, migrate };

/// What the front hands the core. `abi` comes first and is read before anything else:
/// a core from another build may lay the rest out differently.
struct CoreCall {
  const char* abi = nullptr;  ///< the front's k_core_abi
  CoreCommand command = CoreCommand::run;
  const cli::Config* config = nullptr;
  /// run: the lock file this process holds, and when it began waiting for it.
  const lock::FileLock* lock_file = nullptr;
  std::chrono::steady_clock::time_point start;
  const OnGuarded* on_guarded = nullptr;    ///< run --detach's report, or an empty function
  interrupts::State* interrupts = nullptr;  ///< the front's signal handling, installed
};

/// The core's entry point: `extern "C" int rbdsync_core_main(const CoreCall*)`. Returns
/// the exit code, after printing the command's answer or error, or k_core_abi_mismatch
/// (having done nothing) when `abi` is not the core's.
using CoreMain = int (*)(const CoreCall*);
inline constexpr const char* k_core_main_symbol = "rbdsync_core_main";
inline constexpr int k_core_abi_mismatch = -1;

}  // namespace rbdsync::front
