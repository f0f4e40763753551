#!/usr/bin/env bash
# The test suite, from a fresh Debian 12 machine (as root). Two modes, one script:
#
#   ./scripts/test.sh        the default, for every change: one build (build/,
#                            RelWithDebInfo), then, against a throwaway Ceph cluster and
#                            PostgreSQL server: clang-tidy beside the CTest suite (unit,
#                            integration, the console's Django tests, the format and
#                            module checks), run side by side (ctest -j).
#   ./scripts/test.sh --all  what CI runs (.ci/run): the default, plus the benches'
#                            smoke runs, the Debian package, the console in headless
#                            Chromium, the ASan/UBSan build and its pass, the decoders
#                            fuzzed (build-fuzz/: clang and libFuzzer); Debian 13: a root
#                            of it (scripts/debian-root.sh) where rbd-sync builds, its
#                            unit and PostgreSQL 17 tests run and its package is checked
#                            (scripts/test-in-root.sh, build-trixie/); and the cluster
#                            matrix (label matrix): this build against a Reef 18.2 cluster
#                            from that root, and a build in a sid root (build-sid/)
#                            against sid's Tentacle 20.2 cluster.
#
# Both install what is missing first (scripts/deps.sh), stop the services on any exit,
# print how long each part took, and exit non-zero on any failure. docs/testing.md says
# what each mode runs, how long it takes, and how to run one test by hand.
#
# Knobs: RBDSYNC_TEST_JOBS (tests side by side; default 4, docs/testing.md has the
#        measurements), RBDSYNC_CEPH_PORT and RBDSYNC_PG_PORT (the suite's cluster's
#        and server's; default: free ports, so that suites and scripts/demo.sh run
#        beside each other),
#        RBDSYNC_TIDY_CACHE (scripts/tidy-cached.py; `off` checks every file),
#        RBDSYNC_ROOTS (where --all keeps its Debian roots; default
#        /var/cache/rbd-sync/roots: made once, remade when their package list changes).
#        Every variable the scripts and tests read: docs/testing.md, "Environment variables".
set -euo pipefail
# A developer's CEPH_ARGS would change what the suite's clients connect as, or where.
unset CEPH_ARGS
source "$(dirname "$0")/lib/usage.sh"
cd "$(dirname "$0")/.."
root=$PWD
all=0
case ${1:-} in
    "") ;;
    --all) all=1 ;;
    *) answer_help_or_refuse "$1" "use --all, or nothing" ;;
esac
build_jobs=$(nproc)
test_jobs=${RBDSYNC_TEST_JOBS:-4}
t_start=$(date +%s.%N)
elapsed() { python3 -c "print(f'{$(date +%s.%N) - $1:.0f}')"; }
say() { echo "test.sh: $*" >&2; }
timings=()
# Runs "$@" as the part named $1 of the suite and records its time; a failure fails the
# suite at the end, not at once, so that every part reports.
failed=0
part() {
    local name=$1 t status=0
    shift
    t=$(date +%s.%N)
    say "$name"
    "$@" || status=$?
    timings+=("$name $(elapsed "$t")s")
    if ((status != 0)); then
        say "FAILED: $name"
        failed=1
    fi
    return "$status"
}

t=$(date +%s.%N)
"$root/scripts/deps.sh"
timings+=("deps $(elapsed "$t")s")

# --all: the Debian 13 and sid roots are made from the archive (~100 s each, mostly
# download) while the host builds; they are waited for at the end.
roots=${RBDSYNC_ROOTS:-/var/cache/rbd-sync/roots}
declare -A root_pids=()
if ((all)); then
    mkdir -p "$roots"
    for suite in trixie sid; do
        # The exit status goes to a file too: `wait PID` half an hour later may no longer
        # know the job (bash forgets a reaped job's status once another child reuses its
        # pid, which a suite of tens of thousands of processes makes likely).
        rm -f "$roots/$suite.status"
        (
            status=0
            "$root/scripts/debian-root.sh" make "$suite" "$roots/$suite" >"$roots/$suite.log" 2>&1 ||
                status=$?
            echo "$status" >"$roots/$suite.status"
            exit "$status"
        ) &
        root_pids[$suite]=$!
    done
fi
# Ends the root makers still running when the suite stops early (a failed build).
# Only those without a status file: a maker that ended may have had its pid reused.
stop_root_makers() {
    local suite
    for suite in "${!root_pids[@]}"; do
        if [[ ! -e $roots/$suite.status ]]; then
            pkill -TERM -P "${root_pids[$suite]}" 2>/dev/null || true
            kill "${root_pids[$suite]}" 2>/dev/null || true
        fi
    done
}
trap stop_root_makers EXIT

# -DRBDSYNC_TESTS=ON: scripts/demo.sh builds build/ without the tests, and the cache would
# otherwise keep that. The benches are built in --all only.
build_normal() {
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRBDSYNC_TESTS=ON \
        -DRBDSYNC_BENCH="$( ((all)) && echo ON || echo OFF)" >/dev/null &&
        cmake --build build -j "$build_jobs"
}
part "build build/ (RelWithDebInfo)" build_normal || { say "the build failed; no test ran"; exit 1; }

work=$(mktemp -d /tmp/rbd-sync-test.XXXXXX)
stop_services() {
    stop_root_makers
    if [[ -d $work/reef ]]; then "$root/scripts/ceph-cluster.sh" stop "$work/reef" || true; fi
    if [[ -d $work/tentacle ]]; then "$root/scripts/ceph-cluster.sh" stop "$work/tentacle" || true; fi
    "$root/scripts/podman-env.sh" stop "$work/podman" || true
    "$root/scripts/pg-server.sh" stop "$work/pg" || true
    "$root/scripts/ceph-cluster.sh" stop "$work/ceph" || true
    rm -rf "$work"
}
trap stop_services EXIT

start_services() {
    # A mgr, for the pool usage figures (`ceph df`) the inventory records; without one
    # they are all zero.
    RBDSYNC_CEPH_MGR=1 "$root/scripts/ceph-cluster.sh" start "$work/ceph" &&
        "$root/scripts/pg-server.sh" start "$work/pg"
}
part "start the Ceph cluster and PostgreSQL" start_services || exit 1
# The ports and root asked for are those of these two; --all's other clusters and servers
# (the roots') take free ports beside them, each in the root test.sh names.
unset RBDSYNC_CEPH_PORT RBDSYNC_PG_PORT RBDSYNC_CEPH_ROOT
# shellcheck source=/dev/null
source "$work/ceph/env.sh"
# shellcheck source=/dev/null
source "$work/pg/env.sh"

# clang-tidy is CPU-bound and the tests mostly wait on Ceph and PostgreSQL: side by side.
"$root/scripts/lint.sh" --tidy-only build >"$work/tidy.log" 2>&1 &
tidy_pid=$!
t_tidy=$(date +%s.%N)

# In build/: everything but what --all adds. --all runs all of it.
only_default=(-LE "package|browser|bench|matrix|container")
((all)) && only_default=(-LE "matrix|container")
part "the suite in build/ (ctest -j $test_jobs)" \
    ctest --test-dir build --output-on-failure --timeout 900 -j "$test_jobs" "${only_default[@]}" ||
    true

tidy_status=0
wait "$tidy_pid" || tidy_status=$?
cat "$work/tidy.log" >&2
timings+=("clang-tidy, beside the suite $(elapsed "$t_tidy")s")
if ((tidy_status != 0)); then
    say "FAILED: clang-tidy"
    failed=1
fi

if ((all)); then
    build_asan() {
        cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRBDSYNC_SANITIZE=ON \
            -DRBDSYNC_BENCH=OFF >/dev/null && cmake --build build-asan -j "$build_jobs"
    }
    # What runs under ASan and UBSan, and what does not and why: docs/testing.md.
    # librados/librbd are not instrumented; their process-lifetime allocations are listed
    # in tests/lsan.supp so that leaks in our code still fail the run.
    #
    # intercept_tls_get_addr=0: the sanitizer runtime of GCC 12 and LLVM <= 16 takes a
    # dynamic TLS block whose start lies 16 bytes into a page for one carrying glibc
    # 2.19's header and records the two words before it as its range; since glibc 2.25
    # there is no header, so a block that lands there by chance yields a garbage range
    # and LeakSanitizer's tracer dies scanning it at exit ("Tracer caught signal 11",
    # exit 134; google/sanitizers#1322). Ceph's thread_locals are dynamic TLS since the
    # core is dlopen'ed. Without the interception the blocks are still found: glibc
    # allocates them with malloc and they hang off each thread's dtv.
    run_asan() {
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:intercept_tls_get_addr=0 \
        LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            ctest --test-dir build-asan --output-on-failure --timeout 900 -j "$test_jobs" \
                -LE "lint|package|browser|django|bench|matrix|container" \
                -E "PerImageCost|FiftyRuns|TwentyPresses|ObjectMapBound"
    }
    if part "build build-asan/ (Debug, ASan + UBSan)" build_asan; then
        part "the suite in build-asan/ (ctest -j $test_jobs)" run_asan || true
    fi

    build_fuzz() {
        CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRBDSYNC_FUZZ=ON \
            >/dev/null && cmake --build build-fuzz -j "$build_jobs"
    }
    # Each harness fuzzes for a fixed time from tests/fuzz/corpus/; a finding fails its
    # test, which names the reproducer under build-fuzz/tests/fuzz/work/. CPU-bound: as
    # many at once as there are cores.
    if part "build build-fuzz/ (clang, libFuzzer + ASan + UBSan, decoders only)" build_fuzz; then
        part "fuzzing the decoders in build-fuzz/" \
            ctest --test-dir build-fuzz --output-on-failure -j "$build_jobs" -L fuzz || true
    fi
fi

# Waits for the root of suite $1; false (and the suite fails) when it could not be made.
root_ready() {
    local status took
    wait "${root_pids[$1]}" 2>/dev/null || true
    status=$(cat "$roots/$1.status" 2>/dev/null || echo 1)
    # Its own time, from its log (it ran beside the host's build): "made ... in 158s".
    took=$(sed -n 's/^debian-root.sh: made .* in \([0-9]*s\) (.*/\1/p' "$roots/$1.log")
    grep -q "already a $1 root" "$roots/$1.log" && took="0s (reused)"
    timings+=("make the $1 root, beside the host build ${took:-?}")
    if ((status != 0)); then
        tail -n 20 "$roots/$1.log" >&2
        say "FAILED: making the $1 root (log above)"
        failed=1
        return 1
    fi
}

# This build (Ceph 16 client) against a Reef cluster run from the Debian 13 root, checked
# against Reef's own rbd CLI: a newer cluster and an older client, as deployments mix.
reef_matrix() {
    RBDSYNC_CEPH_ROOT=$roots/trixie RBDSYNC_CEPH_MGR=1 "$root/scripts/ceph-cluster.sh" start "$work/reef" &&
        (
            # shellcheck source=/dev/null
            source "$work/reef/env.sh"
            ctest --test-dir build --output-on-failure --timeout 600 -j "$test_jobs" -L matrix
        )
}

# The OCI image (scripts/build-image.sh: the package built in the sid root, a root file
# system of sid's packages, imported into a throwaway podman) and deploy/kubernetes/'s
# pods run in it (label container) against a Tentacle cluster from the sid root, whose
# keys are aes256k as current Rook's are, and the suite's PostgreSQL.
container_tests() {
    "$root/scripts/podman-env.sh" start "$work/podman" || return 1
    RBDSYNC_CEPH_ROOT=$roots/sid RBDSYNC_CEPH_MGR=0 "$root/scripts/ceph-cluster.sh" start "$work/tentacle" ||
        return 1
    (
        # shellcheck source=/dev/null
        source "$work/podman/env.sh"
        image=$(RBDSYNC_ROOTS=$roots "$root/scripts/build-image.sh" "$work/image") || exit 1
        # shellcheck source=/dev/null
        source "$work/tentacle/env.sh"
        RBDSYNC_TEST_IMAGE=$image ctest --test-dir build --output-on-failure --timeout 900 -L container
    )
}

if ((all)); then
    if root_ready trixie; then
        part "Debian 13: build, unit, PostgreSQL 17 and Django 4.2 tests, package (build-trixie/)" \
            "$root/scripts/debian-root.sh" run "$roots/trixie" \
            "$root/scripts/test-in-root.sh" --django "$root/build-trixie" || true
        part "cluster matrix: build/ against Reef 18.2 (Debian 13's Ceph)" reef_matrix || true
    fi
    if root_ready sid; then
        part "cluster matrix: Tentacle 20.2, built and run in sid (build-sid/)" \
            "$root/scripts/debian-root.sh" run "$roots/sid" \
            "$root/scripts/test-in-root.sh" --matrix --no-package "$root/build-sid" || true
        part "containers: the image from sid's packages, the Kubernetes pods in podman" \
            container_tests || true
    fi
fi

say "timings ($( ((all)) && echo "--all" || echo "default"), ctest -j $test_jobs, $(nproc) cores):"
for line in "${timings[@]}"; do
    say "  $line"
done
say "  total $(elapsed "$t_start")s"
if ((failed)); then
    say "FAILED"
    exit 1
fi
say "all tests passed"
