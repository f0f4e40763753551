"""Asking rbd-sync for a sync: through the package's trigger socket (production), or by
running `rbd-sync run` directly (development and tests: TRIGGER_SOCKET None), detached
for the "Sync now" button and in the foreground for the rbdsync_sync command.
docs/web-backend.md describes what rbd-sync answers.

rbd-sync answers from its guard, never from a guess about timing: "started" once the run
holds the guard (with its run id), or at once "already running" (exit 75) naming the run
that holds it, or the error. Every answer is one JSON object carrying status, exit_code,
message and hint; the socket answers exactly what `run --detach --json` prints.
"""
import dataclasses
import datetime
import json
import os
import re
import socket
import subprocess
import unicodedata
import uuid
from typing import Optional

from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from . import conf, kubernetes

ALREADY_RUNNING = 75
PARTIAL = 3

# password=… in key=value form, user:secret@ in a URI.
_PASSWORD = re.compile(r"password\s*=|://[^/@\s]*:[^/@\s]*@", re.IGNORECASE)


def mentions_password(text):
    return bool(_PASSWORD.search(str(text)))


# What rbd-sync gets of the web server's environment: where to find commands, the
# locale and time zone, and where libpq and librados find their files. Not the rest: a
# web server's environment carries its own database settings (PGHOST, PGUSER, PGOPTIONS,
# even PGPASSWORD) and secrets (DJANGO_SECRET_KEY, DATABASE_URL), none of which are
# rbd-sync's; PGOPTIONS alone could make every sync fail or behave otherwise.
PASSED_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "TZ", "PGPASSFILE", "PGSERVICEFILE",
                      "PGSYSCONFDIR", "CEPH_CONF")


def child_environment(environment=None):
    """The environment rbd-sync runs with: PASSED_ENVIRONMENT taken from `environment`
    (the console's own by default), then RBDSYNC_CONSOLE["ENV"] on top."""
    environment = os.environ if environment is None else environment
    passed = {name: environment[name] for name in PASSED_ENVIRONMENT if name in environment}
    passed.update({str(name): str(value) for name, value in (conf.get("ENV") or {}).items()})
    return passed


# rbd-sync takes one printable line of at most this many bytes as --requested-by.
MAX_REQUESTER_BYTES = 256


def requester_name(user):
    """The name rbd-sync records for `user` (who pressed): their user name with control
    characters replaced, cut to what rbd-sync takes; None for nobody (or a name that is
    nothing but controls)."""
    name = "".join("?" if unicodedata.category(c)[0] == "C" else c
                   for c in str(user.get_username() if user is not None else ""))
    name = name.encode("utf-8")[:MAX_REQUESTER_BYTES].decode("utf-8", "ignore")
    return name if name.strip("?") else None


def run_command(trigger, detach, requested_by=None):
    """The `rbd-sync run` command line from RBDSYNC_CONSOLE. Raises ImproperlyConfigured
    when an argument carries a password: a command line is readable by every local user
    (ps, /proc), and rbd-sync would refuse it anyway."""
    command = [conf.get("BINARY"), "run", "--json", "--trigger", trigger,
               "--cluster", conf.get("CLUSTER")]
    if requested_by:
        command += ["--requested-by", requested_by]
    if detach:
        command.append("--detach")
    command += ["--db", conf.get("DB")]
    for option, name in (("--lock-file", "LOCK_FILE"), ("--conf", "CEPH_CONF"),
                         ("--id", "CEPH_ID")):
        if conf.get(name):
            command += [option, str(conf.get(name))]
    command += [str(argument) for argument in conf.get("EXTRA_ARGS")]
    environment = conf.get("ENV") or {}
    if "PGPASSWORD" in environment or any(mentions_password(value)
                                          for value in environment.values()):
        raise ImproperlyConfigured(
            'RBDSYNC_CONSOLE["ENV"] must not carry a password: rbd-sync takes it from '
            "PGPASSFILE/.pgpass or a pg_service.conf entry")
    if any(mentions_password(argument) for argument in command):
        raise ImproperlyConfigured(
            "RBDSYNC_CONSOLE must not carry a password (DB, EXTRA_ARGS): rbd-sync takes it "
            "from PGPASSFILE/.pgpass or a pg_service.conf entry")
    return command


@dataclasses.dataclass
class Answer:
    """What rbd-sync answered, for the page and the command."""
    # started, succeeded, partial, already_running or failed; requested: a Kubernetes Job
    # was created, whose pod will take the guard
    state: str
    exit_code: int
    message: str
    hint: str = ""
    run_id: Optional[str] = None  # started: the new run; already_running: the holder's
    pid: Optional[int] = None
    holder: Optional[dict] = None
    log: str = dataclasses.field(default="", repr=False)  # rbd-sync's stderr

    def as_json(self):
        answer = dataclasses.asdict(self)
        del answer["log"]
        return answer


def run_id_of(value):
    """A run id from rbd-sync's answer as a UUID's text, or None: the page puts it into a
    URL and follows it, and the holder's comes from a lock file that any member of the
    group rbd-sync can write."""
    if not isinstance(value, str):
        return None
    try:
        return str(uuid.UUID(value)) if len(value) == 36 else None
    except ValueError:
        return None


def call(trigger, detach, timeout=None, requested_by=None):
    """Asks for one sync and maps rbd-sync's answer to an Answer: through the trigger
    socket when TRIGGER_SOCKET names one (always detached: it answers "started"), else by
    running the binary (`detach` or in the foreground)."""
    if conf.get("KUBERNETES_CRONJOB"):
        return ask_kubernetes(conf.get("KUBERNETES_CRONJOB"), trigger, requested_by)
    if conf.get("TRIGGER_SOCKET"):
        return ask_socket(conf.get("TRIGGER_SOCKET"), trigger, requested_by, timeout)
    return run_binary(trigger, detach, timeout, requested_by)


def ask_kubernetes(cronjob, trigger, requested_by):
    """A Job from rbd-sync's CronJob (kubernetes.py). Its pod takes the guard only once it
    is scheduled, so the answer is "requested", not "started"; a run of the cluster
    already going (its row running, its claim held) is answered as busy without a Job."""
    from .models import Run  # the models import conf and the database: not at import
    for run in Run.objects.filter(status=Run.RUNNING).order_by("-started_at"):
        if not run.abandoned():
            # The run's row as a holder record, worded as rbd-sync's own busy answers are.
            holder = {"run_id": str(run.run_id), "pid": run.pid, "host": run.host,
                      "trigger": run.trigger, "requested_by": run.requested_by,
                      "started_at": run.started_at.isoformat(), "phase": run.phase,
                      "done": run.done, "total": run.total}
            return Answer("already_running", ALREADY_RUNNING, busy_message({}, holder),
                          run_id=holder["run_id"], pid=run.pid, holder=holder)
    try:
        job = kubernetes.create_job(cronjob, trigger, requested_by)
    except kubernetes.KubernetesError as error:
        return Answer("failed", error.exit_code, str(error), error.hint)
    namespace = cronjob.partition("/")[0]
    return Answer("requested", 0, f"asked Kubernetes for a sync: Job {job} in {namespace}",
                  "its run appears in the run history once its pod starts")


def ask_socket(path, trigger, requested_by, timeout):
    """One request on rbd-sync-trigger.socket; its answer is `run --detach --json`'s."""
    request = {"cluster": conf.get("CLUSTER"), "trigger": trigger}
    if requested_by:
        request["requested_by"] = requested_by
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout)
            connection.connect(path)
            connection.sendall(json.dumps(request).encode() + b"\n")
            answer = read_answer_line(connection)
    except (FileNotFoundError, ConnectionRefusedError) as error:
        return Answer("failed", 69, f"cannot reach rbd-sync's trigger socket {path}: "
                                    f"{error.strerror}",
                      "install rbd-sync and run `systemctl enable --now rbd-sync-trigger.socket`"
                      ', or set RBDSYNC_CONSOLE["TRIGGER_SOCKET"] to its path')
    except PermissionError as error:
        return Answer("failed", 77, f"may not connect to rbd-sync's trigger socket {path}: "
                                    f"{error.strerror}",
                      "add the web server's user to the group rbd-sync-web (usermod -a -G "
                      "rbd-sync-web www-data) and restart the web server")
    except socket.timeout:
        return Answer("failed", 69, f"rbd-sync did not answer within {timeout} s",
                      "Ceph or PostgreSQL may be slow to connect; see `journalctl -u "
                      "'rbd-sync-trigger@*'`")
    except OSError as error:
        return Answer("failed", 69, f"rbd-sync's trigger socket {path}: {error.strerror}",
                      "see `journalctl -u rbd-sync-trigger.socket`")
    if not answer:
        return Answer("failed", 69, f"rbd-sync's trigger socket {path} closed the connection "
                                    "without an answer",
                      "too many syncs at once (the socket's MaxConnections), or "
                      "rbd-sync-trigger@.service could not start: see `journalctl -u "
                      "rbd-sync-trigger.socket -u 'rbd-sync-trigger@*'`")
    text = answer.decode("utf-8", "replace")
    try:
        code = json.loads(text)["exit_code"]
    except (ValueError, KeyError, TypeError):
        code = 70
    if not isinstance(code, int):
        code = 70
    return answer_for(code, text, "", detach=True)


def read_answer_line(connection):
    """The answer: one line, read up to its newline (or to end of file). The line is
    all there is; the socket also closes after it, but a reader that waited for that
    alone would depend on every copy of the connection being let go of."""
    answer = b""
    while b"\n" not in answer:
        chunk = connection.recv(65536)
        if not chunk:
            break
        answer += chunk
    return answer.partition(b"\n")[0]


def run_binary(trigger, detach, timeout, requested_by):
    """Runs rbd-sync once and maps its exit code and --json object to an Answer."""
    try:
        command = run_command(trigger, detach, requested_by)
    except ImproperlyConfigured as error:
        return Answer("failed", 78, str(error), "fix the console's settings")
    try:
        completed = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                                   text=True, timeout=timeout, check=False,
                                   env=child_environment())
    except FileNotFoundError:
        return Answer("failed", 127, f"cannot run rbd-sync: {command[0]} not found",
                      'install rbd-sync, or set RBDSYNC_CONSOLE["BINARY"] to its path')
    except subprocess.TimeoutExpired:
        return Answer("failed", 69, f"rbd-sync did not answer within {timeout} s",
                      "Ceph or PostgreSQL may be slow to connect; see rbd-sync's log")
    return answer_for(completed.returncode, completed.stdout, completed.stderr, detach)


def answer_for(code, stdout, stderr, detach):
    try:
        result = json.loads(stdout)
        if not isinstance(result, dict):
            raise ValueError("not an object")
    except ValueError:
        result = {"message": stderr.strip() or f"rbd-sync printed no answer (exit {code})",
                  "hint": "see rbd-sync's log"}
    message, hint = result.get("message", ""), result.get("hint", "")
    if result.get("status") == "already_running":
        # Busy, whatever the exit code: EXTRA_ARGS may hold --conflict-exit-code 0.
        code = ALREADY_RUNNING
    if code == 0 and detach:
        return Answer("started", 0, f'sync started (pid {result.get("pid")})', hint,
                      run_id=run_id_of(result.get("run_id")), pid=result.get("pid"), log=stderr)
    if code in (0, PARTIAL):
        state = "succeeded" if code == 0 else "partial"
        return Answer(state, code, message, hint, run_id=run_id_of(result.get("run_id")),
                      log=stderr)
    if code == ALREADY_RUNNING:
        holder = result.get("holder")
        holder = holder if isinstance(holder, dict) and holder else None
        if holder and "run_id" in holder:
            holder = dict(holder, run_id=run_id_of(holder["run_id"]))
        return Answer("already_running", code, busy_message(result, holder), hint,
                      run_id=(holder or {}).get("run_id"), pid=(holder or {}).get("pid"),
                      holder=holder, log=stderr)
    return Answer("failed", code, message or f"rbd-sync failed (exit {code})", hint, log=stderr)


def busy_message(result, holder):
    """"already running: started by cron at 22:10:03 (pid 4242 on web-1, run …), reading
    3120/10000" from the holder ("started by web (alice)" for alice's press); rbd-sync's
    own line when the holder is not an rbd-sync run (an admin's flock(1) has only a
    pid)."""
    if not holder or "trigger" not in holder:
        return result.get("message") or "already running"
    who = holder["trigger"] + (f' ({holder["requested_by"]})' if holder.get("requested_by")
                               else "")
    text = (f'already running: started by {who} at '
            f'{local_time(holder.get("started_at"))} (pid {holder.get("pid")} on '
            f'{holder.get("host")}, run {holder.get("run_id")})')
    if holder.get("total"):
        text += f', {holder.get("phase")} {holder.get("done")}/{holder["total"]}'
    elif holder.get("phase"):
        text += f', {holder["phase"]}'
    return text


def local_time(value):
    """An RFC 3339 time from rbd-sync in the site's time zone; the date only when it is
    not today."""
    if not value:
        return "?"
    moment = timezone.localtime(datetime.datetime.fromisoformat(value))
    if moment.date() == timezone.localdate():
        return moment.strftime("%H:%M:%S")
    return moment.strftime("%Y-%m-%d %H:%M:%S")
