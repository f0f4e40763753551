-- Least-privilege clients (issue #15): values this client may not read are stored as
-- NULL with a reason, never guessed, and a run says which pools it could not read.
-- See docs/schema.md, "Least-privilege clients".
--
-- Every reason written for a value hidden by the client's caps starts with
-- 'not permitted: '.

-- A clone whose parent lives in a pool this client cannot read: the parent's ids, its
-- pool's name and the overlap come from the clone's own header; the parent image's
-- name, its snapshot's name and whether it is in the trash are NULL, and this says why.
ALTER TABLE rbdsync.images
    ADD COLUMN parent_unknown_reason text,
    ADD CONSTRAINT images_parent_unknown_only_for_clones
        CHECK (parent_unknown_reason IS NULL
               OR (parent_image_id IS NOT NULL AND parent_image_name IS NULL
                   AND parent_snap_name IS NULL AND parent_in_trash IS NULL)),
    -- An image in a group whose pool this client cannot read: group_pool_id is known,
    -- group_name is NULL, and this says why.
    ADD COLUMN group_unknown_reason text,
    ADD CONSTRAINT images_group_unknown_only_for_members
        CHECK (group_unknown_reason IS NULL
               OR (group_pool_id IS NOT NULL AND group_name IS NULL));

-- Clones of a snapshot that may live in pools this client cannot read: the count is
-- NULL (librbd lists all of them or none), and this says why.
ALTER TABLE rbdsync.snapshots
    ALTER COLUMN children DROP NOT NULL,
    ADD COLUMN children_unknown_reason text,
    ADD CONSTRAINT snapshots_children_known_or_explained
        CHECK ((children IS NULL) = (children_unknown_reason IS NOT NULL));

-- The rbd pools a run of every pool left out because this client may not read them:
-- [{"pool", "pool_id", "error"}]; NULL when it read every pool it was asked for. Their
-- stored rows were left exactly as they were.
ALTER TABLE rbdsync.runs ADD COLUMN unreadable_pools jsonb;
