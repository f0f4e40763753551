"""The app's settings: the project's RBDSYNC_CONSOLE dict over these defaults.

    RBDSYNC_CONSOLE = {
        "DB": "service=rbd-sync",              # rbd-sync's --db (its writer role)
        "CEPH_ID": "rbdsync",                  # --id
        "LOCK_FILE": "/run/lock/rbd-sync/sync.lock",
    }

Read at every use, so override_settings in tests and a changed setting take effect.
"""
from django.conf import settings

DEFAULTS = {
    # The database alias whose connection holds schema rbdsync (the console's models
    # read it). Another alias than Django's own lets the inventory be read by a role
    # that may read nothing else.
    "DATABASE": "default",
    # `rbd-sync run` for the "Sync now" button and the rbdsync_sync command. Every
    # value goes on a command line, which any local user may read: never a password
    # (libpq takes it from PGPASSFILE/.pgpass or a service file; checked at startup).
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
