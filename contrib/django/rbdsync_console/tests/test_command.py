"""manage.py rbdsync_sync, the cron job's command, with the real binary (no Ceph needed
here: test_end_to_end syncs with it)."""
import io
import os

from django.core.management import CommandError, call_command
from django.test import TestCase

from .support import HeldLock, lock_dir
from .test_sync_now import console_settings


class CronCommand(TestCase):
    def setUp(self):
        self.directory = lock_dir()
        self.addCleanup(self.directory.cleanup)
        self.lock_file = os.path.join(self.directory.name, "sync.lock")

    def run_command(self, *args, **settings):
        out, err = io.StringIO(), io.StringIO()
        with console_settings(LOCK_FILE=self.lock_file, **settings):
            call_command("rbdsync_sync", *args, stdout=out, stderr=err)
        return out.getvalue(), err.getvalue()

    def test_exits_quietly_when_another_sync_holds_the_guard(self):
        with HeldLock(self.lock_file):
            self.assertEqual(self.run_command(), ("", ""))
            out, _ = self.run_command("-v", "2")
        self.assertIn(f"already running: pid {os.getpid()}", out)

    def test_fails_with_rbd_syncs_message_hint_and_exit_code(self):
        with self.assertRaises(CommandError) as raised:
            self.run_command(CEPH_CONF="/nonexistent/ceph.conf")
        self.assertEqual(raised.exception.returncode, 78)
        self.assertIn("/nonexistent/ceph.conf", str(raised.exception))
        self.assertIn("(hint: ", str(raised.exception))
