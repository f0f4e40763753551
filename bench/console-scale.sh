#!/usr/bin/env bash
# The console at scale (issue #37, item 5).
#
#   bench/console-scale.sh [--images N] [--seed S] [--build DIR] [--requests R] [--keep]
#                          [--only CASE,...] [--search TEXT]
#
# Fills rbd-sync's schema with N synthetic images through the real sync::Syncer and
# db::PgStore (bench/sink_scale --mix console: no Ceph cluster; names numbered so that
# natural order matters, odd bytes, five pools, namespaces, mirroring, groups, clones,
# snapshots, QoS overrides, trash, and stale images: a second sync in which 1 in 1,000
# images cannot be read), in a throwaway PostgreSQL server it starts
# (scripts/pg-server.sh) with rbd-sync's roles (sql/roles.sql: the owner runs `rbd-sync
# migrate`, the writer the syncs). Then sets the console's demo site up as
# scripts/demo.sh --console does (contrib/django/demo_site: its own role and schema,
# contrib/django/grant-select.sql), with a user that has rbdsync_console.view_inventory
# and nothing more, runs ANALYZE, serves the site with Debian's gunicorn (2 workers, on
# 127.0.0.1 and a free port) and times real HTTP requests against it
# (bench/console_http.py: R timed requests per case after 3 untimed ones, one client):
#
#   first_page        /
#   search            /?q=TEXT (default -17: in some names, not most)
#   sort_used         /?sort=used&dir=desc
#   keyset_page_1000  page 1,000 (or the last), reached from / by each page's
#                     <a rel="next">; no image row may appear twice on the way
#   image_page        the first page's first <a class="image-link">
#   progress_json     /runs/RUN_ID/ of the latest run
#
# Every answer must be HTTP 200. Prints the fill's wall time, one line per case
#   NAME p50_ms=… p95_ms=… n=R
# and last
#   images=N fill_s=… p95<=250ms: first_page=PASS search=MISS …
# against the target of #37: every p95 <= 250 ms at 100,000 images on a 2-core host.
# Exit status: 0, or 1 when a step failed or an answer was not 200 (a missed target is
# reported, never an exit status); 64 for a bad command line.
#
# --only runs some cases (e.g. --only first_page,search, without the keyset walk's two
# minutes); --keep leaves PostgreSQL and gunicorn running afterwards and prints how
# to reach and stop them. The server and gunicorn are stopped on any other exit.
# Defaults: --images 100000, --seed 37, --build build, --requests 50.
# Port: RBDSYNC_PG_PORT (default: a free one); gunicorn's: a free one.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/lib/usage.sh"
images=100000
seed=37
build=$root/build
requests=50
keep=0
only=""
search="-17"
target_ms=250

usage() {
    echo "usage: $0 [--images N] [--seed S] [--build DIR] [--requests R] [--keep]" \
        "[--only CASE,...] [--search TEXT]" >&2
    exit 64
}
while (($#)); do
    case $1 in
        --images) images=${2:-}; shift 2 || usage ;;
        --seed) seed=${2:-}; shift 2 || usage ;;
        --build) build=${2:-}; shift 2 || usage ;;
        --requests) requests=${2:-}; shift 2 || usage ;;
        --only) only=${2:-}; [[ -n $only ]] || usage; shift 2 ;;
        --search) search=${2:-}; [[ -n $search ]] || usage; shift 2 ;;
        --keep) keep=1; shift ;;
        -h | --help) answer_help "$1" ;;
        *) usage ;;
    esac
done
if ! [[ $images =~ ^[0-9]+$ ]] || ((images < 10)); then
    echo "console-scale.sh: --images must be >= 10" >&2
    exit 64
fi
[[ $seed =~ ^[0-9]+$ ]] || usage
if ! [[ $requests =~ ^[0-9]+$ ]] || ((requests < 1)); then usage; fi
cases=(first_page search sort_used keyset_page_1000 image_page progress_json)
if [[ -n $only ]]; then
    IFS=, read -r -a wanted <<< "$only"
    for case in "${wanted[@]}"; do
        [[ " ${cases[*]} " == *" $case "* ]] ||
            { echo "console-scale.sh: --only takes cases among: ${cases[*]}" >&2; exit 64; }
    done
fi
build=$(realpath -- "$build")
sink=$build/bench/sink_scale
rbd_sync=$build/rbd-sync
client=$root/bench/console_http.py
python=/usr/bin/python3
gunicorn=/usr/bin/gunicorn
psql=/usr/lib/postgresql/15/bin/psql
build_hint="cmake -S $root -B $build -DRBDSYNC_BENCH=ON && cmake --build $build --target sink_scale rbd-sync"
for f in "$sink" "$rbd_sync"; do
    [[ -x $f ]] || { echo "console-scale.sh: $f missing; build first ($build_hint)" >&2; exit 69; }
done
# A sink_scale built before the console mix would refuse --mix console halfway through.
"$sink" --mix console --db - --images 10 --phase source >/dev/null 2>&1 ||
    { echo "console-scale.sh: $sink has no --mix console; rebuild it ($build_hint)" >&2; exit 69; }
[[ -x $gunicorn ]] || { echo "console-scale.sh: $gunicorn missing: apt-get install gunicorn (scripts/deps.sh)" >&2; exit 69; }
"$python" -c 'import django, psycopg2' 2>/dev/null ||
    { echo "console-scale.sh: Debian's python3-django and python3-psycopg2 are needed (scripts/deps.sh)" >&2; exit 69; }

PROG=console-scale.sh
# shellcheck source=scripts/lib/sandbox.sh
source "$root/scripts/lib/sandbox.sh"   # free_port_block, PORTS_LOCK, now_us
say() { echo "console-scale.sh: $*" >&2; }
seconds_since() { awk -v a="$1" -v b="$(now_us)" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

# Whether process $1 runs (a zombie, exited but not yet reaped, does not).
running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    [[ ${stat##*) } != Z* ]]
}

work=$(mktemp -d /tmp/rbd-sync-console-scale.XXXXXX)
gunicorn_pid=""
cleanup() {
    local status=$?
    if ((keep)); then
        say "kept: PostgreSQL in $work/pg, gunicorn pid ${gunicorn_pid:-none}${port:+ on http://127.0.0.1:$port/}"
        say "  log in as bench, password in $work/login-password"
        say "  stop: kill ${gunicorn_pid:-}; $root/scripts/pg-server.sh stop $work/pg; rm -rf $work"
        return "$status"
    fi
    if [[ -n $gunicorn_pid ]] && running "$gunicorn_pid"; then
        # TERM: the master stops its idle workers and exits; KILL it and them after 10 s.
        kill -TERM "$gunicorn_pid" 2>/dev/null || true
        local i
        for ((i = 0; i < 100; i++)); do
            running "$gunicorn_pid" || break
            sleep 0.1
        done
        if running "$gunicorn_pid"; then
            pkill -KILL -P "$gunicorn_pid" 2>/dev/null || true
            kill -KILL "$gunicorn_pid" 2>/dev/null || true
        fi
        wait "$gunicorn_pid" 2>/dev/null || true
    fi
    "$root/scripts/pg-server.sh" stop "$work/pg" >/dev/null 2>&1 || true
    rm -rf -- "$work"
    return "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$root/scripts/pg-server.sh" start "$work/pg" >&2
# shellcheck source=/dev/null
source "$work/pg/env.sh"
pg_port=$(sed -n 's/.* port=\([0-9]*\) .*/\1/p' <<<"$RBDSYNC_TEST_DB")
inventory_admin="$RBDSYNC_TEST_DB_ADMIN dbname=rbdsync"
owner_db="host=127.0.0.1 port=$pg_port user=rbdsync_owner dbname=rbdsync"
console_db="host=127.0.0.1 port=$pg_port user=rbdsync_console dbname=rbdsync"
admin() { "$psql" -X -q -At -v ON_ERROR_STOP=1 -d "$inventory_admin" "$@"; }

# rbd-sync's roles (docs/install.md): the owner migrates, the writer (pg-server.sh's
# rbdsync) syncs, the reader is the console's read-only role; and the demo site's own
# role, as scripts/demo.sh --console makes it: its tables in schema console, SELECT on
# schema rbdsync. Passwords travel on stdin and stay out of the server log; they go to a
# pgpass of this bench's, beside the server's.
owner_password=$(random_hex 16)
console_password=$(random_hex 16)
admin <<SQL
SET log_min_error_statement = panic;
SET log_statement = 'none';
CREATE ROLE rbdsync_owner LOGIN PASSWORD '$owner_password';
CREATE ROLE rbdsync_console LOGIN PASSWORD '$console_password';
SQL
admin -v owner=rbdsync_owner -v writer=rbdsync -v reader=rbdsync_reader \
    -f "$root/sql/roles.sql" >/dev/null
(
    umask 077
    cat "$PGPASSFILE" > "$work/pgpass"
    printf '127.0.0.1:%s:*:%s:%s\n' "$pg_port" rbdsync_owner "$owner_password" \
        "$pg_port" rbdsync_console "$console_password" >> "$work/pgpass"
)
export PGPASSFILE=$work/pgpass
"$rbd_sync" migrate --db "$owner_db" >&2

# The inventory, through the real sink: a full sync, then the same cluster with 1 in
# 1,000 images unreadable (stale: their rows kept as the first sync wrote them). The
# syncer's warning per unreadable image is left out: the phase's line counts them.
say "filling: $images images (sink_scale --mix console --seed $seed), full sync then stale sync"
fill_start=$(now_us)
for phase in full stale; do
    phase_start=$(now_us)
    "$sink" --mix console --db "$RBDSYNC_TEST_DB" --images "$images" --seed "$seed" \
        --phase "$phase" 2>&1 |
        sed -e '/\[warning\] image .* could not be read: /d' -e 's/^/console-scale.sh: /' >&2
    say "$phase sync: $(seconds_since "$phase_start")s"
done
fill_s=$(seconds_since "$fill_start")
say "fill: $images images in ${fill_s}s wall"
mix=$("$psql" -X -q -At -v ON_ERROR_STOP=1 -d "$RBDSYNC_TEST_DB" -c "
    SELECT (SELECT count(*) FROM rbdsync.images) || ' images in '
        || (SELECT count(*) FROM rbdsync.pools) || ' pools, '
        || (SELECT count(*) FROM rbdsync.namespaces) || ' namespaces, '
        || (SELECT count(*) FROM rbdsync.images WHERE name_bytes IS NOT NULL) || ' names escaped, '
        || (SELECT count(*) FROM rbdsync.images WHERE used_bytes IS NULL) || ' usage unknown, '
        || (SELECT count(*) FROM rbdsync.images WHERE parent_image_id IS NOT NULL) || ' clones, '
        || (SELECT count(*) FROM rbdsync.snapshots) || ' snapshots, '
        || (SELECT count(*) FROM rbdsync.images WHERE mirror_mode IS NOT NULL) || ' mirrored, '
        || (SELECT count(*) FROM rbdsync.images WHERE group_name IS NOT NULL) || ' in groups, '
        || (SELECT count(*) FROM rbdsync.images WHERE stale_error IS NOT NULL) || ' stale, '
        || (SELECT count(*) FROM rbdsync.trash) || ' in trash'")
say "stored: $mix"

# The demo site's role and schema (scripts/demo.sh --console), and its read grants.
admin <<SQL
CREATE SCHEMA console AUTHORIZATION rbdsync_console;
ALTER ROLE rbdsync_console IN DATABASE rbdsync SET search_path = console;
SQL
admin -v role=rbdsync_console -v owner=rbdsync_owner -f "$root/contrib/django/grant-select.sql" >/dev/null

# contrib/django/demo_site/settings.py reads these. The trigger socket stays the
# package's default: nobody presses "Sync now" here (the user may not).
DJANGO_SECRET_KEY=$(random_hex 32)
export DJANGO_SECRET_KEY PYTHONDONTWRITEBYTECODE=1
export RBDSYNC_CONSOLE_DB=$console_db DJANGO_ALLOWED_HOSTS=127.0.0.1 DJANGO_TIME_ZONE=UTC
manage=("$python" "$root/contrib/django/manage.py")
"${manage[@]}" migrate --noinput -v 0
RBDSYNC_BENCH_PASSWORD=$(random_hex 12)
export RBDSYNC_BENCH_PASSWORD
(umask 077; printf '%s\n' "$RBDSYNC_BENCH_PASSWORD" > "$work/login-password")
# A user who may see the inventory and nothing else (not a superuser).
"${manage[@]}" shell -c '
import os
from django.contrib.auth.models import Permission, User
user = User.objects.create_user("bench", password=os.environ["RBDSYNC_BENCH_PASSWORD"])
user.user_permissions.add(Permission.objects.get(content_type__app_label="rbdsync_console",
                                                 codename="view_inventory"))
user = User.objects.get(pk=user.pk)
assert user.has_perm("rbdsync_console.view_inventory") and not user.is_superuser
'

analyze_start=$(now_us)
admin -c "ANALYZE"
say "ANALYZE: $(seconds_since "$analyze_start")s"
run_id=$(admin -c "SELECT run_id FROM rbdsync.runs ORDER BY started_at DESC, ended_at DESC LIMIT 1")
# (psql interpolates :'q' in its input, not in -c.)
search_matches=$(admin -v q="$search" <<'SQL'
SELECT count(*) FILTER (WHERE strpos(lower(name), lower(:'q')) > 0) || ' of ' || count(*)
FROM rbdsync.images
SQL
)
say "search '$search' is in $search_matches image names; latest run $run_id"

# gunicorn on a free port, chosen under the machine-wide lock the test services use and
# held until gunicorn listens, so that no service started meanwhile takes it.
exec {ports_lock}>>"$PORTS_LOCK"
flock "$ports_lock"
port=$(free_port_block 1)
"$gunicorn" --chdir "$root/contrib/django" --workers 2 --bind "127.0.0.1:$port" --timeout 120 \
    --error-logfile - --log-level warning demo_site.wsgi:application \
    </dev/null >"$work/gunicorn.log" 2>&1 {ports_lock}>&- &
gunicorn_pid=$!
serve_start=$(now_us)
until ! port_is_free "$port"; do
    if ! running "$gunicorn_pid" || (($(now_us) - serve_start > 60000000)); then
        say "gunicorn did not listen on 127.0.0.1:$port; its log:"
        cat "$work/gunicorn.log" >&2
        exit 1
    fi
    sleep 0.05   # polling interval
done
exec {ports_lock}>&-
say "gunicorn $("$gunicorn" --version 2>&1 | sed -n 's/.*(version \([0-9.]*\)).*/\1/p'), 2 workers," \
    "Django $("$python" -c 'import django; print(django.get_version())'), on 127.0.0.1:$port" \
    "(listening after $(seconds_since "$serve_start")s)"

build_rev="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
git -C "$root" diff --quiet HEAD -- src sql contrib/django bench 2>/dev/null ||
    build_rev+=" + uncommitted changes"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
client_args=(--url "http://127.0.0.1:$port" --user bench --run-id "$run_id" --search "$search"
             --requests "$requests" --server-pid "$gunicorn_pid")
[[ -z $only ]] || client_args+=(--only "$only")
code=0
"$python" "$client" "${client_args[@]}" > "$work/results" || code=$?
cat "$work/results"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
say "host: $(nproc) cores; load average before $load_before, after $load_after; source $build_rev"
if ((code != 0)); then
    say "error: the console did not answer every request with 200 (gunicorn's log below)"
    tail -n 40 "$work/gunicorn.log" >&2 || true
    exit 1
fi
if [[ -s $work/gunicorn.log ]]; then
    say "gunicorn's log:"
    tail -n 20 "$work/gunicorn.log" >&2
fi

summary="images=$images fill_s=$fill_s p95<=${target_ms}ms:"
while read -r name _ p95 _; do
    ms=${p95#p95_ms=}
    verdict=$(awk -v m="$ms" -v t="$target_ms" 'BEGIN { print (m <= t) ? "PASS" : "MISS" }')
    summary+=" $name=$verdict"
done < "$work/results"
echo "$summary"
