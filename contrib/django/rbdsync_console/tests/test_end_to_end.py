"""The cron command and "Sync now" with the real binary, Ceph cluster and database:
what they sync shows on the page, with the pool's usage chart."""
import io
import json
import os
import re
import signal
from unittest import mock


from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import TransactionTestCase
from django.urls import reverse

from ..models import PoolUsage, Run
from .ceph import TestPool
from .support import (MIB, images_table_locked, lock_dir, process_gone, wait_until,
                      wipe_inventory)
from .test_sync_now import console_settings


class EndToEnd(TransactionTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pool = TestPool("django-e2e")
        cls.addClassCleanup(cls.pool.close)
        cls.pool.create_golden_and_clone("golden", "vm-1")
        cls.pool.create_image("disk-1", 8 * MIB)

    def setUp(self):
        directory = lock_dir()
        self.addCleanup(directory.cleanup)
        self.addCleanup(wipe_inventory)
        overridden = console_settings(**self.pool.run_settings(
            os.path.join(directory.name, "sync.lock")))
        overridden.enable()
        self.addCleanup(overridden.disable)
        self.user = User.objects.create_superuser("admin", password="pw")
        self.client.force_login(self.user)

    def test_the_cron_command_syncs_and_the_page_shows_the_images_and_the_pools_chart(self):
        out, err = io.StringIO(), io.StringIO()
        call_command("rbdsync_sync", stdout=out, stderr=err)
        self.assertRegex(out.getvalue(), r"^synced 3 images \(run [0-9a-f-]{36}\)\n$")
        run = Run.objects.get()
        self.assertEqual((run.status, run.trigger, run.images), ("succeeded", "cron", 3))

        usage = PoolUsage.objects.get(run=run)
        self.assertEqual((usage.images, usage.provisioned_bytes), (3, (64 + 64 + 8) * MIB))
        html = self.client.get(reverse("rbdsync_console:block_storage")).content.decode()
        self.assertEqual(set(re.findall(r'<tr class="image" data-name="([^"]+)"', html)),
                         {"golden", "vm-1", "disk-1"})
        self.assertIn(f'<td class="parent">{self.pool.name}/golden@v1</td>', html)
        card = re.search(rf'<article class="pool" data-pool-id="\d+" data-name="{self.pool.name}"'
                         r'.*?</article>', html, re.S).group(0)
        chart = json.loads(re.search(r'type="application/json">(.*?)</script>', card,
                                     re.S).group(1))
        self.assertEqual(chart["points"][0]["provisioned"], (64 + 64 + 8) * MIB)

    def test_sync_now_starts_a_run_whose_progress_ends_succeeded(self):
        answer = self.client.post(reverse("rbdsync_console:sync_now"),
                                  HTTP_ACCEPT="application/json").json()
        self.assertEqual(answer["state"], "started", answer)
        progress_url = reverse("rbdsync_console:run_progress", args=[answer["run_id"]])

        def ended_row():
            row = self.client.get(progress_url).json()
            return row if row["status"] != "running" else None

        ended = wait_until("the run to end", ended_row)
        wait_until("the detached rbd-sync to exit", lambda: process_gone(answer["pid"]))
        self.assertEqual(ended["status"], "succeeded", ended)
        self.assertEqual(ended["trigger"], "web")
        self.assertEqual(ended["message"], "sync succeeded: 3 images, 3 added, 0 changed, "
                                           "0 removed")

    def test_the_web_servers_own_database_settings_do_not_reach_rbd_sync(self):
        # A web server's environment holds its own libpq settings: a read-only default
        # session would fail every sync, another host would be the wrong database.
        hostile = {"PGOPTIONS": "-c default_transaction_read_only=on",
                   "PGHOST": "192.0.2.1", "PGCONNECT_TIMEOUT": "1", "PGSERVICE": "nowhere"}
        with mock.patch.dict(os.environ, hostile):
            out = io.StringIO()
            call_command("rbdsync_sync", stdout=out, stderr=io.StringIO())
        self.assertRegex(out.getvalue(), r"^synced 3 images \(run [0-9a-f-]{36}\)\n$")

    def test_a_killed_run_is_answered_abandoned_so_that_the_page_stops_following_it(self):
        # The run's writes wait behind this session's lock, so it is still running when
        # it is killed: its row stays `running`, and only the claim it held tells.
        self.enterContext(images_table_locked())
        answer = self.client.post(reverse("rbdsync_console:sync_now"),
                                  HTTP_ACCEPT="application/json").json()
        self.assertEqual(answer["state"], "started", answer)
        progress_url = reverse("rbdsync_console:run_progress", args=[answer["run_id"]])

        def row_with(status):
            response = self.client.get(progress_url)
            return response.status_code == 200 and response.json()["status"] == status and \
                response.json()

        running = wait_until("the run's row, running", lambda: row_with("running"))
        self.assertEqual(running["trigger"], "web")
        os.kill(answer["pid"], signal.SIGKILL)
        wait_until("the killed rbd-sync to exit", lambda: process_gone(answer["pid"]))
        # Its sessions end as the server sees their sockets close, and the claim with them.
        abandoned = wait_until("the run to be answered abandoned", lambda: row_with("abandoned"))
        self.assertIn(f"sync abandoned: pid {answer['pid']} on ", abandoned["message"])
        self.assertEqual(Run.objects.get(run_id=answer["run_id"]).status, "running",
                         "the row itself is the next sync's to mark")
