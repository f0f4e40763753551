"""System checks (manage.py check, and every manage.py command): settings that would
leak a password or leave the page without its chart library, and a Django it was not
tested with, are caught at startup."""
import django
from django.contrib.staticfiles import finders
from django.core import checks

from . import conf, rbd_sync


@checks.register()
def no_password_in_arguments(app_configs, **kwargs):
    arguments = [conf.get("DB"), *conf.get("EXTRA_ARGS")]
    if any(rbd_sync.mentions_password(argument) for argument in arguments):
        return [checks.Error(
            'RBDSYNC_CONSOLE["DB"] or ["EXTRA_ARGS"] carries a password, which would be '
            "on rbd-sync's command line for every local user to read",
            hint="put it in PGPASSFILE/.pgpass or a pg_service.conf entry",
            id="rbdsync_console.E001")]
    return []


@checks.register()
def chart_library_found(app_configs, **kwargs):
    if finders.find(conf.get("CHART_JS")) is None:
        return [checks.Warning(
            f'{conf.get("CHART_JS")} is not among the static files: the page draws no charts',
            hint="apt-get install libjs-chart.js and add "
                 '("chart.js", "/usr/share/javascript/chart.js") to STATICFILES_DIRS',
            id="rbdsync_console.W001")]
    return []


# The Django releases the app supports: its tests pass on both ends, 3.2 (Debian 12) and
# 4.2 (Debian 13), in CI (scripts/test.sh --all). Outside, it may work; nobody checked.
TESTED_DJANGO = ((3, 2), (4, 2))


def django_is_tested(version):
    return TESTED_DJANGO[0] <= tuple(version[:2]) <= TESTED_DJANGO[1]


@checks.register()
def tested_django(app_configs, **kwargs):
    if not django_is_tested(django.VERSION):
        low, high = ("%d.%d" % release for release in TESTED_DJANGO)
        return [checks.Warning(
            f"rbdsync_console supports Django {low} to {high} (CI tests both ends), not "
            f"{django.VERSION[0]}.{django.VERSION[1]}",
            hint=f"use Django {low} to {high} (Debian 12's or 13's python3-django)",
            id="rbdsync_console.W002")]
    return []
