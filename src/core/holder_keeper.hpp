#pragma once

#include <chrono>
#include <string>

#include "lock/holder_record.hpp"
#include "sync/progress.hpp"

namespace rbdsync::core {

/// Keeps the holder record in the lock file current while this process holds the
/// lock: who it is at the start, its progress while it runs (at most a few writes a
/// second), and how it ended. A record left behind by a run that died (the lock was
/// free, so its holder is gone) becomes the "last run", marked abandoned.
class HolderKeeper : public sync::ProgressObserver {
 public:
  /// Writes the record for `me`. `fd` is the held lock file's descriptor.
  HolderKeeper(int fd, RunRecord me);

  void on_progress(Phase phase, std::size_t done, std::size_t total) override;

  /// Records the end of this run as the last run: the status, end time, exit code and
  /// message of `ended`, with the progress this keeper saw. The record then names no
  /// holder.
  void finish(const RunRecord& ended);

  /// Puts the record back as it was, without a holder: for a run that turned out
  /// not to run at all (the cluster was busy on another host).
  void withdraw();

 private:
  void write();

  int m_fd;
  lock::HolderRecord m_previous;
  lock::HolderRecord m_record;
  std::chrono::steady_clock::time_point m_last_write;
  bool m_write_failed = false;
};

}  // namespace rbdsync::core
