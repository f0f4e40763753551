#!/usr/bin/env bash
# Fails (and lists the files) when clang-format would change any tracked C++ source.
# Usage: scripts/check-format.sh [clang-format binary]
set -euo pipefail
source "$(dirname "$0")/lib/usage.sh"
if [[ ${1:-} == -* ]]; then
    answer_help_or_refuse "$1" "it takes a clang-format binary"
fi
cd "$(dirname "$0")/.."
clang_format=${1:-clang-format}
# Listed first: set -e does not see a failure inside a process substitution, and a git
# that refuses the tree (another user's clone, no git) would check nothing and pass.
files=$(git ls-files -co --exclude-standard '*.cpp' '*.hpp' '*.cc' '*.h')
if [[ -z $files ]]; then
    echo "check-format: git lists no C++ file here; run it in a git checkout" >&2
    exit 1
fi
bad=()
while IFS= read -r file; do
    "$clang_format" --dry-run --Werror "$file" >/dev/null 2>&1 || bad+=("$file")
done <<<"$files"
if ((${#bad[@]} > 0)); then
    printf 'clang-format would change: %s\n' "${bad[@]}" >&2
    echo "fix: clang-format -i <file> (the style is .clang-format at the top level)" >&2
    exit 1
fi
echo "clang-format: all files formatted"
