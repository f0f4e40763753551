#!/usr/bin/python3
"""How a web backend wires its "Sync now" button to rbd-sync (see docs/web-backend.md).

    web_backend.py press [--times N] -- RBD_SYNC_ARGS...   press the button (N times, quickly)
    web_backend.py watch PID --db CONNINFO [--result FILE]  follow that run's row to its end

`press` starts `rbd-sync run --trigger web --json ...` detached and answers at once:
"started pid N" while it runs, or "already running: ..." when the guard was busy (exit
75, which rbd-sync reports within milliseconds). `watch` polls the run's row in
rbdsync.runs, as the page's progress bar would, and prints each change.
Passwords come from PGPASSFILE/.pgpass, never from the command line.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import psycopg2

RBD_SYNC = os.environ.get("RBD_SYNC", "rbd-sync")
ALREADY_RUNNING = 75
# A busy guard answers in milliseconds; waiting this long lets the button say so at
# once, and a sync that is still going after it has really started.
BUSY_ANSWER_SECONDS = 0.5


def press(rbd_sync_args):
    """Starts a sync; returns ("started", pid) or ("already_running", message) or
    ("failed", message) or ("finished", result)."""
    output = tempfile.NamedTemporaryFile(prefix="rbd-sync-", suffix=".json", delete=False)
    child = subprocess.Popen(
        [RBD_SYNC, "run", "--trigger", "web", "--json", *rbd_sync_args],
        stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.DEVNULL,
        start_new_session=True)  # detached: the request does not wait for the sync
    try:
        code = child.wait(timeout=BUSY_ANSWER_SECONDS)
    except subprocess.TimeoutExpired:
        # The result object lands in output.name when the run ends; `watch` reads it.
        return "started", f"{child.pid} result {output.name}"
    with open(output.name, encoding="utf-8") as result_file:
        result = json.load(result_file)
    os.unlink(output.name)
    if code == ALREADY_RUNNING:
        return "already_running", result["message"]
    if code == 0:
        return "finished", result
    return "failed", f'{result["message"]} ({result["hint"]})'


def watch(pid, conninfo, result_path=None, timeout_seconds=300):
    """Follows the run of process `pid` on this host until it ends; returns its status.
    With `result_path`, then prints and removes the run's --json result."""
    connection = psycopg2.connect(conninfo)
    connection.autocommit = True
    last = None
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT run_id, status, phase, done, total FROM rbdsync.runs "
                "WHERE pid = %s AND host = %s ORDER BY started_at DESC LIMIT 1",
                (pid, socket.gethostname()))
            row = cursor.fetchone()
        if row and row != last:
            run_id, status, phase, done, total = row
            print(f"run {run_id}: {status} {phase} {done}/{total}", flush=True)
            last = row
            if status != "running":
                if result_path:
                    # The row ends a moment before the process writes its result.
                    while time.monotonic() < deadline and os.path.getsize(result_path) == 0:
                        time.sleep(0.1)
                    with open(result_path, encoding="utf-8") as result_file:
                        print(result_file.read().strip(), flush=True)
                    os.unlink(result_path)
                return status
        time.sleep(0.2)
    return "timeout"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    press_parser = commands.add_parser("press")
    press_parser.add_argument("--times", type=int, default=1)
    press_parser.add_argument("rbd_sync_args", nargs=argparse.REMAINDER)
    watch_parser = commands.add_parser("watch")
    watch_parser.add_argument("pid", type=int)
    watch_parser.add_argument("--db", required=True)
    watch_parser.add_argument("--result")
    args = parser.parse_args()

    if args.command == "press":
        rbd_sync_args = [a for a in args.rbd_sync_args if a != "--"]
        for _ in range(args.times):
            state, detail = press(rbd_sync_args)
            if state == "started":
                print(f"started pid {detail}", flush=True)
            elif state == "already_running":
                print(detail, flush=True)  # "already running: pid ... on ..., trigger ..."
            else:
                print(f"{state}: {detail}", flush=True)
        return 0
    # "partial" committed too (exit 3): some images kept their previous rows.
    return 0 if watch(args.pid, args.db, args.result) in ("succeeded", "partial") else 1


if __name__ == "__main__":
    sys.exit(main())
