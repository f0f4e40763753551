#pragma once

#include <chrono>
#include <functional>

#include "common/error.hpp"

/// SIGINT and SIGTERM, handled so that a sync stops cleanly: nothing uncommitted
/// survives, the guard is released, and the exit code is 130 or 143.
///
/// install() blocks both signals and starts a thread that waits for them with
/// sigwait(2), so no code runs in signal-handler context. On the first signal it
/// records it and runs the registered cancel action (e.g. cancel the running database
/// statement); the main thread notices at its next check() or when the cancelled call
/// fails. If the main thread is stuck (a frozen OSD), the process exits by itself
/// after `grace`; a second signal exits at once. Either way PostgreSQL discards the
/// open transaction and the kernel releases the flock.
namespace rbdsync::interrupts {

/// Call before any other thread exists (threads inherit the mask).
void install(std::chrono::milliseconds grace = std::chrono::seconds(5));

/// The signal received (SIGINT or SIGTERM), or 0.
int received();

/// The error a run reports when `signal_number` (SIGINT or SIGTERM) stopped it:
/// ExitCode::interrupted_int or interrupted_term, and a message saying so.
Error interrupted_by(int signal_number);

/// Throws interrupted_by(received()) once a signal arrived.
void check();

/// Sets the action to run, on the watcher thread, when a signal arrives; an empty
/// function clears it. While the action runs, setting a new one waits, so an object
/// the action uses may be destroyed safely after clearing it.
void on_interrupt(std::function<void()> action);

/// Sets the interrupt action for as long as it lives.
class ScopedAction {
 public:
  explicit ScopedAction(std::function<void()> action) { on_interrupt(std::move(action)); }
  ~ScopedAction() { on_interrupt({}); }
  ScopedAction(const ScopedAction&) = delete;
  ScopedAction& operator=(const ScopedAction&) = delete;
};

/// What install() set up: the signal received and the action to run. The core module
/// (librbdsync-core.so) links its own copy of this file, so it adopts the front's state:
/// one watcher thread, and what the core registers is what that thread runs.
struct State;

/// This copy's state.
State* state();

/// Makes this copy use `installed` (another copy's state()) from now on. Call before
/// anything of this copy checks or sets the state.
void adopt(State* installed);

/// The exit code for signal `signal_number` (128 + number).
int exit_code_for(int signal_number);

}  // namespace rbdsync::interrupts
