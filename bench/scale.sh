#!/usr/bin/env bash
# The inventory at scale, side by side (issue #9; results in docs/performance.md).
#
#   bench/scale.sh [--images N] [--runs R] [--build DIR] [--threads T] [--ways LIST]
#                  [--mix today|openstack|dr]
#
# Starts a throwaway Ceph cluster (one bluestore-on-file OSD, no mgr) and PostgreSQL
# server on private ports, fills a pool with N images through librbd (bench/fill_cluster:
# --mix today ~10% with a snapshot, a few clones, a few dozen small writes; --mix
# openstack clone v2 children of a few protected snapshots, trashed parent snapshots,
# groups with group snapshots; --mix dr snapshot-mode mirroring on every image, with
# mirror snapshots), reads the pool once untimed (a floor-reads pass: the OSD's cache is
# cold after the fill), then times, R rounds, alternating (the order rotates each round):
#   * rbd-sync run, once per reader (--reader librbd and --reader direct when
#     `rbd-sync run --help` lists --reader, else the default reader only): a full sync into
#     emptied rbdsync inventory tables, then a no-op resync;
#   * rbd ls -l --format json + rbd du -p POOL --format json;
#   * the old Python job (bench/baseline/old_job.py, Debian's /usr/bin/python3);
#   * the floor: one header omap read per image, 64 in flight (bench/header_floor);
#   * floor-reads: the floor plus the other reads the direct reader makes of each image
#     (watchers and lock owner in the header's operation, the head object map beside
#     it: RBDSYNC_HEADER_FLOOR_ALSO=watchers,lock,map), the least any sync reporting usage reads.
# and prints one table: median seconds (min-max), ms/image, ratios, peak RSS, inventory
# rows inserted/updated/deleted per run (pg_stat_user_tables), and PASS/MISS for the
# targets of #9, and the share of images the direct reader read itself (PASS/MISS against
# 99%, issue #18). The services are stopped on exit, whatever happens. Exit status: 0, or 1
# when a measured command failed (a missed target is reported, never an exit status).
#
# Defaults: --mix today, --images 10000, --runs 3, --build build (needs rbd-sync and
# bench/ targets),
# --ways direct,librbd,cli,python,floor,floor-reads (a subset keeps a large run short: at 100,000
# images the librbd ways take about half an hour per round).
# Ports: RBDSYNC_CEPH_PORT (it uses PORT..PORT+99), RBDSYNC_PG_PORT; by default free ones.
# Timings are wall clock on a shared machine: run it when the machine is otherwise idle.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/lib/usage.sh"
images=10000
runs=3
build=$root/build
threads=8
ways_wanted=direct,librbd,cli,python,floor,floor-reads
mix=today
readonly pool=bench

usage() {
    echo "usage: $0 [--images N] [--runs R] [--build DIR] [--threads T] [--ways direct,librbd,cli,python,floor,floor-reads] [--mix today|openstack|dr]" >&2
    exit 64
}
while (($#)); do
    case $1 in
        --images) images=${2:-}; shift 2 || usage ;;
        --runs) runs=${2:-}; shift 2 || usage ;;
        --build) build=${2:-}; shift 2 || usage ;;
        --threads) threads=${2:-}; shift 2 || usage ;;
        --ways) ways_wanted=${2:-}; shift 2 || usage ;;
        --mix) mix=${2:-}; shift 2 || usage ;;
        -h | --help) answer_help "$1" ;;
        *) usage ;;
    esac
done
[[ $images =~ ^[0-9]+$ ]] && ((images >= 10)) || { echo "scale.sh: --images must be >= 10" >&2; exit 64; }
[[ $runs =~ ^[0-9]+$ ]] && ((runs >= 1)) || { echo "scale.sh: --runs must be >= 1" >&2; exit 64; }
[[ $threads =~ ^[0-9]+$ ]] && ((threads >= 1)) || usage
[[ $ways_wanted =~ ^(direct|librbd|cli|python|floor|floor-reads)(,(direct|librbd|cli|python|floor|floor-reads))*$ ]] ||
    { echo "scale.sh: --ways takes a comma-separated subset of direct,librbd,cli,python,floor,floor-reads" >&2; exit 64; }
[[ $mix =~ ^(today|openstack|dr)$ ]] || { echo "scale.sh: --mix takes today, openstack or dr" >&2; exit 64; }
wanted() { [[ ,$ways_wanted, == *,$1,* ]]; }
build=$(realpath -- "$build")

rbd_sync=$build/rbd-sync
fill=$build/bench/fill_cluster
floor=$build/bench/header_floor
measure=$build/bench/measure
python=/usr/bin/python3
psql=/usr/lib/postgresql/15/bin/psql
for f in "$rbd_sync" "$fill" "$floor" "$measure"; do
    [[ -x $f ]] || { echo "scale.sh: $f missing; build first (cmake --build $build)" >&2; exit 69; }
done
"$python" -c 'import rbd, rados, psycopg2' 2>/dev/null ||
    { echo "scale.sh: $python lacks python3-rbd/python3-psycopg2 (run scripts/deps.sh)" >&2; exit 69; }

say() { echo "scale.sh: $*" >&2; }
now() { echo "${EPOCHREALTIME/[.,]/.}"; }

work=$(mktemp -d /tmp/rbd-sync-scale.XXXXXX)
stop_services() {
    "$root/scripts/pg-server.sh" stop "$work/pg" >/dev/null 2>&1 || true
    "$root/scripts/ceph-cluster.sh" stop "$work/ceph" >/dev/null 2>&1 || true
    rm -rf -- "$work"
}
trap stop_services EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t0=$(now)
# The OSD gets Ceph's default memory target (4 GiB; the test clusters' is 1 GiB): with
# less, bluestore's caches stop holding every image's metadata between 10,000 and 100,000
# images, and the cost per image grows for every way alike (#18 part 3).
RBDSYNC_CEPH_OBJECTSTORE=bluestore RBDSYNC_CEPH_MGR=0 \
    RBDSYNC_CEPH_OSD_MEMORY_TARGET=${RBDSYNC_CEPH_OSD_MEMORY_TARGET:-4294967296} \
    "$root/scripts/ceph-cluster.sh" start "$work/ceph"
"$root/scripts/pg-server.sh" start "$work/pg"
# shellcheck source=/dev/null
source "$work/ceph/env.sh"
# shellcheck source=/dev/null
source "$work/pg/env.sh"
conf=$CEPH_CONF
ceph_id=$RBDSYNC_TEST_CEPH_ID
db=$RBDSYNC_TEST_DB

timeout 60 ceph --conf "$conf" --id admin osd pool create "$pool" 32 32 >/dev/null 2>&1
timeout 60 rbd --conf "$conf" --id admin pool init "$pool"
t_fill=$(now)
"$fill" --mix "$mix" "$conf" admin "$pool" "$images" "$threads" >&2
fill_seconds=$(awk -v a="$t_fill" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
say "services up and $images images made in $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')s (fill ${fill_seconds}s)"
"$rbd_sync" migrate --db "$db" --quiet

# The source the measured binary was built from (the worktree may move on meanwhile).
# The revision of the sources the build was made from, from its CMake cache: a --build
# of another checkout is that checkout's, not this one's.
build_source=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
build_source=${build_source:-$root}
build_rev="$("$rbd_sync" --version 2>/dev/null | head -n 1), $(git -C "$build_source" rev-parse --short HEAD 2>/dev/null || echo '?')"
git -C "$build_source" diff --quiet HEAD -- src CMakeLists.txt sql 2>/dev/null ||
    build_rev+=" + uncommitted src changes"
readers=()
# `run --help`: the global --help lists only the options of every command; an older
# binary, with one help for all, answers it with that. The text is read whole first: under
# pipefail, `| grep -q` can stop reading early and fail the pipeline by SIGPIPE.
run_help=$("$rbd_sync" run --help 2>&1 || true)
if grep -q -- '--reader' <<<"$run_help"; then
    for r in librbd direct; do
        if wanted "$r"; then readers+=("$r"); fi
    done
    reader_note="readers: ${readers[*]:-none} (rbd-sync run --help lists --reader)"
else
    readers=(default)
    reader_note="reader: the default only (this rbd-sync has no --reader option)"
fi
say "$reader_note"

sql() { "$psql" -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }

# Rows inserted/updated/deleted so far in SCHEMA's tables (rbdsync: the inventory tables
# only, not the run history). Statistics of a backend reach pg_stat_user_tables when it
# goes idle or exits; wait until the measured client's backends are gone, then read
# with a fresh snapshot.
row_counts() {
    local schema=$1 i
    for ((i = 0; i < 100; i++)); do
        [[ $(sql "SELECT count(*) FROM pg_stat_activity
                  WHERE application_name IN ('rbd-sync', 'oldjob')") == 0 ]] && break
        sleep 0.1
    done
    sql "SELECT pg_stat_clear_snapshot();
         SELECT coalesce(sum(n_tup_ins), 0) || ' ' || coalesce(sum(n_tup_upd), 0) || ' '
                || coalesce(sum(n_tup_del), 0)
         FROM pg_stat_user_tables
         WHERE schemaname = '$schema' AND relname NOT IN ('runs', 'schema_migrations')" | tail -n 1
}

samples=$work/samples.tsv
: > "$samples"
# record WAY ROUND RESULT_FILE [BEFORE AFTER]: append one sample line.
record() {
    local way=$1 round=$2 result=$3 before=${4:-} after=${5:-} seconds rss code cpu rows="- - -"
    if [[ -s $result ]]; then
        read -r seconds rss code cpu < "$result"
    else
        seconds=0 rss=0 code=127 cpu=0   # measure itself failed; its message is in the log
    fi
    if [[ -n $before ]]; then
        local b a
        read -r -a b <<< "$before"
        read -r -a a <<< "$after"
        rows="$((a[0] - b[0])) $((a[1] - b[1])) $((a[2] - b[2]))"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$way" "$round" "$seconds" "$rss" "$code" "$rows" "${cpu:-0}" >> "$samples"
    if ((code != 0)); then
        say "warning: $way (round $round) exited $code"
        if [[ -f $work/out.$way.log ]]; then tail -n 5 "$work/out.$way.log" >&2; fi
    fi
}

empty_inventory() {
    sql "TRUNCATE rbdsync.clusters, rbdsync.pools, rbdsync.namespaces, rbdsync.images,
                  rbdsync.snapshots, rbdsync.trash CASCADE"
}

measure_rbd_sync() {
    local reader=$1 round=$2 mode before after way
    local args=(run --db "$db" --id "$ceph_id" --conf "$conf" --lock-file "$work/sync.lock"
                --pool "$pool" --json)
    [[ $reader == default ]] || args+=(--reader "$reader")
    rm -f -- "$work"/result*
    for mode in full noop; do
        way="rbd-sync:$reader:$mode"
        [[ $mode == noop ]] || empty_inventory
        before=$(row_counts rbdsync)
        "$measure" "$work/result" "$rbd_sync" "${args[@]}" > "$work/out.$way.log" 2>&1 || true
        after=$(row_counts rbdsync)
        record "$way" "$round" "$work/result" "$before" "$after"
        [[ $reader == librbd || $mode == noop ]] || direct_share "$work/out.$way.log"
    done
}

# The share of images the direct reader read itself (issue #18: at least 99% of each
# mix), from the --json report's read figures: `header` reads against `librbd` ones.
direct_share() {
    local line
    line=$("$python" - "$1" <<'PY'
import json, sys
report = None
for text in open(sys.argv[1], errors="replace"):
    if text.startswith("{"):
        report = json.loads(text)
if report is None or "read" not in report:
    print("no --json report")
    sys.exit(0)
images = report["read"]["images"]
header, total = images.get("header", 0), sum(images.values())
share = 100.0 * header / total if total else 0.0
fallbacks = ", ".join(f"{k}: {v}" for k, v in sorted(report["read"]["fallbacks"].items()))
verdict = "PASS" if share >= 99.0 else "MISS"
print(f"{share:.2f}% ({header} of {total} reads) {verdict} (target >= 99%); fallbacks: {fallbacks or 'none'}")
PY
)
    say "direct reader share, mix $mix: $line"
    share_note="direct reader share, mix $mix: $line"
}

measure_cli() {
    local round=$1 s1 s2 r1 r2 c1 c2 u1 u2
    rm -f -- "$work"/result*
    "$measure" "$work/result.ls" rbd --conf "$conf" --id "$ceph_id" ls -l --format json "$pool" \
        > /dev/null 2> "$work/out.rbd-ls.log" || true
    record rbd-ls "$round" "$work/result.ls"
    "$measure" "$work/result.du" rbd --conf "$conf" --id "$ceph_id" du -p "$pool" --format json \
        > /dev/null 2> "$work/out.rbd-du.log" || true
    record rbd-du "$round" "$work/result.du"
    read -r s1 r1 c1 u1 < "$work/result.ls"
    read -r s2 r2 c2 u2 < "$work/result.du"
    awk -v s1="$s1" -v s2="$s2" -v r1="$r1" -v r2="$r2" -v c1="$c1" -v c2="$c2" -v u1="$u1" -v u2="$u2" \
        'BEGIN { printf "%.6f %d %d %.3f\n", s1 + s2, (r1 > r2 ? r1 : r2), (c1 ? c1 : c2), u1 + u2 }' \
        > "$work/result"
    record rbd-cli "$round" "$work/result"
}

measure_python() {
    local round=$1 before after
    sql "DO \$\$ BEGIN
           IF to_regclass('oldjob.images') IS NOT NULL THEN
             TRUNCATE oldjob.images, oldjob.snapshots;
           END IF;
         END \$\$"
    rm -f -- "$work"/result*
    before=$(row_counts oldjob)
    "$measure" "$work/result" "$python" "$root/bench/baseline/old_job.py" --conf "$conf" \
        --id "$ceph_id" --db "$db application_name=oldjob" "$pool" > "$work/out.python.log" 2>&1 || true
    after=$(row_counts oldjob)
    record python "$round" "$work/result" "$before" "$after"
}

measure_floor() {
    rm -f -- "$work"/result*
    "$measure" "$work/result" "$floor" "$conf" "$ceph_id" "$pool" > "$work/out.floor.log" 2>&1 || true
    record floor "$1" "$work/result"
}

measure_floor_reads() {
    rm -f -- "$work"/result*
    RBDSYNC_HEADER_FLOOR_ALSO=watchers,lock,map "$measure" "$work/result" "$floor" "$conf" "$ceph_id" "$pool" \
        > "$work/out.floor-reads.log" 2>&1 || true
    record floor-reads "$1" "$work/result"
}

ways=()
for r in "${readers[@]}"; do ways+=("sync:$r"); done
for w in cli python floor floor-reads; do
    if wanted "$w"; then ways+=("$w"); fi
done
# One untimed pass over what the ways read most (every header with its watchers and lock
# owner, every head object map) before the first timed one. Just after the fill the OSD's
# cache is cold for whatever comes first: at 100,000 images and one round, the full sync
# (first in the order) took 31-35 s cold against 22-24 s warm (#18).
say "warm-up: one untimed floor-reads pass"
RBDSYNC_HEADER_FLOOR_ALSO=watchers,lock,map "$floor" "$conf" "$ceph_id" "$pool" > "$work/out.warm-up.log" 2>&1 ||
    say "warning: the warm-up pass failed (see the timed ways)"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
t_measure=$(now)
for ((round = 1; round <= runs; round++)); do
    n=${#ways[@]}
    for ((k = 0; k < n; k++)); do
        way=${ways[$(((k + round - 1) % n))]}
        say "round $round/$runs: $way"
        case $way in
            sync:*) measure_rbd_sync "${way#sync:}" "$round" ;;
            cli) measure_cli "$round" ;;
            python) measure_python "$round" ;;
            floor) measure_floor "$round" ;;
            floor-reads) measure_floor_reads "$round" ;;
        esac
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
measure_seconds=$(awk -v a="$t_measure" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }')

snapshots=$(sql "SELECT count(*) FROM rbdsync.snapshots" 2>/dev/null || echo "?")
clones=$(sql "SELECT count(*) FROM rbdsync.images WHERE parent_image_id IS NOT NULL" 2>/dev/null || echo "?")
status=0
"$python" "$root/bench/scale_report.py" "$samples" \
    --images "$images" --runs "$runs" --readers "${readers[*]}" \
    --note "$reader_note" \
    --note "${share_note:-direct reader share: not measured}" \
    --note "cluster: 1 mon + 1 bluestore-on-file OSD (no mgr), pool '$pool' 32 PGs; mix $mix, $images images, $snapshots snapshots, $clones clones; fill ${fill_seconds}s ($threads threads)" \
    --note "host: $(nproc) cores; load average before $load_before, after $load_after; measuring took ${measure_seconds}s; $build_rev" || status=$?
exit "$status"
