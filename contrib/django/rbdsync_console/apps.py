from django.apps import AppConfig


class RbdSyncConsoleConfig(AppConfig):
    name = "rbdsync_console"
    verbose_name = "RBD inventory (rbd-sync)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import checks  # noqa: F401  (registers the system checks)
