#!/usr/bin/env bash
# Throwaway PostgreSQL server (the newest major installed: 15 on Debian 12, 17 on 13)
# for tests, run as root.
#
#   scripts/pg-server.sh start  DIR   # DIR must not exist or be empty
#   scripts/pg-server.sh status DIR   # exit 0 if the server accepts rbdsync logins
#   scripts/pg-server.sh stop   DIR   # stop the recorded server, remove DIR
#   scripts/pg-server.sh halt   DIR   # fault tests: stop the server, keep its data
#   scripts/pg-server.sh resume DIR   # fault tests: start it again
#
# Environment knobs (start; every variable of the suite: docs/testing.md, "Environment
# variables"):
#   RBDSYNC_PG_PORT   TCP port on 127.0.0.1; default `auto`: a free one below the
#                    ephemeral range, chosen under a machine-wide lock
#                    (scripts/lib/sandbox.sh)
#   RBDSYNC_PG_BIN    the bin directory of the server to run; default: the newest
#                    /usr/lib/postgresql/*/bin
#
# The server listens on 127.0.0.1 only (plus a unix socket inside DIR), uses
# scram-sha-256 password auth for every connection, and runs with fsync,
# full_page_writes and synchronous_commit off: the data is throwaway.
# Random passwords are generated at each start for the superuser `postgres`
# and for the login role `rbdsync` (CREATEDB, owner of database `rbdsync`).
# They are only ever written to DIR/pgpass (root, 0600): never to argv, the
# terminal, or the server log.
#
# After `start`, `source DIR/env.sh` exports
#   PGPASSFILE             DIR/pgpass (libpq takes the passwords from there)
#   RBDSYNC_TEST_DB        host=127.0.0.1 port=PORT user=rbdsync dbname=rbdsync
#   RBDSYNC_TEST_DB_ADMIN  host=127.0.0.1 port=PORT user=postgres dbname=postgres
#
# Layout of DIR (PostgreSQL refuses to run as root, so the server runs as the
# `postgres` system user):
#   DIR/          root:postgres 1770  postgres may create its socket + lock
#                                     file here; sticky bit: it cannot touch
#                                     root's files; others: no access
#   DIR/data/     postgres 0700       PGDATA
#   DIR/log/      postgres 0700       postgresql.log (+ initdb.log)
#   DIR/pgpass    root 0600           readable by root (the test runner) only
#   DIR/env.sh, DIR/server.pid (postmaster pid recorded at start)
# postgres must be able to traverse DIR's parents: a root-owned parent inside
# $TMPDIR (e.g. a 0700 `mktemp -d`) gets o+x (search only); any other blocking
# parent is reported, not changed.
set -euo pipefail

PROG=${0##*/}
SELF=$(realpath -- "$0")
# shellcheck source=scripts/lib/sandbox.sh
source "$(dirname "$0")/lib/sandbox.sh"
source "$(dirname "$0")/lib/usage.sh"

# Read our knob, then drop every PG* variable of the caller: its libpq
# settings (PGHOST, PGUSER, even PGPASSWORD, which would override pgpass) must
# not leak into our psql calls. Done first, before we define PG_* constants.
PORT=${RBDSYNC_PG_PORT:-auto}
bin_knob=${RBDSYNC_PG_BIN:-}
unset "${!PG@}"
PG_BIN=$bin_knob

# The newest major version installed, unless RBDSYNC_PG_BIN names a bin directory. start
# and stop run in the same root (the host, or a root of scripts/debian-root.sh), so they
# find the same one.
if [[ -z $PG_BIN ]]; then
    # A major version with a server (postgresql-client-NN alone has no initdb).
    PG_BIN=$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/initdb' 2>/dev/null |
        sort -V | tail -n 1) || true
    PG_BIN=${PG_BIN%/initdb}
    PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
fi
readonly PG_BIN
readonly PG_USER=postgres
readonly APP_ROLE=rbdsync
readonly MARKER=.pg-server-dir   # marks DIR as ours: stop only rm -rf's such dirs


usage() {
    echo "usage: $PROG start|stop|status|halt|resume DIR   (env: RBDSYNC_PG_PORT, default auto)" >&2
    exit 2
}


# Run a PostgreSQL server tool as the postgres user with a minimal, clean
# environment (no PG* variables, no caller PATH tricks). The cwd is / (see main),
# so the tools do not warn about an unreadable /root.
as_postgres() {
    runuser -u "$PG_USER" -- env -i PATH=/usr/bin:/bin LC_ALL=C "$@"
}

# psql as root over TCP, passwords from DIR/pgpass. -X: ignore ~/.psqlrc.
# Arguments after the conninfo go to psql; no password is ever in argv.
psql_as() {
    local user=$1 db=$2
    shift 2
    PGPASSFILE=$PGPASS PGCONNECT_TIMEOUT=10 timeout -k 5 30 "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 \
        -d "host=127.0.0.1 port=$PORT user=$user dbname=$db" "$@"
}

# 32 random alphanumerics. (Not `tr ... < /dev/urandom | head -c 32`: with
# pipefail, tr dies of SIGPIPE when head exits and the pipeline "fails".)
random_password() {
    local raw=""
    while ((${#raw} < 32)); do
        raw+=$(head -c 256 /dev/urandom | LC_ALL=C tr -dc 'A-Za-z0-9')
    done
    printf '%s' "${raw:0:32}"
}


# "PID STARTTIME" identity of a live, non-zombie process (field 22 of
# /proc/PID/stat is its start time), or failure. Comparing it later guards
# against signalling a recycled PID.
proc_identity() {
    local stat fields
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    # fields after the ")" closing the command name: state is 1st, starttime 20th
    read -r -a fields <<< "${stat##*) }"
    [[ ${fields[0]} != Z ]] || return 1
    echo "$1 ${fields[19]}"
}

# Does PID belong to our server? True if its argv contains our data directory
# as an argument (postmaster "postgres -D DATA", initdb -D DATA, pg_ctl -D DATA)
# or if its working directory is DATA (every postgres process chdirs there,
# so this also catches backends orphaned by a SIGKILLed postmaster).
belongs_to_our_data_dir() {
    local arg
    [[ $(readlink "/proc/$1/cwd" 2>/dev/null) == "$DATA" ]] && return 0
    while IFS= read -r -d '' arg; do
        [[ $arg == "$DATA" ]] && return 0
    done 2>/dev/null < "/proc/$1/cmdline"
    return 1
}

# Identities ("PID STARTTIME") of every process of this server: the recorded
# postmaster (DIR/server.pid, DATA/postmaster.pid) and any initdb/pg_ctl/
# postgres that belongs_to_our_data_dir (e.g. an initdb left running by a
# start that was SIGKILLed), plus all their descendants (backends,
# checkpointer, initdb's single-user postgres). Nothing of another server or
# any other process can match.
our_processes() {
    local f pid roots=() queue=()
    mapfile -t roots < <(
        for f in "$DIR/server.pid" "$DATA/postmaster.pid"; do
            if [[ -f $f ]]; then head -n 1 "$f" 2>/dev/null || true; fi
        done
        pgrep -x 'postgres|initdb|pg_ctl' || true
    )
    for pid in "${roots[@]}"; do
        [[ $pid =~ ^[0-9]+$ ]] && belongs_to_our_data_dir "$pid" && queue+=("$pid")
    done
    # breadth-first walk down the process tree
    while ((${#queue[@]})); do
        pid=${queue[0]}
        queue=("${queue[@]:1}")
        proc_identity "$pid" || continue
        mapfile -t -O "${#queue[@]}" queue < <(pgrep -P "$pid" || true)
    done | sort -u
}

# Stop the server of DIR (if any) and wait until its processes are gone.
stop_server() {
    local procs=() p pid deadline shmid=""
    mapfile -t procs < <(our_processes)
    # Line 7 of postmaster.pid: "<SysV shm key> <shm id>" (see below).
    if [[ -f $DATA/postmaster.pid ]]; then
        shmid=$(sed -n '7{s/^ *[0-9]* *\([0-9]*\) *$/\1/p}' "$DATA/postmaster.pid" 2>/dev/null || true)
    fi
    # Immediate shutdown: no checkpoint (the data is thrown away anyway), but
    # unlike SIGKILL the postmaster still removes its shared memory segments.
    # pg_ctl -w returns once postmaster.pid is gone (all children exited).
    if ((${#procs[@]})) && [[ -f $DATA/postmaster.pid ]]; then
        # (It refuses while initdb's single-user postgres holds the lock file.)
        as_postgres "$PG_BIN/pg_ctl" -D "$DATA" -m immediate -w -t 20 -s stop >/dev/null 2>&1 ||
            log "pg_ctl stop did not stop it (initdb still running, or server hung); killing"
    fi
    # Whatever is left (no postmaster yet, initdb, a hung shutdown): SIGKILL,
    # but only processes that are still the very ones we collected.
    for p in "${procs[@]}"; do
        if [[ $(proc_identity "${p% *}") == "$p" ]]; then kill -KILL "${p% *}" 2>/dev/null || true; fi
    done
    # The postmaster was re-parented to init when pg_ctl start exited: it stays
    # a zombie until init reaps it (this VM's init only does so every ~2 s).
    # Wait for that, so `pgrep postgres` right after `stop` is empty.
    deadline=$((SECONDS + 10))
    for p in "${procs[@]}"; do
        pid=${p% *}
        while [[ -e /proc/$pid ]] && ((SECONDS < deadline)); do sleep 0.05; done
        if [[ $(proc_identity "$pid") == "$p" ]]; then log "warning: pid $pid still alive"; fi
    done
    # A SIGKILLed postmaster (or initdb's single-user backend) leaves its small
    # SysV shared memory segment behind; pg_ctl stop removes it, KILL does not.
    # Remove it if it is still there, owned by postgres and attached by nobody.
    if [[ $shmid =~ ^[0-9]+$ ]] &&
        ipcs -m | awk -v id="$shmid" -v u="$PG_USER" '$2 == id && $3 == u && $6 == 0 {f = 1} END {exit !f}'; then
        ipcrm -m "$shmid" 2>/dev/null || true
    fi
    return 0
}

# --- start ------------------------------------------------------------------

# The server runs as postgres, so postgres must be able to traverse every
# existing ancestor of DIR. The usual trap: DIR=$(mktemp -d)/pg, where the
# mktemp directory is 0700 root. Such a directory (owned by us, inside the
# temp dir) gets o+x: search permission only, postgres still cannot list it,
# and everything secret in it stays 0600 root. Anything else that blocks
# (e.g. /root) is not touched: we stop with a message naming it.
ensure_postgres_can_traverse_to() {
    local d tmp
    tmp=$(realpath -m -- "${TMPDIR:-/tmp}")
    d=$(dirname -- "$1")
    while [[ ! -e $d ]]; do d=$(dirname -- "$d"); done   # mkdir -p makes the rest
    as_postgres test -x "$d" && return 0
    # Walk from the top down to the nearest existing ancestor, fixing or
    # reporting each directory postgres cannot enter.
    local path="" part
    local -a parts
    IFS=/ read -r -a parts <<< "${d#/}"
    for part in "${parts[@]}"; do
        path+=/$part
        as_postgres test -x "$path" && continue
        if [[ $path == "$tmp"/* && $(stat -c %u -- "$path") == "$EUID" ]]; then
            log "note: chmod o+x $path (was $(stat -c %a -- "$path")) so that user $PG_USER can traverse it"
            chmod o+x -- "$path"
        else
            die "user $PG_USER cannot traverse $path (mode $(stat -c %a -- "$path")," \
                "owner $(stat -c %U -- "$path")): put DIR elsewhere, or chmod o+x $path"
        fi
    done
}

write_server_conf() {
    # Appended to the initdb-generated postgresql.conf: later settings win.
    cat >> "$DATA/postgresql.conf" <<EOF

# --- throwaway test server, written by scripts/pg-server.sh ---
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR'
# Durability is pointless for a throwaway test database; this makes DDL and
# commits much faster.
fsync = off
full_page_writes = off
synchronous_commit = off
# Log to stderr, which pg_ctl -l sends to $LOGDIR/postgresql.log.
logging_collector = off
log_destination = 'stderr'
EOF
}

# EXIT trap while starting: on failure show the log tails, then tear down
# everything this run started (DIR was empty/absent before, so it is ours).
on_start_exit() {
    local rc=$? f
    ((STARTED)) && return 0
    log "start failed (exit $rc); last log lines:"
    for f in "$LOGDIR"/*.log; do
        [[ -f $f ]] || continue
        echo "==> $f <==" >&2
        tail -n 20 "$f" >&2
    done
    stop_server
    rm -rf -- "$DIR"
    exit $((rc ? rc : 1))
}

cmd_start() {
    local t0 pw_admin pw_app pwfile out c
    t0=$(now_us)

    for c in "$PG_BIN/initdb" "$PG_BIN/pg_ctl" "$PG_BIN/postgres" "$PG_BIN/psql" "$PG_BIN/pg_isready"; do
        [[ -x $c ]] || die "$c not found (run scripts/deps.sh)"
    done
    for c in runuser ss timeout; do
        command -v "$c" >/dev/null || die "command '$c' not found (run scripts/deps.sh)"
    done
    id "$PG_USER" >/dev/null 2>&1 || die "system user $PG_USER missing (install postgresql)"
    [[ $EUID -eq 0 ]] || die "must run as root (the server runs as $PG_USER via runuser)"
    if [[ $PORT == auto ]]; then
        start_under_ports_lock "$SELF"
        PORT=$(free_port_block 1)
    fi
    if ! [[ $PORT =~ ^[0-9]+$ ]] || ((PORT < 1024 || PORT > 65535)); then
        die "RBDSYNC_PG_PORT must be a number in 1024..65535 (got '$PORT')"
    fi
    # The unix socket lives in DIR; sun_path holds at most 107 bytes.
    local sock=$DIR/.s.PGSQL.$PORT.lock
    ((${#sock} <= 107)) || die "DIR is too long for a unix socket path ($sock > 107 bytes); use a shorter DIR"

    # Refuse to reuse a non-empty DIR: it may hold a running server.
    if [[ -e $DIR ]]; then
        [[ -d $DIR ]] || die "$DIR exists and is not a directory"
        [[ -z $(ls -A -- "$DIR") ]] || die "$DIR is not empty (left over from a previous run? run: $PROG stop $DIR)"
    fi
    # A busy port usually means a server from a crashed earlier run.
    port_is_free "$PORT" || die "port $PORT is already in use $(port_owner "$PORT")" \
        "(a server from a previous run still up? stop it, or set RBDSYNC_PG_PORT)"
    ensure_postgres_can_traverse_to "$DIR"

    # From here on, failures tear down whatever was started.
    STARTED=0
    trap on_start_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    mkdir -p "$DIR"
    echo "$PROG" > "$DIR/$MARKER"
    chown "root:$PG_USER" "$DIR"
    chmod 1770 "$DIR"
    # Backstop for dirs mkdir -p created under a restrictive umask.
    as_postgres test -w "$DIR" || die "user $PG_USER cannot reach $DIR (umask $(umask)? parents not o+x?)"
    install -d -o "$PG_USER" -g "$PG_USER" -m 0700 "$DATA" "$LOGDIR"

    pw_admin=$(random_password)
    pw_app=$(random_password)

    # pgpass first: the bootstrap below already logs in through it. libpq
    # rejects a pgpass readable by group/others, and only root should read it.
    ( umask 077
      printf '127.0.0.1:%s:*:%s:%s\n' "$PORT" "$PG_USER" "$pw_admin" "$PORT" "$APP_ROLE" "$pw_app" > "$PGPASS" )

    # initdb reads the superuser password from a file that only postgres can
    # read; it is deleted right after. (printf is a builtin: no argv exposure.)
    pwfile=$DIR/.initdb-pw
    install -o "$PG_USER" -g "$PG_USER" -m 0600 /dev/null "$pwfile"
    printf '%s\n' "$pw_admin" > "$pwfile"
    # --no-sync: nothing to make durable; C locale: deterministic sorting.
    as_postgres "$PG_BIN/initdb" -D "$DATA" -U "$PG_USER" \
        --auth=scram-sha-256 --pwfile="$pwfile" \
        --encoding=UTF8 --locale=C --no-sync --no-instructions \
        > "$LOGDIR/initdb.log" 2>&1
    rm -f -- "$pwfile"
    write_server_conf

    # -w: return only when the server accepts connections (or fails).
    as_postgres "$PG_BIN/pg_ctl" -D "$DATA" -l "$LOGDIR/postgresql.log" -w -t 60 -s start
    head -n 1 "$DATA/postmaster.pid" > "$DIR/server.pid"

    # The application role and database. The password travels on stdin, and
    # log_min_error_statement = panic keeps the statement (with the password)
    # out of the server log even if it fails.
    psql_as "$PG_USER" postgres <<EOF
SET log_min_error_statement = panic;
SET log_statement = 'none';
CREATE ROLE $APP_ROLE LOGIN CREATEDB;
ALTER ROLE $APP_ROLE PASSWORD '$pw_app';
CREATE DATABASE $APP_ROLE OWNER $APP_ROLE;
EOF

    # Ready = the server accepts connections and rbdsync can log in with the
    # password from pgpass and run a query.
    "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" -t 10
    out=$(psql_as "$APP_ROLE" "$APP_ROLE" -At -c 'select 1')
    [[ $out == 1 ]] || { log "readiness query returned '$out'"; exit 1; }

    {
        echo "# Generated by scripts/pg-server.sh; source it to use the test server."
        printf 'export PGPASSFILE=%q\n' "$PGPASS"
        # (plain double quotes: the conninfo values hold no shell metacharacters)
        echo "export RBDSYNC_TEST_DB=\"host=127.0.0.1 port=$PORT user=$APP_ROLE dbname=$APP_ROLE\""
        echo "export RBDSYNC_TEST_DB_ADMIN=\"host=127.0.0.1 port=$PORT user=$PG_USER dbname=postgres\""
        printf 'export RBDSYNC_TEST_PG_DIR=%q\n' "$DIR"
    } > "$DIR/env.sh"

    STARTED=1
    trap - EXIT INT TERM
    log "postgres ready in $(elapsed_since "$t0")s (port $PORT, dir $DIR)"
}

# --- stop / status ------------------------------------------------------------

cmd_stop() { stop_sandbox stop_server "postgres"; }

cmd_status() {
    [[ -f $PGPASS && -f $DATA/postgresql.conf ]] || die "no server in $DIR"
    # The port is the one the server was configured with, not RBDSYNC_PG_PORT.
    PORT=$(sed -n "s/^port = \([0-9]*\)$/\1/p" "$DATA/postgresql.conf" | tail -n 1)
    [[ -n $PORT ]] || die "cannot find the port in $DATA/postgresql.conf"
    "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" -t 5 || die "server on port $PORT not accepting connections"
    [[ $(psql_as "$APP_ROLE" "$APP_ROLE" -At -c 'select 1' 2>/dev/null) == 1 ]] ||
        die "server on port $PORT up, but $APP_ROLE cannot log in"
    echo "postgres in $DIR: accepting $APP_ROLE logins on 127.0.0.1:$PORT"
}

# --- faults, for tests ---------------------------------------------------------

# Stops the server but keeps its data, so `resume` brings it back as it was.
cmd_halt() {
    [[ -f $DATA/postgresql.conf ]] || die "no server in $DIR"
    as_postgres "$PG_BIN/pg_ctl" -D "$DATA" -m fast -w -t 30 -s stop
    log "postgres halted (data kept in $DATA)"
}

cmd_resume() {
    [[ -f $DATA/postgresql.conf ]] || die "no server in $DIR"
    as_postgres "$PG_BIN/pg_ctl" -D "$DATA" -l "$LOGDIR/postgresql.log" -w -t 60 -s start
    head -n 1 "$DATA/postmaster.pid" > "$DIR/server.pid"
    log "postgres resumed"
}

# --- main -------------------------------------------------------------------

answer_help "${1:-}"
(($# == 2)) || usage
DIR=$(sandbox_dir "$2")
DATA=$DIR/data
LOGDIR=$DIR/log
PGPASS=$DIR/pgpass
cd /   # runuser'd tools cannot read root's cwd; all paths are absolute

case $1 in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    halt) cmd_halt ;;
    resume) cmd_resume ;;
    *) usage ;;
esac
