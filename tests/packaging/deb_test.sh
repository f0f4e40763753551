#!/usr/bin/env bash
# Builds the .deb, installs it with dpkg -i on this machine, checks what it installed
# (binary, --version, --help, man page, migrations, schedules, the group rbd-sync and the
# lock directory its tmpfiles.d entry makes), and removes it again.
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR EXPECTED_VERSION
set -euo pipefail
build=$1 source=$2 version=$3
fail() { echo "deb_test: $*" >&2; exit 1; }

cd "$build"
rm -f rbd-sync_*.deb
cpack -G DEB >/dev/null
deb=$(ls rbd-sync_*.deb)
echo "built $deb"
# Captured first: `grep -q` quits at the first match, and under pipefail the writer's
# SIGPIPE would fail the check.
info=$(dpkg-deb --info "$deb")
grep -q "Depends:.*librados" <<<"$info" || fail "no shared-library dependencies in $deb"

trap 'dpkg -r rbd-sync >/dev/null 2>&1 || true' EXIT
dpkg -i "$deb" >/dev/null
[[ $(/usr/bin/rbd-sync --version) == "rbd-sync $version" ]] ||
    fail "installed --version says '$(/usr/bin/rbd-sync --version)', not 'rbd-sync $version'"
grep -q -- "--lock-file" <<<"$(/usr/bin/rbd-sync --help)" || fail "installed --help lacks --lock-file"
for file in /usr/share/man/man1/rbd-sync.1.gz /usr/share/rbd-sync/sql/001_inventory.sql \
            /etc/cron.d/rbd-sync /etc/logrotate.d/rbd-sync \
            /lib/systemd/system/rbd-sync.service /lib/systemd/system/rbd-sync.timer \
            /usr/lib/tmpfiles.d/rbd-sync.conf; do
    dpkg -S "$file" >/dev/null || fail "$file is not in the package"
done
grep -q /etc/cron.d/rbd-sync <<<"$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)" ||
    fail "/etc/cron.d/rbd-sync is not a conffile"
grep -qE '^#[0-9]' /etc/cron.d/rbd-sync || fail "the cron job must ship disabled (commented out)"
python3 "$source/tests/packaging/check_cron.py" /etc/cron.d/rbd-sync
# The shared lock directory (issue #15): the postinst makes the group and applies the
# tmpfiles.d entry, so the directory is root:rbd-sync 2770 before any run.
getent group rbd-sync >/dev/null || fail "the package did not create the group rbd-sync"
getent passwd rbd-sync >/dev/null || fail "the package did not create the user rbd-sync"
if command -v systemd-tmpfiles >/dev/null; then
    [[ $(stat -c '%a %U %G' /run/lock/rbd-sync) == "2770 root rbd-sync" ]] ||
        fail "/run/lock/rbd-sync is $(stat -c '%a %U %G' /run/lock/rbd-sync), not 2770 root rbd-sync"
    [[ $(stat -c '%a %U %G' /run/lock/rbd-sync/sync.lock) == "660 root rbd-sync" ]] ||
        fail "the lock file is $(stat -c '%a %U %G' /run/lock/rbd-sync/sync.lock), not 660 root rbd-sync"
    echo "lock directory: ok"
fi
if command -v systemd-analyze >/dev/null; then
    # --man=no: Documentation= is checked by the man page test above.
    systemd-analyze verify --man=no /lib/systemd/system/rbd-sync.service \
        /lib/systemd/system/rbd-sync.timer
    echo "systemd-analyze verify: ok"
else
    echo "systemd-analyze not installed; unit files not verified"
fi
echo "package ok"
