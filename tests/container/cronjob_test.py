#!/usr/bin/python3
"""The image and deploy/kubernetes/, together (CTest label `container`).

scripts/test.sh --all builds the image (scripts/build-image.sh), starts a Tentacle
cluster from the sid root (whose keys are aes256k, as current Rook's are) and runs this
with the suite's PostgreSQL. Each test runs the pod of a manifest in podman through
kubelet.py, given what Rook and the admin would have made: the ConfigMap
rook-ceph-mon-endpoints (the mons as `a=ADDR`), the Secret rook-ceph-client-rbd-sync
(the key of a client with cephclient.yaml's caps), the ConfigMap rbd-sync (the
conninfos) and the Secret rbd-sync-pgpass.

Environment: RBDSYNC_TEST_IMAGE (the image's name), RBDSYNC_TEST_CEPH_CONF,
RBDSYNC_TEST_CEPH_ADMIN_ID, RBDSYNC_TEST_CEPH_ROOT (the root whose ceph and rbd CLIs run
the cluster), RBDSYNC_TEST_DB and PGPASSFILE, CONTAINERS_CONF and
CONTAINERS_STORAGE_CONF (scripts/podman-env.sh). A missing one fails the test.
"""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
# The console's Job maker is plain Python: the test runs the Job it makes.
sys.path.insert(0, os.path.join(SOURCE, "contrib", "django"))
import kubelet  # noqa: E402
from rbdsync_console import kubernetes  # noqa: E402

MANIFESTS = os.path.join(SOURCE, "deploy", "kubernetes")
# Ceph's CryptoKey types (src/ceph/key_type.hpp): the first two bytes of a key.
KEY_TYPE_AES256K = 2


def required(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run this through scripts/test.sh --all "
                           "(docs/testing.md says how to run it by hand)")
    return value


def ceph_cli(tool, *args):
    """Runs the cluster's own release's CLI (in its root) as the admin; returns stdout."""
    argv = [os.path.join(SOURCE, "scripts", "debian-root.sh"), "run",
            required("RBDSYNC_TEST_CEPH_ROOT"), tool, "--conf", required("RBDSYNC_TEST_CEPH_CONF"),
            "--id", required("RBDSYNC_TEST_CEPH_ADMIN_ID"), *args]
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=120).stdout


def psql(sql, conninfo=None):
    done = subprocess.run(["psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                           conninfo or required("RBDSYNC_TEST_DB"), "-c", sql],
                          capture_output=True, text=True, check=True, timeout=60)
    return [line for line in done.stdout.splitlines() if line]


def rook_mon_endpoints(conf_path):
    """The cluster's mons as Rook's ConfigMap holds them: `a=ADDR,b=ADDR`. The test
    cluster's ports are not the standard 3300/6789, so the address names its protocol."""
    with open(conf_path, encoding="utf-8") as stream:
        match = re.search(r"^\s*mon[ _]host\s*=\s*(.+)$", stream.read(), re.MULTILINE)
    addresses = re.findall(r"v2:[0-9.]+:[0-9]+", match.group(1))
    names = "abcdefghij"
    return ",".join(f"{names[i]}={address}" for i, address in enumerate(addresses))


class CronJobInPodman(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # podman reads these itself; without them it would use the host's store.
        for name in ("CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF"):
            required(name)
        cls.image = required("RBDSYNC_TEST_IMAGE")
        cls.work = tempfile.mkdtemp(prefix="rbd-sync-container-test.")
        objects = {}
        for name in ("cronjob.yaml", "migrate-job.yaml", "cephclient.yaml"):
            objects[name] = kubelet.load(os.path.join(MANIFESTS, name))
        cls.cronjob = kubelet.find(objects["cronjob.yaml"], "CronJob", "rbd-sync")
        cls.migrate = kubelet.find(objects["migrate-job.yaml"], "Job", "rbd-sync-migrate")
        cephclient = kubelet.find(objects["cephclient.yaml"], "CephClient", "rbd-sync")
        config = kubelet.find(objects["cronjob.yaml"], "ConfigMap", "rbd-sync")["data"]
        # What Rook does for the CephClient: a client of its name with its caps, whose key
        # goes into the Secret rook-ceph-client-NAME under the key NAME.
        client = cephclient["metadata"]["name"]
        caps = []
        for service, cap in cephclient["spec"]["caps"].items():
            caps += [service, cap]
        ceph_cli("ceph", "auth", "rm", f"client.{client}")
        ceph_cli("ceph", "auth", "get-or-create", f"client.{client}", *caps)
        cls.key = ceph_cli("ceph", "auth", "get-key", f"client.{client}").strip()
        db = required("RBDSYNC_TEST_DB")
        with open(required("PGPASSFILE"), encoding="utf-8") as stream:
            pgpass = stream.read()
        cls.objects = {
            ("ConfigMap", "rook-ceph-mon-endpoints"): {
                "data": rook_mon_endpoints(required("RBDSYNC_TEST_CEPH_CONF")),
                "mapping": "{}", "maxMonId": "0"},
            ("Secret", f"rook-ceph-client-{client}"): {client: cls.key},
            # The manifest's keys, with this suite's database in place of the example's.
            ("ConfigMap", "rbd-sync"): {key: db for key in config},
            ("Secret", "rbd-sync-pgpass"): {"pgpass": pgpass},
            ("Secret", "rbd-sync-owner-pgpass"): {"pgpass": pgpass},
            # The suite's database has no TLS: the CA is mounted and not read.
            ("ConfigMap", "rbd-sync-db-ca"): {"ca.crt": "(the test database has no TLS)\n"},
        }
        # The manifests name the image in a registry; here it is the one just built, whose
        # tag (the package's version) the manifests' must match.
        cls.images = {}
        for workload in (cls.cronjob, cls.migrate):
            spec = kubelet.pod_spec(workload)
            for container in spec.get("initContainers", []) + spec["containers"]:
                if not container["image"].endswith("/" + cls.image):
                    raise RuntimeError(f"{workload['metadata']['name']} runs "
                                       f"{container['image']}, not the image built here "
                                       f"({cls.image}): is the manifest's tag the version?")
                cls.images[container["image"]] = cls.image
        # A pool and images of its own: what the CronJob's sync must store.
        cls.pool = f"container-{uuid.uuid4().hex[:8]}"
        ceph_cli("ceph", "osd", "pool", "create", cls.pool, "8")
        ceph_cli("rbd", "pool", "init", cls.pool)
        cls.expected = {}
        for name, size_mib in (("vm-disk-1", 64), ("vm-disk-2", 128)):
            ceph_cli("rbd", "create", "--size", f"{size_mib}M", f"{cls.pool}/{name}")
            cls.expected[name] = size_mib << 20
        ceph_cli("rbd", "snap", "create", f"{cls.pool}/vm-disk-1@nightly")

    @classmethod
    def tearDownClass(cls):
        ceph_cli("ceph", "osd", "pool", "rm", cls.pool, cls.pool, "--yes-i-really-really-mean-it")
        shutil.rmtree(cls.work, ignore_errors=True)

    def setUp(self):
        psql("DROP SCHEMA IF EXISTS rbdsync CASCADE")

    def run_pod(self, workload):
        pod = kubelet.Pod(kubelet.pod_spec(workload), self.objects, self.work)
        return pod.run(self.images)

    def migrate_and_sync(self):
        migrated = self.run_pod(self.migrate)
        self.assertEqual(migrated.returncode, 0, migrated.stderr)
        self.assertEqual(json.loads(migrated.stdout)["status"], "succeeded", migrated.stdout)
        return self.run_pod(self.cronjob)

    def test_the_key_is_aes256k_as_current_rooks_are(self):
        # What makes the image sid's: older Ceph libraries cannot read this key.
        self.assertEqual(int.from_bytes(base64.b64decode(self.key)[:2], "little"),
                         KEY_TYPE_AES256K, self.key)

    def test_the_cronjobs_pod_syncs_the_cluster_into_the_database(self):
        synced = self.migrate_and_sync()
        self.assertEqual(synced.returncode, 0, synced.stderr)
        answer = json.loads(synced.stdout)
        self.assertEqual(answer["status"], "succeeded", synced.stdout)
        self.assertEqual(answer["fsid"], ceph_cli("ceph", "fsid").strip())
        rows = psql("SELECT i.name || ' ' || i.size_bytes FROM rbdsync.images i "
                    "JOIN rbdsync.pools p USING (fsid, pool_id) "
                    f"WHERE p.name = '{self.pool}' ORDER BY i.name")
        self.assertEqual(rows, [f"{name} {size}" for name, size in sorted(self.expected.items())])
        snapshots = psql("SELECT s.name FROM rbdsync.snapshots s JOIN rbdsync.images i "
                         "USING (fsid, pool_id, namespace, image_id) WHERE i.name = 'vm-disk-1'")
        self.assertEqual(snapshots, ["nightly"])
        self.assertEqual(psql("SELECT trigger || ' ' || status FROM rbdsync.runs"),
                         ["cron succeeded"])

    def test_a_busy_guard_is_not_a_failed_job(self):
        # Another sync of this cluster (in another pod, on another host) holds the
        # cluster's advisory lock: the pod answers "already running" and exits 0.
        migrated = self.run_pod(self.migrate)
        self.assertEqual(migrated.returncode, 0, migrated.stderr)
        fsid = ceph_cli("ceph", "fsid").strip()
        holder = subprocess.Popen(["psql", "-X", "-A", "-t", required("RBDSYNC_TEST_DB")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            holder.stdin.write("SELECT pg_catalog.pg_advisory_lock(pg_catalog.hashtextextended("
                               f"'rbd-sync:' || '{fsid}', 0));\n\\echo held\n")
            holder.stdin.flush()
            # Waits for the lock itself: psql answers only once it holds it.
            for line in holder.stdout:
                if line.strip() == "held":
                    break
            else:
                self.fail("psql ended before it held the advisory lock")
            busy = self.run_pod(self.cronjob)
        finally:
            holder.stdin.close()
            holder.wait(timeout=60)
            holder.stdout.close()
        self.assertEqual(busy.returncode, 0, busy.stderr)
        answer = json.loads(busy.stdout)
        self.assertEqual(answer["status"], "already_running", busy.stdout)
        self.assertEqual(answer["exit_code"], 0)
        self.assertIn("already running", busy.stderr)
        self.assertEqual(psql("SELECT count(*) FROM rbdsync.runs"), ["0"])

    def test_the_consoles_sync_now_job_syncs_as_the_button(self):
        # What the console creates from the CronJob for "Sync now" (as the API server
        # returns the CronJob: with a uid), run as Kubernetes would run that Job.
        migrated = self.run_pod(self.migrate)
        self.assertEqual(migrated.returncode, 0, migrated.stderr)
        cronjob = dict(self.cronjob, metadata=dict(self.cronjob["metadata"], uid=str(uuid.uuid4())))
        job = kubernetes.job_from_cronjob(cronjob, "web", "alice")
        self.assertEqual(job["metadata"]["ownerReferences"][0]["name"], "rbd-sync")
        synced = self.run_pod(job)
        self.assertEqual(synced.returncode, 0, synced.stderr)
        self.assertEqual(json.loads(synced.stdout)["status"], "succeeded", synced.stdout)
        self.assertEqual(psql("SELECT trigger || ' ' || requested_by || ' ' || status "
                              "FROM rbdsync.runs"), ["web alice succeeded"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
