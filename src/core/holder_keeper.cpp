#include "core/holder_keeper.hpp"

#include <spdlog/spdlog.h>

#include "common/run_status.hpp"
#include "common/text.hpp"

namespace rbdsync::core {

namespace {

// Often enough for a person watching `rbd-sync status`, rare enough to cost nothing.
constexpr auto k_write_interval = std::chrono::milliseconds(250);

}  // namespace

HolderKeeper::HolderKeeper(int fd, RunRecord me) : m_fd(fd) {
  if (auto previous = lock::read_record(fd)) {
    m_previous = *previous;
  }
  m_record.last_run = m_previous.last_run;
  if (m_previous.holder) {
    // We got the lock, so whoever the record names as holder is gone without saying
    // how it ended (SIGKILL, power loss).
    RunRecord dead = *m_previous.holder;
    dead.status = RunStatus::abandoned;
    dead.message = k_abandoned_message;
    spdlog::warn("previous run {} (pid {} on {}) ended without recording how; marked abandoned",
                 dead.run_id, dead.pid, display_text(dead.host, Controls::escape));
    m_record.last_run = dead;
    m_previous.last_run = dead;
  }
  m_previous.holder.reset();
  m_record.holder = std::move(me);
  write();
}

void HolderKeeper::on_progress(Phase phase, std::size_t done, std::size_t total) {
  RunRecord& me = *m_record.holder;
  const bool new_phase = me.phase != phase_name(phase);
  me.phase = phase_name(phase);
  me.done = done;
  me.total = total;
  if (new_phase || done == total ||
      std::chrono::steady_clock::now() - m_last_write >= k_write_interval) {
    write();
  }
}

void HolderKeeper::finish(const RunRecord& ended) {
  if (!m_record.holder) {
    return;
  }
  RunRecord last = *m_record.holder;
  last.status = ended.status;
  last.exit_code = ended.exit_code;
  last.message = ended.message;
  last.ended_at = ended.ended_at;
  m_record.holder.reset();
  m_record.last_run = std::move(last);
  write();
}

void HolderKeeper::withdraw() {
  m_record = m_previous;
  write();
}

void HolderKeeper::write() {
  // Once a run: a record that cannot be written (a full file system, a lock file made
  // read-only) leaves `rbd-sync status` and busy answers without this run's name and
  // progress, which the admin should hear of, but not four times a second.
  if (!lock::write_record(m_fd, m_record) && !m_write_failed) {
    m_write_failed = true;
    spdlog::warn(
        "could not write the holder record into the lock file: `rbd-sync status` "
        "and busy answers will not name this run (is its file system full?)");
  }
  m_last_write = std::chrono::steady_clock::now();
}

}  // namespace rbdsync::core
