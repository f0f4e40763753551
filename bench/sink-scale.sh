#!/usr/bin/env bash
# A million images, by simulation (issue #18; results in docs/performance.md).
#
#   bench/sink-scale.sh [--images N] [--seed S] [--build DIR] [--explain] [--pg-set NAME=VALUE]...
#
# Pushes N synthetic images (bench/sink_scale: an OpenStack-like mix made from (seed,
# index), no Ceph cluster) through the real sync::Syncer and db::PgStore into a throwaway
# PostgreSQL server that it starts (scripts/pg-server.sh) and stops on exit, whatever
# happens. Three phases, each its own process under bench/measure so that its wall time
# and peak RSS are its own: a full sync into empty tables, a no-op resync, and a resync
# with 1% of the images changed. Rows written per phase come from pg_stat_user_tables
# (the inventory tables and usage history; not runs or schema_migrations), read once the
# phase's backends are gone.
#
# The server logs every statement slower than 1 s; with --explain, auto_explain also logs
# the plan of each (EXPLAIN ANALYZE, buffers off) and they are printed after the phases,
# so the planner's choices at N images can be read. --pg-set applies a server setting that
# a reload takes (ALTER SYSTEM), e.g. --pg-set jit=off, to compare the store under it.
#
# Wall times on a shared machine mostly say how busy it was: each phase also prints the
# CPU seconds of the client and of the PostgreSQL server (the postmaster's own and its
# exited backends' CPU, from /proc), which the machine's load does not inflate.
#
# The last line is
#   images=N full_s=… noop_s=… changed_s=… peak_rss_mib=… rows_written_noop=…
# preceded by PASS/MISS against the targets of #18 at 1,000,000 images: full <= 60 s,
# no-op <= 30 s writing 0 rows, peak RSS <= 64 MiB. Exit status: 0, or 1 when a phase
# failed or the no-op resync wrote rows (a correctness property); a missed time or
# memory target is reported, never an exit status.
# Defaults: --images 1000000, --seed 18, --build build. Port: RBDSYNC_PG_PORT (default: a free one).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/lib/usage.sh"
images=1000000
seed=18
build=$root/build
explain=0
pg_settings=()

usage() {
    echo "usage: $0 [--images N] [--seed S] [--build DIR] [--explain] [--pg-set NAME=VALUE]..." >&2
    exit 64
}
while (($#)); do
    case $1 in
        --images) images=${2:-}; shift 2 || usage ;;
        --seed) seed=${2:-}; shift 2 || usage ;;
        --build) build=${2:-}; shift 2 || usage ;;
        --explain) explain=1; shift ;;
        --pg-set) pg_settings+=("${2:-}"); shift 2 || usage ;;
        -h | --help) answer_help "$1" ;;
        *) usage ;;
    esac
done
[[ $images =~ ^[0-9]+$ ]] && ((images >= 10)) || { echo "sink-scale.sh: --images must be >= 10" >&2; exit 64; }
[[ $seed =~ ^[0-9]+$ ]] || usage
build=$(realpath -- "$build")
sink=$build/bench/sink_scale
measure=$build/bench/measure
psql=/usr/lib/postgresql/15/bin/psql
for f in "$sink" "$measure"; do
    [[ -x $f ]] || { echo "sink-scale.sh: $f missing; build first (cmake --build $build --target sink_scale measure)" >&2; exit 69; }
done

say() { echo "sink-scale.sh: $*" >&2; }

work=$(mktemp -d /tmp/rbd-sync-sink-scale.XXXXXX)
stop_server() {
    "$root/scripts/pg-server.sh" stop "$work/pg" >/dev/null 2>&1 || true
    rm -rf -- "$work"
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$root/scripts/pg-server.sh" start "$work/pg" >&2
# shellcheck source=/dev/null
source "$work/pg/env.sh"
db=$RBDSYNC_TEST_DB
server_log=$work/pg/log/postgresql.log

admin() { "$psql" -X -q -At -v ON_ERROR_STOP=1 -d "$RBDSYNC_TEST_DB_ADMIN" -c "$1"; }
sql() { "$psql" -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }

# Slow statements in the server log; with --explain, their plans too. New sessions (each
# phase's) pick the settings up on reload.
admin "ALTER SYSTEM SET log_min_duration_statement = '1s'"
if ((explain)); then
    # ALTER SYSTEM knows the module's settings once it is loaded in the session.
    "$psql" -X -q -v ON_ERROR_STOP=1 -d "$RBDSYNC_TEST_DB_ADMIN" -c "LOAD 'auto_explain'" \
        -c "ALTER SYSTEM SET session_preload_libraries = 'auto_explain'" \
        -c "ALTER SYSTEM SET auto_explain.log_min_duration = '1s'" \
        -c "ALTER SYSTEM SET auto_explain.log_analyze = on" \
        -c "ALTER SYSTEM SET auto_explain.log_buffers = off" \
        -c "ALTER SYSTEM SET auto_explain.log_nested_statements = on" \
        -c "ALTER SYSTEM SET auto_explain.log_triggers = on"
fi
for setting in "${pg_settings[@]}"; do
    [[ $setting =~ ^([a-z_.]+)=([A-Za-z0-9_.]+)$ ]] || { say "--pg-set takes NAME=VALUE, not '$setting'"; exit 64; }
    admin "ALTER SYSTEM SET ${BASH_REMATCH[1]} = '${BASH_REMATCH[2]}'"
done
admin "SELECT pg_reload_conf()" >/dev/null

# Rows inserted + updated + deleted so far in the inventory tables. A backend's counts
# reach pg_stat_user_tables when it exits: wait until the phase's backends are gone.
rows_written() {
    local i
    for ((i = 0; i < 100; i++)); do
        [[ $(sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'rbd-sync'") == 0 ]] &&
            break
        sleep 0.1
    done
    sql "SELECT pg_stat_clear_snapshot();
         SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables
         WHERE schemaname = 'rbdsync' AND relname NOT IN ('runs', 'schema_migrations')" | tail -n 1
}

# CPU seconds of the server so far: the postmaster's, plus its reaped children's (every
# backend that has exited), fields 14-17 of /proc/PID/stat.
server_cpu() {
    local stat fields
    stat=$(< "/proc/$(head -n 1 "$work/pg/data/postmaster.pid")/stat")
    read -r -a fields <<< "${stat##*) }"
    awk -v t="$(getconf CLK_TCK)" -v a="${fields[11]}" -v b="${fields[12]}" -v c="${fields[13]}" \
        -v d="${fields[14]}" 'BEGIN { printf "%.1f", (a + b + c + d) / t }'
}

"$sink" --db "$db" --images "$images" --seed "$seed" --phase migrate >&2
build_rev="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
git -C "$root" diff --quiet HEAD -- src CMakeLists.txt sql bench/sink_scale.cpp 2>/dev/null ||
    build_rev+=" + uncommitted changes"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

status=0
# The simulation's own share: the same listing and images, handed to no sink.
"$measure" "$work/result" "$sink" --images "$images" --seed "$seed" --db - --phase source >&2 ||
    status=1
read -r s kib _ cpu < "$work/result"
say "source alone (no sink): $(printf '%.1f' "$s")s wall, CPU ${cpu}s, peak RSS $((kib / 1024)) MiB"

declare -A seconds rss rows
for phase in full noop changed; do
    before=$(rows_written)
    cpu_before=$(server_cpu)
    log_offset=$(stat -c %s "$server_log")
    say "$phase: syncing $images images"
    code=0
    "$measure" "$work/result" "$sink" --db "$db" --images "$images" --seed "$seed" --phase "$phase" \
        >&2 || code=$?
    after=$(rows_written)
    server_s=$(awk -v a="$cpu_before" -v b="$(server_cpu)" 'BEGIN { printf "%.1f", b - a }')
    read -r s kib _ cpu < "$work/result"
    seconds[$phase]=$(printf '%.1f' "$s")
    rss[$phase]=$((kib / 1024))
    rows[$phase]=$((after - before))
    say "$phase: ${seconds[$phase]}s wall, CPU ${cpu}s client + ${server_s}s PostgreSQL, peak RSS ${rss[$phase]} MiB, ${rows[$phase]} rows written, exit $code"
    ((code == 0)) || status=1
    tail -c +"$((log_offset + 1))" "$server_log" | grep -E 'duration: [0-9.]+ ms +(statement|execute)' |
        sed -E 's/^.*duration: ([0-9.]+) ms +(statement|execute [^:]*):/\1 ms:/' |
        sort -rn | head -n 8 | cut -c1-300 | sed "s/^/sink-scale.sh: $phase slow: /" >&2 || true
    if ((explain)); then
        echo "--- $phase: plans of statements over 1 s (auto_explain) ---" >&2
        tail -c +"$((log_offset + 1))" "$server_log" |
            awk '/duration: .* plan:/ { on = 1 } /^[0-9]{4}-/ && !/plan:/ { on = 0 } on' >&2 || true
    fi
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
mix=$(sql "SELECT (SELECT count(*) FROM rbdsync.images) || ' images, '
           || (SELECT count(DISTINCT (pool_id, namespace, image_id)) FROM rbdsync.snapshots) || ' with snapshots ('
           || (SELECT count(*) FROM rbdsync.snapshots) || ' snapshots), '
           || (SELECT count(*) FROM rbdsync.images WHERE parent_image_id IS NOT NULL) || ' clones, '
           || (SELECT count(*) FROM rbdsync.namespaces) || ' namespaces, '
           || (SELECT count(*) FROM rbdsync.trash) || ' in trash'")
say "stored after the changed resync: $mix"
say "host: $(nproc) cores; load average before $load_before, after $load_after; source $build_rev${pg_settings[*]:+; server settings: ${pg_settings[*]}}"

peak=$(printf '%s\n' "${rss[@]}" | sort -n | tail -n 1)
verdict() { if (($1)); then echo PASS; else echo MISS; fi; }
full_ok=$(awk -v s="${seconds[full]}" 'BEGIN { print (s <= 60) }')
noop_ok=$(awk -v s="${seconds[noop]}" -v r="${rows[noop]}" 'BEGIN { print (s <= 30 && r == 0) }')
echo "targets at 1,000,000 images (measured at $images):" \
    "full <= 60 s $(verdict "$full_ok"), no-op <= 30 s writing 0 rows $(verdict "$noop_ok")," \
    "peak RSS <= 64 MiB $(verdict $((peak <= 64)))"
if ((rows[noop] != 0)); then
    say "error: the no-op resync wrote ${rows[noop]} rows"
    status=1
fi
echo "images=$images full_s=${seconds[full]} noop_s=${seconds[noop]} changed_s=${seconds[changed]}" \
    "peak_rss_mib=$peak rows_written_noop=${rows[noop]}"
exit "$status"
