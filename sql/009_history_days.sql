-- How long history is kept (issue #34). See docs/schema.md, runs.
--
-- history_days is the --history-days a run applied: in its transaction it deleted its
-- cluster's runs and usage history older than that many days (0: it kept everything),
-- so the console can say what span its charts hold. NULL for a run that did not commit
-- and for runs before this migration.
ALTER TABLE rbdsync.runs ADD COLUMN history_days integer CHECK (history_days >= 0);

-- Deleting an old run sets run_id NULL in the usage history that names it: without these,
-- each deleted run would scan both tables (minutes, on a database with years of history).
CREATE INDEX pool_usage_history_by_run ON rbdsync.pool_usage_history (run_id)
    WHERE run_id IS NOT NULL;
CREATE INDEX cluster_usage_history_by_run ON rbdsync.cluster_usage_history (run_id)
    WHERE run_id IS NOT NULL;
