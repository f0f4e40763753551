"""The app's settings: the project's RBDSYNC_CONSOLE dict over these defaults.

In production "Sync now" asks the package's trigger socket (TRIGGER_SOCKET): rbd-sync
runs as its own user, with the writer's password and the cephx key, and the web server
holds neither (docs/web-backend.md). Only the database it reads through (DATABASE, a
read-only role) is then the console's business:

    RBDSYNC_CONSOLE = {"CLUSTER": "ceph"}

With TRIGGER_SOCKET None the console runs `rbd-sync run` itself, as the web server's
user, which then needs the writer's password and a keyring: for development and the
tests (scripts/demo.sh --console), never for a server others can reach.

Read at every use, so override_settings in tests and a changed setting take effect.
"""
from django.conf import settings

DEFAULTS = {
    # The database alias whose connection holds schema rbdsync (the console's models
    # read it). Another alias than Django's own lets the inventory be read by a role
    # that may read nothing else.
    "DATABASE": "default",
    # Where "Sync now" and rbdsync_sync ask rbd-sync to run: rbd-sync-trigger.socket of the
    # package (the web server's user must be in the group rbd-sync-web). None: run the
    # binary directly with the settings below (development and tests only).
    "TRIGGER_SOCKET": "/run/rbd-sync/trigger.sock",
    # On Kubernetes beside Rook (deploy/kubernetes/): "NAMESPACE/NAME" of rbd-sync's
    # CronJob. "Sync now" then creates a Job from it through the API server, as the pod's
    # ServiceAccount (deploy/kubernetes/sync-now-rbac.yaml), and neither the socket nor
    # the binary is used. None: not on Kubernetes.
    "KUBERNETES_CRONJOB": None,
    # The Ceph cluster a sync is asked for (rbd-sync's --cluster: /etc/ceph/NAME.conf).
    "CLUSTER": "ceph",
    # Seconds rbdsync_sync follows a run it asked for through the socket, to report how
    # it ended (a scheduled run's unit allows 2 h).
    "RUN_TIMEOUT": 7200,
    # Direct mode only (TRIGGER_SOCKET None): `rbd-sync run` for the button and the
    # rbdsync_sync command. Every value goes on a command line, which any local user may
    # read: never a password (libpq takes it from PGPASSFILE/.pgpass or a service file;
    # checked at startup).
    "BINARY": "rbd-sync",      # a name in PATH, or an absolute path
    "DB": "service=rbd-sync",  # --db: libpq conninfo of rbd-sync's own role
    "LOCK_FILE": None,         # --lock-file; None: rbd-sync's default
    "CEPH_CONF": None,         # --conf; None: $CEPH_CONF, /etc/ceph/ceph.conf
    "CEPH_ID": None,           # --id; None: client.admin
    "EXTRA_ARGS": [],          # more `rbd-sync run` options, e.g. ["--pool", "rbd"]
    # rbd-sync's environment beyond the few variables it is passed from the web server's
    # (rbd_sync.PASSED_ENVIRONMENT), e.g. {"PGSERVICEFILE": "/etc/rbd-sync/pg_service.conf"}.
    "ENV": {},
    # Seconds "Sync now" waits for rbd-sync's answer (it answers once the run holds
    # the guard: normally well under a second, more when Ceph is slow to connect).
    "ANSWER_TIMEOUT": 120,
    # The page.
    "RUNS_SHOWN": 20,
    "IMAGES_PER_PAGE": 100,
    "TRASH_SHOWN": 200,
    # Debian's libjs-chart.js, served by staticfiles (see the README).
    "CHART_JS": "chart.js/chart.min.js",
}


def get(name):
    """The setting `name`: the project's value, or the default."""
    if name not in DEFAULTS:
        raise KeyError(f"RBDSYNC_CONSOLE has no setting {name!r}")
    return getattr(settings, "RBDSYNC_CONSOLE", {}).get(name, DEFAULTS[name])
