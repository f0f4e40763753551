#include "common/interrupts.hpp"

#include <pthread.h>
#include <unistd.h>
#include <csignal>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "common/error.hpp"

namespace rbdsync::interrupts {

struct State {
  std::atomic<int> received{0};
  std::mutex action_mutex;
  std::function<void()> action;
};

namespace {

State g_own;
State* g_state = &g_own;

void watch(State& state, sigset_t signals, std::chrono::milliseconds grace) {
  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0 || signal_number == 0) {
  }
  state.received = signal_number;
  // The grace timer starts first, whatever the cancel action does: it may block (a
  // PQcancel towards an unreachable server waits for TCP). If the main thread is still
  // stuck when it fires, leave anyway. _exit skips destructors, which is fine: the
  // kernel drops the flock and PostgreSQL rolls back on the closed connection.
  std::thread([grace, signal_number] {
    std::this_thread::sleep_for(grace);
    ::_exit(exit_code_for(signal_number));
  }).detach();
  // The action runs on a thread of its own, so this one can still hear a second signal.
  std::thread([&state] {
    std::lock_guard<std::mutex> guard(state.action_mutex);
    if (state.action) {
      state.action();
    }
  }).detach();
  int second = 0;
  while (sigwait(&signals, &second) != 0) {
  }
  ::_exit(exit_code_for(signal_number));
}

}  // namespace

void install(std::chrono::milliseconds grace) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread(watch, std::ref(*g_state), signals, grace).detach();
}

int received() {
  return g_state->received.load();
}

Error interrupted_by(int signal_number) {
  const bool sigint = signal_number == SIGINT;
  return {sigint ? ExitCode::interrupted_int : ExitCode::interrupted_term,
          std::string("interrupted by ") + (sigint ? "SIGINT" : "SIGTERM") +
              " before commit; the database is unchanged",
          "run the sync again when convenient"};
}

void check() {
  if (const int signal_number = received(); signal_number != 0) {
    throw interrupted_by(signal_number);
  }
}

void on_interrupt(std::function<void()> action) {
  std::lock_guard<std::mutex> guard(g_state->action_mutex);
  g_state->action = std::move(action);
}

State* state() {
  return g_state;
}

void adopt(State* installed) {
  g_state = installed;
}

int exit_code_for(int signal_number) {
  return 128 + signal_number;
}

}  // namespace rbdsync::interrupts
