#!/usr/bin/python3
"""The reference console page (examples/console) in a real browser, against the real
binary and the services scripts/test.sh starts (issue #10).

    console_test.py RBD_SYNC_BINARY ARTIFACT_DIR

Headless Chromium (Debian's chromium + chromium-driver, python3-selenium) presses
"Sync now" twice: the first press shows a progress bar and then the new images, the
second "already running" naming the first run. A session of the test holds a lock the
sync's writes wait for, so the first run is still busy when the second press lands,
however fast the machine. Screenshots go to ARTIFACT_DIR. A missing service, browser or
driver fails the test; it never skips.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import psycopg2
import rados
import rbd
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONSOLE = os.path.join(SOURCE_DIR, "examples", "console", "console.py")
ROLE_SQL = os.path.join(SOURCE_DIR, "examples", "console", "readonly-role.sql")
# Debian's builds, named explicitly: selenium-manager must never try to download a driver.
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
IMAGES = 40
MIB = 1 << 20

RBD_SYNC = ARTIFACTS = None  # from the command line


def required_env(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run the integration tests through "
                           "./scripts/test.sh, which starts the throwaway Ceph cluster and "
                           "PostgreSQL server")
    return value


def admin_sql(conninfo, statement, params=None):
    connection = psycopg2.connect(conninfo)
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            if params:
                # A password must not reach the server log, even if the statement fails
                # (the admin role is a superuser and may say so).
                cursor.execute("SET log_min_error_statement = panic; SET log_statement = 'none'")
            cursor.execute(statement, params)
    finally:
        connection.close()


class Timer:
    """Prints how long each step took: the test's timings are part of its report."""

    def __init__(self):
        self.start = self.last = time.monotonic()

    def step(self, what):
        now = time.monotonic()
        print(f"console_test: {what}: {now - self.last:.1f}s (total {now - self.start:.1f}s)",
              flush=True)
        self.last = now


class ConsolePage(unittest.TestCase):
    """One database, pool, read-only role, console server and browser for the class."""

    @classmethod
    def setUpClass(cls):
        cls.timer = Timer()
        cls.dir = tempfile.mkdtemp(prefix="rbd-sync-console-test.")
        cls.addClassCleanup(shutil.rmtree, cls.dir, ignore_errors=True)
        suffix = f"{os.getpid()}_{int(time.time())}"

        # A database of its own, migrated by the binary under test.
        base = required_env("RBDSYNC_TEST_DB")
        admin = required_env("RBDSYNC_TEST_DB_ADMIN")
        required_env("PGPASSFILE")
        cls.db_name = f"rbdsync_console_{suffix}"
        cls.role = f"rbdsync_console_{suffix}"
        admin_sql(base, f'CREATE DATABASE "{cls.db_name}"')
        # The role's grants live in the database: drop that first.
        cls.addClassCleanup(admin_sql, admin, f'DROP ROLE IF EXISTS "{cls.role}"')
        cls.addClassCleanup(admin_sql, base, f'DROP DATABASE "{cls.db_name}" WITH (FORCE)')
        cls.db = f"{base} dbname={cls.db_name}"  # libpq keeps the last dbname
        subprocess.run([RBD_SYNC, "migrate", "--db", cls.db], check=True, capture_output=True)

        # The console's read-only role, made by the documented script; its password goes
        # to a pgpass of the test's own, next to the writer's.
        owner = re.search(r"user=(\S+)", base).group(1)  # the role rbd-sync migrates as
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", f"role={cls.role}",
                        "-v", f"owner={owner}", "-d", f"{admin} dbname={cls.db_name}",
                        "-f", ROLE_SQL], check=True, capture_output=True)
        password = os.urandom(16).hex()
        admin_sql(admin, f'ALTER ROLE "{cls.role}" PASSWORD %s', (password,))
        port = re.search(r"port=(\d+)", base).group(1)
        cls.pgpass = os.path.join(cls.dir, "pgpass")
        with open(os.environ["PGPASSFILE"], encoding="utf-8") as writer_pgpass:
            lines = writer_pgpass.read()
        with open(os.open(cls.pgpass, os.O_WRONLY | os.O_CREAT, 0o600), "w") as pgpass:
            pgpass.write(f"{lines.rstrip()}\n127.0.0.1:{port}:*:{cls.role}:{password}\n")
        cls.console_db = re.sub(r"user=\S+", f"user={cls.role}", cls.db)

        # A pool of its own on the test cluster, as client.admin.
        cls.cluster = rados.Rados(conffile=required_env("RBDSYNC_TEST_CEPH_CONF"),
                                  rados_id=required_env("RBDSYNC_TEST_CEPH_ADMIN_ID"))
        cls.cluster.connect(timeout=30)
        cls.addClassCleanup(cls.cluster.shutdown)
        cls.pool = f"console-{suffix}".replace("_", "-")
        cls.cluster.create_pool(cls.pool)
        cls.addClassCleanup(cls.cluster.delete_pool, cls.pool)
        cls.io = cls.cluster.open_ioctx(cls.pool)
        cls.addClassCleanup(cls.io.close)
        rbd.RBD().pool_init(cls.io, False)
        cls.timer.step("database, role and pool")

        cls.start_console()
        cls.start_browser()

    @classmethod
    def start_console(cls):
        run_args = ["--db", cls.db, "--ceph-conf", required_env("RBDSYNC_TEST_CEPH_CONF"),
                    "--id", required_env("RBDSYNC_TEST_CEPH_ID"),
                    "--lock-file", os.path.join(cls.dir, "sync.lock"), "--ceph-timeout", "20",
                    "--pool", cls.pool]  # other tests' pools come and go on the cluster
        cls.console = subprocess.Popen(
            ["/usr/bin/python3", CONSOLE, "--listen", "127.0.0.1:0", "--db", cls.console_db,
             "--rbd-sync", RBD_SYNC, "--", *run_args],
            stdout=subprocess.PIPE, text=True, env={**os.environ, "PGPASSFILE": cls.pgpass})
        cls.addClassCleanup(cls.console.wait, 10)
        cls.addClassCleanup(cls.console.terminate)
        line = cls.console.stdout.readline()
        if not line.startswith("console: http://127.0.0.1:"):
            raise RuntimeError(f"the console did not start: {line!r}")
        cls.url = line.split()[1]
        cls.timer.step(f"console at {cls.url}")

    @classmethod
    def start_browser(cls):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ("--headless=new", "--window-size=1280,1000",
                         "--no-sandbox",  # Chromium refuses to sandbox as root, as CI runs
                         "--disable-dev-shm-usage",  # containers have a tiny /dev/shm
                         f"--user-data-dir={os.path.join(cls.dir, 'chromium')}"):
            options.add_argument(argument)
        cls.browser = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER),
                                       options=options)
        cls.addClassCleanup(cls.browser.quit)
        cls.timer.step("chromium started")

    # ------------------------------------------------------------ helpers

    def wait_for(self, what, condition, seconds=30):
        try:
            return WebDriverWait(self.browser, seconds, poll_frequency=0.1).until(
                lambda _: condition())
        except TimeoutException:
            self.screenshot("console-failure.png")
            state = {key: self.text(key) for key in ("notice", "progress-text", "last-run")}
            self.fail(f"waited {seconds}s for {what}; the page shows {state}, "
                      f"images {sorted(self.image_names())}")

    def text(self, element_id):
        return self.browser.execute_script(
            "const e = document.getElementById(arguments[0]); return e ? e.textContent : null;",
            element_id)

    def image_names(self):
        # Read in one script: the table may be swapped out between two element lookups.
        return set(self.browser.execute_script(
            "return [...document.querySelectorAll('#inventory td.image-name')]"
            ".map(cell => cell.textContent);"))

    def progress_visible(self):
        return self.browser.execute_script("return !document.getElementById('progress').hidden;")

    def press(self):
        """Clicks "Sync now" and waits for the console's answer to the request."""
        button = self.browser.find_element(By.ID, "sync-now")
        before = self.text("notice")
        button.click()
        return self.wait_for("the answer to Sync now",
                             lambda: button.is_enabled() and self.text("notice") != before
                             and self.text("notice"), seconds=10)

    def screenshot(self, name):
        os.makedirs(ARTIFACTS, exist_ok=True)
        path = os.path.join(ARTIFACTS, name)
        self.assertTrue(self.browser.save_screenshot(path), path)
        print(f"console_test: screenshot {path}", flush=True)

    def create_image(self, name, size=8 * MIB):
        rbd.RBD().create(self.io, name, size, old_format=False,
                         features=rbd.RBD_FEATURE_LAYERING | rbd.RBD_FEATURE_EXCLUSIVE_LOCK)

    # ------------------------------------------------------------ tests

    def test_console_role_reads_the_inventory_and_cannot_write(self):
        connection = psycopg2.connect(self.console_db, passfile=self.pgpass)
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM rbdsync.images")
                # Read-only sessions are the first fence; the grants are the real one.
                cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE")
                with self.assertRaises(psycopg2.errors.InsufficientPrivilege):
                    cursor.execute("DELETE FROM rbdsync.runs")
        finally:
            connection.close()

    def test_sync_now_twice_shows_progress_then_already_running_then_the_inventory(self):
        timer = Timer()
        names = {f"img-{n}" for n in range(IMAGES)}
        for name in sorted(names):
            self.create_image(name)
        self.create_image("golden", 64 * MIB)
        with rbd.Image(self.io, "golden") as golden:
            golden.create_snap("v1")
            golden.protect_snap("v1")
        rbd.RBD().clone(self.io, "golden", "v1", self.io, "vm-1",
                        features=rbd.RBD_FEATURE_LAYERING)
        names |= {"golden", "vm-1"}
        timer.step(f"{len(names)} images created")

        self.browser.get(self.url)
        self.assertEqual(self.text("last-run"), "Last sync: never")
        self.assertEqual(self.image_names(), set())

        # The sync's writes wait behind this session's lock (as behind a long report
        # query), so the first run is still going when the second press arrives.
        blocker = psycopg2.connect(self.db)
        try:
            with blocker.cursor() as cursor:
                cursor.execute("LOCK TABLE rbdsync.images IN EXCLUSIVE MODE")

            first = self.press()
            match = re.fullmatch(r"sync started \(pid (\d+)\)", first)
            self.assertTrue(match, first)
            pid = match.group(1)
            # "reading 12/42": the row's phase, and its counts once the total is known
            # (where the run waits for the lock depends on rbd-sync's write order).
            progress = self.wait_for(
                "the progress bar to show the run's row",
                lambda: self.progress_visible() and re.fullmatch(
                    r"(?!starting)[a-z-]+( \d+/\d+)?", self.text("progress-text") or "")
                and self.text("progress-text"))
            timer.step(f"first press: started pid {pid}, progress '{progress}'")

            second = self.press()
            timer.step("second press answered")
            self.assertIn("already running — started by web at ", second)
            self.assertIn(f"(pid {pid} on ", second)
            self.assertTrue(self.progress_visible(), "the first run's bar stays up")
            self.screenshot("console-already-running.png")
        finally:
            blocker.close()  # rolls back: the first run's writes go ahead

        self.wait_for("the table to show the synced images",
                      lambda: self.image_names() == names)
        self.assertFalse(self.progress_visible())
        self.assertTrue(self.text("last-run").startswith("Last sync: succeeded (by web)"),
                        self.text("last-run"))
        self.assertIn(f"{len(names)} images, {len(names)} added", self.text("notice"))
        self.assert_clone_row()
        timer.step("first run ended, table refreshed")
        self.screenshot("console-after-sync.png")

        # Changes in Ceph show after the next press.
        self.create_image("new-a")
        self.create_image("new-b")
        rbd.RBD().remove(self.io, "img-0")
        names = (names | {"new-a", "new-b"}) - {"img-0"}
        self.press()
        self.wait_for("the table to show new-a and new-b, without img-0",
                      lambda: self.image_names() == names)
        self.assertIn("2 added, 0 changed, 1 removed", self.text("notice"))
        timer.step("third press: added and removed images shown")
        self.screenshot("console-after-changes.png")

    def assert_clone_row(self):
        """Parent and snapshot columns show what the database holds, "—" for NULL (an
        rbd-sync that does not fill them yet)."""
        connection = psycopg2.connect(self.db)
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT to_jsonb(i) FROM rbdsync.images i WHERE name = 'vm-1'")
                row = cursor.fetchone()[0]
        finally:
            connection.close()
        cells = self.browser.execute_script(
            "const row = [...document.querySelectorAll('#inventory tr.image')]"
            ".find(r => r.querySelector('.image-name').textContent === 'vm-1');"
            "return Object.fromEntries([...row.cells].map(c => [c.className, c.textContent]));")
        expected_parent = "—"
        if row.get("parent_image_name"):
            expected_parent = f"{self.pool}/golden@v1"
            if not row.get("parent_pool_name"):
                expected_parent = f"{row['parent_pool_id']}/golden@v1"
        self.assertEqual(cells["parent"], expected_parent)
        snapshots = row.get("snapshot_count")
        self.assertEqual(cells["snapshots"], "—" if snapshots is None else str(snapshots))
        self.assertEqual(cells["size"], "64 MiB")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    RBD_SYNC, ARTIFACTS = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
