-- Views with one-column keys, for ORMs that cannot map a composite key (Django 3.2).
--
-- See docs/schema.md, "Views with one-column keys".
--
-- Each view is its table's rows unchanged plus text keys built from the composite ones:
-- row_key for the row itself, and the key of the row it belongs to (pool_key,
-- image_key) or descends from (parent_key). A key is the JSON array of the key
-- columns, as text: ["<fsid>", <pool_id>, "<namespace>", "<image_id>"], unique and
-- equal wherever the same row is meant. Filter on the tables' own columns (fsid,
-- pool_id, ...), which reach the tables' indexes; the keys are for joining.
--
-- The views list the tables' columns as they are now: a later migration that adds a
-- column the views should show recreates them (and one that drops a column must).

CREATE VIEW rbdsync.console_pools AS
SELECT jsonb_build_array(p.fsid, p.pool_id)::text AS row_key, p.*
FROM rbdsync.pools AS p;

CREATE VIEW rbdsync.console_images AS
SELECT jsonb_build_array(i.fsid, i.pool_id, i.namespace, i.image_id)::text AS row_key,
       jsonb_build_array(i.fsid, i.pool_id)::text AS pool_key,
       CASE WHEN i.parent_image_id IS NOT NULL THEN
           jsonb_build_array(i.fsid, i.parent_pool_id, i.parent_namespace, i.parent_image_id)::text
       END AS parent_key,
       i.*
FROM rbdsync.images AS i;

CREATE VIEW rbdsync.console_snapshots AS
SELECT jsonb_build_array(s.fsid, s.pool_id, s.namespace, s.image_id, s.snap_id)::text AS row_key,
       jsonb_build_array(s.fsid, s.pool_id, s.namespace, s.image_id)::text AS image_key,
       s.*
FROM rbdsync.snapshots AS s;

CREATE VIEW rbdsync.console_trash AS
SELECT jsonb_build_array(t.fsid, t.pool_id, t.namespace, t.image_id)::text AS row_key,
       jsonb_build_array(t.fsid, t.pool_id)::text AS pool_key,
       t.*
FROM rbdsync.trash AS t;
