#!/usr/bin/env bash
# The Debian package as an admin meets it, on this machine (as root, as in CI):
#   built by scripts/build-deb.sh, lintian clean at error and warning level, hardened
#   and stripped; installed; the unit rated by `systemd-analyze security`; the unit's
#   ExecStart line and the cron job run as the user rbd-sync against the test cluster
#   and database (CI has no systemd: runuser stands in for User=); the cron job off,
#   on, and stepping aside for an enabled timer; the log rotated; then purged, leaving
#   the admin's files and the locked user and group; reinstalled and purged again.
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR EXPECTED_VERSION
# Needs the services of scripts/test.sh (CEPH_CONF, RBDSYNC_TEST_* and PGPASSFILE).
set -euo pipefail
build=$1 source=$2 version=$3
fail() { echo "deb_test: FAIL: $*" >&2; exit 1; }
ok() { echo "deb_test: ok: $*"; }
for variable in CEPH_CONF PGPASSFILE RBDSYNC_TEST_DB RBDSYNC_TEST_DB_ADMIN RBDSYNC_TEST_CEPH_DIR \
                RBDSYNC_TEST_CEPH_ID; do
    [[ -n ${!variable:-} ]] || fail "$variable is not set: run through scripts/test.sh"
done

scratch=$(mktemp -d /tmp/rbd-sync-deb-test.XXXXXX)
pool=pkg-$$
database=rbdsync_pkg_$$
upgrade_database=rbdsync_pkg_up_$$
# What the install guide's run makes, named for this run.
guide_database=rbdsync_guide_$$
guide_pool=guide-$$
guide_role=guide_$$
guide_client=rbdsync-guide-$$
guide_cluster=guide$$
cleanup() {
    dpkg -P rbd-sync >/dev/null 2>&1 || true
    dpkg -P python3-rbdsync-console >/dev/null 2>&1 || true
    # The admin's files a purge keeps: the test's database password among them.
    rm -f /var/lib/rbd-sync/.pgpass /var/lib/rbd-sync/.pg_service.conf
    rmdir /var/lib/rbd-sync 2>/dev/null || true
    ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1 || true
    psql "$RBDSYNC_TEST_DB_ADMIN" -qc "DROP DATABASE IF EXISTS $database" >/dev/null 2>&1 || true
    psql "$RBDSYNC_TEST_DB_ADMIN" -qc "DROP DATABASE IF EXISTS $upgrade_database" >/dev/null 2>&1 || true
    ceph osd pool rm "$guide_pool" "$guide_pool" --yes-i-really-really-mean-it >/dev/null 2>&1 || true
    ceph auth del "client.$guide_client" >/dev/null 2>&1 || true
    rm -f "/etc/ceph/$guide_cluster.conf" "/etc/ceph/$guide_cluster.client.$guide_client.keyring"
    psql "$RBDSYNC_TEST_DB_ADMIN" -qc "DROP DATABASE IF EXISTS $guide_database" >/dev/null 2>&1 || true
    for role in owner writer reader; do
        psql "$RBDSYNC_TEST_DB_ADMIN" -qc "DROP ROLE IF EXISTS ${guide_role}_$role" >/dev/null 2>&1 || true
    done
    rm -rf "$scratch"
}
trap cleanup EXIT

# --- build and inspect -------------------------------------------------------------
# RBDSYNC_DEB_TEST_PREBUILT=1 reuses BUILD_DIR/deb/ from an earlier run (local loops only).
if [[ ${RBDSYNC_DEB_TEST_PREBUILT:-0} != 1 ]]; then
    "$source/scripts/build-deb.sh" "$build/deb" >/dev/null
fi
deb=$(ls "$build"/deb/rbd-sync_*.deb)
changes=$(ls "$build"/deb/rbd-sync_*.changes)
[[ $(dpkg-deb -f "$deb" Version) == "$version" ]] ||
    fail "package version $(dpkg-deb -f "$deb" Version) is not the project's $version"
[[ $(dpkg-parsechangelog -l "$source/debian/changelog" -S Version) == "$version" ]] ||
    fail "debian/changelog's version is not the project's $version (CMakeLists.txt)"
ls "$build"/deb/rbd-sync-dbgsym_"$version"_*.deb >/dev/null || fail "no debug-symbols package"
# Both .debs, through the .changes; a warning fails as an error does.
# (As root it says so on stderr; that is CI's normal state, not a finding.)
lintian_status=0
findings=$(lintian --fail-on error,warning "$changes" 2>&1) || lintian_status=$?
grep -v 'running with root privileges' <<<"$findings" | sed 's/^/lintian: /' || true
[[ $lintian_status -eq 0 ]] || fail "lintian found errors or warnings (above)"
ok "lintian clean at error and warning level"

dpkg-deb -x "$deb" "$scratch/unpacked"
binary=$scratch/unpacked/usr/bin/rbd-sync
# Captured first: `grep -q` quits at the first match, and under pipefail the writer's
# SIGPIPE would fail the check.
sections=$(readelf -S --wide "$binary")
dynamic=$(readelf -d "$binary")
symbols=$(readelf --dyn-syms --wide "$binary")
grep -q '\.debug_info' <<<"$sections" && fail "the packaged binary is not stripped"
grep -q 'BIND_NOW' <<<"$dynamic" || fail "the packaged binary is not linked with -z now"
grep -q '__[a-z]*_chk@' <<<"$symbols" || fail "no fortified libc calls in the binary"
ok "stripped, bindnow, fortify ($(stat -c %s "$binary") bytes)"
# A release core has no test hook: no environment variable makes it inject a fault.
core=$(ls "$scratch"/unpacked/usr/lib/*/rbd-sync/librbdsync-core.so)
core_strings=$(strings "$core")
grep -q 'RBDSYNC_INJECT_FAULT' <<<"$core_strings" &&
    fail "the packaged core reads RBDSYNC_INJECT_FAULT, a test-only hook"
ok "the packaged core has no test hook"

# --- the package an upgrade starts from ------------------------------------------------
# 0.1.0, built from the commit issue #34 started from, by that commit's own build script.
old_commit=216cfad67e00dd8192a64bbd0eaa3c7b3d90ecd1
git -C "$source" cat-file -e "$old_commit^{commit}" 2>/dev/null ||
    fail "commit $old_commit (rbd-sync 0.1.0, which the upgrade test installs first) is not in $source: fetch the history (git fetch --unshallow)"
git clone -q --shared --no-checkout "$source" "$scratch/old-source"
git -C "$scratch/old-source" checkout -q "$old_commit"
"$scratch/old-source/scripts/build-deb.sh" "$scratch/old-deb" >/dev/null
old_deb=$(ls "$scratch"/old-deb/rbd-sync_0.1.0_*.deb)
ok "built 0.1.0 from $old_commit to upgrade from"

# --- install -----------------------------------------------------------------------
# The package adds the user and group rbd-sync and sets up /run/lock/rbd-sync: one
# suite at a time on this machine (LockDirTest takes the same lock for its accounts).
exec {accounts_lock}>/tmp/rbd-sync-test-accounts.lock
flock "$accounts_lock"
# Installed as docs/install.md says, every step of it run as written against the suite's
# services (tests/packaging/run_install_guide.py): the package, the PostgreSQL roles,
# the Ceph client, the first sync as rbd-sync. What the guide takes as given is made
# here: its database, a pool with images, and the admin's own access (a root home whose
# .pgpass and .ceph/ceph.conf stand in for a DBA's and a Ceph admin's).
guide=$scratch/guide
mkdir -p "$guide/root/.ceph"
chmod 0755 "$scratch" "$guide"   # apt's sandbox user reads the .deb
cp "$deb" "$guide/"
install -m 0600 "$PGPASSFILE" "$guide/root/.pgpass"
cp "$CEPH_CONF" "$guide/root/.ceph/ceph.conf"
psql "$RBDSYNC_TEST_DB_ADMIN" -qc "CREATE DATABASE $guide_database" >/dev/null
ceph osd pool create "$guide_pool" 8 >/dev/null 2>&1
rbd pool init "$guide_pool"
for image in g1 g2 g3; do rbd create --size 8M "$guide_pool/$image"; done
db_host=$(sed -n 's/.*host=\([^ ]*\).*/\1/p' <<<"$RBDSYNC_TEST_DB")
db_port=$(sed -n 's/.*port=\([^ ]*\).*/\1/p' <<<"$RBDSYNC_TEST_DB")
python3 "$source/tests/packaging/run_install_guide.py" "$source/docs/install.md" "$guide" \
    DB_HOST="$db_host" DB_PORT="$db_port" DB_NAME="$guide_database" \
    OWNER_ROLE="${guide_role}_owner" WRITER_ROLE="${guide_role}_writer" \
    READER_ROLE="${guide_role}_reader" CEPH_CLIENT="$guide_client" CLUSTER="$guide_cluster" \
    POOL="$guide_pool" || fail "docs/install.md did not run as written (above)"
# As each role, by the superuser's SET ROLE (their passwords went to the prompts only).
as_role() {  # ROLE SQL
    psql "${RBDSYNC_TEST_DB_ADMIN/dbname=postgres/dbname=$guide_database}" -XAtq \
        -c "SET ROLE \"$1\"" -c "$2"
}
[[ $(as_role "${guide_role}_reader" "SELECT count(*) FROM rbdsync.images") == 3 ]] ||
    fail "after the guide the console's role does not read the pool's 3 images"
as_role "${guide_role}_reader" "DELETE FROM rbdsync.runs" >/dev/null 2>&1 &&
    fail "the console's role may delete rows"
as_role "${guide_role}_writer" "ALTER TABLE rbdsync.runs ADD x int" >/dev/null 2>&1 &&
    fail "the writer's role may change a table"
ok "docs/install.md ran as written: roles, client, first sync; the reader only reads"
[[ $(/usr/bin/rbd-sync --version) == "rbd-sync $version" ]] ||
    fail "installed --version says '$(/usr/bin/rbd-sync --version)'"
for file in /usr/share/man/man1/rbd-sync.1.gz /usr/share/rbd-sync/sql/001_inventory.sql \
            /etc/cron.d/rbd-sync /etc/default/rbd-sync /etc/logrotate.d/rbd-sync \
            /usr/libexec/rbd-sync/cron-job /lib/systemd/system/rbd-sync.service \
            /lib/systemd/system/rbd-sync.timer /lib/systemd/system/rbd-sync@.service \
            /lib/systemd/system/rbd-sync@.timer /lib/systemd/system/rbd-sync-trigger.socket \
            /lib/systemd/system/rbd-sync-trigger@.service /usr/lib/tmpfiles.d/rbd-sync.conf \
            /usr/share/doc/rbd-sync/copyright /usr/share/doc/rbd-sync/changelog.gz; do
    dpkg -S "$file" >/dev/null 2>&1 || fail "$file is not in the package"
done
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)
for file in /etc/cron.d/rbd-sync /etc/default/rbd-sync /etc/logrotate.d/rbd-sync; do
    grep -qx "$file" <<<"$conffiles" || fail "$file is not a conffile"
done
getent group rbd-sync >/dev/null || fail "no group rbd-sync"
getent group rbd-sync-web >/dev/null || fail "no group rbd-sync-web"
# adduser's own (a system account has no password: "!" or "*"); purge locks it.
installed_password=$(getent shadow rbd-sync | cut -d: -f2)
[[ $(getent passwd rbd-sync | cut -d: -f6) == /var/lib/rbd-sync ]] ||
    fail "the user rbd-sync is missing or its home is not /var/lib/rbd-sync"
[[ $(stat -c '%a %U %G' /run/lock/rbd-sync) == "3770 root rbd-sync" ]] ||
    fail "/run/lock/rbd-sync is $(stat -c '%a %U %G' /run/lock/rbd-sync), not 3770 root rbd-sync"
[[ $(stat -c '%a %U %G' /var/log/rbd-sync) == "2750 rbd-sync rbd-sync" ]] ||
    fail "/var/log/rbd-sync is $(stat -c '%a %U %G' /var/log/rbd-sync)"
[[ $(stat -c '%a %U %G' /run/rbd-sync) == "755 root root" ]] ||
    fail "/run/rbd-sync is $(stat -c '%a %U %G' /run/rbd-sync), not 755 root root"
ok "installed: files, conffiles, user, groups, lock, socket and log directories"

# --- the units ---------------------------------------------------------------------
unit=/lib/systemd/system/rbd-sync.service
systemd-analyze verify --man=no "$unit" /lib/systemd/system/rbd-sync.timer
exposure=$(systemd-analyze security --offline=yes "$unit" 2>&1 | sed -n 's/.*exposure level for .*: \([0-9.]*\).*/\1/p')
[[ -n $exposure ]] || fail "systemd-analyze security gave no exposure level"
systemd-analyze security --offline=yes --threshold=30 "$unit" >/dev/null ||
    fail "the unit's exposure is $exposure, above 3.0"
grep -qx 'User=rbd-sync' "$unit" || fail "the unit does not run as rbd-sync"
grep -qx 'SuccessExitStatus=75' "$unit" || fail "exit 75 (already running) fails the unit"
grep -qx 'MemoryMax=512M' "$unit" || fail "the unit does not bound the run's memory"
grep -qx 'TasksMax=256' "$unit" || fail "the unit does not bound the run's tasks"
# The template, as the instance an admin enables for a second cluster: the same
# sandbox (one source, cron/rbd-sync.service.in), its own cluster and settings file.
instances=$scratch/instances   # under $scratch: the EXIT trap removes it on any failure
mkdir "$instances"
cp /lib/systemd/system/rbd-sync@.service "$instances/rbd-sync@backup.service"
cp /lib/systemd/system/rbd-sync@.timer "$instances/rbd-sync@backup.timer"
systemd-analyze verify --man=no "$instances/rbd-sync@backup.service" "$instances/rbd-sync@backup.timer"
instance_exposure=$(systemd-analyze security --offline=yes "$instances/rbd-sync@backup.service" 2>&1 |
    sed -n 's/.*exposure level for .*: \([0-9.]*\).*/\1/p')
[[ $instance_exposure == "$exposure" ]] ||
    fail "rbd-sync@backup.service's exposure is '$instance_exposure', not the unit's $exposure"
grep -qx 'ExecStart=/usr/bin/rbd-sync run --trigger cron $RBDSYNC_ARGS --cluster %i' \
    "$instances/rbd-sync@backup.service" || fail "the template does not sync the cluster %i"
grep -qx 'EnvironmentFile=-/etc/default/rbd-sync@%i' "$instances/rbd-sync@backup.service" ||
    fail "the template reads no settings of its own cluster"
# The trigger: the socket, and an instance of its template as systemd names one for a
# connection: the sandbox of the service, as the user rbd-sync, the connection as stdin.
socket=/lib/systemd/system/rbd-sync-trigger.socket
cp /lib/systemd/system/rbd-sync-trigger@.service "$instances/rbd-sync-trigger@3-1234-33.service"
cp "$socket" "$instances/"
cp /lib/systemd/system/rbd-sync-trigger@.service "$instances/"
systemd-analyze verify --man=no "$instances/rbd-sync-trigger.socket" \
    "$instances/rbd-sync-trigger@3-1234-33.service"
trigger_exposure=$(systemd-analyze security --offline=yes \
    "$instances/rbd-sync-trigger@3-1234-33.service" 2>&1 |
    sed -n 's/.*exposure level for .*: \([0-9.]*\).*/\1/p')
[[ -n $trigger_exposure ]] || fail "systemd-analyze security rated no trigger instance"
systemd-analyze security --offline=yes --threshold=30 \
    "$instances/rbd-sync-trigger@3-1234-33.service" >/dev/null ||
    fail "the trigger instance's exposure is $trigger_exposure, above 3.0"
for line in 'User=rbd-sync' 'ExecStart=/usr/bin/rbd-sync serve --connection %i' 'StandardInput=socket' \
    'SuccessExitStatus=75' 'MemoryMax=512M' 'TasksMax=256'; do
    grep -qx "$line" "$instances/rbd-sync-trigger@3-1234-33.service" ||
        fail "the trigger's template lacks $line"
done
for line in 'ListenStream=/run/rbd-sync/trigger.sock' 'Accept=yes' 'SocketGroup=rbd-sync-web' \
    'SocketMode=0660'; do
    grep -qx "$line" "$socket" || fail "the trigger socket lacks $line"
done
ok "units verified; exposure $exposure (at most 3.0), the template's the same, the trigger's $trigger_exposure"

# --- what an admin configures: a client keyring, a libpq service, the defaults -------
ceph osd pool create "$pool" 8 >/dev/null 2>&1
rbd pool init "$pool"
for image in a b; do rbd create --size 8M "$pool/$image"; done
psql "$RBDSYNC_TEST_DB_ADMIN" -qc "CREATE DATABASE $database OWNER rbdsync" >/dev/null
# The keyring as /etc/default/rbd-sync says: the user rbd-sync's alone.
install -o rbd-sync -g root -m 0600 \
    "$RBDSYNC_TEST_CEPH_DIR/ceph.client.$RBDSYNC_TEST_CEPH_ID.keyring" "$scratch/keyring"
install -o root -g rbd-sync -m 0644 "$CEPH_CONF" "$scratch/ceph.conf"
chmod 0755 "$scratch"
home=/var/lib/rbd-sync
printf '[rbd-sync]\nhost=%s\nport=%s\nuser=rbdsync\ndbname=%s\n' "$db_host" "$db_port" \
    "$database" >"$home/.pg_service.conf"
install -m 0600 "$PGPASSFILE" "$home/.pgpass"
chown rbd-sync:rbd-sync "$home/.pg_service.conf" "$home/.pgpass"
PGSERVICEFILE=$home/.pg_service.conf /usr/bin/rbd-sync migrate --db service=rbd-sync >/dev/null
set_defaults() {  # RBDSYNC_CRON value
    cat >/etc/default/rbd-sync <<EOF
RBDSYNC_ARGS="--id $RBDSYNC_TEST_CEPH_ID --keyring $scratch/keyring --db service=rbd-sync --pool $pool --log-level info"
RBDSYNC_MIGRATE_ARGS="--db service=rbd-sync"
RBDSYNC_CRON=$1
CEPH_CONF=$scratch/ceph.conf
EOF
}
set_defaults no
runs() {  # the run history's triggers and statuses, one line per run
    psql "host=$db_host port=$db_port user=rbdsync dbname=$database" -XAtc \
        "SELECT trigger || ' ' || status FROM rbdsync.runs ORDER BY started_at"
}

# --- ExecStartPre and ExecStart, as systemd would run them: User=, EnvironmentFile=, a
# clean environment; the migrate first (a no-op here: the schema is current) ----------
exec_start_pre=$(sed -n 's/^ExecStartPre=//p' "$unit")
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
as_systemd() {  # LINE: one of the unit's command lines
    local args line=$1
    # The variables of EnvironmentFile=, and $RBDSYNC_ARGS split on spaces, as systemd does.
    args=$(set -a && . /etc/default/rbd-sync && eval "printf '%s' \"$line\"")
    # shellcheck disable=SC2046,SC2086
    runuser -u rbd-sync -- env -i HOME=$home USER=rbd-sync LOGNAME=rbd-sync PATH=/usr/bin:/bin \
        $(env -i sh -c 'set -a && . /etc/default/rbd-sync && env' | grep -E '^(CEPH_CONF|PG[A-Z]*)=') \
        $args
}
{ as_systemd "$exec_start_pre" && as_systemd "$exec_start"; } >"$scratch/unit.out" 2>&1 ||
    fail "the unit's ExecStartPre or ExecStart failed as rbd-sync: $(cat "$scratch/unit.out")"
[[ $(runs) == "cron succeeded" ]] || fail "after the unit's run the history is '$(runs)'"
[[ $(psql "host=$db_host port=$db_port user=rbdsync dbname=$database" -XAtc \
    "SELECT count(*) FROM rbdsync.images i JOIN rbdsync.pools p USING (fsid, pool_id)
     WHERE p.name = '$pool'") == 2 ]] ||
    fail "the unit's run did not store the pool's 2 images"
ok "the unit's ExecStart ran as rbd-sync: $(tail -n 1 "$scratch/unit.out")"

# --- the cron job -------------------------------------------------------------------
python3 "$source/tests/packaging/check_cron.py" /etc/cron.d/rbd-sync
cron_line=$(grep -E '^[0-9*]' /etc/cron.d/rbd-sync)
cron_user=$(awk '{print $6}' <<<"$cron_line")
cron_command=$(cut -d' ' -f7- <<<"$cron_line")
[[ $cron_user == rbd-sync ]] || fail "the cron job runs as '$cron_user', not rbd-sync"
[[ $cron_command == "test -x "* ]] || fail "the cron job has no 'test -x' guard: $cron_command"
as_cron() { runuser -u rbd-sync -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SHELL=/bin/sh \
    HOME=$home /bin/sh -c "$cron_command"; }
as_cron || fail "the cron job failed while turned off"
[[ $(runs | wc -l) == 1 ]] || fail "the cron job ran although RBDSYNC_CRON=no"
set_defaults yes
as_cron || fail "the cron job failed: $(tail -n 3 /var/log/rbd-sync/rbd-sync.log)"
[[ $(runs | tail -n 1) == "cron succeeded" && $(runs | wc -l) == 2 ]] ||
    fail "RBDSYNC_CRON=yes did not run a sync: history '$(runs)'"
grep -q "info: run .* started (trigger cron" /var/log/rbd-sync/rbd-sync.log ||
    fail "the cron job's log has no run: $(cat /var/log/rbd-sync/rbd-sync.log)"
# One schedule at a time: an enabled timer takes over (systemctl works offline).
systemctl enable rbd-sync.timer >/dev/null 2>&1
as_cron || fail "the cron job failed with the timer enabled"
systemctl disable rbd-sync.timer >/dev/null 2>&1
[[ $(runs | wc -l) == 2 ]] || fail "the cron job ran although the systemd timer is enabled"
ok "cron job: off by default, on with RBDSYNC_CRON=yes, steps aside for an enabled timer"

# --- logrotate, as cron.daily runs it ---------------------------------------------------
logrotate --force --state "$scratch/logrotate.state" /etc/logrotate.d/rbd-sync ||
    fail "logrotate failed on /etc/logrotate.d/rbd-sync"
[[ -s /var/log/rbd-sync/rbd-sync.log.1 && ! -s /var/log/rbd-sync/rbd-sync.log ]] ||
    fail "logrotate did not rotate the log: $(ls -l /var/log/rbd-sync)"
[[ $(stat -c '%U %G' /var/log/rbd-sync/rbd-sync.log) == "rbd-sync rbd-sync" ]] ||
    fail "the new log belongs to $(stat -c '%U %G' /var/log/rbd-sync/rbd-sync.log)"
ok "logrotate rotates the cron job's log"

# --- purge -------------------------------------------------------------------------------
# What the package made goes; the admin's files in the home stay, and so do the user and
# group, locked and expired (a reused uid or gid would inherit them).
dpkg -L rbd-sync >"$scratch/files"
dpkg -P rbd-sync >/dev/null
while read -r path; do
    [[ -f $path ]] && fail "$path is left after purge"
done <"$scratch/files"
for path in /etc/default/rbd-sync /etc/cron.d/rbd-sync /var/log/rbd-sync /run/lock/rbd-sync \
            /run/rbd-sync /usr/libexec/rbd-sync; do
    [[ -e $path ]] && fail "$path is left after purge"
done
left=$(cd /var/lib/rbd-sync && ls -A | tr '\n' ' ')
[[ $left == ".pg_service.conf .pgpass " ]] ||
    fail "purge left '$left' in /var/lib/rbd-sync, not just the admin's two files"
getent group rbd-sync >/dev/null || fail "purge removed the group rbd-sync (it stays)"
getent group rbd-sync-web >/dev/null || fail "purge removed the group rbd-sync-web (it stays)"
shadow=$(getent shadow rbd-sync) || fail "purge removed the user rbd-sync (it stays, locked)"
# usermod --lock leaves a "!" as it is: the expiry is what shuts the account.
[[ $(cut -d: -f2 <<<"$shadow") == '!'* ]] ||
    fail "the purged user's password is not locked ($(cut -d: -f2 <<<"$shadow"))"
[[ $(cut -d: -f8 <<<"$shadow") == 1 ]] || fail "the purged user's account has not expired"
ok "purged: the package's files gone; the admin's kept; user and group locked"

# A new installation opens the account again, as it was.
dpkg -i "$deb" >/dev/null
shadow=$(getent shadow rbd-sync)
[[ $(cut -d: -f2 <<<"$shadow") == "$installed_password" && -z $(cut -d: -f8 <<<"$shadow") ]] ||
    fail "the reinstalled package left the account locked or expired ($(cut -d: -f2,8 <<<"$shadow"))"
runuser -u rbd-sync -- /usr/bin/rbd-sync --version >/dev/null ||
    fail "the user rbd-sync cannot run rbd-sync after a reinstall"
dpkg -P rbd-sync >/dev/null
rm -f /var/lib/rbd-sync/.pgpass /var/lib/rbd-sync/.pg_service.conf
rmdir /var/lib/rbd-sync
ok "reinstalled: the account is open again; purged again"

# --- upgrade from 0.1.0 with a live schedule ----------------------------------------------
# The admin's 0.1.0 set-up: its own /etc/default (a modified conffile), the database in
# the home's service file, the nightly cron job on, a run done. Then the upgrade (keeping
# the admin's conffile, as an admin answers dpkg's question), and the next scheduled run.
dpkg -i "$old_deb" >/dev/null
psql "$RBDSYNC_TEST_DB_ADMIN" -qc "CREATE DATABASE $upgrade_database OWNER rbdsync" >/dev/null
printf '[rbd-sync]\nhost=%s\nport=%s\nuser=rbdsync\ndbname=%s\n' "$db_host" "$db_port" \
    "$upgrade_database" >"$home/.pg_service.conf"
install -m 0600 "$PGPASSFILE" "$home/.pgpass"
chown rbd-sync:rbd-sync "$home/.pg_service.conf" "$home/.pgpass"
cat >/etc/default/rbd-sync <<END_OF_DEFAULTS
RBDSYNC_ARGS="--id $RBDSYNC_TEST_CEPH_ID --keyring $scratch/keyring --db service=rbd-sync --pool $pool --log-level info"
RBDSYNC_CRON=yes
CEPH_CONF=$scratch/ceph.conf
END_OF_DEFAULTS
admin_files=$(sha256sum /etc/default/rbd-sync "$home/.pg_service.conf" "$home/.pgpass")
upgrade_db="host=$db_host port=$db_port user=rbdsync dbname=$upgrade_database"
upgrade_runs() { psql "$upgrade_db" -XAtc "SELECT trigger || ' ' || status FROM rbdsync.runs ORDER BY started_at"; }
schema_version() { psql "$upgrade_db" -XAtc "SELECT max(version) FROM rbdsync.schema_migrations"; }
runuser -u rbd-sync -- env -i HOME="$home" PATH=/usr/bin:/bin /usr/bin/rbd-sync migrate \
    --db service=rbd-sync >/dev/null
old_version=$(schema_version)
cron_command=$(grep -E '^[0-9*]' /etc/cron.d/rbd-sync | cut -d' ' -f7-)
as_cron || fail "0.1.0's cron job failed: $(tail -n 3 /var/log/rbd-sync/rbd-sync.log)"
[[ $(upgrade_runs) == "cron succeeded" ]] || fail "0.1.0's scheduled run: history '$(upgrade_runs)'"

dpkg -i --force-confold "$deb" >/dev/null
[[ $(dpkg-query -W -f '${Version}' rbd-sync) == "$version" ]] || fail "the upgrade did not install $version"
[[ $(sha256sum /etc/default/rbd-sync "$home/.pg_service.conf" "$home/.pgpass") == "$admin_files" ]] ||
    fail "the upgrade changed the admin's /etc/default/rbd-sync, .pg_service.conf or .pgpass"
[[ $(stat -c '%a %U %G' /run/lock/rbd-sync) == "3770 root rbd-sync" ]] ||
    fail "after the upgrade /run/lock/rbd-sync is $(stat -c '%a %U %G' /run/lock/rbd-sync)"
getent group rbd-sync >/dev/null || fail "no group rbd-sync after the upgrade"
latest=$(find "$source/sql" -name '[0-9][0-9][0-9]_*.sql' | wc -l)
# The next scheduled run, with the new cron job and the admin's old settings: the schema
# is migrated first, and the run then succeeds.
cron_command=$(grep -E '^[0-9*]' /etc/cron.d/rbd-sync | cut -d' ' -f7-)
as_cron || fail "the upgraded cron job failed: $(tail -n 3 /var/log/rbd-sync/rbd-sync.log)"
[[ $(schema_version) == "$latest" ]] ||
    fail "the first scheduled run after the upgrade left the schema at $(schema_version), not $latest"
[[ $(upgrade_runs) == $'cron succeeded\ncron succeeded' ]] ||
    fail "the scheduled run after the upgrade: history '$(upgrade_runs)'"
# And the unit's way, as systemd would start it after the upgrade: migrate, then run.
{ as_systemd "$exec_start_pre" && as_systemd "$exec_start"; } >"$scratch/upgraded-unit.out" 2>&1 ||
    fail "the unit failed after the upgrade: $(cat "$scratch/upgraded-unit.out")"
[[ $(upgrade_runs | tail -n 1) == "cron succeeded" ]] || fail "the unit's run after the upgrade did not succeed"
ok "upgraded 0.1.0 (schema $old_version) to $version (schema $latest) under a live cron schedule: the admin's files kept, the schema migrated by the next scheduled run"
dpkg -P rbd-sync >/dev/null
rm -f /var/lib/rbd-sync/.pgpass /var/lib/rbd-sync/.pg_service.conf
rmdir /var/lib/rbd-sync

# --- the console's package -------------------------------------------------------------
# python3-rbdsync-console: Debian's Django and psycopg2 satisfy it; the app is imported from
# /usr/lib/python3/dist-packages, not the checkout, and a site that lists it passes
# Django's checks with its templates and static files found (its Django tests run against
# its wheel: tests/console/).
console_deb=$(ls "$build"/deb/python3-rbdsync-console_"$version"_all.deb)
dpkg -i "$console_deb" >/dev/null || fail "python3-rbdsync-console does not install"
mkdir -p "$scratch/console-site"
ln -s "$source/contrib/django/demo_site" "$scratch/console-site/demo_site"
console_env=(env -C "$scratch/console-site" PYTHONPATH="$scratch/console-site" PYTHONDONTWRITEBYTECODE=1
    DJANGO_SECRET_KEY=deb-test RBDSYNC_CONSOLE_DB="$RBDSYNC_TEST_DB" RBDSYNC_CONSOLE_TRIGGER_SOCKET=)
imported=$("${console_env[@]}" /usr/bin/python3 -P -c 'import rbdsync_console; print(rbdsync_console.__file__)')
[[ $imported == /usr/lib/python3/dist-packages/rbdsync_console/__init__.py ]] ||
    fail "rbdsync_console is imported from $imported, not the package"
checked=$("${console_env[@]}" /usr/bin/python3 -P -m django check --settings=demo_site.settings 2>&1) ||
    fail "manage.py check with the packaged app: $checked"
found=$("${console_env[@]}" /usr/bin/python3 -P -m django findstatic --settings=demo_site.settings \
    rbdsync_console/console.js 2>&1) || fail "the packaged app's static files: $found"
grep -q /usr/lib/python3/dist-packages/rbdsync_console/static/rbdsync_console/console.js <<<"$found" ||
    fail "console.js is not served from the package: $found"
dpkg -P python3-rbdsync-console >/dev/null
ok "python3-rbdsync-console ($(stat -c %s "$console_deb") bytes) installs, imports from the package and passes Django's checks"
echo "package ok"
