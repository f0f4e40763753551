-- Usage over time for the console's capacity charts (issue #17); see docs/schema.md.
--
-- rbd-sync writes these in the sync's transaction: a pool's figures when a run finds
-- them changed, and the cluster's totals when they changed. A row is added only when
-- something differs from the latest row (of the pool, of the cluster), so a quiet
-- cluster adds nothing and the tables stay small; a value holds until the next row.
-- Rows outlive the runs that wrote them (run_id becomes NULL), not their pool or cluster.

CREATE TABLE rbdsync.pool_usage_history (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    fsid              uuid   NOT NULL,
    pool_id           bigint NOT NULL,
    run_id            uuid   REFERENCES rbdsync.runs (run_id) ON DELETE SET NULL,
    recorded_at       timestamptz NOT NULL DEFAULT now(),
    stored_bytes      bigint NOT NULL,
    objects           bigint NOT NULL,
    used_bytes        bigint NOT NULL,
    max_avail_bytes   bigint NOT NULL,
    images            integer NOT NULL,
    provisioned_bytes bigint NOT NULL,
    FOREIGN KEY (fsid, pool_id) REFERENCES rbdsync.pools (fsid, pool_id) ON DELETE CASCADE
);

CREATE INDEX pool_usage_history_by_pool
    ON rbdsync.pool_usage_history (fsid, pool_id, recorded_at DESC);

CREATE TABLE rbdsync.cluster_usage_history (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    fsid                 uuid NOT NULL REFERENCES rbdsync.clusters (fsid) ON DELETE CASCADE,
    run_id               uuid REFERENCES rbdsync.runs (run_id) ON DELETE SET NULL,
    recorded_at          timestamptz NOT NULL DEFAULT now(),
    pools                integer NOT NULL,
    images               integer NOT NULL,
    snapshots            integer NOT NULL,
    trash                integer NOT NULL,
    stale_images         integer NOT NULL,
    provisioned_bytes    bigint  NOT NULL,
    images_used_bytes    bigint  NOT NULL,
    images_usage_unknown integer NOT NULL,
    stored_bytes         bigint  NOT NULL,
    used_bytes           bigint  NOT NULL,
    objects              bigint  NOT NULL
);

CREATE INDEX cluster_usage_history_by_cluster
    ON rbdsync.cluster_usage_history (fsid, recorded_at DESC);
