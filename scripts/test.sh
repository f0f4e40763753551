#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (as root):
#   installs what is missing, builds twice (normal, and ASan/UBSan), starts a throwaway
#   Ceph cluster and PostgreSQL server on 127.0.0.1, runs every CTest test in both
#   builds against them, fuzzes the decoders for about two minutes (a third build,
#   build-fuzz/: clang and libFuzzer, label `fuzz`), stops the services, and exits
#   non-zero on any failure.
#
# Knobs: RBDSYNC_TEST_CEPH_PORT (default 46789), RBDSYNC_TEST_PG_PORT (default 55432),
#        RBDSYNC_TEST_SKIP_ASAN=1 (only the normal build; for quick local loops),
#        RBDSYNC_TEST_SKIP_FUZZ=1 (no fuzz build and no fuzzing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
t_start=$(date +%s.%N)
elapsed() { python3 -c "print(f'{$(date +%s.%N) - $1:.1f}')"; }
say() { echo "test.sh: $*" >&2; }

"$root/scripts/deps.sh"

say "building build/ (RelWithDebInfo)"
# -DRBDSYNC_TESTS=ON: scripts/demo.sh builds build/ without the tests, and the cache
# would otherwise keep that.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRBDSYNC_TESTS=ON >/dev/null
cmake --build build -j "$jobs"
if [[ ${RBDSYNC_TEST_SKIP_ASAN:-0} != 1 ]]; then
    say "building build-asan/ (Debug, ASan + UBSan)"
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRBDSYNC_SANITIZE=ON >/dev/null
    cmake --build build-asan -j "$jobs"
fi
if [[ ${RBDSYNC_TEST_SKIP_FUZZ:-0} != 1 ]]; then
    say "building build-fuzz/ (clang, libFuzzer + ASan + UBSan, decoders only)"
    CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRBDSYNC_FUZZ=ON >/dev/null
    cmake --build build-fuzz -j "$jobs"
fi
build_seconds=$(elapsed "$t_start")

work=$(mktemp -d /tmp/rbd-sync-test.XXXXXX)
stop_services() {
    "$root/scripts/pg-server.sh" stop "$work/pg" || true
    "$root/scripts/ceph-cluster.sh" stop "$work/ceph" || true
    rm -rf "$work"
}
trap stop_services EXIT

t_services=$(date +%s.%N)
# A mgr, for the pool usage figures (`ceph df`) the inventory records; without one
# they are all zero.
CEPH_CLUSTER_MGR=1 CEPH_CLUSTER_PORT=${RBDSYNC_TEST_CEPH_PORT:-46789} "$root/scripts/ceph-cluster.sh" start "$work/ceph"
ceph_seconds=$(elapsed "$t_services")
t_pg=$(date +%s.%N)
PG_SERVER_PORT=${RBDSYNC_TEST_PG_PORT:-55432} "$root/scripts/pg-server.sh" start "$work/pg"
pg_seconds=$(elapsed "$t_pg")
# shellcheck source=/dev/null
source "$work/ceph/env.sh"
# shellcheck source=/dev/null
source "$work/pg/env.sh"

failed=0
t_tests=$(date +%s.%N)
say "lint: clang-format and clang-tidy"
"$root/scripts/lint.sh" build || failed=1
say "running the suite in build/"
ctest --test-dir build --output-on-failure --timeout 600 || failed=1
if [[ ${RBDSYNC_TEST_SKIP_ASAN:-0} != 1 ]]; then
    say "running the suite in build-asan/"
    # librados/librbd are not instrumented; their process-lifetime allocations are
    # listed in tests/lsan.supp so that leaks in our code still fail the run. The
    # Django app's tests (labels django, browser) check the console, not the binary
    # (the web path runs under ASan in ops_test), so they run once, in build/. So do the
    # tests shaped by scale or repetition (a thousand images, fifty or twenty runs at
    # once, the benches): the paths they take are the ones other integration tests take
    # under ASan once, and together they cost over two minutes of the CI budget there.
    #
    # intercept_tls_get_addr=0: the sanitizer runtime of GCC 12 and LLVM <= 16 takes a
    # dynamic TLS block whose start lies 16 bytes into a page for one carrying glibc
    # 2.19's header and records the two words before it as its range; since glibc 2.25
    # there is no header, so a block that lands there by chance yields a garbage range
    # and LeakSanitizer's tracer dies scanning it at exit ("Tracer caught signal 11",
    # exit 134; google/sanitizers#1322). Ceph's thread_locals are dynamic TLS since the
    # core is dlopen'ed. Without the interception the blocks are still found: glibc
    # allocates them with malloc and they hang off each thread's dtv.
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:intercept_tls_get_addr=0 \
    LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --test-dir build-asan --output-on-failure --timeout 600 -LE "lint|package|browser|django|bench" \
            -E "PerImageCost|FiftyRuns|TwentyPresses" || failed=1
fi
if [[ ${RBDSYNC_TEST_SKIP_FUZZ:-0} != 1 ]]; then
    # Each harness fuzzes for a fixed time from tests/fuzz/corpus/; a finding fails its
    # test, which names the reproducer under build-fuzz/tests/fuzz/work/.
    say "fuzzing the decoders in build-fuzz/"
    ctest --test-dir build-fuzz --output-on-failure -L fuzz || failed=1
fi
tests_seconds=$(elapsed "$t_tests")

say "timings: deps+build ${build_seconds}s, ceph cluster start ${ceph_seconds}s," \
    "postgres start ${pg_seconds}s, tests ${tests_seconds}s, total $(elapsed "$t_start")s"
if ((failed)); then
    say "FAILED"
    exit 1
fi
say "all tests passed"
