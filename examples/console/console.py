#!/usr/bin/python3
"""A reference console page for rbd-sync: the block-storage inventory and "Sync now".

    console.py [--listen 127.0.0.1:8080] --db CONNINFO [--rbd-sync PATH] -- RUN_ARGS...

--db is the console's own read-only role (examples/console/readonly-role.sql). RUN_ARGS
go to `rbd-sync run --detach --trigger web --json`; their --db names rbd-sync's writer role.
Passwords come from PGPASSFILE/.pgpass or a service file, never from the command line.
Prints "console: http://HOST:PORT/" once it listens (--listen with port 0 picks one).

Standard library http.server plus Debian's python3-psycopg2, one page:
  GET  /                  the page (inventory table, last run, button, progress bar)
  GET  /inventory         the table and the last-run line, as an HTML fragment
  POST /sync              starts a detached sync; answers from the guard: started (run
                          id and pid), already running (the holder) or failed
  GET  /progress?run_id=U the run's row: status, phase, done/total, how it ended
docs/web-backend.md explains the calls; examples/web_backend.py is the bare version.
"""
import argparse
import datetime
import html
import json
import re
import signal
import subprocess
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psycopg2
import psycopg2.extras

ALREADY_RUNNING = 75


# ---------------------------------------------------------------- database (read-only)

def connect(conninfo):
    """A read-only, autocommit session: the console never writes, and a poll must not
    hold a snapshot open while the sync commits."""
    connection = psycopg2.connect(conninfo)
    connection.set_session(readonly=True, autocommit=True)
    return connection


def query(conninfo, sql, params=()):
    connection = connect(conninfo)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [row[0] for row in cursor.fetchall()]
    finally:
        connection.close()


# Rows come as JSON objects (to_jsonb), so a column the schema does not have yet reads as
# None, exactly like a column rbd-sync has not filled yet: the page shows "—" for both.
INVENTORY_SQL = {
    "clusters": "SELECT to_jsonb(c) FROM rbdsync.clusters c ORDER BY c.fsid",
    "pools": "SELECT to_jsonb(p) FROM rbdsync.pools p ORDER BY p.fsid, p.name",
    "images": "SELECT to_jsonb(i) FROM rbdsync.images i "
              "ORDER BY i.fsid, i.pool_id, i.namespace, i.name",
    "last_run": "SELECT to_jsonb(r) FROM rbdsync.runs r ORDER BY r.started_at DESC LIMIT 1",
}

# A run, by its id.
RUN_BY_ID_SQL = "SELECT to_jsonb(r) FROM rbdsync.runs r WHERE run_id = %s"


def read_inventory(conninfo):
    return {name: query(conninfo, sql) for name, sql in INVENTORY_SQL.items()}


# ---------------------------------------------------------------- rbd-sync children

class Syncs:
    """The button: `rbd-sync run --detach --trigger web --json`, which answers from the
    guard itself: "started" once the run holds both guards (it goes on in its own
    session, so reloading this console does not stop it), "already running" naming the
    holder, or a failure with a message and a hint. Nothing is guessed from timing."""

    def __init__(self, rbd_sync, run_args):
        self.command = [rbd_sync, "run", "--detach", "--trigger", "web", "--json", *run_args]

    def press(self):
        """The answer object POST /sync sends to the page."""
        answer = subprocess.run(self.command, stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, timeout=120, check=False)
        try:
            result = json.loads(answer.stdout)
        except ValueError:
            result = {"status": "failed", "message": answer.stderr.strip()
                      or "rbd-sync printed no result", "hint": ""}
        if answer.returncode == 0:
            return {"state": "started", "pid": result["pid"], "run_id": result["run_id"]}
        return answer_for(answer.returncode, result)


def answer_for(code, result):
    """Maps a finished child's exit code and --json object to the page's answer."""
    if code == ALREADY_RUNNING:
        return {"state": "already_running", "message": busy_message(result),
                "holder": result.get("holder")}
    return {"state": "failed",
            "message": f'{result.get("message", "rbd-sync failed")} ({result.get("hint", "")})'}


def busy_message(result):
    """"already running — started by cron at 22:10:03 (pid …)" from the holder object;
    rbd-sync's own one-line message when the holder is not an rbd-sync run (flock(1))."""
    holder = result.get("holder") or {}
    if "trigger" not in holder:
        return result.get("message", "already running")
    text = (f'already running — started by {holder["trigger"]} at '
            f'{local_time(holder["started_at"])} (pid {holder["pid"]} on {holder["host"]}, '
            f'run {holder["run_id"]})')
    if holder.get("total"):
        text += f', {holder["phase"]} {holder["done"]}/{holder["total"]}'
    elif holder.get("phase"):
        text += f', {holder["phase"]}'
    return text


def finished_message(row):
    """How a run ended, from its row in rbdsync.runs."""
    if row["status"] in ("succeeded", "partial"):
        return (f'sync {row["status"]}: {row["images"]} images, {row["added"]} added, '
                f'{row["changed"]} changed, {row["removed"]} removed')
    return f'sync {row["status"]}' + (f': {row["error"]}' if row.get("error") else "")


# ---------------------------------------------------------------- formatting

def local_time(value):
    """A timestamp (ISO text or datetime) in this host's time zone; the date only when
    it is not today."""
    if value is None:
        return "—"
    if isinstance(value, str):
        # RFC 3339 with a +00:00 offset, from rbd-sync and PostgreSQL's JSON alike.
        value = datetime.datetime.fromisoformat(value)
    value = value.astimezone()
    if value.date() == datetime.date.today():
        return value.strftime("%H:%M:%S")
    return value.strftime("%Y-%m-%d %H:%M:%S")


def size(value):
    if value is None:
        return "—"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:g} {unit}" if unit == "B" else f"{value:.3g} {unit}"
        value /= 1024
    return None  # not reached


def parent_of(image):
    if not image.get("parent_image_id"):
        return "—"
    pool = image.get("parent_pool_name") or image.get("parent_pool_id")
    namespace = image.get("parent_namespace")
    # A client that may not read the parent's pool stores its ids, not its names.
    name = image.get("parent_image_name") or f"id {image['parent_image_id']}"
    path = f"{pool}/{namespace + '/' if namespace else ''}{name}"
    return f"{path}@{image.get('parent_snap_name') or image.get('parent_snap_id')}"


def run_line(run):
    if run is None:
        return "Last sync: never"
    text = (f'Last sync: {run["status"]} (by {run["trigger"]}), started '
            f'{local_time(run["started_at"])}')
    if run.get("ended_at"):
        text += f', ended {local_time(run["ended_at"])}'
    if run.get("images") is not None:
        text += f', {run["images"]} images'
    if run.get("error"):
        text += f': {run["error"]}'
    return text


def inventory_html(conninfo):
    """The last-run line and the table, or the reason they cannot be read."""
    try:
        inventory = read_inventory(conninfo)
    except psycopg2.Error as error:
        return (f'<p id="last-run" class="error">Cannot read the inventory: '
                f'{html.escape(str(error).strip())}</p>')
    last_run = inventory["last_run"][0] if inventory["last_run"] else None
    status = html.escape(last_run["status"]) if last_run else "never"
    run_id = html.escape(last_run["run_id"]) if last_run else ""
    parts = [f'<p id="last-run" data-status="{status}" data-run-id="{run_id}">'
             f'{html.escape(run_line(last_run))}</p>']
    clusters = {c["fsid"]: c for c in inventory["clusters"]}
    images = {}
    for image in inventory["images"]:
        images.setdefault((image["fsid"], image["pool_id"]), []).append(image)
    parts.append('<table id="inventory"><thead><tr><th>Image</th><th>Size</th><th>Used</th>'
                 '<th>Features</th><th>Snapshots</th><th>Parent</th></tr></thead><tbody>')
    for pool in inventory["pools"]:
        label = pool["name"]
        if len(clusters) > 1:  # only then is the cluster worth a word
            label += f' (cluster {clusters[pool["fsid"]].get("name") or pool["fsid"]})'
        pool_images = images.get((pool["fsid"], pool["pool_id"]), [])
        parts.append(f'<tr class="pool"><th colspan="6">Pool {html.escape(label)} '
                     f'<span class="count">{len(pool_images)} images</span></th></tr>')
        for image in pool_images:
            name = (image["namespace"] + "/" if image["namespace"] else "") + image["name"]
            used_title = image.get("used_unknown_reason") or ""
            if image.get("used_bytes") is None and not used_title:
                used_title = "not read by this rbd-sync version"
            snapshots = image.get("snapshot_count")
            cells = [
                ("image-name", name),
                ("size", size(image["size_bytes"])),
                ("used", size(image.get("used_bytes"))),
                ("features", ", ".join(image.get("feature_names") or []) or "—"),
                ("snapshots", "—" if snapshots is None else str(snapshots)),
                ("parent", parent_of(image)),
            ]
            row = "".join(f'<td class="{cls}">{html.escape(text)}</td>' for cls, text in cells)
            row = row.replace('<td class="used">',
                              f'<td class="used" title="{html.escape(used_title)}">', 1)
            parts.append(f'<tr class="image">{row}</tr>')
    if not inventory["pools"]:
        parts.append('<tr><td colspan="6" class="empty">No pools synced yet.</td></tr>')
    parts.append("</tbody></table>")
    return "\n".join(parts)


def progress(conninfo, run_id):
    """What the progress bar shows: status, phase, done and total from the run's row,
    and how it ended once it has. A detached run's row exists before it says "started"."""
    rows = query(conninfo, RUN_BY_ID_SQL, (run_id,))
    row = rows[0] if rows else {"status": "starting"}
    answer = {key: row.get(key) for key in ("run_id", "status", "phase", "done", "total",
                                             "trigger", "error")}
    if row["status"] not in ("starting", "running"):
        answer["message"] = finished_message(row)
    return answer


# ---------------------------------------------------------------- HTTP

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Block storage — rbd-sync console</title>
<style>
 body { font-family: sans-serif; margin: 1.5em; }
 table { border-collapse: collapse; min-width: 60em; }
 td, th { border-bottom: 1px solid #ddd; padding: .25em .6em; text-align: left; }
 tr.pool th { background: #eef; } .count { font-weight: normal; color: #555; }
 #notice.already_running { color: #a60; } #notice.failed, .error { color: #b00; }
 #progress[hidden] { display: none; } progress { width: 20em; }
</style></head>
<body>
<h1>Block storage</h1>
<p><button id="sync-now">Sync now</button> <span id="notice"></span></p>
<p id="progress" hidden><progress id="progress-bar"></progress> <span id="progress-text"></span></p>
<div id="inventory-view">%INVENTORY%</div>
<script>
"use strict";
const button = document.getElementById("sync-now");
const notice = document.getElementById("notice");
let following = null;  // the run whose row feeds the progress bar: "run_id=U"

function say(text, state) { notice.textContent = text; notice.className = state; }

async function refreshInventory() {
  const response = await fetch("inventory");
  document.getElementById("inventory-view").innerHTML = await response.text();
}

function showProgress(row) {
  const bar = document.getElementById("progress-bar");
  document.getElementById("progress").hidden = false;
  if (row.total) { bar.max = row.total; bar.value = row.done || 0; }
  else { bar.removeAttribute("value"); }  // indeterminate until the total is known
  const counts = row.total ? ` ${row.done || 0}/${row.total}` : "";
  document.getElementById("progress-text").textContent =
      `${row.status === "starting" ? "starting" : row.phase || "starting"}${counts}`;
}

// Polls the run's row until it ends, then refreshes the table.
async function follow(query) {
  following = query;
  while (following === query) {
    let row;
    try { row = await (await fetch("progress?" + query)).json(); }
    catch (error) { row = {status: "running", phase: "(console unreachable)"}; }
    if (row.status === "starting" || row.status === "running") {
      showProgress(row);
      await new Promise(resolve => setTimeout(resolve, 300));
      continue;
    }
    following = null;
    document.getElementById("progress").hidden = true;
    say(row.message || `sync ${row.status}${row.error ? ": " + row.error : ""}`,
        row.status === "succeeded" ? "finished" : "failed");
    await refreshInventory();
  }
}

button.addEventListener("click", async () => {
  button.disabled = true;  // one request at a time from this page; the guard does the rest
  try {
    const answer = await (await fetch("sync", {method: "POST"})).json();
    if (answer.state === "started") {
      say(`sync started (pid ${answer.pid})`, "started");
      follow(`run_id=${answer.run_id}`);
    } else {
      say(answer.message, answer.state);
      // Somebody else's run (cron's, another tab's): follow its row too.
      const holder = answer.holder;
      if (answer.state === "already_running" && holder && holder.run_id && !following) {
        follow(`run_id=${holder.run_id}`);
      }
    }
  } catch (error) {
    say(`the console did not answer: ${error}`, "failed");
  } finally {
    button.disabled = false;
  }
});

// A run already going when the page loads (cron's, say) gets its bar too.
const lastRun = document.getElementById("last-run");
if (lastRun && lastRun.dataset.status === "running") { follow(`run_id=${lastRun.dataset.runId}`); }
</script>
</body></html>
"""


class Handler(BaseHTTPRequestHandler):
    server_version = "rbd-sync-console"

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        app = self.server.app
        if url.path == "/":
            page = PAGE.replace("%INVENTORY%", inventory_html(app.db))
            self.reply(200, "text/html; charset=utf-8", page)
        elif url.path == "/inventory":
            self.reply(200, "text/html; charset=utf-8", inventory_html(app.db))
        elif url.path == "/progress":
            params = urllib.parse.parse_qs(url.query)
            try:
                answer = progress(app.db, params["run_id"][0])
            except (KeyError, ValueError):
                return self.reply(400, "application/json", '{"error": "run_id"}')
            except psycopg2.Error as error:
                answer = {"status": "running", "phase": f"(cannot read the run: {error})"}
            self.reply(200, "application/json", json.dumps(answer))
        else:
            self.reply(404, "text/plain", "not found\n")

    def do_POST(self):
        if urllib.parse.urlsplit(self.path).path != "/sync":
            return self.reply(404, "text/plain", "not found\n")
        # A browser sends Origin with every cross-site POST: refusing a foreign one keeps
        # other sites from pressing the button (a real console adds its login and CSRF
        # protection on top).
        origin = self.headers.get("Origin")
        if origin is not None and origin != f'http://{self.headers.get("Host")}':
            return self.reply(403, "text/plain", "cross-site request refused\n")
        return self.reply(200, "application/json", json.dumps(self.server.app.syncs.press()))

    def reply(self, status, content_type, body):
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        # Progress polls would flood the log; errors still go through log_error.
        pass


class App:
    def __init__(self, db, syncs):
        self.db = db
        self.syncs = syncs


def has_password(conninfo):
    """password=… (key=value form) or user:secret@ (URI form)."""
    return bool(re.search(r"password\s*=", conninfo) or re.search(r"://[^/@]*:[^/@]*@", conninfo))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT (port 0: any)")
    parser.add_argument("--db", required=True, help="conninfo of the read-only role")
    parser.add_argument("--rbd-sync", default="rbd-sync", help="the rbd-sync binary")
    parser.add_argument("run_args", nargs=argparse.REMAINDER, help="-- rbd-sync run options")
    args = parser.parse_args()
    run_args = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
    conninfos = [args.db] + [value for flag, value in zip(run_args, run_args[1:]) if flag == "--db"]
    if any(has_password(conninfo) for conninfo in conninfos):
        # A command line is readable by every user of the host (ps, /proc).
        parser.error("passwords belong in PGPASSFILE/.pgpass or a service file")

    host, _, port = args.listen.rpartition(":")
    server = ThreadingHTTPServer((host, int(port)), Handler)
    server.daemon_threads = True
    server.app = App(args.db, Syncs(args.rbd_sync, run_args))
    print(f"console: http://{host}:{server.server_address[1]}/", flush=True)
    # SIGTERM (kill, systemd) ends it as cleanly as Ctrl-C; running syncs carry on.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
