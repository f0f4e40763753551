"""Settings of the demo site around rbdsync_console (scripts/demo.sh --console, and the
app's tests through test_settings). Everything site-specific comes from the
environment; no secret is in this file, nor on a command line:

  DJANGO_SECRET_KEY            required
  RBDSYNC_CONSOLE_DB           libpq conninfo of the site's own database and role, which
                               also reads schema rbdsync (default: service=console);
                               its password from PGPASSFILE/.pgpass or the service file
  RBDSYNC_CONSOLE_TRIGGER_SOCKET
                               where "Sync now" asks rbd-sync to run (default: the
                               package's /run/rbd-sync/trigger.sock); empty: run rbd-sync
                               directly as this site's user, with the settings below
                               (development: scripts/demo.sh --console)
  RBDSYNC_CONSOLE_CLUSTER      the Ceph cluster to sync (default: ceph)
  RBDSYNC_CONSOLE_SYNC_DB      direct mode: rbd-sync's --db, its writer role (default:
                               service=rbd-sync)
  RBDSYNC_CONSOLE_BINARY       direct mode: rbd-sync (default: rbd-sync in PATH)
  RBDSYNC_CONSOLE_LOCK_FILE, RBDSYNC_CONSOLE_CEPH_CONF, RBDSYNC_CONSOLE_CEPH_ID
                               direct mode: rbd-sync's --lock-file, --conf, --id
  RBDSYNC_CONSOLE_EXTRA_ARGS   direct mode: more `rbd-sync run` options, shell-quoted
  DJANGO_ALLOWED_HOSTS         comma-separated (default: 127.0.0.1,localhost)
  DJANGO_DEBUG                 1 for Django's debug pages (never in production)
  DJANGO_TIME_ZONE             the zone times are shown in (default: UTC)
"""
import os
import shlex
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from rbdsync_console.dbsettings import database_from_conninfo

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name, default=None):
    value = os.environ.get(name, default)
    if value is None:
        raise ImproperlyConfigured(f"{name} is not set")
    return value


SECRET_KEY = env("DJANGO_SECRET_KEY")
DEBUG = env("DJANGO_DEBUG", "0") == "1"
ALLOWED_HOSTS = env("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rbdsync_console",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "demo_site.urls"
WSGI_APPLICATION = "demo_site.wsgi.application"

TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [BASE_DIR / "demo_site" / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]

# One database: the site's own tables and, in schema rbdsync, the inventory rbd-sync
# writes (its role grants this one SELECT: contrib/django/grant-select.sql, or the reader
# role of sql/roles.sql).
DATABASES = {"default": database_from_conninfo(env("RBDSYNC_CONSOLE_DB", "service=console"))}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

RBDSYNC_CONSOLE = {
    "DATABASE": "default",
    "TRIGGER_SOCKET": env("RBDSYNC_CONSOLE_TRIGGER_SOCKET", "/run/rbd-sync/trigger.sock") or None,
    "CLUSTER": env("RBDSYNC_CONSOLE_CLUSTER", "ceph"),
    "BINARY": env("RBDSYNC_CONSOLE_BINARY", "rbd-sync"),
    "DB": env("RBDSYNC_CONSOLE_SYNC_DB", "service=rbd-sync"),
    "LOCK_FILE": os.environ.get("RBDSYNC_CONSOLE_LOCK_FILE") or None,
    "CEPH_CONF": os.environ.get("RBDSYNC_CONSOLE_CEPH_CONF") or None,
    "CEPH_ID": os.environ.get("RBDSYNC_CONSOLE_CEPH_ID") or None,
    "EXTRA_ARGS": shlex.split(os.environ.get("RBDSYNC_CONSOLE_EXTRA_ARGS", "")),
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "rbdsync_console:block_storage"
LOGOUT_REDIRECT_URL = "login"

USE_I18N = False
USE_TZ = True
TIME_ZONE = env("DJANGO_TIME_ZONE", "UTC")

STATIC_URL = "/static/"
# Chart.js from Debian's libjs-chart.js, served like the app's own files: no CDN.
STATICFILES_DIRS = [("chart.js", "/usr/share/javascript/chart.js")]
