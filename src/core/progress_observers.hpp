#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "db/run_history.hpp"
#include "sync/progress.hpp"

namespace rbdsync::core {

/// Passes progress on to several observers.
class ProgressFanOut : public sync::ProgressObserver {
 public:
  void add(sync::ProgressObserver* observer) { m_observers.push_back(observer); }
  void on_progress(Phase phase, std::size_t done, std::size_t total) override {
    for (auto* observer : m_observers) {
      observer->on_progress(phase, done, total);
    }
  }

 private:
  std::vector<sync::ProgressObserver*> m_observers;
};

/// Keeps the run's row in rbdsync.runs current: at each phase change and at least
/// every half second while images are read, so the web page's figure moves.
class DatabaseProgress : public sync::ProgressObserver {
 public:
  DatabaseProgress(db::RunHistory& history, std::string run_id)
      : m_history(history), m_run_id(std::move(run_id)) {}
  void on_progress(Phase phase, std::size_t done, std::size_t total) override;

 private:
  db::RunHistory& m_history;
  std::string m_run_id;
  Phase m_phase = Phase::listing;
  bool m_written = false;
  std::chrono::steady_clock::time_point m_last_write;
};

/// "reading 3120/10000 images, 812/s, ETA 8s": the live line a person at a terminal sees.
std::string format_progress_line(Phase phase, std::size_t done, std::size_t total,
                                 double elapsed_seconds);

/// Redraws format_progress_line() on a terminal (stderr) a few times a second.
class TerminalProgress : public sync::ProgressObserver {
 public:
  explicit TerminalProgress(std::FILE* terminal) : m_terminal(terminal) {}
  ~TerminalProgress() override;
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;
  void on_progress(Phase phase, std::size_t done, std::size_t total) override;

 private:
  std::FILE* m_terminal;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point m_last_draw;
  bool m_drawn = false;
};

}  // namespace rbdsync::core
