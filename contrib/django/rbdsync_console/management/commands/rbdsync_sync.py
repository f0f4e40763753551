"""manage.py rbdsync_sync: one sync, for django-crontab's CRONJOBS (or any scheduler).

    CRONJOBS = [("10 22 * * *", "django.core.management.call_command", ["rbdsync_sync"])]

Runs `rbd-sync run --trigger cron --json` with the RBDSYNC_CONSOLE settings, in the
foreground. Says nothing and exits 0 when another sync holds the guard (rbd-sync's exit
75: the button or an admin got there first); prints rbd-sync's one-line summary on
success (nothing with -v 0); fails with rbd-sync's message, hint and exit code otherwise
(3 for a partial run, whose images kept stale are named in rbd-sync's log lines).
"""
from django.core.management.base import BaseCommand, CommandError

from ... import rbd_sync


class Command(BaseCommand):
    help = ("Sync the RBD inventory now (rbd-sync run); quiet when another sync is running. "
            "For django-crontab's CRONJOBS.")

    def add_arguments(self, parser):
        parser.add_argument("--trigger", choices=("cron", "manual", "web"), default="cron",
                            help="recorded in the run history (default: cron)")

    def handle(self, *args, **options):
        answer = rbd_sync.call(options["trigger"], detach=False)
        verbosity = options["verbosity"]
        if answer.state == "already_running":
            if verbosity >= 2:
                self.stdout.write(answer.message)
            return
        if answer.state in ("succeeded", "partial") and answer.log and verbosity >= 1:
            # rbd-sync's warnings (pools this client may not read, images kept stale)
            # belong in the cron job's log too. A failure's own line is the error below.
            self.stderr.write(answer.log.rstrip("\n"))
        if answer.state == "succeeded":
            if verbosity >= 1:
                self.stdout.write(f"{answer.message} (run {answer.run_id})")
            return
        text = answer.message + (f" (hint: {answer.hint})" if answer.hint else "")
        raise CommandError(text, returncode=answer.exit_code)
