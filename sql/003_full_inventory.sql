-- The whole RBD inventory: pool figures, namespaces, every image attribute `rbd info`,
-- `rbd du` and `rbd status` show, snapshots and the trash. See docs/schema.md.
--
-- New NOT NULL columns get a placeholder default only so that rows stored by an older
-- rbd-sync can take them; the default is dropped at once and the next sync writes the
-- real value.

-- The last sync time lives in rbdsync.runs; rewriting it here would make every no-op
-- sync write an inventory row.
ALTER TABLE rbdsync.clusters DROP COLUMN last_synced_at;
ALTER TABLE rbdsync.clusters ADD COLUMN name text NOT NULL DEFAULT 'ceph';
ALTER TABLE rbdsync.clusters ALTER COLUMN name DROP DEFAULT;

ALTER TABLE rbdsync.pools
    ADD COLUMN pool_type       text   NOT NULL DEFAULT 'replicated',
    ADD COLUMN replica_size    bigint NOT NULL DEFAULT 0,
    ADD COLUMN min_size        bigint NOT NULL DEFAULT 0,
    ADD COLUMN pg_num          bigint NOT NULL DEFAULT 0,
    ADD COLUMN stored_bytes    bigint NOT NULL DEFAULT 0,
    ADD COLUMN objects         bigint NOT NULL DEFAULT 0,
    ADD COLUMN used_bytes      bigint NOT NULL DEFAULT 0,
    ADD COLUMN max_avail_bytes bigint NOT NULL DEFAULT 0,
    ADD COLUMN mirror_mode     text   NOT NULL DEFAULT 'disabled',
    ADD COLUMN first_seen_at   timestamptz NOT NULL DEFAULT now();
ALTER TABLE rbdsync.pools
    ALTER COLUMN pool_type DROP DEFAULT,
    ALTER COLUMN replica_size DROP DEFAULT,
    ALTER COLUMN min_size DROP DEFAULT,
    ALTER COLUMN pg_num DROP DEFAULT,
    ALTER COLUMN stored_bytes DROP DEFAULT,
    ALTER COLUMN objects DROP DEFAULT,
    ALTER COLUMN used_bytes DROP DEFAULT,
    ALTER COLUMN max_avail_bytes DROP DEFAULT,
    ALTER COLUMN mirror_mode DROP DEFAULT;

CREATE TABLE rbdsync.namespaces (
    fsid          uuid   NOT NULL,
    pool_id       bigint NOT NULL,
    name          text   NOT NULL CHECK (name <> ''),
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (fsid, pool_id, name),
    FOREIGN KEY (fsid, pool_id) REFERENCES rbdsync.pools (fsid, pool_id) ON DELETE CASCADE
);

ALTER TABLE rbdsync.images
    ADD COLUMN format                smallint NOT NULL DEFAULT 2,
    ADD COLUMN object_order          smallint NOT NULL DEFAULT 22,
    ADD COLUMN object_count          bigint   NOT NULL DEFAULT 0,
    ADD COLUMN op_features           bigint   NOT NULL DEFAULT 0,
    ADD COLUMN op_feature_names      text[]   NOT NULL DEFAULT '{}',
    ADD COLUMN flags                 bigint   NOT NULL DEFAULT 0,
    ADD COLUMN flag_names            text[]   NOT NULL DEFAULT '{}',
    ADD COLUMN data_pool_id          bigint,
    ADD COLUMN stripe_unit           bigint   NOT NULL DEFAULT 0,
    ADD COLUMN stripe_count          bigint   NOT NULL DEFAULT 0,
    ADD COLUMN block_name_prefix     text     NOT NULL DEFAULT '',
    ADD COLUMN snapshot_limit        bigint,
    ADD COLUMN snapshot_count        integer  NOT NULL DEFAULT 0,
    ADD COLUMN create_timestamp      timestamptz,
    ADD COLUMN modify_timestamp      timestamptz,
    ADD COLUMN access_timestamp      timestamptz,
    ADD COLUMN parent_pool_id        bigint,
    ADD COLUMN parent_pool_name      text,
    ADD COLUMN parent_namespace      text,
    ADD COLUMN parent_image_id       text,
    ADD COLUMN parent_image_name     text,
    ADD COLUMN parent_snap_id        bigint,
    ADD COLUMN parent_snap_name      text,
    ADD COLUMN parent_in_trash       boolean,
    ADD COLUMN parent_overlap_bytes  bigint,
    ADD COLUMN group_pool_id         bigint,
    ADD COLUMN group_name            text,
    ADD COLUMN migration_state       text,
    ADD COLUMN migration             jsonb,
    ADD COLUMN mirror_mode           text,
    ADD COLUMN mirror_state          text,
    ADD COLUMN mirror_global_id      text,
    ADD COLUMN mirror_primary        boolean,
    ADD COLUMN config_overrides      jsonb    NOT NULL DEFAULT '{}',
    ADD COLUMN used_bytes            bigint,
    ADD COLUMN used_unknown_reason   text,
    ADD COLUMN watchers              jsonb    NOT NULL DEFAULT '[]',
    ADD COLUMN lockers               jsonb    NOT NULL DEFAULT '[]',
    ADD COLUMN lock_type             text,
    ADD COLUMN stale_error           text,
    ADD COLUMN stale_since           timestamptz,
    ADD CONSTRAINT images_used_known_or_explained
        CHECK ((used_bytes IS NULL) = (used_unknown_reason IS NOT NULL)),
    ADD CONSTRAINT images_stale_has_time CHECK ((stale_error IS NULL) = (stale_since IS NULL));
ALTER TABLE rbdsync.images
    ALTER COLUMN format DROP DEFAULT,
    ALTER COLUMN object_order DROP DEFAULT,
    ALTER COLUMN object_count DROP DEFAULT,
    ALTER COLUMN op_features DROP DEFAULT,
    ALTER COLUMN op_feature_names DROP DEFAULT,
    ALTER COLUMN flags DROP DEFAULT,
    ALTER COLUMN flag_names DROP DEFAULT,
    ALTER COLUMN stripe_unit DROP DEFAULT,
    ALTER COLUMN stripe_count DROP DEFAULT,
    ALTER COLUMN block_name_prefix DROP DEFAULT,
    ALTER COLUMN snapshot_count DROP DEFAULT,
    ALTER COLUMN config_overrides DROP DEFAULT,
    ALTER COLUMN watchers DROP DEFAULT,
    ALTER COLUMN lockers DROP DEFAULT;
-- Rows stored before this migration have no usage yet.
UPDATE rbdsync.images SET used_unknown_reason = 'not read yet';

-- "Clones of this image": the console looks children up by their parent.
CREATE INDEX images_by_parent ON rbdsync.images (fsid, parent_pool_id, parent_namespace, parent_image_id)
    WHERE parent_image_id IS NOT NULL;

CREATE TABLE rbdsync.snapshots (
    fsid                uuid    NOT NULL,
    pool_id             bigint  NOT NULL,
    namespace           text    NOT NULL,
    image_id            text    NOT NULL,
    snap_id             bigint  NOT NULL,
    name                text    NOT NULL,
    size_bytes          bigint  NOT NULL CHECK (size_bytes >= 0),
    namespace_type      text    NOT NULL,   -- user, group, trash, mirror
    "timestamp"         timestamptz,
    protected           boolean NOT NULL,
    children            integer NOT NULL,
    used_bytes          bigint,            -- changed since the previous snapshot, as `rbd du`
    used_unknown_reason text,
    first_seen_at       timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (fsid, pool_id, namespace, image_id, snap_id),
    FOREIGN KEY (fsid, pool_id, namespace, image_id)
        REFERENCES rbdsync.images (fsid, pool_id, namespace, image_id) ON DELETE CASCADE,
    CONSTRAINT snapshots_used_known_or_explained
        CHECK ((used_bytes IS NULL) = (used_unknown_reason IS NOT NULL))
);

CREATE TABLE rbdsync.trash (
    fsid               uuid   NOT NULL,
    pool_id            bigint NOT NULL,
    namespace          text   NOT NULL,
    image_id           text   NOT NULL,
    name               text   NOT NULL,
    source             text   NOT NULL,   -- user, mirroring, migration, removing, user_parent
    deletion_time      timestamptz NOT NULL,
    deferment_end_time timestamptz NOT NULL,
    first_seen_at      timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (fsid, pool_id, namespace, image_id),
    FOREIGN KEY (fsid, pool_id) REFERENCES rbdsync.pools (fsid, pool_id) ON DELETE CASCADE
);

-- A run that committed but kept some unreadable images' old rows is 'partial'.
ALTER TABLE rbdsync.runs DROP CONSTRAINT runs_status_check;
ALTER TABLE rbdsync.runs ADD CONSTRAINT runs_status_check
    CHECK (status IN ('running', 'succeeded', 'partial', 'failed', 'interrupted', 'abandoned'));
ALTER TABLE rbdsync.runs
    ADD COLUMN stale        integer,
    ADD COLUMN stale_images jsonb,   -- [{"path", "image_id", "error"}]
    ADD COLUMN counts       jsonb;   -- {"images": {"added", "changed", "removed", "unchanged"}, ...}
