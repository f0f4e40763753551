""""Sync now" from a web server that holds no secret (issue #35), in headless Chromium.

Three users stand in for the package's (unique names, so that suites side by side do not
collide; removed afterwards): the runner (as the user rbd-sync: it alone reads the
writer's .pgpass and the keyring), the web server's user (in the stand-in for the group
rbd-sync-web only, with the read-only role's password), and an outsider. The trigger
socket is served as rbd-sync-trigger.socket serves it (tests/trigger.py), `rbd-sync serve`
running as the runner. The site runs as the web user in a process group of its own,
killed whole right after the first press, as a restart of a web server kills it; a fresh
one answers the second press. Needs root (useradd, setpriv), as CI runs."""
import fcntl
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from django.db import connections
from django.test import tag

from .. import conf
from ..dbsettings import conninfo_from_database
from ..models import Run
from .ceph import TestPool
from .support import (images_table_locked, process_gone, required_env, source_path,
                      wait_until, wipe_inventory)
from .test_browser import RUN_ID, PageDriver, Timer, headless_chromium
from .test_grants import GRANT_SQL, admin_execute, dbname
from .trigger import TriggerSocket, service_file_lines, writer_conninfo

# The app under test: the installed copy the runner imported (tests/console/).
APP = Path(__file__).resolve().parents[1]
# Held while adding and removing accounts: another suite on this machine may be adding
# users (useradd fails while /etc/passwd is locked); the C++ suite takes it too.
ACCOUNTS_LOCK = "/tmp/rbd-sync-test-accounts.lock"


def run(*command, check=True):
    return subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          check=check)


def as_user(uid, gid, *command):
    """`command` as `uid`:`gid` with that user's supplementary groups (setpriv)."""
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--init-groups", "--", *command]


class Accounts:
    """A group and three system users: runner (own group), web (in the group only),
    outsider (nogroup)."""

    def __init__(self):
        tag_ = f"{os.getpid() % 100000}{secrets.token_hex(2)}"
        self.group, self.runner = f"rsweb{tag_}", f"rsrun{tag_}"
        self.web, self.outsider = f"rswww{tag_}", f"rsout{tag_}"
        with open(ACCOUNTS_LOCK, "a") as lock:  # pylint: disable=unspecified-encoding
            fcntl.flock(lock, fcntl.LOCK_EX)
            run("groupadd", "--system", self.group)
            common = ["--system", "--no-create-home", "--home-dir", "/nonexistent",
                      "--shell", "/usr/sbin/nologin"]
            run("useradd", *common, "--user-group", self.runner)
            run("useradd", *common, "--no-user-group", "--gid", self.group, self.web)
            run("useradd", *common, "--no-user-group", "--gid", "nogroup", self.outsider)

    def ids(self, user):
        return int(run("id", "-u", user).stdout), int(run("id", "-g", user).stdout)

    def gid(self):
        return int(run("getent", "group", self.group).stdout.split(":")[2])

    def remove(self):
        with open(ACCOUNTS_LOCK, "a") as lock:  # pylint: disable=unspecified-encoding
            fcntl.flock(lock, fcntl.LOCK_EX)
            for user in (self.runner, self.web, self.outsider):
                run("userdel", user, check=False)
            run("groupdel", self.group, check=False)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@tag("browser")
class SyncNowWithoutSecretsInBrowser(PageDriver, StaticLiveServerTestCase):
    """StaticLiveServerTestCase for its test database and Chromium's life; the page under
    test is served by the web user's own server, not by this process."""

    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise RuntimeError("this test adds users and runs processes as them: run it as root "
                               "(CI does)")
        cls.timer = Timer()
        super().setUpClass()
        cls.dir = tempfile.mkdtemp(prefix="rbdsync-trigger-browser.")
        cls.addClassCleanup(shutil.rmtree, cls.dir, ignore_errors=True)
        os.chmod(cls.dir, 0o755)
        cls.accounts = Accounts()
        cls.addClassCleanup(cls.accounts.remove)
        cls.pool = TestPool("django-trigger-browser")
        cls.addClassCleanup(cls.pool.close)
        cls.names = {f"img-{n}" for n in range(6)}
        for name in sorted(cls.names):
            cls.pool.create_image(name)
        cls.timer.step("accounts and pool")
        cls.browser = headless_chromium(os.path.join(cls.dir, "chromium"))
        cls.addClassCleanup(cls.browser.quit)
        cls.timer.step("chromium started")

    def setUp(self):
        self.addCleanup(wipe_inventory)
        self.runner_ids = self.accounts.ids(self.accounts.runner)
        self.web_ids = self.accounts.ids(self.accounts.web)
        self.outsider_ids = self.accounts.ids(self.accounts.outsider)
        self.secrets = self.runners_secrets()
        self.trigger = self.trigger_socket()
        self.addCleanup(self.trigger.close)
        self.site_env = self.web_site()
        self.server = None
        self.addCleanup(self.stop_site)
        self.timer.step("trigger socket and the web user's site ready")

    # ------------------------------------------------------------ the deployment

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def runners_secrets(self):
        """The writer's .pgpass and the client keyring, the runner's alone (0600 in a 0700
        directory), as the install guide leaves them for the user rbd-sync."""
        directory = self.path("runner")
        os.makedirs(directory, mode=0o700, exist_ok=True)
        files = {"pgpass": required_env("PGPASSFILE"),
                 "keyring": os.path.join(required_env("RBDSYNC_TEST_CEPH_DIR"),
                                         f'ceph.client.{required_env("RBDSYNC_TEST_CEPH_ID")}'
                                         ".keyring")}
        for name, source in files.items():
            shutil.copyfile(source, os.path.join(directory, name))
            os.chmod(os.path.join(directory, name), 0o600)
            os.chown(os.path.join(directory, name), *self.runner_ids)
        os.chown(directory, *self.runner_ids)
        return {name: os.path.join(directory, name) for name in files}

    def trigger_socket(self):
        # Readable by all, as /etc/ceph/ceph.conf and /etc/default/rbd-sync are: no secret.
        os.makedirs(self.path("default"), exist_ok=True)
        shutil.copyfile(required_env("RBDSYNC_TEST_CEPH_CONF"), self.path("ceph.conf"))
        os.chmod(self.path("ceph.conf"), 0o644)
        service_file = self.path("default", "pg_service.conf")
        Path(service_file).write_text(
            "\n".join(service_file_lines(writer_conninfo(), "rbd-sync-test")) + "\n")
        # The lock directory: the runner's (as /run/lock/rbd-sync is the group rbd-sync's).
        os.makedirs(self.path("lock"), mode=0o755, exist_ok=True)
        os.chown(self.path("lock"), *self.runner_ids)
        self.lock_file = self.path("lock", "sync.lock")
        Path(self.path("default", "rbd-sync")).write_text(
            "# as /etc/default/rbd-sync\n"
            f'RBDSYNC_ARGS="--db service=rbd-sync-test --conf {self.path("ceph.conf")} '
            f'--id {required_env("RBDSYNC_TEST_CEPH_ID")} --keyring {self.secrets["keyring"]} '
            f'--pool {self.pool.name} --ceph-timeout 20 --lock-file {self.lock_file}"\n'
            f"PGSERVICEFILE={service_file}\n"
            f'PGPASSFILE={self.secrets["pgpass"]}\n')
        for path in (self.path("default"), self.path("default", "rbd-sync"), service_file):
            os.chmod(path, 0o755 if os.path.isdir(path) else 0o644)
        # The socket's directory is root's, as /run/rbd-sync is; the socket root:group 0660.
        os.makedirs(self.path("run"), mode=0o755, exist_ok=True)
        return TriggerSocket(self.path("run", "trigger.sock"), self.path("default"),
                             run_as=self.runner_ids, socket_gid=self.accounts.gid())

    def web_site(self):
        """The site's files, its read-only role and .pgpass (the web user's), its Django
        tables in a schema of its own, and a superuser to log in as."""
        site = self.path("site")
        # The demo site's project files and the app under test, which the web user reads.
        demo = source_path("contrib", "django")
        shutil.copytree(demo / "demo_site", os.path.join(site, "demo_site"), dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(demo / "manage.py", site)
        shutil.copytree(APP, os.path.join(site, "rbdsync_console"), dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "tests"))
        admin = required_env("RBDSYNC_TEST_DB_ADMIN")
        database = conninfo_from_database(connections[conf.get("DATABASE")].settings_dict)
        role, password = f"console_www_{os.getpid()}", secrets.token_hex(16)
        test_db = f"{admin} {dbname(database)}"
        admin_execute(admin, f'CREATE ROLE "{role}" LOGIN PASSWORD %s', (password,))
        self.addCleanup(admin_execute, admin, f'DROP ROLE "{role}"')
        self.addCleanup(admin_execute, test_db, f'DROP OWNED BY "{role}"')
        admin_execute(test_db, f'CREATE SCHEMA "{role}" AUTHORIZATION "{role}"')
        admin_execute(test_db, f'ALTER ROLE "{role}" SET search_path = "{role}"')
        owner = dict(part.split("=", 1) for part in database.split())["user"]
        run("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", f"role={role}",
            "-v", f"owner={owner}", "-d", test_db, "-f", str(GRANT_SQL))
        home = self.path("www")
        os.makedirs(home, mode=0o700, exist_ok=True)
        port = dict(part.split("=", 1) for part in database.split())["port"]
        Path(home, "pgpass").write_text(f"127.0.0.1:{port}:*:{role}:{password}\n")
        os.chmod(Path(home, "pgpass"), 0o600)
        for path in (home, os.path.join(home, "pgpass")):
            os.chown(path, *self.web_ids)
        self.login_password = secrets.token_hex(9)
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home,
               "PYTHONDONTWRITEBYTECODE": "1", "PGPASSFILE": os.path.join(home, "pgpass"),
               "DJANGO_SETTINGS_MODULE": "demo_site.settings",
               "DJANGO_SECRET_KEY": secrets.token_hex(32),
               "RBDSYNC_CONSOLE_DB": database.replace(f"user={owner}", f"user={role}"),
               "RBDSYNC_CONSOLE_TRIGGER_SOCKET": self.trigger.path,
               "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
        manage = as_user(*self.web_ids, sys.executable, os.path.join(site, "manage.py"))
        for step in (["migrate", "--noinput", "-v", "0"],
                     ["createsuperuser", "--noinput", "--username", "operator",
                      "--email", "operator@example.invalid"]):
            finished = subprocess.run(manage + step, cwd=site, capture_output=True, text=True,
                                      env={**env, "DJANGO_SUPERUSER_PASSWORD":
                                           self.login_password}, check=False)
            self.assertEqual(finished.returncode, 0, f"manage.py {step[0]}: {finished.stderr}")
        self.site_command = manage
        self.site_dir = site
        return env

    def start_site(self):
        """The web user's server in a process group of its own; returns once it answers.
        A port another process took between the probe and the server's bind is tried
        again with another."""
        for _ in range(5):
            self.port = free_port()
            with open(self.path("site.log"), "a", encoding="utf-8") as log:
                self.server = subprocess.Popen(
                    self.site_command + ["runserver", "--noreload", "--insecure",
                                         f"127.0.0.1:{self.port}"],
                    cwd=self.site_dir, env=self.site_env, stdin=subprocess.DEVNULL,
                    stdout=log, stderr=log, start_new_session=True)
            if wait_until("the web user's site to answer or exit", self.site_answers_or_exited,
                          seconds=60) == "answers":
                return
            if "That port is already in use" not in Path(self.path("site.log")).read_text():
                break
        self.fail(f"the site exited {self.server.returncode}: "
                  f"{Path(self.path('site.log')).read_text()}")

    def site_answers_or_exited(self):
        if self.server.poll() is not None:
            return "exited"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/accounts/login/",
                                        timeout=5) as response:
                return "answers" if response.status == 200 else None
        except (urllib.error.URLError, ConnectionError):
            return None

    def kill_site(self):
        """As a restart kills a web server: SIGTERM, then SIGKILL, to its whole group."""
        os.killpg(self.server.pid, signal.SIGTERM)
        os.killpg(self.server.pid, signal.SIGKILL)
        self.server.wait()

    def stop_site(self):
        if self.server is not None and self.server.poll() is None:
            self.kill_site()

    def can(self, ids, *code):
        """Whether Python `code` runs without error as user `ids` (exit 0), else its stderr."""
        finished = subprocess.run(as_user(*ids, sys.executable, "-c", "\n".join(code)),
                                  capture_output=True, text=True, check=False)
        return finished.returncode == 0, finished.stderr.strip()

    # ------------------------------------------------------------ the page

    def failure_state(self):
        return (f"notice: {self.text('notice')}; site log: "
                f"{Path(self.path('site.log')).read_text()[-2000:]}; trigger: "
                f"{self.trigger.journal_text()[-2000:]}")

    def open_page(self):
        self.log_in_at(f"http://127.0.0.1:{self.port}/", self.login_password)

    # ------------------------------------------------------------ the test

    def test_the_web_user_holds_no_secret_asks_twice_and_a_restart_leaves_the_run(self):
        # Who may read and connect to what: the web user neither secret, the outsider not
        # the socket; the web user may connect (it is in the group).
        for name, path in self.secrets.items():
            allowed, error = self.can(self.web_ids, f"open({path!r}).read()")
            self.assertFalse(allowed, f"the web user reads the runner's {name}")
            self.assertIn("PermissionError", error)
        connect = ("import socket", "s = socket.socket(socket.AF_UNIX)",
                   f"s.connect({self.trigger.path!r})")
        allowed, error = self.can(self.outsider_ids, *connect)
        self.assertFalse(allowed, "a user outside the group connects to the trigger socket")
        self.assertIn("PermissionError", error)
        self.assertEqual(self.can(self.web_ids, *connect), (True, ""))
        self.timer.step("permissions checked")

        self.start_site()
        self.open_page()
        # The run's writes wait behind this session's lock, so it is still running when
        # the server is killed and when the second press arrives.
        with images_table_locked():  # ends: the first run's writes go ahead
            first = self.press_for_answer()
            self.assertEqual(first["state"], "started", first)
            self.assertRegex(first["run_id"], RUN_ID)
            pid = first["pid"]
            self.kill_site()
            self.timer.step(f"first press: run {first['run_id']} (pid {pid}); site killed")
            self.assertFalse(process_gone(pid), "the run died with the web server")
            self.assertEqual(os.stat(f"/proc/{pid}").st_uid, self.runner_ids[0],
                             "the run is the runner's, not the web user's")

            self.start_site()
            self.open_page()
            second = self.press_for_answer()
            self.assertEqual(second["state"], "already_running", second)
            self.assertEqual(second["run_id"], first["run_id"], "names the first run")
            self.assertIn("already running: started by web (operator) at ", self.text("notice"))
            self.assertIn(f"(pid {pid} on ", self.text("notice"))
            self.timer.step("second press, from a restarted site: already running")

        wait_until(f"run pid {pid} to end", lambda: process_gone(pid), seconds=120)
        run_row = Run.objects.get(run_id=first["run_id"])
        self.assertEqual((run_row.status, run_row.trigger, run_row.requested_by, run_row.pid,
                          run_row.images), ("succeeded", "web", "operator", pid, len(self.names)))
        self.wait_for("the page to show the run's end",
                      lambda: self.text("notice").startswith("sync succeeded"))
        self.assertTrue(self.text("last-run").startswith("Last sync: succeeded (by web (operator))"),
                        self.text("last-run"))
        self.assertIn("request from uid", self.trigger.journal_text())
        self.timer.step("the run committed as the runner; the page names the operator")
