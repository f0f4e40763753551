"""System checks (manage.py check, and every manage.py command): settings that would
leak a password or leave the page without its chart library are caught at startup."""
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
