#!/usr/bin/env bash
# Fails (and lists the files) when clang-format would change any tracked C++ source.
# Usage: scripts/check-format.sh [clang-format binary]
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${1:-clang-format}
bad=()
while IFS= read -r file; do
    "$clang_format" --dry-run --Werror "$file" >/dev/null 2>&1 || bad+=("$file")
done < <(git ls-files -co --exclude-standard '*.cpp' '*.hpp' '*.cc' '*.h')
if ((${#bad[@]} > 0)); then
    printf 'clang-format would change: %s\n' "${bad[@]}" >&2
    echo "fix: clang-format -i <file> (the style is .clang-format at the top level)" >&2
    exit 1
fi
echo "clang-format: all files formatted"
