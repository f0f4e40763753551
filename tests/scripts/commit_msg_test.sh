#!/usr/bin/env bash
# scripts/commit-msg: what it lets through and what it refuses, with the reason.
set -euo pipefail

hook=$(cd "$(dirname "$0")/../.." && pwd)/scripts/commit-msg
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# check WANT NAME MESSAGE [EXPECTED_REASON]: WANT is pass or refuse.
check() {
    local want=$1 name=$2 text=$3 reason=${4:-}
    printf '%b' "$text" >"$work/msg"
    local status=0
    "$hook" "$work/msg" 2>"$work/err" || status=$?
    if [[ $want == pass && $status -ne 0 ]]; then
        echo "FAIL $name: refused: $(cat "$work/err")"
        failures=$((failures + 1))
    elif [[ $want == refuse && $status -ne 1 ]]; then
        echo "FAIL $name: exit $status, expected 1"
        failures=$((failures + 1))
    elif [[ $want == refuse ]] && ! grep -qF -- "$reason" "$work/err"; then
        echo "FAIL $name: expected '$reason' in: $(cat "$work/err")"
        failures=$((failures + 1))
    else
        echo "ok   $name"
    fi
}

s72=$(printf 'x%.0s' {1..72})
check pass "subject alone" "Console: keyset pages\n"
check pass "subject, blank, body" "Schema 011: a collation\n\nWhy, and the figures: 49.5 s.\n"
check pass "72 characters" "$s72\n"
check pass "72 characters of UTF-8" "$(printf 'é%.0s' {1..72})\n"
check pass "git's comments and scissors ignored" \
    "# Please enter the commit message\n\nFix the hook\n# comment\n\nbody\n# ------------------------ >8 ------------------------\nx${s72}\nnot blank\n"
check refuse "73 characters" "x$s72\n" "73 characters, more than 72"
check refuse "empty" "# only a comment\n\n" "the message is empty"
check refuse "a period" "Fix the hook.\n" "ends with a period"
check refuse "no blank line" "Fix the hook\nbody at once\n" "second line is not blank"
check refuse "nothing at all" "" "the message is empty"
status=0
"$hook" 2>/dev/null || status=$?
if ((status == 64)); then echo "ok   no file: usage, exit 64"; else
    echo "FAIL no file: exit $status, expected 64"
    failures=$((failures + 1))
fi

((failures == 0)) || { echo "commit_msg_test: $failures failed"; exit 1; }
echo "commit_msg_test: all passed"
