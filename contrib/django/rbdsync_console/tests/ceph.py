"""A pool of the test's own on the cluster scripts/test.sh starts, through python3-rados
and python3-rbd as client.admin (RBDSYNC_TEST_CEPH_CONF, RBDSYNC_TEST_CEPH_ADMIN_ID)."""
import os
import time

import rados
import rbd

from .support import MIB, required_env


class TestPool:
    """Created at construction, deleted by close(). Images as `rbd create` makes them."""

    def __init__(self, prefix):
        self.cluster = rados.Rados(conffile=required_env("RBDSYNC_TEST_CEPH_CONF"),
                                   rados_id=required_env("RBDSYNC_TEST_CEPH_ADMIN_ID"))
        self.cluster.connect(timeout=30)
        self.name = f"{prefix}-{os.getpid()}-{int(time.time())}"
        self.cluster.create_pool(self.name)
        self.io = self.cluster.open_ioctx(self.name)
        rbd.RBD().pool_init(self.io, False)

    def close(self):
        self.io.close()
        self.cluster.delete_pool(self.name)
        self.cluster.shutdown()

    def create_image(self, name, size=8 * MIB, written=0):
        """An image with `rbd create`'s default features (fast-diff: its usage is known),
        `written` bytes of it written from the start."""
        rbd.RBD().create(self.io, name, size, old_format=False, features=(
            rbd.RBD_FEATURE_LAYERING | rbd.RBD_FEATURE_EXCLUSIVE_LOCK
            | rbd.RBD_FEATURE_OBJECT_MAP | rbd.RBD_FEATURE_FAST_DIFF
            | rbd.RBD_FEATURE_DEEP_FLATTEN))
        if written:
            with rbd.Image(self.io, name) as image:
                image.write(b"\x5a" * written, 0)

    def create_golden_and_clone(self, golden, clone, size=64 * MIB):
        """`golden` with a protected snapshot v1, and `clone` made from it."""
        self.create_image(golden, size, written=size // 4)
        with rbd.Image(self.io, golden) as image:
            image.create_snap("v1")
            image.protect_snap("v1")
        rbd.RBD().clone(self.io, golden, "v1", self.io, clone, features=rbd.RBD_FEATURE_LAYERING)

    def remove_image(self, name):
        rbd.RBD().remove(self.io, name)

    def run_settings(self, lock_file):
        """RBDSYNC_CONSOLE entries that make rbd-sync sync this pool (other tests' pools
        come and go on the shared cluster) with the unprivileged test client."""
        return {"LOCK_FILE": lock_file, "CEPH_CONF": required_env("RBDSYNC_TEST_CEPH_CONF"),
                "CEPH_ID": required_env("RBDSYNC_TEST_CEPH_ID"),
                "EXTRA_ARGS": ["--pool", self.name, "--ceph-timeout", "20"]}

    def settings_args(self, lock_file):
        """The same as RBDSYNC_ARGS of a settings file (rbd-sync serve: split at blanks)."""
        return (f'--conf {required_env("RBDSYNC_TEST_CEPH_CONF")} '
                f'--id {required_env("RBDSYNC_TEST_CEPH_ID")} --pool {self.name} '
                f"--ceph-timeout 20 --lock-file {lock_file}")
