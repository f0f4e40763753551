"""manage.py rbdsync_sync: one sync, for django-crontab's CRONJOBS (or any scheduler).

    CRONJOBS = [("10 22 * * *", "django.core.management.call_command", ["rbdsync_sync"])]

Asks for a run with trigger cron the way "Sync now" does: through the trigger socket,
which answers "started", and then follows the run in rbdsync.runs until it ends (at most
RUN_TIMEOUT seconds); in direct mode (TRIGGER_SOCKET None) it runs `rbd-sync run --json`
in the foreground. Says nothing and exits 0 when another sync holds the guard (the button
or an admin got there first); prints the one-line outcome on success (nothing with -v 0);
fails with rbd-sync's message, hint and exit code otherwise (3 for a partial run, whose
images kept stale are named in rbd-sync's log).
"""
import time

from django.core.management.base import BaseCommand, CommandError

from ... import conf, rbd_sync
from ...models import Run

# How often the run's row is read while following it: the row is what the page polls too.
POLL_SECONDS = 0.5
# A run's exit code by how it ended, for the command's own (the row has it too).
ENDED_EXIT = {"succeeded": 0, "partial": 3, "interrupted": 143, "abandoned": 70}


class Command(BaseCommand):
    help = ("Sync the RBD inventory now (rbd-sync run); quiet when another sync is running. "
            "For django-crontab's CRONJOBS.")

    def add_arguments(self, parser):
        parser.add_argument("--trigger", choices=("cron", "manual", "web"), default="cron",
                            help="recorded in the run history (default: cron)")

    def handle(self, *args, **options):
        answer = rbd_sync.call(options["trigger"], detach=False,
                               timeout=conf.get("ANSWER_TIMEOUT"))
        if answer.state == "started":
            answer = self.follow(answer.run_id)
        verbosity = options["verbosity"]
        if answer.state == "requested":
            if verbosity >= 1:
                self.stdout.write(f"{answer.message}; {answer.hint}")
            return
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

    def follow(self, run_id):
        """The ended run `run_id` as an Answer, read from its row (a row still `running`
        whose claim is free belongs to a process that died: abandoned)."""
        deadline = time.monotonic() + conf.get("RUN_TIMEOUT")
        while True:
            run = Run.objects.filter(run_id=run_id).first()
            if run is None:
                return rbd_sync.Answer("failed", 70, f"run {run_id} has no row in rbdsync.runs",
                                       "see `journalctl -u 'rbd-sync-trigger@*'`")
            if run.abandoned():
                return rbd_sync.Answer(
                    "failed", ENDED_EXIT["abandoned"],
                    f"run {run_id} ended without recording how (killed?)",
                    "see `journalctl -u 'rbd-sync-trigger@*'`", run_id=run_id)
            if not run.running:
                break
            if time.monotonic() > deadline:
                raise CommandError(f"run {run_id} still runs after {conf.get('RUN_TIMEOUT')} s "
                                   "(RBDSYNC_CONSOLE['RUN_TIMEOUT']); it goes on",
                                   returncode=69)
            time.sleep(POLL_SECONDS)
        if run.status in Run.ENDED_COMMITTED:
            return rbd_sync.Answer(run.status, ENDED_EXIT[run.status], run.outcome,
                                   "" if run.status == "succeeded" else
                                   "see the run's stale images on the page", run_id=run_id)
        code = run.exit_code if run.exit_code is not None else ENDED_EXIT.get(run.status, 70)
        return rbd_sync.Answer("failed", code, run.outcome, "see rbd-sync's log",
                               run_id=run_id)
