#!/usr/bin/env bash
# Runs one libFuzzer harness for a bounded time, as the CTest test of that harness.
# Usage: run_fuzz.sh HARNESS SECONDS WORK_DIR SEED_DIR [DICT]
#   New inputs go to WORK_DIR/corpus (kept between runs), crashes to WORK_DIR/artifacts;
#   SEED_DIR, the checked-in corpus, is only read. Fails on any finding and names the
#   file that reproduces it.
set -euo pipefail
harness=$1 seconds=$2 work=$3 seeds=$4 dict=${5:-}
mkdir -p "$work/corpus" "$work/artifacts"
args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
      -artifact_prefix="$work/artifacts/")
[[ -z $dict ]] || args+=(-dict="$dict")
status=0
"$harness" "${args[@]}" "$work/corpus" "$seeds" 2>&1 | tee "$work/last-run.log" || status=$?
((status == 0)) && exit 0
echo "run_fuzz.sh: $(basename "$harness") failed (exit $status); full log $work/last-run.log" >&2
# libFuzzer: "Test unit written to <path>", once per crash, leak, timeout or OOM.
sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$work/last-run.log" | while read -r unit; do
    echo "run_fuzz.sh: reproducer: $unit" >&2
    echo "run_fuzz.sh: rerun it with: $harness $unit" >&2
done
exit 1
