#include "front/commands.hpp"

#include <chrono>
#include <string>

#include "common/interrupts.hpp"
#include "common/version.hpp"
#include "front/answers.hpp"
#include "front/core_abi.hpp"
#include "front/core_loader.hpp"
#include "lock/file_lock.hpp"
#include "lock/holder_record.hpp"

namespace rbdsync::front {

namespace {

/// Who holds the lock file, from its record and /proc/locks.
BusyHolder local_holder(const lock::FileLock& lock_file) {
  BusyHolder holder;
  holder.guard = "lock file " + lock_file.path();
  const auto pid = lock::flock_holder_pid(lock_file.fd());
  holder.run = lock::recorded_holder(lock::read_record(lock_file.fd()), pid);
  if (!holder.run && pid) {
    // No record yet (the holder has only just taken the lock), or the lock is held by
    // something that is not rbd-sync, e.g. an admin's flock(1).
    holder.pid = *pid;
  }
  return holder;
}

}  // namespace

ExitCode run_sync(const cli::Config& config, const OnGuarded& on_guarded) {
  const auto start = std::chrono::steady_clock::now();
  // The lock file comes first: a busy guard must answer at once, without touching
  // Ceph or PostgreSQL, whose libraries only the core (loaded below) links.
  lock::FileLock lock_file(config.lock_file);
  // The signal watcher is a thread: the busy answer does without it, unless it may wait.
  const bool waits = config.wait_seconds > 0;
  if (waits) {
    interrupts::install();
  }
  const auto held = lock::ScopedLock::acquire(lock_file, std::chrono::seconds(config.wait_seconds));
  if (!held) {
    print_already_running(local_holder(lock_file), config);
    return ExitCode::already_running;
  }
  if (!waits) {
    interrupts::install();
  }
  CoreCall call;
  call.abi = k_core_abi;
  call.command = CoreCommand::run;
  call.config = &config;
  call.lock_file = &lock_file;
  call.start = start;
  call.on_guarded = &on_guarded;
  call.interrupts = interrupts::state();
  return call_core(call);
}

int run_exit_status(ExitCode code, const cli::Config& config) {
  return code == ExitCode::already_running ? config.conflict_exit_code : to_int(code);
}

ExitCode run_migrate(const cli::Config& config) {
  interrupts::install();
  CoreCall call;
  call.abi = k_core_abi;
  call.command = CoreCommand::migrate;
  call.config = &config;
  call.interrupts = interrupts::state();
  return call_core(call);
}

ExitCode run_status(const cli::Config& config) {
  const lock::LockState state = lock::inspect_lock_file(config.lock_file);
  print_status(state, config);
  return state.holder_pid ? ExitCode::already_running : ExitCode::ok;
}

}  // namespace rbdsync::front
