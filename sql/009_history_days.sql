-- How long history is kept (issue #34). See docs/schema.md, runs.
--
-- history_days is the --history-days a run applied: in its transaction it deleted its
-- cluster's runs and usage history older than that many days (0: it kept everything),
-- so the console can say what span its charts hold. NULL for a run that did not commit
-- and for runs before this migration.
ALTER TABLE rbdsync.runs ADD COLUMN history_days integer CHECK (history_days >= 0);
