"""Read-only models over the schema rbd-sync writes (docs/schema.md).

Django never migrates these tables (managed = False): `rbd-sync migrate` does. Tables
with a composite key are read through the views of sql/007_console_views.sql, which add
one-column text keys (row_key, and pool_key / image_key / parent_key to join on).
Every model reads through the database alias RBDSYNC_CONSOLE["DATABASE"], and refuses
to write: only rbd-sync writes the inventory.
"""
from django.contrib.postgres.fields import ArrayField
from django.db import NotSupportedError, connections, models

from . import conf

READ_ONLY = "the rbdsync schema is written by rbd-sync only; the console reads it"


class ReadOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise NotSupportedError(READ_ONLY)

    def delete(self):
        raise NotSupportedError(READ_ONLY)

    def bulk_create(self, *args, **kwargs):
        raise NotSupportedError(READ_ONLY)

    def bulk_update(self, *args, **kwargs):
        raise NotSupportedError(READ_ONLY)


class InventoryManager(models.Manager.from_queryset(ReadOnlyQuerySet)):
    """Reads from the alias RBDSYNC_CONSOLE["DATABASE"], whatever the routers say."""

    def get_queryset(self):
        return super().get_queryset().using(conf.get("DATABASE"))


class ReadOnlyModel(models.Model):
    objects = InventoryManager()

    class Meta:
        abstract = True
        managed = False
        default_permissions = ()

    def save(self, *args, **kwargs):
        raise NotSupportedError(READ_ONLY)

    def delete(self, *args, **kwargs):
        raise NotSupportedError(READ_ONLY)


def table(name):
    """db_table for rbdsync.<name>: Django quotes it as "rbdsync"."<name>"."""
    return f'rbdsync"."{name}'


class Cluster(ReadOnlyModel):
    fsid = models.UUIDField(primary_key=True)
    name = models.TextField()
    first_synced_at = models.DateTimeField()

    class Meta(ReadOnlyModel.Meta):
        db_table = table("clusters")
        ordering = ["name", "fsid"]

    def __str__(self):
        return self.name


class Pool(ReadOnlyModel):
    row_key = models.TextField(primary_key=True)
    fsid = models.UUIDField()
    pool_id = models.BigIntegerField()
    name = models.TextField()
    pool_type = models.TextField()
    replica_size = models.BigIntegerField()
    min_size = models.BigIntegerField()
    pg_num = models.BigIntegerField()
    stored_bytes = models.BigIntegerField()
    objects_count = models.BigIntegerField(db_column="objects")
    used_bytes = models.BigIntegerField()
    max_avail_bytes = models.BigIntegerField()
    mirror_mode = models.TextField()
    first_seen_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta(ReadOnlyModel.Meta):
        db_table = table("console_pools")
        ordering = ["name", "fsid", "pool_id"]

    def __str__(self):
        return self.name

    @property
    def capacity_bytes(self):
        """What the pool could hold: stored plus what can still be written (ceph df)."""
        return self.stored_bytes + self.max_avail_bytes

    @property
    def stored_percent(self):
        """ceph df's %USED, in user bytes; None for a pool without figures (no mgr)."""
        if not self.capacity_bytes:
            return None
        return 100.0 * self.stored_bytes / self.capacity_bytes


class Image(ReadOnlyModel):
    row_key = models.TextField(primary_key=True)
    # Relations are named *_row: pool_id, image_id are the tables' own columns.
    pool_row = models.ForeignKey(Pool, models.DO_NOTHING, db_column="pool_key",
                                 db_constraint=False, related_name="images")
    parent = models.ForeignKey("self", models.DO_NOTHING, db_column="parent_key", null=True,
                               db_constraint=False, related_name="clones")
    fsid = models.UUIDField()
    pool_id = models.BigIntegerField()
    namespace = models.TextField()
    image_id = models.TextField()
    name = models.TextField()
    name_bytes = models.BinaryField(null=True)  # the exact bytes, when name is escaped
    format = models.SmallIntegerField(null=True)
    size_bytes = models.BigIntegerField(null=True)
    object_size = models.BigIntegerField(null=True)
    object_order = models.SmallIntegerField(null=True)
    object_count = models.BigIntegerField(null=True)
    features = models.BigIntegerField(null=True)
    feature_names = ArrayField(models.TextField(), null=True)
    op_features = models.BigIntegerField(null=True)
    op_feature_names = ArrayField(models.TextField(), null=True)
    flags = models.BigIntegerField(null=True)
    flag_names = ArrayField(models.TextField(), null=True)
    data_pool_id = models.BigIntegerField(null=True)
    stripe_unit = models.BigIntegerField(null=True)
    stripe_count = models.BigIntegerField(null=True)
    block_name_prefix = models.TextField(null=True)
    snapshot_limit = models.BigIntegerField(null=True)
    snapshot_count = models.IntegerField(null=True)
    create_timestamp = models.DateTimeField(null=True)
    modify_timestamp = models.DateTimeField(null=True)
    access_timestamp = models.DateTimeField(null=True)
    parent_pool_id = models.BigIntegerField(null=True)
    parent_pool_name = models.TextField(null=True)
    parent_namespace = models.TextField(null=True)
    parent_image_id = models.TextField(null=True)
    parent_image_name = models.TextField(null=True)
    parent_snap_id = models.BigIntegerField(null=True)
    parent_snap_name = models.TextField(null=True)
    parent_in_trash = models.BooleanField(null=True)
    parent_overlap_bytes = models.BigIntegerField(null=True)
    parent_unknown_reason = models.TextField(null=True)
    group_pool_id = models.BigIntegerField(null=True)
    group_name = models.TextField(null=True)
    group_unknown_reason = models.TextField(null=True)
    migration_state = models.TextField(null=True)
    migration = models.JSONField(null=True)
    mirror_mode = models.TextField(null=True)
    mirror_state = models.TextField(null=True)
    mirror_global_id = models.TextField(null=True)
    mirror_primary = models.BooleanField(null=True)
    config_overrides = models.JSONField(null=True)
    used_bytes = models.BigIntegerField(null=True)
    used_unknown_reason = models.TextField(null=True)
    watchers = models.JSONField(null=True)
    lockers = models.JSONField(null=True)
    lock_type = models.TextField(null=True)
    stale_error = models.TextField(null=True)
    stale_since = models.DateTimeField(null=True)
    first_seen_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta(ReadOnlyModel.Meta):
        db_table = table("console_images")
        ordering = ["fsid", "pool_id", "namespace", "name"]

    def __str__(self):
        return self.path

    @property
    def path(self):
        """namespace/name within its pool, as `rbd` spells it."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def used_percent(self):
        """Used of provisioned; None when either is unknown."""
        if self.used_bytes is None or not self.size_bytes:
            return None
        return 100.0 * self.used_bytes / self.size_bytes

    @property
    def parent_path(self):
        """pool/[namespace/]image@snapshot of a clone's parent; ids where the syncing
        client could not read the names."""
        if not self.parent_image_id:
            return None
        pool = self.parent_pool_name or self.parent_pool_id
        namespace = f"{self.parent_namespace}/" if self.parent_namespace else ""
        image = self.parent_image_name or f"id {self.parent_image_id}"
        return f"{pool}/{namespace}{image}@{self.parent_snap_name or self.parent_snap_id}"

    @property
    def in_use(self):
        return bool(self.watchers)

    @property
    def qos(self):
        """The QoS options set on the image itself (rbd_qos_*), as (option, value)."""
        return sorted((key, value) for key, value in (self.config_overrides or {}).items()
                      if key.startswith("rbd_qos_"))

    @property
    def other_overrides(self):
        return sorted((key, value) for key, value in (self.config_overrides or {}).items()
                      if not key.startswith("rbd_qos_"))

    @property
    def lock_owners(self):
        """Who holds the header lock: each locker's entity name (client.4247)."""
        return [locker.get("locker", "?") for locker in self.lockers or []]

    @property
    def mirroring(self):
        """"snapshot, enabled, primary"; None when mirroring is off for the image."""
        if not self.mirror_mode:
            return None
        role = {True: "primary", False: "non-primary"}.get(self.mirror_primary)
        return ", ".join(part for part in (self.mirror_mode, self.mirror_state, role) if part)


class Snapshot(ReadOnlyModel):
    row_key = models.TextField(primary_key=True)
    image_row = models.ForeignKey(Image, models.DO_NOTHING, db_column="image_key",
                                  db_constraint=False, related_name="snapshots")
    fsid = models.UUIDField()
    pool_id = models.BigIntegerField()
    namespace = models.TextField()
    image_id = models.TextField()
    snap_id = models.BigIntegerField()
    name = models.TextField()
    namespace_type = models.TextField()
    size_bytes = models.BigIntegerField()
    timestamp = models.DateTimeField(null=True)
    protected = models.BooleanField()
    children = models.IntegerField(null=True)
    children_unknown_reason = models.TextField(null=True)
    used_bytes = models.BigIntegerField(null=True)
    used_unknown_reason = models.TextField(null=True)

    class Meta(ReadOnlyModel.Meta):
        db_table = table("console_snapshots")
        ordering = ["fsid", "pool_id", "namespace", "image_id", "snap_id"]

    def __str__(self):
        return self.name


class TrashEntry(ReadOnlyModel):
    row_key = models.TextField(primary_key=True)
    pool_row = models.ForeignKey(Pool, models.DO_NOTHING, db_column="pool_key",
                                 db_constraint=False, related_name="trash")
    fsid = models.UUIDField()
    pool_id = models.BigIntegerField()
    namespace = models.TextField()
    image_id = models.TextField()
    name = models.TextField()
    source = models.TextField()
    deletion_time = models.DateTimeField()
    deferment_end_time = models.DateTimeField()

    class Meta(ReadOnlyModel.Meta):
        db_table = table("console_trash")
        ordering = ["-deletion_time"]
        verbose_name_plural = "trash entries"

    def __str__(self):
        return self.name


class Run(ReadOnlyModel):
    RUNNING = "running"
    ENDED_COMMITTED = ("succeeded", "partial")

    run_id = models.UUIDField(primary_key=True)
    fsid = models.UUIDField()
    trigger = models.TextField()
    requested_by = models.TextField(null=True)  # who pressed "Sync now" (010)
    host = models.TextField()
    pid = models.IntegerField()
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True)
    status = models.TextField()
    phase = models.TextField(null=True)
    done = models.BigIntegerField(null=True)
    total = models.BigIntegerField(null=True)
    pools = models.IntegerField(null=True)
    images = models.IntegerField(null=True)
    added = models.IntegerField(null=True)
    changed = models.IntegerField(null=True)
    removed = models.IntegerField(null=True)
    skipped = models.IntegerField(null=True)
    stale = models.IntegerField(null=True)
    stale_images = models.JSONField(null=True)
    counts = models.JSONField(null=True)
    unreadable_pools = models.JSONField(null=True)
    exit_code = models.IntegerField(null=True)
    error = models.TextField(null=True)
    duration_seconds = models.FloatField(null=True)
    history_days = models.IntegerField(null=True)  # --history-days it pruned with (009)

    class Meta(ReadOnlyModel.Meta):
        db_table = table("runs")
        ordering = ["-started_at"]
        permissions = [("sync_now", "Can start a sync of the RBD inventory (Sync now)"),
                       ("view_inventory", "Can see the RBD inventory (block-storage page)")]

    def __str__(self):
        return f"{self.run_id} ({self.status})"

    @property
    def running(self):
        return self.status == self.RUNNING

    @property
    def started_by(self):
        """"web (alice)" for a press of Sync now by alice, "cron" for the schedule."""
        return self.trigger + (f" ({self.requested_by})" if self.requested_by else "")

    def claim_is_free(self):
        """True when no database session holds this run's cluster claim: the session-level
        advisory lock every rbd-sync run takes before it records itself as running and
        lets go of only after it recorded how it ended (db/run_history.cpp). A row still
        `running` while the claim is free belongs to a process that died (killed, its host
        lost); the next sync of the cluster marks it abandoned. The alias must reach the
        primary: a hot standby's pg_locks shows none of the primary's locks."""
        with connections[conf.get("DATABASE")].cursor() as cursor:
            cursor.execute(
                "SELECT NOT EXISTS (SELECT FROM pg_catalog.pg_locks AS l, (SELECT "
                "pg_catalog.hashtextextended('rbd-sync:'::pg_catalog.text || "
                "%s::pg_catalog.text, 0::pg_catalog.int8) AS key) AS k "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
                "AND l.database = (SELECT oid FROM pg_catalog.pg_database "
                "                  WHERE datname = pg_catalog.current_database()) "
                "AND l.classid = ((k.key >> 32) & 4294967295)::pg_catalog.oid "
                "AND l.objid = (k.key & 4294967295)::pg_catalog.oid)", [str(self.fsid)])
            return cursor.fetchone()[0]

    def abandoned(self):
        """True when this row says running but its process is gone: the claim is free and
        the row, read again, still says running (a run records its end before it lets go
        of the claim). Refreshes the row."""
        if not self.running or not self.claim_is_free():
            return False
        self.refresh_from_db()
        return self.running

    @property
    def outcome(self):
        """How the run ended, in one line; None while it runs."""
        if self.running:
            return None
        if self.status in self.ENDED_COMMITTED:
            text = (f"sync {self.status}: {self.images} images, {self.added} added, "
                    f"{self.changed} changed, {self.removed} removed")
            if self.stale:
                text += f", {self.stale} kept stale"
            return text
        return f"sync {self.status}" + (f": {self.error}" if self.error else "")


class PoolUsage(ReadOnlyModel):
    """A pool's figures from the run that found them changed (rbdsync.pool_usage_history);
    they hold until the pool's next row."""
    id = models.BigIntegerField(primary_key=True)
    fsid = models.UUIDField()
    pool_id = models.BigIntegerField()
    run = models.ForeignKey(Run, models.DO_NOTHING, db_column="run_id", null=True,
                            db_constraint=False, related_name="pool_usage")
    recorded_at = models.DateTimeField()
    stored_bytes = models.BigIntegerField()
    objects_count = models.BigIntegerField(db_column="objects")
    used_bytes = models.BigIntegerField()
    max_avail_bytes = models.BigIntegerField()
    images = models.IntegerField()
    provisioned_bytes = models.BigIntegerField()
    # Of the pool's images (011); NULL in rows older than that but each pool's latest.
    images_used_bytes = models.BigIntegerField(null=True)
    images_usage_unknown = models.IntegerField(null=True)
    stale_images = models.IntegerField(null=True)

    class Meta(ReadOnlyModel.Meta):
        db_table = table("pool_usage_history")
        ordering = ["fsid", "pool_id", "recorded_at", "id"]


class ClusterUsage(ReadOnlyModel):
    """A cluster's totals from the run that found them changed
    (rbdsync.cluster_usage_history)."""
    id = models.BigIntegerField(primary_key=True)
    fsid = models.UUIDField()
    run = models.ForeignKey(Run, models.DO_NOTHING, db_column="run_id", null=True,
                            db_constraint=False, related_name="cluster_usage")
    recorded_at = models.DateTimeField()
    pools = models.IntegerField()
    images = models.IntegerField()
    snapshots = models.IntegerField()
    trash = models.IntegerField()
    stale_images = models.IntegerField()
    provisioned_bytes = models.BigIntegerField()
    images_used_bytes = models.BigIntegerField()
    images_usage_unknown = models.IntegerField()
    stored_bytes = models.BigIntegerField()
    used_bytes = models.BigIntegerField()
    objects_count = models.BigIntegerField(db_column="objects")

    class Meta(ReadOnlyModel.Meta):
        db_table = table("cluster_usage_history")
        ordering = ["fsid", "recorded_at", "id"]
