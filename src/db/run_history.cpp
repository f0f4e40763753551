#include "db/run_history.hpp"

#include "common/run_status.hpp"
#include "common/text.hpp"

#include "db/pg_connection.hpp"

namespace rbdsync::db {

struct RunHistory::Connection {
  std::unique_ptr<PgConnection> connection;
};

RunHistory::RunHistory(const std::string& conninfo, int statement_timeout_seconds)
    : m_connection(std::make_unique<Connection>(
          Connection{open_connection(conninfo, statement_timeout_seconds)})) {}

RunHistory::~RunHistory() = default;

bool RunHistory::try_claim_cluster(const std::string& fsid) {
  return translated("claiming the cluster", [&] {
    pqxx::nontransaction work(m_connection->connection->pqxx(), "rbd-sync claim");
    return exec_one_row(work,
                        "SELECT pg_catalog.pg_try_advisory_lock(pg_catalog.hashtextextended("
                        "'rbd-sync:'::pg_catalog.text || $1::pg_catalog.text, 0::pg_catalog.int8))",
                        fsid)[0]
        .as<bool>();
  });
}

std::optional<RunRecord> RunHistory::running_run(const std::string& fsid) {
  return translated("reading the running sync", [&]() -> std::optional<RunRecord> {
    pqxx::nontransaction work(m_connection->connection->pqxx(), "rbd-sync holder");
    const auto result =
        exec(work,
             "SELECT run_id, trigger, host, pid, extract(epoch FROM started_at)::pg_catalog.int8, "
             "coalesce(phase, ''), coalesce(done, 0), coalesce(total, 0), "
             "coalesce(requested_by, '') "
             "FROM rbdsync.runs WHERE fsid = $1 AND status = $2",
             fsid, run_status_name(RunStatus::running));
    if (result.empty()) {
      return std::nullopt;
    }
    const auto row = result[0];
    RunRecord run;
    run.run_id = row[0].as<std::string>();
    run.fsid = fsid;
    run.trigger = row[1].as<std::string>();
    run.host = row[2].as<std::string>();
    run.pid = row[3].as<std::int64_t>();
    run.started_at = row[4].as<std::int64_t>();
    run.status = RunStatus::running;
    run.phase = row[5].as<std::string>();
    run.done = static_cast<std::uint64_t>(row[6].as<std::int64_t>());
    run.total = static_cast<std::uint64_t>(row[7].as<std::int64_t>());
    run.requested_by = row[8].as<std::string>();
    return run;
  });
}

int RunHistory::mark_abandoned(const std::string& fsid) {
  return translated("marking abandoned runs", [&] {
    pqxx::nontransaction work(m_connection->connection->pqxx(), "rbd-sync abandoned");
    return static_cast<int>(
        exec(work,
             "UPDATE rbdsync.runs SET status = $2, ended_at = pg_catalog.now(), "
             "error = $4 WHERE fsid = $1 AND status = $3",
             fsid, run_status_name(RunStatus::abandoned), run_status_name(RunStatus::running),
             std::string(k_abandoned_message))
            .affected_rows());
  });
}

void RunHistory::start(const RunRecord& run) {
  translated("recording the run", [&] {
    pqxx::nontransaction work(m_connection->connection->pqxx(), "rbd-sync run start");
    exec(work,
         "INSERT INTO rbdsync.runs (run_id, fsid, trigger, requested_by, host, pid, started_at, "
         "status, phase) VALUES ($1, $2, $3, nullif($4, ''), $5, $6, "
         "pg_catalog.to_timestamp($7::pg_catalog.float8), $8, $9)",
         run.run_id, run.fsid, run.trigger, run.requested_by, run.host, run.pid, run.started_at,
         run_status_name(RunStatus::running), run.phase);
  });
}

void RunHistory::finish(const RunRecord& run, const CommittedRun* committed_run) {
  // A run that did not commit has no figures: zero, and no JSON (NULL).
  const sync::SyncReport no_report;
  const CommittedRun no_figures{no_report, "", "", "", 0};
  const CommittedRun& figures = committed_run ? *committed_run : no_figures;
  const sync::SyncReport& report = figures.report;
  const auto figure = [](std::size_t value) { return static_cast<std::int64_t>(value); };
  translated("recording the end of the run", [&] {
    pqxx::nontransaction work(m_connection->connection->pqxx(), "rbd-sync run end");
    exec(work,  // A run that failed keeps the phase and progress it had reached: that is where
                // it failed. Counts exist only for a run that got to the end, every image of
                // which is done.
         "UPDATE rbdsync.runs SET status = $2, ended_at = pg_catalog.now(), "
         "phase = CASE WHEN $18 THEN $3 ELSE phase END, "
         "done = CASE WHEN $18 THEN $4 ELSE done END, "
         "total = CASE WHEN $18 THEN $4 ELSE total END, "
         "pools = $5, images = $6, added = $7, changed = $8, removed = $9, "
         "skipped = $10, exit_code = $11, error = nullif($12, ''), duration_seconds = $13, "
         "stale = $14, counts = nullif($15, '')::pg_catalog.jsonb, "
         "stale_images = nullif($16, '')::pg_catalog.jsonb, "
         "unreadable_pools = nullif($17, '')::pg_catalog.jsonb, "
         "history_days = CASE WHEN $18 THEN $19::pg_catalog.int4 END "
         "WHERE run_id = $1",
         run.run_id, run_status_name(run.status), run.phase,
         figure(report.images + report.skipped + report.stale.size()), figure(report.pools),
         figure(report.images), figure(report.counts.images.added),
         figure(report.counts.images.changed), figure(report.counts.images.removed),
         figure(report.skipped), run.exit_code, display_text(run.message, Controls::escape),
         run.duration_seconds, figure(report.stale.size()), figures.counts_json,
         figures.stale_images_json, figures.unreadable_pools_json, committed(run.status),
         figures.history_days);
  });
}

std::optional<int> RunHistory::last_history_days(const std::string& fsid) {
  return translated("reading the history's retention", [&]() -> std::optional<int> {
    pqxx::nontransaction work(m_connection->connection->pqxx(), "rbd-sync retention");
    const pqxx::result rows =
        exec(work,
             "SELECT history_days FROM rbdsync.runs WHERE fsid = $1 AND history_days IS NOT NULL "
             "ORDER BY ended_at DESC LIMIT 1",
             fsid);
    if (rows.empty()) {
      return std::nullopt;
    }
    return rows[0][0].as<int>();
  });
}

void RunHistory::progress(const std::string& run_id, const std::string& phase, std::int64_t done,
                          std::int64_t total) {
  translated("recording progress", [&] {
    pqxx::nontransaction work(m_connection->connection->pqxx(), "rbd-sync progress");
    exec(work,
         "UPDATE rbdsync.runs SET phase = $2, done = $3, total = $4 "
         "WHERE run_id = $1 AND status = $5",
         run_id, phase, done, total, run_status_name(RunStatus::running));
  });
}

}  // namespace rbdsync::db
