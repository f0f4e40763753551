#!/usr/bin/env bash
# Renders the generated man page as man(1) does and fails on any groff warning (-ww
# turns on every warning; -z formats without printing). groff is in groff-base, which
# man-db depends on (scripts/deps.sh lists it).
# Usage: check_man_page.sh PAGE
set -euo pipefail
page=$1
command -v groff >/dev/null || { echo "check_man_page: no groff; run scripts/deps.sh" >&2; exit 1; }
[[ -s $page ]] || { echo "check_man_page: no $page; build the target rbdsync_man" >&2; exit 1; }
warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
if [[ -n $warnings ]]; then
    printf '%s\n' "$warnings" >&2
    echo "check_man_page: groff warns about $page (above)" >&2
    exit 1
fi
echo "check_man_page: $page renders without warnings"
