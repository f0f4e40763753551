#!/usr/bin/env bash
# clang-format and clang-tidy over the project's sources; non-zero on any finding.
# Needs a configured build dir with compile_commands.json (default: build).
# Usage: scripts/lint.sh [--tidy-only] [BUILD_DIR]
#   --tidy-only: clang-tidy alone (scripts/test.sh: the format check is a CTest test,
#                clang_format_check, and runs once, there).
# clang-tidy reuses a file's clean verdict while nothing it sees has changed
# (scripts/tidy-cached.py; RBDSYNC_TIDY_CACHE=off checks every file).
set -euo pipefail
source "$(dirname "$0")/lib/usage.sh"
format=1
if [[ ${1:-} == --tidy-only ]]; then
    format=0
    shift
fi
if [[ ${1:-} == -* ]]; then
    answer_help_or_refuse "$1" "--tidy-only, or a BUILD_DIR"
fi
cd "$(dirname "$0")/.."
build=${1:-build}
[[ -f $build/compile_commands.json ]] || {
    echo "lint.sh: no $build/compile_commands.json; configure first (cmake -S . -B $build)" >&2
    exit 1
}
if ((format)); then
    ./scripts/check-format.sh
fi
# The generated migrations file is not ours to tidy; tests use gtest macros that the
# modernize checks dislike, so tidy covers src/ only.
./scripts/tidy-cached.py "$build"
