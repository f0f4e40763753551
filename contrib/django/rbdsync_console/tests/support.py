"""Helpers of the app's tests: inventory rows written the way rbd-sync writes them (the
models refuse to write), the environment's services, a lock held like another sync's."""
import contextlib
import datetime
import fcntl
import os
import tempfile
import time
import uuid
from pathlib import Path

import psycopg2
from django.contrib.auth.models import Permission, User
from django.db import connections
from django.test import TestCase
from django.urls import reverse
from django.utils import timezone

from .. import conf
from ..dbsettings import conninfo_from_database

FSID = "0bbd9a41-0000-4000-8000-000000000001"
MIB = 1 << 20
GIB = 1 << 30


def source_path(*parts):
    """A file of the rbd-sync checkout under test (RBDSYNC_TEST_SOURCE_DIR): the tests run
    against the app installed from its wheel, which holds only the app."""
    return Path(required_env("RBDSYNC_TEST_SOURCE_DIR"), *parts)


def required_env(name):
    """A variable scripts/test.sh exports; missing, the test fails (it never skips)."""
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run the tests through ./scripts/test.sh, which "
                           "starts the throwaway Ceph cluster and PostgreSQL server")
    return value


def execute(statement, params=()):
    with connections[conf.get("DATABASE")].cursor() as cursor:
        cursor.execute(statement, params)


def add_cluster(fsid=FSID, name="ceph"):
    execute("INSERT INTO rbdsync.clusters (fsid, name) VALUES (%s, %s)", (fsid, name))


def add_pool(pool_id, name, stored=0, used=0, max_avail=0, fsid=FSID):
    execute("INSERT INTO rbdsync.pools (fsid, pool_id, name, pool_type, replica_size, min_size, "
            "pg_num, stored_bytes, objects, used_bytes, max_avail_bytes, mirror_mode) VALUES "
            "(%s, %s, %s, 'replicated', 3, 2, 32, %s, 10, %s, %s, 'disabled')",
            (fsid, pool_id, name, stored, used, max_avail))


def add_image(pool_id, name, image_id, size, used=None, reason="fast-diff disabled",
              parent=None, snapshot_count=0, stale_error=None, namespace="", fsid=FSID,
              **columns):
    """parent: (pool id, pool name, image id, image name, snap id, snap name). columns:
    more columns of rbdsync.images and their values (JSON columns as JSON text)."""
    parent = parent or (None,) * 6
    extra = "".join(f", {column}" for column in columns)
    execute(
        "INSERT INTO rbdsync.images (fsid, pool_id, namespace, image_id, name, format, "
        "size_bytes, object_size, features, feature_names, snapshot_count, used_bytes, "
        "used_unknown_reason, parent_pool_id, parent_pool_name, parent_namespace, "
        "parent_image_id, parent_image_name, parent_snap_id, parent_snap_name, stale_error, "
        "stale_since" + extra + ") VALUES (%s, %s, %s, %s, %s, 2, %s, 4194304, 1, '{layering}', "
        "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s" + ", %s" * len(columns) + ")",
        (fsid, pool_id, namespace, image_id, name, size, snapshot_count, used,
         None if used is not None else reason, parent[0], parent[1],
         "" if parent[0] is not None else None, parent[2], parent[3], parent[4], parent[5],
         stale_error, timezone.now() if stale_error else None, *columns.values()))


def add_snapshot(pool_id, image_id, snap_id, name, size, protected=False, children=0,
                 namespace="", fsid=FSID):
    execute("INSERT INTO rbdsync.snapshots (fsid, pool_id, namespace, image_id, snap_id, name, "
            "size_bytes, namespace_type, \"timestamp\", protected, children, used_unknown_reason) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, 'user', now(), %s, %s, 'fast-diff disabled')",
            (fsid, pool_id, namespace, image_id, snap_id, name, size, protected, children))


def add_trash(pool_id, image_id, name, fsid=FSID):
    execute("INSERT INTO rbdsync.trash (fsid, pool_id, namespace, image_id, name, source, "
            "deletion_time, deferment_end_time) VALUES (%s, %s, '', %s, %s, 'user', now(), now())",
            (fsid, pool_id, image_id, name))


def add_run(status="succeeded", trigger="cron", images=None, started=None, fsid=FSID,
            phase=None, done=None, total=None, error=None, history_days=None,
            requested_by=None):
    """A row of rbdsync.runs; returns its run id."""
    run_id = str(uuid.uuid4())
    started = started or timezone.now()
    ended = None if status == "running" else started + datetime.timedelta(seconds=2)
    counts = (images, images, 0, 0) if status in ("succeeded", "partial") else (None,) * 4
    execute("INSERT INTO rbdsync.runs (run_id, fsid, trigger, requested_by, host, pid, started_at, "
            "ended_at, status, phase, done, total, images, added, changed, removed, error, "
            "duration_seconds, history_days) VALUES (%s, %s, %s, %s, 'web-1', 4242, %s, %s, %s, "
            "%s, %s, %s, %s, %s, %s, %s, %s, 2.0, %s)",
            (run_id, fsid, trigger, requested_by, started, ended, status, phase, done, total,
             *counts, error, history_days))
    return run_id


def add_pool_usage(pool_id, run_id, recorded_at, stored, used, max_avail, images, provisioned,
                   images_used=None, usage_unknown=None, stale=None, fsid=FSID):
    execute("INSERT INTO rbdsync.pool_usage_history (fsid, pool_id, run_id, recorded_at, "
            "stored_bytes, objects, used_bytes, max_avail_bytes, images, provisioned_bytes, "
            "images_used_bytes, images_usage_unknown, stale_images) "
            "VALUES (%s, %s, %s, %s, %s, 1, %s, %s, %s, %s, %s, %s, %s)",
            (fsid, pool_id, run_id, recorded_at, stored, used, max_avail, images, provisioned,
             images_used, usage_unknown, stale))


def wipe_inventory():
    """Removes what real syncs committed (tests that run rbd-sync cannot roll it back)."""
    execute("TRUNCATE rbdsync.clusters, rbdsync.pools, rbdsync.namespaces, rbdsync.images, "
            "rbdsync.snapshots, rbdsync.trash, rbdsync.runs, rbdsync.pool_usage_history, "
            "rbdsync.cluster_usage_history")


@contextlib.contextmanager
def images_table_locked():
    """A session of the test's own holding rbdsync.images exclusively, as a long report
    query on the console could, until the block ends (the session closes, rolling back):
    a run is held in its write phase by the lock itself, never by a sleep."""
    blocker = psycopg2.connect(
        conninfo_from_database(connections[conf.get("DATABASE")].settings_dict))
    try:
        with blocker.cursor() as cursor:
            cursor.execute("LOCK TABLE rbdsync.images IN EXCLUSIVE MODE")
        yield
    finally:
        blocker.close()


class HeldLock:
    """The lock file held as another sync would hold it (flock, as rbd-sync and flock(1)
    take it): rbd-sync then answers 75 naming this process."""

    def __init__(self, path):
        self.file = open(path, "a")  # pylint: disable=consider-using-with
        fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def release(self):
        self.file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


class HeldClaim:
    """The cluster claim held as a running rbd-sync holds it (db/run_history.cpp: a
    session-level advisory lock keyed by the fsid), in the console's own session, so that
    a row `running` reads as a run that is alive. EndToEnd checks the key against the
    real binary."""

    STATEMENT = ("SELECT pg_catalog.{}(pg_catalog.hashtextextended('rbd-sync:' || %s, 0))")

    def __init__(self, fsid=FSID):
        self.fsid = fsid
        execute(self.STATEMENT.format("pg_advisory_lock"), (fsid,))

    def release(self):
        execute(self.STATEMENT.format("pg_advisory_unlock"), (self.fsid,))


def lock_dir():
    """A fresh directory for a test's lock file (and rbd-sync's detached.log)."""
    return tempfile.TemporaryDirectory(prefix="rbdsync-console-test.")


def wait_until(what, condition, seconds=60, interval=0.1):
    """Polls `condition` until it returns something true, or fails after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds}s for {what}")
        time.sleep(interval)


def process_gone(pid):
    """True once `pid` has exited (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


def permission(codename):
    return Permission.objects.filter(content_type__app_label="rbdsync_console",
                                     codename=codename)


class ViewerTestCase(TestCase):
    """Signed in as a user who may see the inventory (and nothing more), over one
    cluster and the pools of POOLS ((id, name), no figures)."""
    POOLS = ()

    @classmethod
    def setUpTestData(cls):
        cls.user = User.objects.create_user("viewer", password="pw")
        cls.user.user_permissions.add(*permission("view_inventory"))
        add_cluster()
        for pool_id, name in cls.POOLS:
            add_pool(pool_id, name)

    def setUp(self):
        self.client.force_login(self.user)

    def page(self, **query):
        """The block-storage page for `query`, which must answer 200."""
        response = self.client.get(reverse("rbdsync_console:block_storage"), query)
        self.assertEqual(response.status_code, 200)
        return response
