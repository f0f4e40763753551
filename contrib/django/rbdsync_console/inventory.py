"""What the block-storage page and an image's page show, each in a handful of queries.
The pool cards and the unfiltered count read what the sync wrote with each pool's
history row; only a search, a filter by state and the unindexed sorts read the
images."""
import datetime
from collections import defaultdict

from django.db import connections

from . import conf
from .image_list import matching, page_of
from .models import Cluster, ClusterUsage, Image, Pool, PoolUsage, Run, Snapshot, TrashEntry


def namespace_names():
    """The names of every pool's namespaces, for the list's filter (a short list: RBD
    namespaces are made by hand or per tenant)."""
    with connections[conf.get("DATABASE")].cursor() as cursor:
        cursor.execute("SELECT DISTINCT name FROM rbdsync.namespaces ORDER BY name")
        return [row[0] for row in cursor.fetchall()]


def pool_charts(pools, last_committed):
    """Per pool, the points of its usage chart and its latest history row.

    The points: one per history row, each holding until the next, and one more at the
    end of the last committed run (the figures still held then). Times in milliseconds
    since the epoch, for Chart.js. The latest row holds what the pool cards show of the
    pool's images (counts, provisioned and used bytes), which the sync wrote with it:
    no page load aggregates the images."""
    wanted = {(str(p.fsid), p.pool_id) for p in pools}
    series = defaultdict(list)
    latest = {}
    history = PoolUsage.objects.filter(fsid__in={p.fsid for p in pools},
                                       pool_id__in={p.pool_id for p in pools})
    for row in history.order_by("recorded_at", "id"):
        key = (str(row.fsid), row.pool_id)
        if key in wanted:
            latest[key] = row
            series[key].append({
                "t": int(row.recorded_at.timestamp() * 1000),
                "stored": row.stored_bytes, "used": row.used_bytes,
                "max_avail": row.max_avail_bytes, "provisioned": row.provisioned_bytes,
            })
    for (fsid, _), points in series.items():
        ended_at = last_committed.get(fsid)
        if ended_at and int(ended_at.timestamp() * 1000) > points[-1]["t"]:
            points.append({**points[-1], "t": int(ended_at.timestamp() * 1000)})
    return series, latest


def page_context(state):
    """The template context of the page and of its refreshable part, for the image list
    the ListState `state` describes."""
    clusters = {str(c.fsid): c for c in Cluster.objects.all()}
    pools = list(Pool.objects.order_by("name", "fsid", "pool_id"))
    pools_by_key = {(str(p.fsid), p.pool_id): p for p in pools}
    runs = list(Run.objects.order_by("-started_at")[:conf.get("RUNS_SHOWN")])
    last_committed = {}
    history_days = {}
    for run in (Run.objects.filter(status__in=Run.ENDED_COMMITTED)
                .order_by("fsid", "-ended_at").distinct("fsid")):
        last_committed[str(run.fsid)] = run.ended_at
        history_days[str(run.fsid)] = run.history_days

    totals = {usage.run_id: usage
              for usage in ClusterUsage.objects.filter(run__in=[run.run_id for run in runs])}

    charts, latest = pool_charts(pools, last_committed)
    cards = []
    for index, pool in enumerate(pools):
        key = (str(pool.fsid), pool.pool_id)
        points = charts.get(key, [])
        cards.append({
            "pool": pool,
            "cluster": clusters.get(key[0]),
            # What the cluster's last committed run kept: None before it was recorded.
            "history_days": history_days.get(key[0]),
            "stats": latest.get(key),
            "chart_id": f"usage-{index}",
            "chart": {"pool": pool.name, "points": points},
            # The span the chart holds: from its first row (older ones were pruned).
            "chart_since": (datetime.datetime.fromtimestamp(points[0]["t"] / 1000,
                                                            tz=datetime.timezone.utc)
                            if points else None),
        })

    page = page_of(state, conf.get("IMAGES_PER_PAGE"))
    rows = [{"image": image, "pool": pools_by_key.get((str(image.fsid), image.pool_id)),
             "data_pool": pools_by_key.get((str(image.fsid), image.data_pool_id))}
            for image in page.images]

    return {
        "several_clusters": len(clusters) > 1,
        "clusters": clusters,
        "pools": pools,
        "pool_cards": cards,
        "list": state,
        "image_rows": rows,
        # One pool's name is not repeated on every row; a pool id of several clusters is.
        "show_pool": state.pool is None or (state.cluster is None and len(clusters) > 1),
        "image_page": page,
        "matching": images_matching(state, cards),
        "namespaces": namespace_names(),
        "stale_count": sum(card["stats"].stale_images or 0 for card in cards if card["stats"]),
        "trash": list(TrashEntry.objects.select_related("pool_row")
                      .order_by("-deletion_time")[:conf.get("TRASH_SHOWN")]),
        "last_run": runs[0] if runs else None,
        "runs": [{"run": run, "totals": totals.get(run.run_id)} for run in runs],
        "inventory_as_of": max(last_committed.values()) if last_committed else None,
    }


def images_matching(state, cards):
    """How many images the list holds: unfiltered, the sum of the pools' counts the sync
    wrote with their latest history rows (no page load counts the images); else, or when
    a pool has no such row yet, counted."""
    if not state.filtered and all(card["stats"] for card in cards):
        return sum(card["stats"].images for card in cards)
    return matching(state).count()


# How far up the page follows a clone's parents: RBD allows deep chains, the page a few.
PARENT_CHAIN_SHOWN = 16
# A golden image may have thousands of clones; the page lists the first few hundred.
CLONES_SHOWN = 500


def of_image(image):
    """The filter of rows keyed like `image`, on the tables' own (indexed) columns: the
    views' text keys are computed and reach no index."""
    return {"fsid": image.fsid, "pool_id": image.pool_id, "namespace": image.namespace,
            "image_id": image.image_id}


def image_by_key(fsid, pool_id, namespace, image_id):
    """The image of that primary key, or None."""
    return Image.objects.filter(fsid=fsid, pool_id=pool_id, namespace=namespace,
                                image_id=image_id).first()


def image_context(fsid, pool_id, namespace, image_id):
    """The image page: every stored field, its snapshots, its parents up the chain, its
    clones, and the trash entry of its id. None when there is no such image."""
    image = image_by_key(fsid, pool_id, namespace, image_id)
    if image is None:
        return None
    pools = {p.pool_id: p for p in Pool.objects.filter(fsid=fsid)}
    chain = []
    current = image
    while current.parent_image_id and len(chain) < PARENT_CHAIN_SHOWN:
        parent = image_by_key(fsid, current.parent_pool_id, current.parent_namespace or "",
                              current.parent_image_id)
        chain.append({"child": current, "image": parent})
        if parent is None:  # in the trash, or in a pool this client cannot read
            break
        current = parent
    clones = (Image.objects.filter(fsid=fsid, parent_pool_id=pool_id, parent_namespace=namespace,
                                   parent_image_id=image_id)
              .order_by("pool_id", "namespace", "name", "image_id")[:CLONES_SHOWN])
    clones = [{"image": clone, "pool": pools.get(clone.pool_id)} for clone in clones]
    return {
        "image": image,
        "pool": pools.get(image.pool_id),
        "data_pool": pools.get(image.data_pool_id),
        "group_pool": pools.get(image.group_pool_id),
        "pools": pools,
        "cluster": Cluster.objects.filter(fsid=fsid).first(),
        "snapshots": list(Snapshot.objects.filter(**of_image(image)).order_by("snap_id")),
        "parents": chain,
        "clones": clones,
        "trash": list(TrashEntry.objects.filter(**of_image(image))),
    }
