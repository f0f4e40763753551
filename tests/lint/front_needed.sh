#!/usr/bin/env bash
# The busy answer must not pay for Ceph or PostgreSQL (issue #18): the `rbd-sync`
# executable (the front) links neither, nor spdlog and fmt; the core module it dlopens
# once the guard is held links them all, has no SONAME and exports one symbol.
# Usage: front_needed.sh FRONT CORE
set -euo pipefail
front=$1 core=$2
fail() { echo "front_needed: FAIL: $*" >&2; exit 1; }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

[[ -f $front ]] || fail "no front executable at $front"
[[ -f $core ]] || fail "no core module at $core"
front_needed=$(needed "$front")
for library in librados librbd libpq libpqxx libspdlog libfmt; do
    if grep -qE "^$library(-[0-9.]+)?\.so" <<<"$front_needed"; then
        fail "$front lists $library in NEEDED, so every busy answer loads it; move the code" \
             "that needs it behind the guard, into the core (docs/architecture.md)"
    fi
done
core_needed=$(needed "$core")
for library in librados librbd libpq libpqxx; do
    grep -qE "^$library(-[0-9.]+)?\.so" <<<"$core_needed" || fail "$core does not list $library in NEEDED"
done
# Captured first: under pipefail, `grep -q` quitting early would fail readelf.
core_dynamic=$(readelf -d "$core")
grep -q '(SONAME)' <<<"$core_dynamic" && fail "$core has a SONAME; it is a private module"
exported=$(nm -D --defined-only "$core" | awk '$2 ~ /^[TDBVW]$/ {print $3}' | sort -u)
[[ $exported == rbdsync_core_main ]] ||
    fail "$core exports more than rbdsync_core_main: $(tr '\n' ' ' <<<"$exported")"
echo "front NEEDED: $(tr '\n' ' ' <<<"$front_needed")"
echo "core NEEDED: $(tr '\n' ' ' <<<"$core_needed")"
