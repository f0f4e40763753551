"""Settings for the app's tests (CTest labels django and browser), from the variables
scripts/test.sh exports after it starts its throwaway PostgreSQL server and Ceph
cluster, and the binary under test. A missing variable fails the run: the tests never
skip. Django creates the test database (as the RBDSYNC_TEST_DB role, which may create
databases); the runner migrates schema rbdsync into it with the binary under test.
"""
import os
import secrets

from django.core.exceptions import ImproperlyConfigured


def required(name):
    value = os.environ.get(name)
    if not value:
        raise ImproperlyConfigured(
            f"{name} is not set: run the tests through ./scripts/test.sh (or ctest, with the "
            "env.sh of scripts/pg-server.sh and scripts/ceph-cluster.sh sourced), which "
            "starts the throwaway PostgreSQL server and Ceph cluster")
    return value


# One per run: the page's tests and the browser's run side by side (ctest -j).
TEST_DATABASE = f"test_rbdsync_console_{os.getpid()}"
required("PGPASSFILE")
os.environ["RBDSYNC_CONSOLE_DB"] = required("RBDSYNC_TEST_DB")
os.environ["RBDSYNC_CONSOLE_BINARY"] = required("RBDSYNC_TEST_BINARY")
os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_hex(32))

from .settings import *  # noqa: E402,F401,F403  (the demo site, then the test's changes)
from .settings import DATABASES, RBDSYNC_CONSOLE  # noqa: E402

DATABASES["default"]["TEST"] = {"NAME": TEST_DATABASE}
# "Sync now" writes into the test database; libpq takes the last dbname. Direct mode: the
# tests that ask through the trigger socket (test_trigger) set TRIGGER_SOCKET themselves.
RBDSYNC_CONSOLE["DB"] = f'{required("RBDSYNC_TEST_DB")} dbname={TEST_DATABASE}'
RBDSYNC_CONSOLE["TRIGGER_SOCKET"] = None
TEST_RUNNER = "rbdsync_console.test_runner.RbdSyncTestRunner"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins
