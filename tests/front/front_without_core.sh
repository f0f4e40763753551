#!/usr/bin/env bash
# The front (`rbd-sync`) runs without its core (librbdsync-core.so) until it needs it:
# version, status and a busy answer work with no core anywhere; a run that gets the
# guard says in one line that the core is missing (exit 70, with dlerror's reason). With a
# core of another build beside it (OTHER_CORE: its entry refuses the front's ABI), the run
# says in one line that the core belongs to another build (exit 70, "reinstall").
# Usage: front_without_core.sh FRONT OTHER_CORE
set -euo pipefail
front=$1
other_core=$2
fail() { echo "front_without_core: FAIL: $*" >&2; exit 1; }
scratch=$(mktemp -d /tmp/rbd-sync-front.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# A copy alone in a directory: no core beside it, and the installed path is this build's
# prefix, where nothing is installed while the tests run.
cp "$front" "$scratch/rbd-sync"
lock=$scratch/sync.lock
args=(--lock-file "$lock" --ceph-conf /nonexistent/ceph.conf --db "host=127.0.0.1 port=1 dbname=x")

"$scratch/rbd-sync" --version >/dev/null || fail "--version needs the core"
"$scratch/rbd-sync" status --lock-file "$lock" >/dev/null || fail "status needs the core"

# A held lock file: the busy answer, exit 75, without the core.
exec {held}>"$lock"
flock -n "$held"
status=0
"$scratch/rbd-sync" run "${args[@]}" 2>"$scratch/busy.err" || status=$?
[[ $status == 75 ]] || fail "busy run exited $status, not 75: $(cat "$scratch/busy.err")"
grep -q '^rbd-sync: already running: ' "$scratch/busy.err" || fail "no busy answer: $(cat "$scratch/busy.err")"
exec {held}>&-

# expect_core_error NAME PATTERN WHAT: a run that gets the guard fails in one line that
# matches PATTERN, exit 70.
expect_core_error() {
    local out=$scratch/$1.err status=0
    "$scratch/rbd-sync" run "${args[@]}" 2>"$out" || status=$?
    [[ $status == 70 ]] || fail "$3 exited $status, not 70"
    [[ $(wc -l <"$out") == 1 ]] || fail "not one line: $(cat "$out")"
    grep -q "$2" "$out" || fail "unexpected error: $(cat "$out")"
    echo "$3: $(cat "$out")"
}

# The guard taken: now the core is needed.
expect_core_error run "^rbd-sync: error: cannot load rbd-sync's core module: .*librbdsync-core.so.*(hint: reinstall rbd-sync)$" \
    "a run without its core (version, status, busy answer ok)"

# A core of another build beside the front (a partial upgrade): refused before it runs.
cp "$other_core" "$scratch/librbdsync-core.so"
expect_core_error other "^rbd-sync: error: rbd-sync's core module $scratch/librbdsync-core.so belongs to another build of rbd-sync (.*) (hint: reinstall rbd-sync)$" \
    "a run with another build's core"
