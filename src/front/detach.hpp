#pragma once

/// `rbd-sync run --detach`: the "Sync now" button's answer comes from the guard itself,
/// never from a guess about how long a child takes to fail.
///
/// The process forks before it does anything else (before any thread exists: the signal
/// watcher and librados start theirs later, in the child). The child becomes the run, in
/// a session of its own with stdin from /dev/null, so that a web server restarted with
/// its whole process group or session does not take the sync with it. Once the child
/// holds both guards (this host's lock file and the cluster's lock in PostgreSQL) it
/// moves stdout and stderr to its log and tells the parent its run id over a pipe; the
/// parent prints "started" and exits 0. A child that ends before that (a busy guard:
/// exit 75, or any error) has printed its own answer on the stdout and stderr it shares
/// with the parent, which then exits with the child's exit code.

#include <optional>
#include <string>

#include "cli/options.hpp"
#include "common/fd.hpp"

namespace rbdsync::front {

class DetachedRun {
 public:
  /// Forks. In the parent: waits for the child's answer, prints "started" when it came,
  /// and returns the exit code the parent exits with. In the child: returns nullopt and
  /// `child` is the child's side, for report_started().
  static std::optional<int> start(const cli::Config& config, DetachedRun& child);

  /// In the child, once the run holds both guards: points stdout and stderr at the log
  /// (--log-file, or detached.log beside the lock file, truncated) and tells the parent
  /// `run_id`. Never throws: the run goes on whatever happens to the parent.
  void report_started(const std::string& run_id) noexcept;

  /// The log a detached run writes its stdout and stderr to.
  static std::string log_path(const cli::Config& config);

 private:
  Fd m_report;
  std::string m_log_path;
  bool m_truncate_log = false;
};

}  // namespace rbdsync::front
