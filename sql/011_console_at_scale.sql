-- The console at 100,000 images (issue #37). See docs/schema.md, "Reading the inventory
-- at scale".
--
-- Natural order of names: vol-2 before vol-10, as ICU's numeric ordering ("kn") sorts
-- them. Deterministic (ties broken by the bytes), so it serves btree indexes, equality
-- and LIKE. Its ICU version is recorded; after an upgrade of libicu, PostgreSQL warns
-- until the indexes below are rebuilt (REINDEX, then ALTER COLLATION ... REFRESH
-- VERSION): docs/schema.md says how. Needs PostgreSQL 14 or later built with ICU (as
-- Debian's are), for the collation and the statistics on an expression.
CREATE COLLATION rbdsync.natural_sort (provider = icu, locale = 'und-u-kn-true');

-- The image list's default order, by name, as a btree the page walks from a keyset cursor:
-- the sort key, then the image's primary key, so that equal names still have one order
-- and a page starts exactly after the last row of the one before, wherever it is (no
-- OFFSET). The console spells the expression exactly as here, or the planner cannot match
-- it (rbdsync_console/image_list.py).
--
-- The list's other sorts (size, used, used %, snapshots, created) have no index: each
-- would cost every sync. Usage changes on most images in use every night, and an index
-- on it would make each such UPDATE touch every index of the table instead of none (no
-- HOT update); and each index adds its share to the first sync of a cluster, which this
-- one alone makes 17-23 s longer at 1,000,000 images (docs/performance.md). Those sorts read
-- the table and keep the top of it: some 60 ms at 100,000 images, on any page.
CREATE INDEX images_by_natural_name ON rbdsync.images
    ((name COLLATE rbdsync.natural_sort), fsid, pool_id, namespace, image_id);

-- The stale images, in name order: what an admin looks at first (the pool cards link to
-- them), a few among many. Partial, so it holds only them, and stale_error changes only
-- when an image turns stale or readable again, so other UPDATEs stay HOT.
CREATE INDEX images_stale ON rbdsync.images
    ((name COLLATE rbdsync.natural_sort), fsid, pool_id, namespace, image_id)
    WHERE stale_error IS NOT NULL;

-- The search (lower(name) LIKE '%text%', in the collation above) reads every name: no
-- btree serves a substring. What the planner needs is how many names match, to choose
-- between walking a sort's index until a page is full (a common text) and reading the
-- table and sorting the few matches (a rare one). Statistics on the expression give it
-- that from ANALYZE, with nothing for the sync to maintain.
CREATE STATISTICS rbdsync.images_lower_name ON (lower(name COLLATE rbdsync.natural_sort))
    FROM rbdsync.images;

-- A pool's image figures, so that the pool cards read one row per pool instead of
-- aggregating every image on every page load. rbd-sync writes them with the rest of the
-- pool's row (db/history.cpp): a new row when any figure changed. NULL in rows
-- written before this migration, except each pool's latest row, filled here from the
-- images as the last committed sync left them.
ALTER TABLE rbdsync.pool_usage_history
    ADD COLUMN images_used_bytes    bigint,
    ADD COLUMN images_usage_unknown integer,
    ADD COLUMN stale_images         integer;

UPDATE rbdsync.pool_usage_history AS h
SET images_used_bytes = coalesce(n.images_used_bytes, 0),
    images_usage_unknown = coalesce(n.images_usage_unknown, 0),
    stale_images = coalesce(n.stale_images, 0)
FROM (SELECT DISTINCT ON (fsid, pool_id) id, fsid, pool_id
      FROM rbdsync.pool_usage_history
      ORDER BY fsid, pool_id, recorded_at DESC, id DESC) AS latest
LEFT JOIN (SELECT fsid, pool_id,
                  sum(used_bytes)::bigint AS images_used_bytes,
                  (count(*) FILTER (WHERE used_bytes IS NULL))::integer AS images_usage_unknown,
                  (count(*) FILTER (WHERE stale_error IS NOT NULL))::integer AS stale_images
           FROM rbdsync.images GROUP BY fsid, pool_id) AS n
    ON n.fsid = latest.fsid AND n.pool_id = latest.pool_id
WHERE h.id = latest.id;
