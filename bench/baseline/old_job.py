#!/usr/bin/python3
"""The inventory job rbd-sync replaces, kept as the benchmark's baseline (bench/scale.sh).

It does what the old cron job did: list each pool's images by name, open each one, read
its size, features, snapshots and parent, and upsert every row into its own table with
one autocommit statement per row. Only Debian's /usr/bin/python3 has python3-rbd and
python3-psycopg2.

    old_job.py --conf CEPH_CONF --id CLIENT --db CONNINFO POOL [POOL ...]

Prints "old_job: images=N snapshots=M seconds=S". Tables: oldjob.images, oldjob.snapshots
(created if missing; the bench empties them before each full run).
"""
import argparse
import sys
import time

import psycopg2
import rados
import rbd

SCHEMA = """
CREATE SCHEMA IF NOT EXISTS oldjob;
CREATE TABLE IF NOT EXISTS oldjob.images (
    pool text NOT NULL, name text NOT NULL, size bigint NOT NULL, features bigint NOT NULL,
    snapshot_count int NOT NULL, parent_pool text, parent_image text, parent_snapshot text,
    synced_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (pool, name));
CREATE TABLE IF NOT EXISTS oldjob.snapshots (
    pool text NOT NULL, image text NOT NULL, name text NOT NULL, snap_id bigint NOT NULL,
    size bigint NOT NULL, PRIMARY KEY (pool, image, name));
"""

UPSERT_IMAGE = """
INSERT INTO oldjob.images (pool, name, size, features, snapshot_count,
                           parent_pool, parent_image, parent_snapshot)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (pool, name) DO UPDATE SET
    size = EXCLUDED.size, features = EXCLUDED.features,
    snapshot_count = EXCLUDED.snapshot_count, parent_pool = EXCLUDED.parent_pool,
    parent_image = EXCLUDED.parent_image, parent_snapshot = EXCLUDED.parent_snapshot,
    synced_at = now()
"""

UPSERT_SNAPSHOT = """
INSERT INTO oldjob.snapshots (pool, image, name, snap_id, size) VALUES (%s, %s, %s, %s, %s)
ON CONFLICT (pool, image, name) DO UPDATE SET snap_id = EXCLUDED.snap_id, size = EXCLUDED.size
"""


def parent_of(image):
    try:
        pool, name, snap = image.parent_info()
        return pool, name, snap
    except rbd.ImageNotFound:
        return None, None, None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--conf", required=True)
    parser.add_argument("--id", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("pools", nargs="+")
    args = parser.parse_args()

    start = time.monotonic()
    db = psycopg2.connect(args.db)
    db.autocommit = True
    cursor = db.cursor()
    cursor.execute(SCHEMA)

    images = snapshots = 0
    with rados.Rados(conffile=args.conf, rados_id=args.id) as cluster:
        for pool in args.pools:
            with cluster.open_ioctx(pool) as ioctx:
                for name in rbd.RBD().list(ioctx):
                    try:
                        with rbd.Image(ioctx, name, read_only=True) as image:
                            size = image.size()
                            features = image.features()
                            snaps = list(image.list_snaps())
                            parent = parent_of(image)
                    except rbd.ImageNotFound:
                        continue
                    cursor.execute(UPSERT_IMAGE,
                                   (pool, name, size, features, len(snaps)) + parent)
                    images += 1
                    for snap in snaps:
                        cursor.execute(UPSERT_SNAPSHOT,
                                       (pool, name, snap["name"], snap["id"], snap["size"]))
                        snapshots += 1
    db.close()
    print("old_job: images=%d snapshots=%d seconds=%.3f"
          % (images, snapshots, time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
