#include "core/progress_observers.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/error.hpp"

namespace rbdsync::core {

namespace {

constexpr auto k_database_interval = std::chrono::milliseconds(500);
constexpr auto k_terminal_interval = std::chrono::milliseconds(100);

}  // namespace

void DatabaseProgress::on_progress(Phase phase, std::size_t done, std::size_t total) {
  const auto now = std::chrono::steady_clock::now();
  if (m_written && phase == m_phase && now - m_last_write < k_database_interval) {
    return;
  }
  m_phase = phase;
  m_written = true;
  m_last_write = now;
  try {
    m_history.progress(m_run_id, phase_name(phase), static_cast<std::int64_t>(done),
                       static_cast<std::int64_t>(total));
  } catch (const Error& error) {
    // Progress is for show; a real database failure fails the run at its next write.
    spdlog::debug("could not record progress: {}", error.what());
  }
}

std::string format_progress_line(Phase phase, std::size_t done, std::size_t total,
                                 double elapsed_seconds) {
  if (phase != Phase::reading || total == 0) {
    return phase_name(phase);
  }
  std::string line = fmt::format("reading {}/{} images", done, total);
  if (elapsed_seconds > 0.5 && done > 0) {
    const double rate = static_cast<double>(done) / elapsed_seconds;
    const double left = static_cast<double>(total - done) / rate;
    line += fmt::format(", {:.0f}/s, ETA {:.0f}s", rate, left);
  }
  return line;
}

TerminalProgress::~TerminalProgress() {
  if (m_drawn) {
    // Leave the terminal as it was. A failed write to a terminal is not worth a word.
    fmt::print(m_terminal, "\r\033[K");
    (void)std::fflush(m_terminal);
  }
}

void TerminalProgress::on_progress(Phase phase, std::size_t done, std::size_t total) {
  const auto now = std::chrono::steady_clock::now();
  if (m_drawn && done != total && now - m_last_draw < k_terminal_interval) {
    return;
  }
  m_last_draw = now;
  m_drawn = true;
  const double elapsed = std::chrono::duration<double>(now - m_start).count();
  fmt::print(m_terminal, "\r\033[K{}", format_progress_line(phase, done, total, elapsed));
  (void)std::fflush(m_terminal);
}

}  // namespace rbdsync::core
