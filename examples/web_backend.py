#!/usr/bin/python3
"""How a web backend wires its "Sync now" button to rbd-sync (see docs/web-backend.md).

    web_backend.py press --socket PATH [--cluster NAME] [--requested-by USER] [--times N]
    web_backend.py press [--times N] -- RBD_SYNC_ARGS...   (direct mode: development only)
    web_backend.py watch RUN_ID --db CONNINFO               follow that run's row to its end

`press --socket` asks the package's trigger socket (/run/rbd-sync/trigger.sock): the run
happens as the user rbd-sync, in a unit of its own, and this process holds no password
and no key, only membership of the group rbd-sync-web. Without --socket, `press` runs
`rbd-sync run --detach --trigger web --json ...` itself, as this user, which then needs
the writer's password and a keyring. Either way the answer is the same, from the
guard itself: exit 0 once the run holds both guards ("started run ID pid N"; the sync
goes on in the background, in its own session, so a restart of the web server does not
stop it), 75 when a sync is already running (naming it), or another documented exit
code with a message and a hint. Nothing is guessed from timing. `watch` polls the run's
row in rbdsync.runs, as the page's progress bar would, and prints each change.
Passwords come from PGPASSFILE/.pgpass, never from the command line.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

import psycopg2

RBD_SYNC = os.environ.get("RBD_SYNC", "rbd-sync")

# rbd-sync's exit codes (README "Exit codes"), as the page would word them. A detached
# run answers before it syncs, so 3 (partial) and 130/143 (interrupted) come only from
# the run's row, never from a press.
PRESS_ANSWERS = {
    0: "started",
    64: "rbd-sync was called wrongly (a bug in this backend)",
    65: "Ceph returned data rbd-sync cannot store",
    69: "Ceph or PostgreSQL is unreachable",
    70: "rbd-sync hit an internal error",
    73: "the lock file cannot be opened (deployment: group rbd-sync, tmpfiles.d)",
    75: "already running",
    77: "Ceph or PostgreSQL refused rbd-sync's credentials",
    78: "rbd-sync is not configured (ceph.conf, keyring, database or schema)",
}


def press(rbd_sync_args, rbd_sync=RBD_SYNC, timeout_seconds=120):
    """Presses "Sync now" once. Returns (state, result): state is "started",
    "already_running" or "failed"; result is rbd-sync's JSON answer (always with
    "status", "exit_code", "message" and "hint")."""
    answer = subprocess.run(
        [rbd_sync, "run", "--detach", "--trigger", "web", "--json", *rbd_sync_args],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_seconds,
        check=False)
    try:
        result = json.loads(answer.stdout)
    except ValueError:
        # Not rbd-sync's answer at all (e.g. the binary is missing): say what we know.
        result = {"status": "failed", "exit_code": answer.returncode,
                  "message": answer.stderr.strip() or "no answer from rbd-sync",
                  "hint": f"check that {rbd_sync} is installed and runs"}
    code = answer.returncode
    result.setdefault("message", PRESS_ANSWERS.get(code, f"exit code {code}"))
    result.setdefault("hint", "")
    # The answer's status first: --conflict-exit-code may make a busy guard exit 0.
    if result.get("status") == "already_running" or code == 75:
        return "already_running", result
    if code == 0:
        return "started", result
    return "failed", result


def press_socket(path, cluster="ceph", requested_by=None, timeout_seconds=120):
    """Presses "Sync now" through rbd-sync-trigger.socket: one request line, and the
    answer `run --detach --json` would print, until the socket closes."""
    request = {"cluster": cluster, "trigger": "web"}
    if requested_by:
        request["requested_by"] = requested_by  # the signed-in user: printable, <= 256 bytes
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout_seconds)
            connection.connect(path)
            connection.sendall(json.dumps(request).encode() + b"\n")
            answer = b""
            while b"\n" not in answer:  # one line: the answer
                chunk = connection.recv(65536)
                if not chunk:
                    break
                answer += chunk
        result = json.loads(answer.partition(b"\n")[0])
    except (OSError, ValueError) as error:
        # Not rbd-sync's answer at all (no socket, not in rbd-sync-web): say what we know.
        return "failed", {"status": "failed", "exit_code": 69, "message": str(error),
                          "hint": "systemctl enable --now rbd-sync-trigger.socket; the web "
                                  "server's user must be in the group rbd-sync-web"}
    code = result.get("exit_code")
    if result.get("status") == "already_running" or code == 75:
        return "already_running", result
    if code == 0:
        return "started", result
    return "failed", result


def describe(state, result):
    """One line for the page."""
    if state == "started":
        return f'started run {result["run_id"]} pid {result["pid"]}'
    if state == "already_running":
        return result["message"]  # "already running: pid ... (run ID, lock file ...)"
    wording = PRESS_ANSWERS.get(result["exit_code"], "rbd-sync failed")
    hint = f' (hint: {result["hint"]})' if result["hint"] else ""
    return f'failed: {wording}: {result["message"]}{hint}'


def watch(run_id, conninfo, timeout_seconds=300):
    """Follows run `run_id` until it ends; returns its final status."""
    connection = psycopg2.connect(conninfo)
    connection.autocommit = True
    last = None
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT status, phase, done, total, exit_code, error FROM rbdsync.runs "
                "WHERE run_id = %s", (run_id,))
            row = cursor.fetchone()
        if row and row != last:
            status, phase, done, total, exit_code, error = row
            line = f"run {run_id}: {status} {phase} {done}/{total}"
            if status != "running":
                line += f" exit {exit_code}" + (f": {error}" if error else "")
            print(line, flush=True)
            last = row
            if status != "running":
                return status
        time.sleep(0.2)
    return "timeout"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rbd-sync", default=RBD_SYNC, help="the rbd-sync binary")
    commands = parser.add_subparsers(dest="command", required=True)
    press_parser = commands.add_parser("press")
    press_parser.add_argument("--times", type=int, default=1)
    press_parser.add_argument("--socket", help="rbd-sync-trigger.socket's path")
    press_parser.add_argument("--cluster", default="ceph")
    press_parser.add_argument("--requested-by")
    press_parser.add_argument("rbd_sync_args", nargs=argparse.REMAINDER)
    watch_parser = commands.add_parser("watch")
    watch_parser.add_argument("run_id")
    watch_parser.add_argument("--db", required=True)
    args = parser.parse_args()

    if args.command == "press":
        rbd_sync_args = [a for a in args.rbd_sync_args if a != "--"]
        failed = False
        for _ in range(args.times):
            if args.socket:
                state, result = press_socket(args.socket, args.cluster, args.requested_by)
            else:
                state, result = press(rbd_sync_args, args.rbd_sync)
            print(describe(state, result), flush=True)
            failed = failed or state == "failed"
        return 1 if failed else 0
    # "partial" committed too (exit 3): some images kept their previous rows.
    return 0 if watch(args.run_id, args.db) in ("succeeded", "partial") else 1


if __name__ == "__main__":
    sys.exit(main())
