""""Sync now" and the cron command through the trigger socket, with the real binary served
per connection as rbd-sync-trigger.socket serves it (tests/trigger.py), the Ceph cluster
and the database. test_browser_trigger does the same in Chromium with a web server that
holds no secret."""
import io
import os
import subprocess

from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import TransactionTestCase
from django.urls import reverse

from .. import rbd_sync
from ..models import Run
from .ceph import TestPool
from .support import HeldLock, lock_dir, source_path, wait_until, wipe_inventory
from .test_sync_now import console_settings
from .trigger import TriggerSocket, write_settings


class ThroughTheTriggerSocket(TransactionTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pool = TestPool("django-trigger")
        cls.addClassCleanup(cls.pool.close)
        cls.pool.create_image("disk-1")
        cls.pool.create_image("disk-2")

    def setUp(self):
        directory = lock_dir()
        self.addCleanup(directory.cleanup)
        self.addCleanup(wipe_inventory)
        self.lock_file = os.path.join(directory.name, "sync.lock")
        settings = os.path.join(directory.name, "default")
        write_settings(settings, self.pool.settings_args(self.lock_file))
        self.trigger = TriggerSocket(os.path.join(directory.name, "trigger.sock"), settings)
        self.addCleanup(self.trigger.close)
        # BINARY and the rest are not used: the socket is asked, never the binary.
        overridden = console_settings(TRIGGER_SOCKET=self.trigger.path,
                                      BINARY="/nonexistent/rbd-sync")
        overridden.enable()
        self.addCleanup(overridden.disable)
        self.user = User.objects.create_superuser("Jos\u00e9", password="pw")
        self.client.force_login(self.user)

    def press(self):
        return self.client.post(reverse("rbdsync_console:sync_now"),
                                HTTP_ACCEPT="application/json").json()

    def test_sync_now_is_answered_by_the_guard_and_records_who_pressed(self):
        answer = self.press()
        self.assertEqual(answer["state"], "started", answer)
        run_id = answer["run_id"]
        run = self.follow(run_id)
        self.assertEqual((run.status, run.trigger, run.requested_by, run.images),
                         ("succeeded", "web", "Jos\u00e9", 2))
        progress = self.client.get(reverse("rbdsync_console:run_progress", args=[run_id])).json()
        self.assertEqual(progress["requested_by"], "Jos\u00e9")
        html = self.client.get(reverse("rbdsync_console:block_storage")).content.decode()
        self.assertIn("Last sync: succeeded (by web (Jos\u00e9))", html)

    def test_a_busy_guard_is_answered_already_running_through_the_socket(self):
        with HeldLock(self.lock_file):
            answer = self.press()
        self.assertEqual(answer["state"], "already_running", answer)
        self.assertEqual(answer["exit_code"], 75)
        self.assertEqual(answer["holder"], {"pid": os.getpid()})

    def test_the_cron_command_asks_the_socket_and_follows_the_run_to_its_end(self):
        out = io.StringIO()
        call_command("rbdsync_sync", stdout=out, stderr=io.StringIO())
        run = Run.objects.get()
        self.assertEqual((run.status, run.trigger, run.requested_by), ("succeeded", "cron", None))
        self.assertEqual(out.getvalue(), f"{run.outcome} (run {run.run_id})\n")
        self.assertEqual(run.outcome, "sync succeeded: 2 images, 2 added, 0 changed, 0 removed")

    def test_the_cron_command_fails_with_the_runs_error(self):
        write_settings(os.path.dirname(self.trigger.path) + "/default",
                       self.pool.settings_args(self.lock_file) + " --db-timeout 0")
        with self.assertRaises(CommandError) as raised:
            call_command("rbdsync_sync", stdout=io.StringIO(), stderr=io.StringIO())
        self.assertEqual(raised.exception.returncode, 78)
        self.assertIn("--db-timeout", str(raised.exception))
        self.assertIn("/default/rbd-sync", str(raised.exception))

    def test_the_examples_press_asks_the_socket_too(self):
        example = source_path("examples", "web_backend.py")
        pressed = subprocess.run(["/usr/bin/python3", str(example), "press", "--socket",
                                  self.trigger.path, "--requested-by", "eve"],
                                 capture_output=True, text=True, timeout=120, check=False)
        self.assertEqual(pressed.returncode, 0, pressed.stderr)
        self.assertRegex(pressed.stdout, r"^started run [0-9a-f-]{36} pid \d+\n$")
        run = self.follow(pressed.stdout.split()[2])
        self.assertEqual((run.status, run.requested_by), ("succeeded", "eve"))

    def follow(self, run_id):
        return wait_until(f"run {run_id} to end", lambda: Run.objects.filter(
            run_id=run_id).exclude(status="running").first())


class TriggerSocketUnreachable(TransactionTestCase):
    def test_a_missing_socket_names_itself_and_the_unit_to_enable(self):
        with console_settings(TRIGGER_SOCKET="/nonexistent/trigger.sock"):
            answer = rbd_sync.call("web", detach=True, timeout=5, requested_by="alice")
        self.assertEqual((answer.state, answer.exit_code), ("failed", 69))
        self.assertIn("/nonexistent/trigger.sock", answer.message)
        self.assertIn("systemctl enable --now rbd-sync-trigger.socket", answer.hint)


class RequesterNames(TransactionTestCase):
    def test_a_user_name_is_sent_printable_and_within_rbd_syncs_bound(self):
        def name(text):
            return rbd_sync.requester_name(User(username=text))

        self.assertEqual(name("alice"), "alice")
        self.assertEqual(name("Jos\u00e9"), "Jos\u00e9")
        self.assertEqual(name("eve\n\x1b[2J"), "eve??[2J")
        self.assertEqual(len(name("\u00e9" * 200).encode()), 256)
        self.assertIsNone(name(""))
        self.assertIsNone(rbd_sync.requester_name(None))
