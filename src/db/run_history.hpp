#pragma once

/// rbdsync.runs as a run writes it: its row from start to end, and the cluster's claim.
/// The rest of "the history" is db/history.hpp: old runs and usage history rows are
/// pruned there (prune_history(), after the charts' rows are added), in the sync's own
/// transaction, which PgStore runs.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/run_record.hpp"
#include "sync/report.hpp"

namespace rbdsync::db {

/// What a run that committed adds to its row in rbdsync.runs: the report's figures,
/// and its per-kind counts, stale images and unreadable pools as JSON text (made by
/// the caller, with the builders --json uses).
struct CommittedRun {
  const sync::SyncReport& report;
  std::string counts_json;
  std::string stale_images_json;      ///< "" for none
  std::string unreadable_pools_json;  ///< "" for none
  int history_days;                   ///< the --history-days it pruned with (0: kept all)
};

/// rbdsync.runs and the cluster's claim, on a connection of its own in autocommit, so
/// that the web page sees a run start, progress and end while the inventory
/// transaction (on the PgStore's connection) is still open, and so that cancelling
/// that transaction leaves this connection able to record "interrupted".
class RunHistory {
 public:
  /// Connects like PgStore does. Throws Error the same way.
  RunHistory(const std::string& conninfo, int statement_timeout_seconds);
  ~RunHistory();
  RunHistory(const RunHistory&) = delete;
  RunHistory& operator=(const RunHistory&) = delete;

  /// The guard across hosts: a session-level advisory lock keyed by the cluster fsid
  /// (two clusters never block each other), held until this object is destroyed.
  /// Returns false at once when another session holds it. It is taken on this
  /// connection so that marking leftovers abandoned and inserting the running row
  /// happen under it.
  [[nodiscard]] bool try_claim_cluster(const std::string& fsid);

  /// The run recorded as running for `fsid`, if any: after a failed claim, the holder.
  std::optional<RunRecord> running_run(const std::string& fsid);

  /// The --history-days the cluster's last committed run that recorded one applied.
  std::optional<int> last_history_days(const std::string& fsid);

  /// Marks the cluster's leftover running rows abandoned (their holders died: the
  /// caller holds the cluster's claim). Returns how many.
  int mark_abandoned(const std::string& fsid);

  /// Inserts `run` (its id, fsid, trigger, host, pid, start and phase) with status
  /// running.
  void start(const RunRecord& run);

  /// Updates the running row's phase and done/total.
  void progress(const std::string& run_id, const std::string& phase, std::int64_t done,
                std::int64_t total);

  /// Updates the row with how `run` ended: status, exit code, message and duration;
  /// with `committed_run`, also its figures and the progress of a run that got to the end
  /// (a run that failed keeps the phase and progress where it failed).
  void finish(const RunRecord& run, const CommittedRun* committed_run = nullptr);

 private:
  struct Connection;
  std::unique_ptr<Connection> m_connection;
};

}  // namespace rbdsync::db
