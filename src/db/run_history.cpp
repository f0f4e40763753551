#include "db/run_history.hpp"

#include "common/text.hpp"

#include "db/pg_connection.hpp"

namespace rbdsync::db {

struct RunHistory::Connection {
  std::unique_ptr<pqxx::connection> connection;
};

RunHistory::RunHistory(const std::string& conninfo, int statement_timeout_seconds)
    : m_connection(std::make_unique<Connection>(
          Connection{open_connection(conninfo, statement_timeout_seconds)})) {}

RunHistory::~RunHistory() = default;

bool RunHistory::try_claim_cluster(const std::string& fsid) {
  return translated("claiming the cluster", [&] {
    pqxx::nontransaction work(*m_connection->connection, "rbd-sync claim");
    return work
        .exec_params1("SELECT pg_try_advisory_lock(hashtextextended('rbd-sync:' || $1, 0))",
                      fsid)[0]
        .as<bool>();
  });
}

std::optional<RunRow> RunHistory::running_run(const std::string& fsid) {
  return translated("reading the running sync", [&]() -> std::optional<RunRow> {
    pqxx::nontransaction work(*m_connection->connection, "rbd-sync holder");
    const auto result = work.exec_params(
        "SELECT run_id, trigger, host, pid, extract(epoch FROM started_at)::bigint, "
        "coalesce(phase, ''), coalesce(done, 0), coalesce(total, 0) "
        "FROM rbdsync.runs WHERE fsid = $1 AND status = $2",
        fsid, run_status_name(RunStatus::running));
    if (result.empty()) {
      return std::nullopt;
    }
    const auto row = result[0];
    RunRow run;
    run.run_id = row[0].as<std::string>();
    run.fsid = fsid;
    run.trigger = row[1].as<std::string>();
    run.host = row[2].as<std::string>();
    run.pid = row[3].as<std::int64_t>();
    run.started_at = row[4].as<std::int64_t>();
    run.status = RunStatus::running;
    run.phase = row[5].as<std::string>();
    run.done = row[6].as<std::int64_t>();
    run.total = row[7].as<std::int64_t>();
    return run;
  });
}

int RunHistory::mark_abandoned(const std::string& fsid) {
  return translated("marking abandoned runs", [&] {
    pqxx::nontransaction work(*m_connection->connection, "rbd-sync abandoned");
    return static_cast<int>(
        work.exec_params("UPDATE rbdsync.runs SET status = $2, ended_at = now(), "
                         "error = 'the run ended without recording how (killed?)' "
                         "WHERE fsid = $1 AND status = $3",
                         fsid, run_status_name(RunStatus::abandoned),
                         run_status_name(RunStatus::running))
            .affected_rows());
  });
}

void RunHistory::start(const RunRow& run) {
  translated("recording the run", [&] {
    pqxx::nontransaction work(*m_connection->connection, "rbd-sync run start");
    work.exec_params(
        "INSERT INTO rbdsync.runs (run_id, fsid, trigger, host, pid, started_at, status, phase) "
        "VALUES ($1, $2, $3, $4, $5, to_timestamp($6), $7, $8)",
        run.run_id, run.fsid, run.trigger, run.host, run.pid, run.started_at,
        run_status_name(RunStatus::running), run.phase);
  });
}

void RunHistory::finish(const RunRow& run) {
  translated("recording the end of the run", [&] {
    pqxx::nontransaction work(*m_connection->connection, "rbd-sync run end");
    work.exec_params(
        // A run that failed keeps the phase and progress it had reached: that is where
        // it failed. Counts exist only for a run that got to the end.
        "UPDATE rbdsync.runs SET status = $2, ended_at = now(), "
        "phase = CASE WHEN $19 THEN $3 ELSE phase END, "
        "done = CASE WHEN $19 THEN $4 ELSE done END, "
        "total = CASE WHEN $19 THEN $5 ELSE total END, "
        "pools = $6, images = $7, added = $8, changed = $9, removed = $10, "
        "skipped = $11, exit_code = $12, error = nullif($13, ''), duration_seconds = $14, "
        "stale = $15, counts = nullif($16, '')::jsonb, stale_images = nullif($17, '')::jsonb, "
        "unreadable_pools = nullif($18, '')::jsonb "
        "WHERE run_id = $1",
        run.run_id, run_status_name(run.status), run.phase, run.done, run.total, run.pools,
        run.images, run.added, run.changed, run.removed, run.skipped, run.exit_code,
        display_text(run.error, Controls::escape), run.duration_seconds, run.stale, run.counts_json,
        run.stale_images_json, run.unreadable_pools_json, committed(run.status));
  });
}

void RunHistory::progress(const std::string& run_id, const std::string& phase, std::int64_t done,
                          std::int64_t total) {
  translated("recording progress", [&] {
    pqxx::nontransaction work(*m_connection->connection, "rbd-sync progress");
    work.exec_params(
        "UPDATE rbdsync.runs SET phase = $2, done = $3, total = $4 "
        "WHERE run_id = $1 AND status = $5",
        run_id, phase, done, total, run_status_name(RunStatus::running));
  });
}

}  // namespace rbdsync::db
