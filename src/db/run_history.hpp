#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/run_status.hpp"

namespace rbdsync::db {

/// One row of rbdsync.runs: a sync that got past both guards.
struct RunRow {
  std::string run_id;  ///< a UUID
  std::string fsid;
  std::string trigger;
  std::string host;
  std::int64_t pid = 0;
  std::int64_t started_at = 0;  ///< Unix seconds
  RunStatus status = RunStatus::running;
  std::string phase;
  std::int64_t done = 0;
  std::int64_t total = 0;
  // Set when the run ends.
  std::int64_t pools = 0, images = 0, added = 0, changed = 0, removed = 0, skipped = 0;
  std::int64_t stale = 0;
  std::string counts_json;            ///< per kind of row; "" for none
  std::string stale_images_json;      ///< the images kept stale; "" for none
  std::string unreadable_pools_json;  ///< the pools this client may not read; "" for none
  int exit_code = 0;
  std::string error;
  double duration_seconds = 0.0;
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
  std::optional<RunRow> running_run(const std::string& fsid);

  /// Marks the cluster's leftover running rows abandoned (their holders died: the
  /// caller holds the cluster's claim). Returns how many.
  int mark_abandoned(const std::string& fsid);

  /// Inserts `run` with status running.
  void start(const RunRow& run);

  /// Updates the running row's phase and done/total.
  void progress(const std::string& run_id, const std::string& phase, std::int64_t done,
                std::int64_t total);

  /// Updates the row with the final status, counts, exit code and error.
  void finish(const RunRow& run);

 private:
  struct Connection;
  std::unique_ptr<Connection> m_connection;
};

}  // namespace rbdsync::db
