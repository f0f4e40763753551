"""The "Sync now" view, with the real binary (RBDSYNC_TEST_BINARY) against the test
database: the answers that need no Ceph cluster (busy guard, configuration error).
test_end_to_end and test_browser start real runs."""
import json
import os

from django.contrib.auth.models import Permission, User
from django.core import checks
from django.test import Client, SimpleTestCase, TestCase, override_settings
from django.urls import reverse

from .. import rbd_sync

from .support import HeldLock, lock_dir


def console_settings(**changes):
    from django.conf import settings
    return override_settings(RBDSYNC_CONSOLE={**settings.RBDSYNC_CONSOLE, **changes})


class SyncNow(TestCase):
    def setUp(self):
        self.directory = lock_dir()
        self.addCleanup(self.directory.cleanup)
        self.lock_file = os.path.join(self.directory.name, "sync.lock")
        overridden = console_settings(LOCK_FILE=self.lock_file)
        overridden.enable()
        self.addCleanup(overridden.disable)
        self.user = User.objects.create_user("operator")
        self.user.user_permissions.add(Permission.objects.get(codename="sync_now"),
                                       Permission.objects.get(codename="view_inventory"))
        self.client.force_login(self.user)

    def press(self, client=None, **headers):
        return (client or self.client).post(reverse("rbdsync_console:sync_now"),
                                            HTTP_ACCEPT="application/json", **headers)

    def test_busy_guard_answers_already_running_naming_the_holder(self):
        with HeldLock(self.lock_file):
            answer = self.press().json()
        self.assertEqual(answer["state"], "already_running")
        self.assertEqual(answer["exit_code"], 75)
        self.assertEqual(answer["pid"], os.getpid())
        self.assertEqual(answer["holder"], {"pid": os.getpid()})
        self.assertIn(f"pid {os.getpid()}", answer["message"])

    def test_busy_is_busy_even_where_extra_args_make_it_exit_0(self):
        with HeldLock(self.lock_file), console_settings(
                LOCK_FILE=self.lock_file, EXTRA_ARGS=["--conflict-exit-code", "0"]):
            answer = self.press().json()
        self.assertEqual(answer["state"], "already_running", answer)
        self.assertEqual(answer["exit_code"], 75)
        self.assertIsNone(answer["run_id"])

    def test_a_failure_shows_rbd_syncs_message_and_hint(self):
        with console_settings(LOCK_FILE=self.lock_file, CEPH_CONF="/nonexistent/ceph.conf"):
            answer = self.press().json()
        self.assertEqual(answer["state"], "failed")
        self.assertEqual(answer["exit_code"], 78)
        self.assertIn("/nonexistent/ceph.conf", answer["message"])
        self.assertTrue(answer["hint"], answer)

    def test_a_plain_form_post_gets_the_answer_as_a_message_on_the_page(self):
        with HeldLock(self.lock_file):
            response = self.client.post(reverse("rbdsync_console:sync_now"), follow=True)
        self.assertEqual(response.redirect_chain[-1][0], reverse("rbdsync_console:block_storage"))
        self.assertContains(response, f'<li class="warning">already running: pid {os.getpid()}')

    def test_a_password_in_the_settings_never_reaches_a_command_line(self):
        with console_settings(DB="host=db1 dbname=console password=secret"):
            answer = self.press().json()
            errors = [message.id for message in checks.run_checks()]
        self.assertEqual(answer["state"], "failed")
        self.assertIn("password", answer["message"])
        self.assertNotIn("secret", answer["message"])
        self.assertIn("rbdsync_console.E001", errors)

    def test_only_a_post_with_the_csrf_token_from_a_user_who_may_sync_is_taken(self):
        self.assertEqual(self.client.get(reverse("rbdsync_console:sync_now")).status_code, 405)
        guarded = Client(enforce_csrf_checks=True)
        guarded.force_login(self.user)
        self.assertEqual(self.press(guarded).status_code, 403, "no CSRF token")
        viewer = Client()
        viewer.force_login(User.objects.create_user("viewer"))
        self.assertEqual(self.press(viewer).status_code, 403, "no sync_now permission")
        anonymous = self.press(Client())
        self.assertEqual(anonymous.status_code, 302, "login first")


class RunIdsInAnswers(SimpleTestCase):
    """The page follows the run id of an answer into a URL; the holder's comes from a lock
    file any member of the group rbd-sync can write."""

    HOSTILE = ["", "../../admin/", "javascript:alert(1)", "5f0c8a7e-0000-4000-8000-00000000001",
               "5f0c8a7e-0000-4000-8000-000000000001/../x", 42, None, ["x"]]

    def test_only_a_uuid_is_kept(self):
        for run_id in self.HOSTILE:
            started = rbd_sync.answer_for(0, json.dumps({"run_id": run_id, "pid": 7}), "", True)
            self.assertIsNone(started.run_id, run_id)
            busy = rbd_sync.answer_for(75, json.dumps({"holder": {
                "run_id": run_id, "pid": 7, "trigger": "cron", "host": "h"}}), "", True)
            self.assertIsNone(busy.run_id, run_id)
            self.assertIsNone(busy.holder["run_id"], run_id)
            self.assertNotIn("admin", busy.message)
        good = "5F0C8A7E-0000-4000-8000-0000000000AB"
        self.assertEqual(rbd_sync.answer_for(0, json.dumps({"run_id": good}), "", True).run_id,
                         good.lower())


class ChildEnvironment(SimpleTestCase):
    """rbd-sync runs with a minimal environment, not the web server's."""

    SERVER = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PGPASSFILE": "/srv/www/.pgpass",
              "DJANGO_SECRET_KEY": "s3cret", "DATABASE_URL": "postgres://web:pw@db/console",
              "PGPASSWORD": "pw", "PGHOST": "db-of-the-console", "PGUSER": "web",
              "PGOPTIONS": "-c default_transaction_read_only=on", "PGSERVICE": "console"}

    def test_only_the_files_libpq_and_librados_need_are_passed(self):
        self.assertEqual(rbd_sync.child_environment(self.SERVER),
                         {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                          "PGPASSFILE": "/srv/www/.pgpass"})
        with console_settings(ENV={"PGSERVICEFILE": "/etc/rbd-sync/pg_service.conf"}):
            self.assertEqual(rbd_sync.child_environment(self.SERVER)["PGSERVICEFILE"],
                             "/etc/rbd-sync/pg_service.conf")

    def test_a_password_in_the_env_setting_is_refused(self):
        with console_settings(ENV={"PGPASSWORD": "pw"}):
            answer = rbd_sync.call("web", detach=True)
        self.assertEqual((answer.state, answer.exit_code), ("failed", 78))
        self.assertNotIn("pw", answer.message.replace("password", ""))
