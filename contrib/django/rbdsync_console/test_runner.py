"""A test runner for projects that use rbdsync_console:

    TEST_RUNNER = "rbdsync_console.test_runner.RbdSyncTestRunner"

Django's DiscoverRunner, plus the schema rbdsync in the test database: the app's models
are unmanaged, so Django creates no table for them; `rbd-sync migrate` does, as it does
in production (RBDSYNC_CONSOLE["BINARY"]). A migrate that fails stops the run."""
import os
import subprocess

from django.db import connections
from django.test.runner import DiscoverRunner

from . import conf
from .dbsettings import conninfo_from_database


def migrate_inventory(alias=None):
    """Runs `rbd-sync migrate` on the database of `alias` (default: the app's)."""
    connection = connections[alias or conf.get("DATABASE")]
    env = dict(os.environ)
    if connection.settings_dict.get("PASSWORD"):
        env["PGPASSWORD"] = connection.settings_dict["PASSWORD"]  # never on a command line
    command = [conf.get("BINARY"), "migrate", "--quiet", "--db",
               conninfo_from_database(connection.settings_dict)]
    finished = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              env=env, check=False)
    if finished.returncode != 0:
        raise RuntimeError(f"rbd-sync migrate on the test database failed (exit "
                           f"{finished.returncode}): {finished.stderr.strip()}")


class RbdSyncTestRunner(DiscoverRunner):
    def setup_databases(self, **kwargs):
        old_config = super().setup_databases(**kwargs)
        migrate_inventory()
        return old_config
