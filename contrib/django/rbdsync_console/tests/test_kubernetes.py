""""Sync now" on Kubernetes (kubernetes.py): the Job made from deploy/kubernetes/'s own
CronJob, and the answers the button gets without an API server (busy, not in a pod).
tests/container/ runs the Job it makes in podman against a real cluster and database."""
import os
import shutil
import tempfile
import urllib.error
from unittest import mock

import yaml
from django.contrib.auth.models import Permission, User
from django.test import SimpleTestCase, TestCase
from django.urls import reverse

from .. import kubernetes, rbd_sync
from .support import HeldClaim, add_cluster, add_run, source_path
from .test_sync_now import console_settings


def shipped_cronjob():
    with open(source_path("deploy", "kubernetes", "cronjob.yaml"), encoding="utf-8") as stream:
        for document in yaml.safe_load_all(stream):
            if document and document["kind"] == "CronJob":
                return document
    raise AssertionError("deploy/kubernetes/cronjob.yaml has no CronJob")


class JobFromCronJob(SimpleTestCase):
    def test_the_job_is_the_cronjobs_template_asked_for_by_the_user(self):
        cronjob = shipped_cronjob()
        cronjob["metadata"]["uid"] = "6d4c7f3a-0000-4000-8000-000000000001"
        job = kubernetes.job_from_cronjob(cronjob, "web", "alice")
        self.assertEqual(job["kind"], "Job")
        self.assertEqual(job["metadata"]["generateName"], "rbd-sync-now-")
        self.assertEqual(job["metadata"]["namespace"], "rook-ceph")
        self.assertEqual(job["metadata"]["annotations"][kubernetes.INSTANTIATE_ANNOTATION],
                         "manual")
        self.assertEqual(job["metadata"]["ownerReferences"],
                         [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "rbd-sync",
                           "uid": "6d4c7f3a-0000-4000-8000-000000000001", "controller": True}])
        template_args = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"][
            "containers"][0]["args"]
        args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        self.assertEqual(args[:5], ["run", "--trigger", "web", "--requested-by", "alice"])
        # Everything else as the schedule runs it; the schedule's own trigger is gone.
        at = template_args.index("--trigger")
        self.assertEqual(args[5:], template_args[1:at] + template_args[at + 2:])
        # The CronJob itself is left as it was.
        self.assertIn("cron", template_args)
        self.assertEqual(job["spec"]["backoffLimit"], cronjob["spec"]["jobTemplate"]["spec"]["backoffLimit"])

    def test_every_spelling_of_trigger_and_requester_is_replaced(self):
        self.assertEqual(
            kubernetes.with_trigger(["run", "--trigger=cron", "--requested-by", "bob", "--json",
                                     "--requested-by=carol"], "web", "alice"),
            ["run", "--trigger", "web", "--requested-by", "alice", "--json"])
        # rbdsync_sync asks with trigger cron and no user.
        self.assertEqual(kubernetes.with_trigger(["run", "--trigger", "web", "--json"], "cron", None),
                         ["run", "--trigger", "cron", "--json"])

    def test_a_dollar_in_the_users_name_is_not_expanded_by_kubernetes(self):
        self.assertEqual(kubernetes.with_trigger(["run"], "web", "$(PGPASSFILE)")[4],
                         "$$(PGPASSFILE)")

    def test_a_cronjob_that_does_not_run_a_sync_is_refused(self):
        with self.assertRaises(ValueError):
            kubernetes.with_trigger(["migrate", "--json"], "web", "alice")


class RecordingApi:
    """Stands in for the API server in these unit tests only: it answers the CronJob and
    records what is asked. (tests/container/ runs the Job it would create.)"""

    def __init__(self, cronjob):
        self.cronjob, self.calls = cronjob, []

    def request(self, method, path, body=None):
        self.calls.append((method, path, body))
        if method == "GET":
            return self.cronjob
        return {**body, "metadata": {**body["metadata"], "name": "rbd-sync-now-x7k2p"}}


class CreateJob(SimpleTestCase):
    def test_it_reads_the_cronjob_and_posts_the_job_made_from_it(self):
        cronjob = shipped_cronjob()
        api = RecordingApi(cronjob)
        self.assertEqual(kubernetes.create_job("rook-ceph/rbd-sync", "web", "alice", api),
                         "rbd-sync-now-x7k2p")
        self.assertEqual(api.calls[0], ("GET", "/apis/batch/v1/namespaces/rook-ceph/cronjobs/rbd-sync", None))
        method, path, body = api.calls[1]
        self.assertEqual((method, path), ("POST", "/apis/batch/v1/namespaces/rook-ceph/jobs"))
        self.assertEqual(body, kubernetes.job_from_cronjob(cronjob, "web", "alice"))

    def test_a_setting_without_a_namespace_is_a_configuration_error(self):
        with self.assertRaises(kubernetes.KubernetesError) as raised:
            kubernetes.create_job("rbd-sync", "web", "alice", RecordingApi(shipped_cronjob()))
        self.assertEqual(raised.exception.exit_code, 78)

    def test_a_cronjob_that_is_not_rbd_syncs_is_named(self):
        other = shipped_cronjob()
        other["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"] = ["x"]
        with self.assertRaises(kubernetes.KubernetesError) as raised:
            kubernetes.create_job("rook-ceph/rbd-sync", "web", "alice", RecordingApi(other))
        self.assertEqual(raised.exception.exit_code, 78)
        self.assertIn("rook-ceph/rbd-sync", str(raised.exception))

    def test_a_refusal_names_the_role_to_bind(self):
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        with open(os.path.join(directory, "token"), "w", encoding="utf-8") as stream:
            stream.write("token\n")
        # No CA here to load: the context is the one part not exercised.
        with mock.patch("ssl.create_default_context"):
            api = kubernetes.ApiServer(directory, {"KUBERNETES_SERVICE_HOST": "fd00::1",
                                                   "KUBERNETES_SERVICE_PORT": "443"})
        self.assertEqual(api.base, "https://[fd00::1]:443")
        refusal = urllib.error.HTTPError(api.base, 403, "Forbidden", {}, None)
        with mock.patch("urllib.request.urlopen", side_effect=refusal):
            with self.assertRaises(kubernetes.KubernetesError) as raised:
                api.request("POST", "/apis/batch/v1/namespaces/rook-ceph/jobs", {})
        self.assertEqual(raised.exception.exit_code, 77)
        self.assertIn("sync-now-rbac.yaml", raised.exception.hint)

    def test_a_pod_without_a_token_is_told_what_it_lacks(self):
        with self.assertRaises(kubernetes.KubernetesError) as raised:
            kubernetes.ApiServer(tempfile.gettempdir() + "/no-such-service-account",
                                 {"KUBERNETES_SERVICE_HOST": "10.0.0.1",
                                  "KUBERNETES_SERVICE_PORT": "443"})
        self.assertEqual(raised.exception.exit_code, 77)
        self.assertIn("ServiceAccount", raised.exception.hint)


class SyncNowOnKubernetes(TestCase):
    def setUp(self):
        overridden = console_settings(KUBERNETES_CRONJOB="rook-ceph/rbd-sync")
        overridden.enable()
        self.addCleanup(overridden.disable)
        user = User.objects.create_user("operator")
        user.user_permissions.add(Permission.objects.get(codename="sync_now"),
                                  Permission.objects.get(codename="view_inventory"))
        self.client.force_login(user)

    def press(self):
        return self.client.post(reverse("rbdsync_console:sync_now"),
                                HTTP_ACCEPT="application/json").json()

    def test_outside_a_pod_the_answer_says_so_and_how_to_fix_it(self):
        environment = {name: value for name, value in os.environ.items()
                       if not name.startswith("KUBERNETES_")}
        with mock.patch.dict(os.environ, environment, clear=True):
            answer = self.press()
        self.assertEqual(answer["state"], "failed")
        self.assertEqual(answer["exit_code"], 78)
        self.assertIn("KUBERNETES_SERVICE_HOST", answer["message"])
        self.assertIn("KUBERNETES_CRONJOB", answer["hint"])

    def test_a_running_sync_is_answered_as_busy_without_a_job(self):
        # No API server here: reaching it would fail; the running run answers first.
        add_cluster()
        run_id = add_run(status="running", trigger="cron")
        claim = HeldClaim()
        self.addCleanup(claim.release)
        answer = self.press()
        self.assertEqual(answer["state"], "already_running")
        self.assertEqual(answer["exit_code"], 75)
        self.assertEqual(answer["run_id"], run_id)
        self.assertIn("started by cron", answer["message"])

    def test_the_cron_command_is_answered_busy_the_same_way(self):
        # Busy answers before any API call, and names the run it found.
        add_cluster()
        add_run(status="running", trigger="web", requested_by="alice")
        claim = HeldClaim()
        self.addCleanup(claim.release)
        answer = rbd_sync.call("cron", detach=False)
        self.assertEqual(answer.state, "already_running")
        self.assertIn("started by web (alice)", answer.message)
