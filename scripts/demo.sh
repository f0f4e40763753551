#!/usr/bin/env bash
# rbd-sync end to end, from a fresh Debian 12 machine (as root): installs what is
# missing, builds, starts a throwaway Ceph cluster and PostgreSQL server, creates sample
# pools and images (snapshots, a clone, a namespace), runs a real sync, prints the
# summary and what is now in the database, and stops everything again.
#
#   scripts/demo.sh             # the demo above
#   scripts/demo.sh --console   # ...then serves the console's Django app (contrib/django)
#                               # on 127.0.0.1 with a login it makes, until Ctrl-C, and
#                               # stops everything
#
# Knobs: RBDSYNC_CEPH_PORT, RBDSYNC_PG_PORT (those of scripts/ceph-cluster.sh and
#        scripts/pg-server.sh; default: free ports, chosen so that the demo and test
#        suites can run side by side),
#        RBDSYNC_DEMO_CONSOLE_PORT (default 8080),
#        RBDSYNC_DEMO_KEEP=1 (leave the services running and print how to reach them).
#        Every variable: docs/testing.md, "Environment variables".
set -euo pipefail
source "$(dirname "$0")/lib/usage.sh"
cd "$(dirname "$0")/.."
root=$PWD
say() { printf '\n== %s\n' "$*"; }
console=0
case ${1:-} in
    "") ;;
    --console) console=1 ;;
    *) answer_help_or_refuse "$1" "use --console, or nothing" ;;
esac

"$root/scripts/deps.sh"
say "building"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRBDSYNC_TESTS=OFF >/dev/null
cmake --build build -j "$(nproc)" --target rbd-sync >/dev/null
bin=$root/build/rbd-sync

work=$(mktemp -d /tmp/rbd-sync-demo.XXXXXX)
stop_services() {
    "$root/scripts/pg-server.sh" stop "$work/pg" >/dev/null 2>&1 || true
    "$root/scripts/ceph-cluster.sh" stop "$work/ceph" >/dev/null 2>&1 || true
    rm -rf "$work"
}
if [[ ${RBDSYNC_DEMO_KEEP:-0} != 1 ]]; then
    trap stop_services EXIT
fi

say "starting a throwaway Ceph cluster and PostgreSQL server in $work"
RBDSYNC_CEPH_MGR=1 "$root/scripts/ceph-cluster.sh" start "$work/ceph"
"$root/scripts/pg-server.sh" start "$work/pg"
# shellcheck source=/dev/null
source "$work/ceph/env.sh"
# shellcheck source=/dev/null
source "$work/pg/env.sh"

say "creating sample pools and images (as client.admin)"
admin=(--id admin)
ceph_admin() { timeout 60 ceph "${admin[@]}" "$@"; }
rbd_admin() { timeout 60 rbd "${admin[@]}" "$@"; }
for pool in rbd vms backups; do
    ceph_admin osd pool create "$pool" 8 8 >/dev/null 2>&1
    rbd_admin pool init "$pool"
done
rbd_admin create rbd/web-root --size 20G
rbd_admin create rbd/db-data --size 100G
rbd_admin create rbd/scratch --size 512M --image-feature layering
rbd_admin create vms/golden-debian12 --size 10G
rbd_admin snap create --no-progress vms/golden-debian12@v1
rbd_admin snap protect vms/golden-debian12@v1
rbd_admin clone vms/golden-debian12@v1 vms/vm-101-disk-0
rbd_admin clone vms/golden-debian12@v1 vms/vm-102-disk-0
rbd_admin create vms/vm-103-disk-0 --size 32G --object-size 8M
rbd_admin snap create --no-progress vms/vm-103-disk-0@before-upgrade
rbd_admin namespace create backups/tenant-a
rbd_admin create backups/tenant-a/nightly --size 50G
rbd_admin create backups/archive --size 1T --image-feature layering,exclusive-lock
rbd_admin create rbd/old-logs --size 1G
rbd_admin trash mv rbd/old-logs
rbd_admin config image set rbd/db-data rbd_qos_iops_limit 2000
# A little data, so that "used" (from the fast-diff object map) is not all zero.
rbd_admin bench --io-type write --io-size 4M --io-total 16M --io-pattern seq rbd/web-root >/dev/null
rbd_admin ls -l vms

say "rbd-sync migrate"
"$bin" migrate --db "$RBDSYNC_TEST_DB"

say "rbd-sync run (as client.rbdsync; its keyring is found through ceph.conf)"
sync_args=(run --db "$RBDSYNC_TEST_DB" --conf "$CEPH_CONF" --id rbdsync
           --lock-file "$work/sync.lock")
"$bin" "${sync_args[@]}"

say "what the console's database now holds"
psql_demo() { psql "$RBDSYNC_TEST_DB" -X -q -P pager=off "$@"; }
psql_demo -c "
SELECT name AS pool, replica_size AS size, pg_num, pg_size_pretty(stored_bytes) AS stored,
       objects, pg_size_pretty(max_avail_bytes) AS max_avail
FROM rbdsync.pools ORDER BY 1;"
psql_demo -c "
SELECT p.name AS pool, i.namespace, i.name AS image,
       pg_size_pretty(i.size_bytes) AS size,
       coalesce(pg_size_pretty(i.used_bytes), '? (' || i.used_unknown_reason || ')') AS used,
       array_to_string(i.feature_names, ',') AS features, i.snapshot_count AS snaps,
       i.parent_pool_name || '/' || i.parent_image_name || '@' || i.parent_snap_name AS parent,
       nullif(i.config_overrides, '{}') AS overrides
FROM rbdsync.images i JOIN rbdsync.pools p USING (fsid, pool_id)
ORDER BY 1, 2, 3;"
psql_demo -c "
SELECT p.name AS pool, i.name AS image, s.name AS snapshot, pg_size_pretty(s.size_bytes) AS size,
       s.protected, s.children
FROM rbdsync.snapshots s JOIN rbdsync.images i USING (fsid, pool_id, namespace, image_id)
JOIN rbdsync.pools p USING (fsid, pool_id) ORDER BY 1, 2, 3;"
psql_demo -c "
SELECT p.name AS pool, t.name AS image, t.source, t.deletion_time
FROM rbdsync.trash t JOIN rbdsync.pools p USING (fsid, pool_id) ORDER BY 1, 2;"

say "a change in Ceph, and a second sync"
rbd_admin rm rbd/scratch >/dev/null 2>&1
rbd_admin resize rbd/web-root --size 40G >/dev/null 2>&1
"$bin" "${sync_args[@]}"

say "a sync while another one holds the guard (flock(1) stands in for it)"
set +e
flock "$work/sync.lock" "$bin" "${sync_args[@]}"
busy=$?
set -e
echo "exit code: $busy (75 = already running)"
[[ $busy == 75 ]]

if ((console)); then
    say "the console: the Django app of contrib/django, on this inventory"
    pg_port=$(sed -n 's/.* port=\([0-9]*\) .*/\1/p' <<<"$RBDSYNC_TEST_DB")
    console_port=${RBDSYNC_DEMO_CONSOLE_PORT:-8080}
    # The site's own role, as a Django shop has one: its tables (users, sessions) in a
    # schema of its own in the inventory's database, and SELECT on schema rbdsync
    # (contrib/django/grant-select.sql). Its password travels on stdin, never in argv,
    # and stays out of the server log; it goes to a pgpass of the console's own, next to
    # rbd-sync's (the button runs rbd-sync as the writer role rbdsync).
    password=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
    psql "$RBDSYNC_TEST_DB_ADMIN dbname=rbdsync" -X -q -v ON_ERROR_STOP=1 <<SQL
SET log_min_error_statement = panic;
SET log_statement = 'none';
CREATE ROLE rbdsync_console LOGIN PASSWORD '$password';
CREATE SCHEMA console AUTHORIZATION rbdsync_console;
ALTER ROLE rbdsync_console IN DATABASE rbdsync SET search_path = console;
SQL
    psql "$RBDSYNC_TEST_DB_ADMIN dbname=rbdsync" -X -q -v ON_ERROR_STOP=1 \
        -v role=rbdsync_console -v owner=rbdsync -f "$root/contrib/django/grant-select.sql"
    (
        umask 077
        cat "$PGPASSFILE" > "$work/console.pgpass"
        printf '127.0.0.1:%s:*:rbdsync_console:%s\n' "$pg_port" "$password" >> "$work/console.pgpass"
    )
    # contrib/django/demo_site/settings.py reads these; no secret is in argv. Direct mode
    # (no trigger socket): the button runs rbd-sync as this user, which therefore holds
    # the writer's password too. Development only: a server runs rbd-sync-trigger.socket
    # and holds no secret (docs/web-backend.md).
    export PGPASSFILE=$work/console.pgpass PYTHONDONTWRITEBYTECODE=1
    export RBDSYNC_CONSOLE_TRIGGER_SOCKET=
    DJANGO_SECRET_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
    export DJANGO_SECRET_KEY
    export RBDSYNC_CONSOLE_DB="host=127.0.0.1 port=$pg_port user=rbdsync_console dbname=rbdsync"
    export RBDSYNC_CONSOLE_SYNC_DB=$RBDSYNC_TEST_DB RBDSYNC_CONSOLE_BINARY=$bin
    export RBDSYNC_CONSOLE_LOCK_FILE=$work/sync.lock RBDSYNC_CONSOLE_CEPH_CONF=$CEPH_CONF
    export RBDSYNC_CONSOLE_CEPH_ID=rbdsync
    DJANGO_TIME_ZONE=$(cat /etc/timezone 2>/dev/null || echo UTC)
    export DJANGO_TIME_ZONE
    manage=("/usr/bin/python3" "$root/contrib/django/manage.py")
    "${manage[@]}" migrate --noinput -v 0
    login_password=$(od -An -tx1 -N9 /dev/urandom | tr -d ' \n')
    DJANGO_SUPERUSER_PASSWORD=$login_password "${manage[@]}" createsuperuser --noinput \
        --username admin --email admin@example.invalid >/dev/null
    echo
    echo "Console: http://127.0.0.1:$console_port/"
    echo "Log in as admin, password $login_password (made for this demo; gone when it stops)."
    echo "Press Sync now; change the cluster meanwhile, e.g."
    echo "  CEPH_CONF=$CEPH_CONF rbd --id admin create rbd/new-disk --size 1G"
    echo "Ctrl-C stops the console and the services."
    # Django's development server, which serves the static files (Chart.js from
    # libjs-chart.js) with --insecure; one process (--noreload), so Ctrl-C ends it.
    "${manage[@]}" runserver --insecure --noreload "127.0.0.1:$console_port" || true
fi

if [[ ${RBDSYNC_DEMO_KEEP:-0} == 1 ]]; then
    say "services left running: source $work/ceph/env.sh $work/pg/env.sh;" \
        "stop with scripts/ceph-cluster.sh stop $work/ceph; scripts/pg-server.sh stop $work/pg"
fi
say "demo finished"
