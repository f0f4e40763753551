-- Names of any bytes, and images never read (issue #19). See docs/schema.md, "Names of
-- any bytes" and "Unreadable images".
--
-- Every text that comes from Ceph is stored as display text: valid UTF-8, unchanged
-- when the bytes were valid UTF-8 without a NUL, otherwise escaped (backslashes
-- doubled, every invalid byte and NUL as \xHH). Names also keep their exact bytes in
-- name_bytes, which is NULL when the name needed no escape.
ALTER TABLE rbdsync.pools ADD COLUMN name_bytes bytea;
ALTER TABLE rbdsync.namespaces ADD COLUMN name_bytes bytea;
ALTER TABLE rbdsync.images
    ADD COLUMN name_bytes bytea,
    ADD COLUMN group_name_bytes bytea;
ALTER TABLE rbdsync.snapshots ADD COLUMN name_bytes bytea;
ALTER TABLE rbdsync.trash ADD COLUMN name_bytes bytea;

-- An image that could not be read on its very first sync still gets a row, with what
-- the listing knew (pool, namespace, id, name) and stale_error: everything read from
-- its header is NULL until a sync reads it.
ALTER TABLE rbdsync.images
    ALTER COLUMN format DROP NOT NULL,
    ALTER COLUMN size_bytes DROP NOT NULL,
    ALTER COLUMN object_size DROP NOT NULL,
    ALTER COLUMN object_order DROP NOT NULL,
    ALTER COLUMN object_count DROP NOT NULL,
    ALTER COLUMN features DROP NOT NULL,
    ALTER COLUMN feature_names DROP NOT NULL,
    ALTER COLUMN op_features DROP NOT NULL,
    ALTER COLUMN op_feature_names DROP NOT NULL,
    ALTER COLUMN flags DROP NOT NULL,
    ALTER COLUMN flag_names DROP NOT NULL,
    ALTER COLUMN stripe_unit DROP NOT NULL,
    ALTER COLUMN stripe_count DROP NOT NULL,
    ALTER COLUMN block_name_prefix DROP NOT NULL,
    ALTER COLUMN snapshot_count DROP NOT NULL,
    ALTER COLUMN config_overrides DROP NOT NULL,
    ALTER COLUMN watchers DROP NOT NULL,
    ALTER COLUMN lockers DROP NOT NULL,
    ADD CONSTRAINT images_read_or_unreadable
        CHECK (stale_error IS NOT NULL OR (format IS NOT NULL AND size_bytes IS NOT NULL
               AND object_size IS NOT NULL AND features IS NOT NULL));
