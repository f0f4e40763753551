#!/usr/bin/env bash
# Builds the Debian package as Debian builds its own: dpkg-buildpackage with debhelper
# (debian/), Debian's hardening build flags, a stripped binary and its debug symbols
# in rbd-sync-dbgsym; and the console's Django app as python3-rbdsync-console (pybuild,
# contrib/django/pyproject.toml). Builds in a scratch copy of the checkout (dpkg-buildpackage
# writes beside the source tree and into debian/), so the checkout stays clean.
#
#   scripts/build-deb.sh [OUT_DIR]     # default OUT_DIR: build-deb/
#
# Leaves rbd-sync_<version>_<arch>.deb, rbd-sync-dbgsym_<version>_<arch>.deb,
# python3-rbdsync-console_<version>_all.deb and the .buildinfo/.changes in OUT_DIR, and
# prints rbd-sync's .deb's path last. Needs the packages of
# scripts/deps.sh (debhelper, the -dev libraries).
set -euo pipefail
source "$(dirname "$0")/lib/usage.sh"
if [[ ${1:-} == -* ]]; then
    answer_help_or_refuse "$1" "it takes an OUT_DIR"
fi
cd "$(dirname "$0")/.."
root=$PWD
out=$(realpath -m "${1:-$root/build-deb}")
mkdir -p "$out"

scratch=$(mktemp -d /tmp/rbd-sync-deb.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# The files git knows (tracked, or new and not ignored), as they are in the work tree:
# build directories and caches stay out. Deleted-but-tracked files are skipped.
mkdir "$scratch/rbd-sync"
git -C "$root" ls-files -z --cached --others --exclude-standard |
    tar -C "$root" --null --files-from=- --ignore-failed-read -cf - 2>/dev/null |
    tar -C "$scratch/rbd-sync" -xf -

cd "$scratch/rbd-sync"
# -b: binary packages only; -us -uc: unsigned. parallel=: dh builds serially otherwise.
# The system's PATH, as a Debian build daemon has it: pybuild runs `python3.X`, which a
# developer's PATH may find in a pyenv without Debian's modules.
PATH=/usr/sbin:/usr/bin:/sbin:/bin DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
    dpkg-buildpackage -b -us -uc >"$scratch/build.log" 2>&1 || {
    tail -n 60 "$scratch/build.log" >&2
    echo "build-deb.sh: dpkg-buildpackage failed (last 60 lines above)" >&2
    exit 1
}
rm -f "$out"/rbd-sync_*.deb "$out"/rbd-sync-dbgsym_*.deb "$out"/rbd-sync_*.buildinfo \
    "$out"/rbd-sync_*.changes
rm -f "$out"/python3-rbdsync-console_*.deb
mv "$scratch"/rbd-sync_*.deb "$scratch"/rbd-sync-dbgsym_*.deb "$scratch"/rbd-sync_*.buildinfo \
    "$scratch"/rbd-sync_*.changes "$scratch"/python3-rbdsync-console_*.deb "$out"/
ls "$out"/rbd-sync_*.deb
