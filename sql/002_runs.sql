-- Run history: one row per sync that got past the guards. The 'running' row of a cluster
-- names the run that holds it, which is how a sync on another host learns who is busy.

CREATE TABLE rbdsync.runs (
    run_id        uuid PRIMARY KEY,
    fsid          uuid NOT NULL,
    trigger       text NOT NULL CHECK (trigger IN ('cron', 'web', 'manual')),
    host          text NOT NULL,
    pid           integer NOT NULL,
    started_at    timestamptz NOT NULL,
    ended_at      timestamptz,
    status        text NOT NULL
                  CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted', 'abandoned')),
    phase         text,
    done          bigint,
    total         bigint,
    pools         integer,
    images        integer,
    added         integer,
    changed       integer,
    removed       integer,
    skipped       integer,
    exit_code     integer,
    error         text,
    duration_seconds double precision
);

CREATE INDEX runs_by_cluster ON rbdsync.runs (fsid, started_at DESC);
-- At most one running row per cluster: the advisory lock guarantees it, this states it.
CREATE UNIQUE INDEX runs_one_running ON rbdsync.runs (fsid) WHERE status = 'running';
