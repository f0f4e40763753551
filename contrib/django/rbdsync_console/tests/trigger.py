"""rbd-sync-trigger.socket without systemd (CI has none): Debian's systemd-socket-activate
listens on the socket and starts `rbd-sync serve` for each connection with the connection
as stdin and stdout, as the socket unit's Accept=yes does; the socket gets the owner,
group and mode the unit gives it. The settings file it reads is written as an admin writes
/etc/default/rbd-sync, pointing at the test services."""
import os
import queue
import re
import signal
import subprocess
import threading

from django.db import connections

from .. import conf
from .support import required_env


def service_file_lines(conninfo, name):
    """A pg_service.conf section for a key=value conninfo (libpq takes a key's last value,
    a service file its first: each key goes in once, with its last value)."""
    keys = dict(re.findall(r"(\w+)=(\S+)", conninfo))
    return [f"[{name}]"] + [f"{key}={value}" for key, value in keys.items()]


def writer_conninfo():
    """rbd-sync's --db of the tests (its writer role) on this run's test database."""
    database = connections[conf.get("DATABASE")].settings_dict["NAME"]
    return f'{required_env("RBDSYNC_TEST_DB")} dbname={database}'


class TriggerSocket:
    """Listens on `path` until close(). `settings` is the directory of the settings file
    (`rbd-sync`); `run_as` (uid, gid), when given, is who `serve` runs as (the stand-in for
    the user rbd-sync); the socket is made root:`socket_gid` 0660 as the unit makes it."""

    def __init__(self, path, settings, run_as=None, socket_gid=None, binary=None):
        self.path = path
        self.journal = []
        self._lock = threading.Lock()
        command = ["systemd-socket-activate", "--listen", path, "--accept", "--inetd"]
        if run_as:
            command += ["setpriv", f"--reuid={run_as[0]}", f"--regid={run_as[1]}",
                        "--init-groups", "--"]
        command += [binary or conf.get("BINARY"), "serve", "--settings-dir", settings]
        # Its own session: the tests kill a "web server" with its process group, never this.
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        start_new_session=True, text=True)
        # One reader of the launcher's stderr for its whole life: the lines go to the
        # journal, and each to `lines` for the wait below.
        self._lines = queue.Queue()
        self._drain = threading.Thread(target=self._read_journal, daemon=True)
        self._drain.start()
        self._wait_for_line("Listening on ")
        os.chown(path, 0, socket_gid if socket_gid is not None else 0)
        os.chmod(path, 0o660)

    def _wait_for_line(self, start, seconds=30):
        """Waits until the launcher says a line starting with `start`: it says so once the
        socket listens."""
        try:
            while not self._lines.get(timeout=seconds).startswith(start):
                pass
        except queue.Empty:
            self.close()
            raise RuntimeError(f"systemd-socket-activate did not listen on {self.path} within "
                               f"{seconds} s: {self.journal_text()}") from None

    def _read_journal(self):
        for line in self.process.stderr:
            with self._lock:
                self.journal.append(line)
            self._lines.put(line)

    def journal_text(self):
        with self._lock:
            return "".join(self.journal)

    def close(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait()


def write_settings(directory, rbd_sync_args, extra=()):
    """`directory`/rbd-sync as /etc/default/rbd-sync: RBDSYNC_ARGS, and the variables libpq
    and librados read; the database named by a service (RBDSYNC_ARGS is split at blanks)."""
    os.makedirs(directory, exist_ok=True)
    service_file = os.path.join(directory, "pg_service.conf")
    with open(service_file, "w", encoding="utf-8") as out:
        out.write("\n".join(service_file_lines(writer_conninfo(), "rbd-sync-test")) + "\n")
    lines = [f'RBDSYNC_ARGS="--db service=rbd-sync-test {rbd_sync_args}"',
             f"PGSERVICEFILE={service_file}", f'PGPASSFILE={required_env("PGPASSFILE")}', *extra]
    with open(os.path.join(directory, "rbd-sync"), "w", encoding="utf-8") as out:
        out.write("# as /etc/default/rbd-sync\n" + "\n".join(lines) + "\n")
    return service_file
