-- Clusters, their rbd pools and RBD images: the inventory the console's block-storage page reads.
-- Every row is keyed by the cluster fsid, so several clusters can share one database.

CREATE TABLE rbdsync.clusters (
    fsid            uuid PRIMARY KEY,
    first_synced_at timestamptz NOT NULL DEFAULT now(),
    last_synced_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE rbdsync.pools (
    fsid       uuid   NOT NULL REFERENCES rbdsync.clusters (fsid) ON DELETE CASCADE,
    pool_id    bigint NOT NULL,
    name       text   NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (fsid, pool_id)
);

CREATE TABLE rbdsync.images (
    fsid          uuid   NOT NULL,
    pool_id       bigint NOT NULL,
    namespace     text   NOT NULL DEFAULT '',   -- '' is the pool's default namespace
    image_id      text   NOT NULL,              -- stable across renames
    name          text   NOT NULL,
    size_bytes    bigint NOT NULL CHECK (size_bytes >= 0),
    object_size   bigint NOT NULL CHECK (object_size > 0),
    features      bigint NOT NULL,              -- RBD_FEATURE_* bit mask
    feature_names text[] NOT NULL,              -- the same bits as `rbd info` names them
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (fsid, pool_id, namespace, image_id),
    FOREIGN KEY (fsid, pool_id) REFERENCES rbdsync.pools (fsid, pool_id) ON DELETE CASCADE
);

CREATE INDEX images_by_name ON rbdsync.images (fsid, pool_id, namespace, name);
