#!/usr/bin/env bash
# The part of the suite that shows rbd-sync builds and works on another Debian release:
# run inside a root of scripts/debian-root.sh (scripts/test.sh --all does, for trixie and
# sid).
#
#   scripts/debian-root.sh run ROOT scripts/test-in-root.sh [--matrix] [--django] [--no-package] BUILD_DIR
#
# In that root, against its own compiler, libraries and PostgreSQL:
#   1. builds rbd-sync and its tests with -Werror (BUILD_DIR, RelWithDebInfo);
#   2. starts that release's PostgreSQL (scripts/pg-server.sh) and runs the tests that
#      need no Ceph cluster: labels unit and postgres (the sink, its stager and the run
#      history, through that release's libpqxx);
#      --matrix: also starts that release's Ceph cluster (scripts/ceph-cluster.sh, with
#      its own default keys: aes256k on Ceph 20) and runs label matrix against it;
#      --django: also starts that cluster and runs the console's Django tests (label
#      django, not the browser test) on that release's Django;
#   3. builds the Debian package there and checks it with that release's lintian
#      (not with --no-package).
# Prints how long each part took; exits non-zero when any part failed.
set -euo pipefail
source "$(dirname "$0")/lib/usage.sh"
cd "$(dirname "$0")/.."
root=$PWD
matrix=0 django=0 package=1
while [[ ${1:-} == --* ]]; do
    case $1 in
        --matrix) matrix=1 ;;
        --django) django=1 ;;
        --no-package) package=0 ;;
        *) answer_help_or_refuse "$1" "--matrix, --django, --no-package, then BUILD_DIR" ;;
    esac
    shift
done
(($# == 1)) || { echo "usage: $0 [--matrix] [--django] [--no-package] BUILD_DIR" >&2; exit 64; }
cluster=$((matrix || django))
build=$(realpath -m "$1")
release=$(. /etc/os-release && echo "Debian ${VERSION_ID:-sid} (${VERSION_CODENAME:-sid})")
say() { echo "test-in-root.sh: $*" >&2; }
timings=()
failed=0
part() {
    local name=$1 t=$SECONDS status=0
    shift
    say "$name"
    "$@" || status=$?
    timings+=("$name $((SECONDS - t))s")
    ((status == 0)) || { say "FAILED: $name"; failed=1; }
    return "$status"
}

build_tree() {
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRBDSYNC_TESTS=ON \
        -DRBDSYNC_BENCH=OFF >/dev/null && cmake --build "$build" -j "$(nproc)"
}
part "build $build on $release" build_tree || { say "the build failed; no test ran"; exit 1; }

work=$(mktemp -d /tmp/rbd-sync-root-test.XXXXXX)
stop_services() {
    "$root/scripts/pg-server.sh" stop "$work/pg" >/dev/null 2>&1 || true
    if ((cluster)); then "$root/scripts/ceph-cluster.sh" stop "$work/ceph" >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap stop_services EXIT
start_services() {
    "$root/scripts/pg-server.sh" start "$work/pg" || return 1
    if ((cluster)); then
        RBDSYNC_CEPH_MGR=1 "$root/scripts/ceph-cluster.sh" start "$work/ceph" || return 1
    fi
}
part "start PostgreSQL$( ((cluster)) && echo " and the Ceph cluster")" start_services || exit 1
# shellcheck source=/dev/null
source "$work/pg/env.sh"
labels="unit|postgres"
if ((cluster)); then
    # shellcheck source=/dev/null
    source "$work/ceph/env.sh"
fi
((matrix)) && labels+="|matrix"
((django)) && labels+="|django"
part "tests (labels ${labels//|/, })" \
    ctest --test-dir "$build" --output-on-failure --timeout 600 -j 4 -L "^($labels)$" -LE browser ||
    true

check_package() {
    local out=$work/deb changes findings status=0
    "$root/scripts/build-deb.sh" "$out" >/dev/null || return 1
    changes=$(ls "$out"/rbd-sync_*.changes)
    findings=$(lintian --fail-on error,warning "$changes" 2>&1) || status=$?
    grep -v 'running with root privileges' <<<"$findings" | sed 's/^/lintian: /' >&2 || true
    ((status == 0)) && say "the package is lintian clean at error and warning level"
    return "$status"
}
if ((package)); then
    part "the Debian package, built and checked by lintian" check_package || true
fi

say "timings on $release:"
for line in "${timings[@]}"; do
    say "  $line"
done
((failed == 0)) || { say "FAILED"; exit 1; }
say "all passed on $release"
