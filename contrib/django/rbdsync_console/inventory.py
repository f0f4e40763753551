"""What the block-storage page shows, read from the models in a handful of queries."""
import datetime
from collections import defaultdict

from django.core.paginator import Paginator
from django.db.models import Count, Q, Sum

from . import conf
from .models import Cluster, ClusterUsage, Image, Pool, PoolUsage, Run, Snapshot, TrashEntry


def pool_charts(pools, last_committed):
    """Per pool, the points of its usage chart: one per history row, each holding until
    the next, and one more at the end of the last committed run (the figures still held
    then). Times in milliseconds since the epoch, for Chart.js."""
    wanted = {(str(p.fsid), p.pool_id) for p in pools}
    series = defaultdict(list)
    history = PoolUsage.objects.filter(fsid__in={p.fsid for p in pools},
                                       pool_id__in={p.pool_id for p in pools})
    for row in history.order_by("recorded_at", "id"):
        key = (str(row.fsid), row.pool_id)
        if key in wanted:
            series[key].append({
                "t": int(row.recorded_at.timestamp() * 1000),
                "stored": row.stored_bytes, "used": row.used_bytes,
                "max_avail": row.max_avail_bytes, "provisioned": row.provisioned_bytes,
            })
    for (fsid, _), points in series.items():
        ended_at = last_committed.get(fsid)
        if ended_at and int(ended_at.timestamp() * 1000) > points[-1]["t"]:
            points.append({**points[-1], "t": int(ended_at.timestamp() * 1000)})
    return series


def pool_statistics():
    """Per (fsid, pool_id): images, provisioned and used bytes, usage unknown, stale."""
    rows = (Image.objects.order_by().values("fsid", "pool_id")
            .annotate(images=Count("row_key"), provisioned_bytes=Sum("size_bytes"),
                      images_used_bytes=Sum("used_bytes"),
                      usage_unknown=Count("row_key", filter=Q(used_bytes__isnull=True)),
                      stale=Count("row_key", filter=Q(stale_error__isnull=False))))
    return {(str(row["fsid"]), row["pool_id"]): row for row in rows}


def page_context(pool_filter=None, page_number=1):
    """The template context of the page and of its refreshable part.

    pool_filter: None, or (fsid or None, pool_id) to list one pool's images."""
    clusters = {str(c.fsid): c for c in Cluster.objects.all()}
    pools = list(Pool.objects.order_by("name", "fsid", "pool_id"))
    runs = list(Run.objects.order_by("-started_at")[:conf.get("RUNS_SHOWN")])
    last_committed = {}
    history_days = {}
    for run in (Run.objects.filter(status__in=Run.ENDED_COMMITTED)
                .order_by("fsid", "-ended_at").distinct("fsid")):
        last_committed[str(run.fsid)] = run.ended_at
        history_days[str(run.fsid)] = run.history_days

    totals = {usage.run_id: usage
              for usage in ClusterUsage.objects.filter(run__in=[run.run_id for run in runs])}

    statistics = pool_statistics()
    charts = pool_charts(pools, last_committed)
    cards = []
    for index, pool in enumerate(pools):
        key = (str(pool.fsid), pool.pool_id)
        points = charts.get(key, [])
        cards.append({
            "pool": pool,
            "cluster": clusters.get(key[0]),
            # What the cluster's last committed run kept: None before it was recorded.
            "history_days": history_days.get(key[0]),
            "stats": statistics.get(key, {}),
            "chart_id": f"usage-{index}",
            "chart": {"pool": pool.name, "points": points},
            # The span the chart holds: from its first row (older ones were pruned).
            "chart_since": (datetime.datetime.fromtimestamp(points[0]["t"] / 1000,
                                                            tz=datetime.timezone.utc)
                            if points else None),
        })

    images = Image.objects.select_related("pool_row").order_by(
        "pool_row__name", "fsid", "pool_id", "namespace", "name")
    if pool_filter:
        fsid, pool_id = pool_filter
        images = images.filter(pool_id=pool_id)
        if fsid:
            images = images.filter(fsid=fsid)
    page = Paginator(images, conf.get("IMAGES_PER_PAGE")).get_page(page_number)
    keys = [image.row_key for image in page]
    snapshots = defaultdict(list)
    for snapshot in Snapshot.objects.filter(image_row__in=keys).order_by("snap_id"):
        snapshots[snapshot.image_row_id].append(snapshot)
    clones = defaultdict(list)
    for clone in (Image.objects.filter(parent__in=keys).select_related("pool_row")
                  .order_by("pool_row__name", "namespace", "name")):
        clones[clone.parent_id].append(clone)
    rows = [{"image": image, "snapshots": snapshots.get(image.row_key, []),
             "clones": clones.get(image.row_key, [])} for image in page]

    return {
        "several_clusters": len(clusters) > 1,
        "clusters": clusters,
        "pool_cards": cards,
        "image_rows": rows,
        "page": page,
        "pool_filter": pool_filter,
        "trash": list(TrashEntry.objects.select_related("pool_row")
                      .order_by("-deletion_time")[:conf.get("TRASH_SHOWN")]),
        "stale_images": list(Image.objects.filter(stale_error__isnull=False)
                             .select_related("pool_row").order_by("stale_since")),
        "last_run": runs[0] if runs else None,
        "runs": [{"run": run, "totals": totals.get(run.run_id)} for run in runs],
        "inventory_as_of": max(last_committed.values()) if last_committed else None,
    }
