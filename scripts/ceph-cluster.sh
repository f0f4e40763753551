#!/usr/bin/env bash
# Throwaway single-node Ceph cluster (Ceph 16.2 Pacific, Debian 12) for tests:
# one mon, one OSD, optionally one mgr, all on 127.0.0.1 with cephx enabled.
#
#   scripts/ceph-cluster.sh start  DIR   # DIR must not exist or be empty
#   scripts/ceph-cluster.sh status DIR   # exit 0 if the mon and the OSD answer
#   scripts/ceph-cluster.sh stop   DIR   # kill the recorded daemons, remove DIR
#   scripts/ceph-cluster.sh kill-mon  DIR  # fault tests: SIGKILL the mon, keep its data
#   scripts/ceph-cluster.sh start-mon DIR  # fault tests: start that mon again
#
# Environment knobs (start; every variable of the suite: docs/testing.md, "Environment
# variables"):
#   RBDSYNC_CEPH_PORT         mon msgr2 port; msgr1 = PORT+1; OSD/MGR bind in
#                             [PORT+10, PORT+99]. Default `auto`: a free block of
#                             100 below the ephemeral range, chosen under a
#                             machine-wide lock (scripts/lib/sandbox.sh), so that
#                             clusters and suites started together never collide.
#   RBDSYNC_CEPH_MGR          0 (default) | 1 = also start ceph-mgr. Only needed
#                             for mgr commands (`ceph df` numbers, `ceph pg stat`,
#                             rbd trash purge schedules, ...), which hang without it.
#                             Adds ~3 s to start (waits until the mgr is active);
#                             the mgr then creates a pool "device_health_metrics".
#   RBDSYNC_CEPH_OBJECTSTORE  memstore (default; data in OSD RAM) | bluestore
#                             (10 GiB sparse file in DIR; ~3 s slower start)
#   RBDSYNC_CEPH_ROOT         a root of scripts/debian-root.sh (e.g. Debian 13's, Ceph
#                             18 Reef): the daemons and admin CLIs are that release's,
#                             run inside it; DIR and the ports are shared with the host,
#                             so a client built here talks to it as to any cluster.
#                             Recorded in DIR: stop/status/kill-mon/start-mon follow it.
#                             env.sh then exports RBDSYNC_TEST_CEPH_ROOT (below), a
#                             name of its own, so that a shell that sourced it does
#                             not start its next cluster in that root too.
#   RBDSYNC_CEPH_OSD_MEMORY_TARGET  bytes (default 1073741824, a quarter of Ceph's
#                             4 GiB: a test cluster holds little). Benchmarks of
#                             100,000 images set Ceph's default, or bluestore's
#                             caches no longer hold every image's metadata.
#
# Everything (ceph.conf, keyrings, mon store, OSD data, logs, sockets, pid files)
# lives in DIR; nothing is written to /etc/ceph or /var/{lib,log,run}/ceph and
# no systemd/cephadm is involved. No pool is created: callers create their own.
#
# After `start`, `source DIR/env.sh` exports
#   CEPH_CONF                   DIR/ceph.conf (read by ceph/rbd/rados and by
#                               librados conf_read_file(nullptr))
#   RBDSYNC_TEST_CEPH_CONF      DIR/ceph.conf
#   RBDSYNC_TEST_CEPH_ID        rbdsync  (caps: mon/osd/mgr 'profile rbd')
#   RBDSYNC_TEST_CEPH_ADMIN_ID  admin
#   RBDSYNC_TEST_CEPH_DIR       DIR
#   RBDSYNC_TEST_CEPH_ROOT      the root, for a cluster started in one (the tests run
#                               that release's rbd and ceph CLIs in it)
# ceph.conf sets `keyring = DIR/$cluster.$name.keyring`, so both users' keys
# (DIR/ceph.client.admin.keyring, DIR/ceph.client.rbdsync.keyring) are found
# from the conf alone: `rbd --id rbdsync ls POOL`, `ceph --id admin -s`.
# CEPH_ARGS is deliberately not exported: tests choose the user explicitly.
set -euo pipefail
# A developer's CEPH_ARGS would change what the suite's clients connect as, or where.
unset CEPH_ARGS

PROG=${0##*/}
SELF=$(realpath -- "$0")
# shellcheck source=scripts/lib/sandbox.sh
source "$(dirname "$0")/lib/sandbox.sh"
source "$(dirname "$0")/lib/usage.sh"

# Every ceph/rados CLI call is bounded: some commands block forever when the
# cluster (or the mgr) is not there. timeout kills, --connect-timeout makes the
# ceph CLI give up cleanly when the mon is unreachable.
readonly CLI_TIMEOUT=30
CONNECT_TIMEOUT=15          # lowered by `status`, which should answer fast
readonly START_TIMEOUT=60   # max seconds to wait for each daemon to come up

readonly MON_ID=a
readonly MGR_ID=x
readonly OSD_ID=0
readonly PROBE_POOL=readiness-probe
readonly MARKER=.ceph-cluster-dir   # marks DIR as ours: stop only rm -rf's such dirs
readonly ROOT_RECORD=ceph-root      # the RBDSYNC_CEPH_ROOT the cluster was started from


usage() {
    cat >&2 <<EOF
usage: $PROG start|stop|status|kill-mon|start-mon DIR
  env: RBDSYNC_CEPH_PORT (auto)  RBDSYNC_CEPH_MGR (0|1)  RBDSYNC_CEPH_OBJECTSTORE (memstore|bluestore)
       RBDSYNC_CEPH_OSD_MEMORY_TARGET (1073741824)
EOF
    exit 2
}


# --- cluster-scoped helpers (need DIR/CONF set) -----------------------------

# The admin CLIs. --conf/--name are explicit so that nothing from the caller's
# environment (CEPH_CONF, CEPH_ARGS) can redirect them to another cluster.
ceph_admin() {
    timeout -k 5 "$CLI_TIMEOUT" \
        ceph --conf "$CONF" --name client.admin --connect-timeout "$CONNECT_TIMEOUT" "$@"
}
rados_admin() {
    timeout -k 5 "$CLI_TIMEOUT" rados --conf "$CONF" --name client.admin "$@"
}
# Daemon mkfs/start steps talk to the mon too (e.g. `ceph-osd --mkfs` fetches
# the monmap) and could wait forever if it is gone. A daemonizing start
# returns once the daemon is initialised, so timeout only covers that phase.
bounded() {
    timeout -k 5 "$START_TIMEOUT" "$@"
}

# Is PID a live (non-zombie) process started with `--conf $CONF`? Guards
# against killing an unrelated process that reused a recorded PID.
is_our_daemon() {
    local pid=$1 state arg
    [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/stat ]] || return 1
    # field 3 of /proc/PID/stat is the state; zombies (Z) are as good as gone
    # (PID 1 in containers does not always reap re-parented daemons promptly).
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
    [[ $state != Z ]] || return 1
    while IFS= read -r -d '' arg; do
        [[ $arg == "$CONF" ]] && return 0
    done 2>/dev/null < "/proc/$pid/cmdline"   # (it may exit meanwhile)
    return 1
}

# PIDs of this cluster's daemons: those recorded in DIR/daemons.pids, any
# pid_file a daemon wrote before we could record it, and any ceph-mon/osd/mgr
# process whose argv names exactly this DIR's ceph.conf (e.g. an `--mkfs` run
# left behind by a start that was SIGKILLed). Each is checked by is_our_daemon,
# so daemons of other clusters, or a recycled PID, are never touched.
our_daemon_pids() {
    local f pid
    {
        for f in "$DIR/daemons.pids" "$DIR"/run/*.pid; do
            [[ -f $f ]] || continue
            # daemons.pids has "NAME PID" lines, pid files just "PID"
            awk '{print $NF}' "$f" 2>/dev/null || true
        done
        pgrep -x 'ceph-mon|ceph-osd|ceph-mgr' || true
    } | sort -un | while read -r pid; do
        if is_our_daemon "$pid"; then echo "$pid"; fi
    done
}

# Kill our daemons and wait until they are gone. SIGKILL right away: the
# cluster is throwaway (nothing to flush), and SIGTERM costs ~2 s per daemon.
kill_daemons() {
    local pids=() pid deadline
    mapfile -t pids < <(our_daemon_pids)
    ((${#pids[@]})) || return 0
    kill -KILL "${pids[@]}" 2>/dev/null || true
    # The daemons were re-parented to init, so `wait` cannot be used: poll
    # until /proc/PID is gone. A killed daemon is a zombie until init reaps it,
    # and some container inits (this VM's) reap only every ~2 s; wait for that
    # too, so that `pgrep ceph-osd` right after `stop` is empty.
    deadline=$((SECONDS + 10))
    for pid in "${pids[@]}"; do
        while [[ -e /proc/$pid ]]; do
            if ((SECONDS >= deadline)); then
                is_our_daemon "$pid" && log "warning: pid $pid still alive after SIGKILL"
                break   # else: a zombie init has not reaped yet; harmless
            fi
            sleep 0.05
        done
    done
}

# Print the pid written to DIR/run/NAME.pid by a daemon that just daemonized
# (waits briefly: the file appears right after the fork) and record it, in place of
# what an earlier start of NAME recorded (start-mon after kill-mon).
record_daemon() {
    local name=$1 pidfile=$DIR/run/$1.pid i
    for ((i = 0; i < 100; i++)); do
        [[ -s $pidfile ]] && break
        sleep 0.05
    done
    [[ -s $pidfile ]] || { log "$name did not write $pidfile"; return 1; }
    touch "$DIR/daemons.pids"
    awk -v n="$name" '$1 != n' "$DIR/daemons.pids" > "$DIR/daemons.pids.new"
    printf '%s %s\n' "$name" "$(<"$pidfile")" >> "$DIR/daemons.pids.new"
    mv "$DIR/daemons.pids.new" "$DIR/daemons.pids"
}

# wait_until DESC DAEMON CMD...: retry CMD until it succeeds; fail fast if the
# daemon DAEMON (name in daemons.pids) died, or after START_TIMEOUT seconds.
wait_until() {
    local desc=$1 daemon=$2 pid deadline=$((SECONDS + START_TIMEOUT))
    shift 2
    pid=$(awk -v n="$daemon" '$1 == n {print $2}' "$DIR/daemons.pids")
    until "$@" >/dev/null 2>&1; do
        is_our_daemon "$pid" || { log "$daemon died while waiting for: $desc"; return 1; }
        ((SECONDS < deadline)) || { log "timed out after ${START_TIMEOUT}s waiting for: $desc"; return 1; }
        sleep 0.2
    done
}

# Run a bootstrap command with its output captured in DIR/log/bootstrap.log
# (stdout must stay quiet; on failure the log tail is shown).
# The failure is returned, not left to set -e inside the redirection: an EXIT
# trap fired from there would still have stderr pointing into the log file.
quietly() {
    local rc=0
    # "+ [seconds since start] command": shows where start-up time goes.
    echo "+ [$(elapsed_since "$T0")s] $*" >> "$DIR/log/bootstrap.log"
    "$@" >> "$DIR/log/bootstrap.log" 2>&1 || rc=$?
    return "$rc"
}

# (Output is captured, not piped into `grep -q`: with pipefail, grep exiting
# early can SIGPIPE the writer and turn a match into a failure.)
num_up_osds_is_1() {
    local out
    out=$(ceph_admin osd stat --format json) && [[ $out == *'"num_up_osds":1,'* ]]
}

mgr_is_available() {
    local out
    out=$(ceph_admin mgr stat --format json) && [[ $out == *'"available":true'* ]]
}

# --- start ------------------------------------------------------------------


check_ports() {
    local p free=0
    for p in "$PORT" $((PORT + 1)); do
        port_is_free "$p" || die "port $p is already in use $(port_owner "$p")" \
            "(a cluster from a previous run still up? stop it, or set RBDSYNC_CEPH_PORT)"
    done
    # The OSD binds ~8 ports and the mgr 2 from the range; make sure they fit.
    for ((p = PORT + 10; p <= PORT + 99; p++)); do
        port_is_free "$p" && ((++free >= 12)) && return 0
    done
    die "fewer than 12 free ports in $((PORT + 10))-$((PORT + 99)) for the OSD/MGR; set RBDSYNC_CEPH_PORT"
}

write_conf() {
    local fsid=$1
    # \$cluster, \$name, \$id are ceph metavariables, expanded by ceph itself.
    cat > "$CONF" <<EOF
# Throwaway test cluster written by scripts/ceph-cluster.sh; removed by 'stop'.
[global]
fsid = $fsid
mon_host = [v2:127.0.0.1:$PORT,v1:127.0.0.1:$((PORT + 1))]
public_addr = 127.0.0.1
public_network = 127.0.0.1/32
ms_bind_ipv6 = false
# OSD/MGR ports: keep them out of the default 6800-7300 and away from other
# test clusters, so several clusters can coexist.
ms_bind_port_min = $((PORT + 10))
ms_bind_port_max = $((PORT + 99))

# Real cephx everywhere, like production.
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
auth_allow_insecure_global_id_reclaim = false
# Clients find their key from the conf alone: client.rbdsync ->
# $DIR/ceph.client.rbdsync.keyring. Daemons override this below.
keyring = $DIR/\$cluster.\$name.keyring

run_dir = $DIR/run
crash_dir = $DIR/crash
log_to_stderr = false
err_to_stderr = false

# One OSD: no replication, small PG counts, no autoscaler surprises.
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
mon_allow_pool_delete = true
mon_max_pg_per_osd = 1000
# Do not raise MON_DISK_LOW / stop on a fairly full /tmp.
mon_data_avail_warn = 1
mon_data_avail_crit = 0
# Without a mgr the mon reports MGR_DOWN after this grace (default 120 s).
mon_mgr_mkfs_grace = 86400
# The mon batches map updates for paxos_propose_interval (default 1 s) before
# committing, so every state-changing command (osd new, auth add, pool create,
# OSD boot steps) took ~1 s. 0.1 s cuts the start time from ~7 s to ~3 s and
# speeds up the callers' pool creation too; irrelevant load on one tiny mon.
# (Lower values gained nothing measurable.)
paxos_propose_interval = 0.1

# Daemon-only paths: CLI/librados clients get no log file and no admin socket
# (concurrent clients would fight over one socket path).
[mon]
mon_data = $DIR/mon/\$cluster-\$id
mon_initial_members = $MON_ID
log_file = $DIR/log/\$name.log
mon_cluster_log_file = $DIR/log/cluster.log
admin_socket = $DIR/run/\$name.asok
pid_file = $DIR/run/\$name.pid

[mgr]
mgr_data = $DIR/mgr/\$cluster-\$id
keyring = $DIR/mgr/\$cluster-\$id/keyring
log_file = $DIR/log/\$name.log
admin_socket = $DIR/run/\$name.asok
pid_file = $DIR/run/\$name.pid

[osd]
osd_data = $DIR/osd/\$cluster-\$id
keyring = $DIR/osd/\$cluster-\$id/keyring
log_file = $DIR/log/\$name.log
admin_socket = $DIR/run/\$name.asok
pid_file = $DIR/run/\$name.pid
osd_objectstore = $OBJECTSTORE
# memstore: capacity the OSD reports (data lives in OSD RAM).
memstore_device_bytes = 4294967296
# bluestore: with bluestore_block_path unset, mkfs creates <osd_data>/block as
# a sparse file. (Setting the path to <osd_data>/block itself makes mkfs
# symlink it to itself: ELOOP "Too many levels of symbolic links".)
bluestore_block_create = true
bluestore_block_size = 10737418240
bluestore_fsck_on_mount = false
bluestore_fsck_on_umount = false
osd_memory_target = $OSD_MEMORY_TARGET
EOF
}

start_mon() {
    local fsid=$1
    # mon. key (mon-to-mon) + client.admin key, both known to the mon at mkfs.
    quietly ceph-authtool --create-keyring "$DIR/ceph.mon.keyring" --gen-key -n mon. --cap mon 'allow *'
    quietly ceph-authtool --create-keyring "$DIR/ceph.client.admin.keyring" --gen-key -n client.admin \
        --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *'
    quietly ceph-authtool "$DIR/ceph.mon.keyring" --import-keyring "$DIR/ceph.client.admin.keyring"
    quietly monmaptool --create --fsid "$fsid" \
        --addv "$MON_ID" "[v2:127.0.0.1:$PORT,v1:127.0.0.1:$((PORT + 1))]" "$DIR/monmap"
    quietly bounded ceph-mon --conf "$CONF" --mkfs -i "$MON_ID" --monmap "$DIR/monmap" --keyring "$DIR/ceph.mon.keyring"
    # The mon keeps its key in mon_data from now on; the bootstrap files go.
    rm -f "$DIR/ceph.mon.keyring" "$DIR/monmap"
    quietly bounded ceph-mon --conf "$CONF" -i "$MON_ID"     # daemonizes, writes pid_file
    record_daemon "mon.$MON_ID"
    wait_until "mon.$MON_ID to answer" "mon.$MON_ID" ceph_admin mon stat
}

start_mgr() {
    local keyring=$DIR/mgr/ceph-$MGR_ID/keyring
    mkdir -p "${keyring%/*}"
    quietly ceph_admin auth get-or-create "mgr.$MGR_ID" \
        mon 'allow profile mgr' osd 'allow *' mds 'allow *' -o "$keyring"
    quietly bounded ceph-mgr --conf "$CONF" -i "$MGR_ID"
    record_daemon "mgr.$MGR_ID"
}

start_osd() {
    local uuid keyring=$DIR/osd/ceph-$OSD_ID/keyring secret
    uuid=$(uuidgen)
    mkdir -p "${keyring%/*}"
    # Generate the OSD key into its keyring file and hand it to the mon on
    # stdin, so the secret never shows up in any process's argv.
    quietly ceph-authtool --create-keyring "$keyring" --gen-key -n "osd.$OSD_ID"
    secret=$(ceph-authtool -p -n "osd.$OSD_ID" "$keyring")
    printf '{"cephx_secret": "%s"}\n' "$secret" |
        quietly ceph_admin osd new "$uuid" "$OSD_ID" -i -
    quietly bounded ceph-osd --conf "$CONF" -i "$OSD_ID" --mkfs --osd-uuid "$uuid"
    # With osd_crush_update_on_start (default) the OSD adds itself to CRUSH.
    quietly bounded ceph-osd --conf "$CONF" -i "$OSD_ID"
    record_daemon "osd.$OSD_ID"
}

# The application's restricted user. Its keyring lands where the conf's
# `keyring = DIR/$cluster.$name.keyring` pattern looks for it.
create_rbdsync_client() {
    quietly ceph_admin auth get-or-create client.rbdsync \
        mon 'profile rbd' osd 'profile rbd' mgr 'profile rbd' \
        -o "$DIR/ceph.client.rbdsync.keyring"
    chmod 0600 "$DIR/ceph.client.rbdsync.keyring"
}

# Prove the OSD really serves client I/O (num_up_osds alone does not: PGs must
# peer and go active): write an object into a 1-PG scratch pool and list it
# back, then delete the pool so callers start from a cluster without pools.
probe_io() {
    local objects
    quietly ceph_admin osd pool create "$PROBE_POOL" 1 1
    quietly rados_admin -p "$PROBE_POOL" put probe - <<< "probe"
    objects=$(rados_admin -p "$PROBE_POOL" ls 2>> "$DIR/log/bootstrap.log")
    [[ $objects == probe ]] || { log "probe object not listed (got: '$objects')"; return 1; }
    quietly ceph_admin osd pool delete "$PROBE_POOL" "$PROBE_POOL" --yes-i-really-really-mean-it
    # client.rbdsync authenticates with the key found via the conf pattern.
    quietly timeout -k 5 "$CLI_TIMEOUT" rados --conf "$CONF" --id rbdsync lspools
}

write_env() {
    {
        echo "# Generated by scripts/ceph-cluster.sh; source it to use the test cluster."
        printf 'export CEPH_CONF=%q\n' "$CONF"
        printf 'export RBDSYNC_TEST_CEPH_CONF=%q\n' "$CONF"
        printf 'export RBDSYNC_TEST_CEPH_DIR=%q\n' "$DIR"
        echo "export RBDSYNC_TEST_CEPH_ID=rbdsync"
        echo "export RBDSYNC_TEST_CEPH_ADMIN_ID=admin"
        if [[ -n ${RBDSYNC_IN_CEPH_ROOT:-} ]]; then
            printf 'export RBDSYNC_TEST_CEPH_ROOT=%q\n' "$RBDSYNC_IN_CEPH_ROOT"
        fi
    } > "$DIR/env.sh"
}

# EXIT trap while starting: on failure show the log tails, then tear down
# everything this run started (DIR was empty/absent before, so it is ours).
on_start_exit() {
    local rc=$?
    ((STARTED)) && return 0
    log "start failed (exit $rc); last log lines:"
    local f
    for f in "$DIR"/log/*; do
        [[ -f $f ]] || continue
        echo "==> $f <==" >&2
        tail -n 15 "$f" >&2
    done
    kill_daemons
    rm -rf -- "$DIR"
    exit $((rc ? rc : 1))
}

cmd_start() {
    local fsid
    T0=$(now_us)
    PORT=${RBDSYNC_CEPH_PORT:-auto}
    if [[ $PORT == auto ]]; then
        start_under_ports_lock "$SELF"
        PORT=$(free_port_block 100)
    fi
    local with_mgr=${RBDSYNC_CEPH_MGR:-0}
    OBJECTSTORE=${RBDSYNC_CEPH_OBJECTSTORE:-memstore}
    OSD_MEMORY_TARGET=${RBDSYNC_CEPH_OSD_MEMORY_TARGET:-1073741824}

    if ! [[ $PORT =~ ^[0-9]+$ ]] || ((PORT < 1024 || PORT + 99 > 65535)); then
        die "RBDSYNC_CEPH_PORT must be a number in 1024..65436 (got '$PORT')"
    fi
    [[ $with_mgr == 0 || $with_mgr == 1 ]] || die "RBDSYNC_CEPH_MGR must be 0 or 1 (got '$with_mgr')"
    [[ $OBJECTSTORE == memstore || $OBJECTSTORE == bluestore ]] ||
        die "RBDSYNC_CEPH_OBJECTSTORE must be memstore or bluestore (got '$OBJECTSTORE')"
    [[ $OSD_MEMORY_TARGET =~ ^[0-9]+$ ]] ||
        die "RBDSYNC_CEPH_OSD_MEMORY_TARGET must be a number of bytes (got '$OSD_MEMORY_TARGET')"
    local c
    for c in ceph ceph-mon ceph-osd ceph-authtool monmaptool rados uuidgen ss timeout; do
        command -v "$c" >/dev/null || die "command '$c' not found (run scripts/deps.sh)"
    done
    if ((with_mgr)); then
        command -v ceph-mgr >/dev/null || die "command 'ceph-mgr' not found (run scripts/deps.sh)"
    fi

    # Refuse to reuse a non-empty DIR: it may hold a running cluster.
    if [[ -e $DIR ]]; then
        [[ -d $DIR ]] || die "$DIR exists and is not a directory"
        [[ -z $(ls -A -- "$DIR") ]] || die "$DIR is not empty (left over from a previous run? run: $PROG stop $DIR)"
    fi
    # Admin sockets live in DIR/run; sun_path holds at most 107 bytes.
    local asok=$DIR/run/mon.$MON_ID.asok
    ((${#asok} <= 107)) || die "DIR is too long for a unix socket path ($asok > 107 bytes); use a shorter DIR"
    check_ports

    # From here on, failures tear down whatever was started.
    STARTED=0
    trap on_start_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    mkdir -p "$DIR"
    chmod 0700 "$DIR"     # keyrings inside; only the invoking user needs access
    echo "$PROG" > "$DIR/$MARKER"
    if [[ -n ${RBDSYNC_IN_CEPH_ROOT:-} ]]; then
        echo "$RBDSYNC_IN_CEPH_ROOT" > "$DIR/$ROOT_RECORD"
    fi
    mkdir -p "$DIR"/{run,log,mon,osd,mgr,crash}
    : > "$DIR/daemons.pids"

    fsid=$(uuidgen)
    write_conf "$fsid"
    start_mon "$fsid"
    # The mgr boots its python modules (~300 MB, a few seconds) in parallel
    # with the OSD bootstrap; we only wait for it at the end.
    # (`if`, not `((with_mgr)) && start_mgr`: set -e is off inside a function
    # called as the left/middle part of an && list, which would hide failures.)
    if ((with_mgr)); then start_mgr; fi
    start_osd
    create_rbdsync_client
    wait_until "osd.$OSD_ID to be up" "osd.$OSD_ID" num_up_osds_is_1
    probe_io
    if ((with_mgr)); then
        wait_until "mgr.$MGR_ID to become available" "mgr.$MGR_ID" mgr_is_available
    fi
    write_env

    STARTED=1
    trap - EXIT INT TERM
    echo "+ [$(elapsed_since "$T0")s] ready" >> "$DIR/log/bootstrap.log"
    log "ceph cluster ready in $(elapsed_since "$T0")s ($OBJECTSTORE, mgr=$with_mgr, mon port $PORT, dir $DIR)"
}

# --- stop / status ------------------------------------------------------------

cmd_stop() { stop_sandbox kill_daemons "ceph cluster"; }

cmd_status() {
    [[ -f $CONF ]] || die "no cluster in $DIR ($CONF missing)"
    CONNECT_TIMEOUT=5
    ceph_admin mon stat >/dev/null 2>&1 || die "mon does not answer"
    num_up_osds_is_1 2>/dev/null || die "osd.$OSD_ID is not up"
    # `tell` talks to the OSD itself, not just to the mon's view of it.
    ceph_admin tell "osd.$OSD_ID" version >/dev/null 2>&1 || die "osd.$OSD_ID does not answer"
    echo "ceph cluster in $DIR: mon.$MON_ID and osd.$OSD_ID up"
}

# --- faults, for tests ---------------------------------------------------------

mon_pid() { [[ -f $DIR/run/mon.$MON_ID.pid ]] && cat "$DIR/run/mon.$MON_ID.pid"; }

cmd_kill_mon() {
    local pid
    pid=$(mon_pid) || die "no mon pid file in $DIR/run"
    is_our_daemon "$pid" || die "mon.$MON_ID (pid $pid) is not running"
    kill -KILL "$pid"
    # Re-parented to init, which reaps slowly here: wait until it is really gone.
    while is_our_daemon "$pid"; do sleep 0.05; done
    # A killed mon leaves its pid file: start-mon must wait for the new one's, not read it.
    rm -f "$DIR/run/mon.$MON_ID.pid"
    log "mon.$MON_ID (pid $pid) killed"
}

cmd_start_mon() {
    local pid
    T0=$(now_us)
    [[ -f $CONF ]] || die "no cluster in $DIR ($CONF missing)"
    if pid=$(mon_pid) && is_our_daemon "$pid"; then
        die "mon.$MON_ID is already running (pid $pid)"
    fi
    quietly bounded ceph-mon --conf "$CONF" -i "$MON_ID"
    record_daemon "mon.$MON_ID"
    wait_until "mon.$MON_ID to answer" "mon.$MON_ID" ceph_admin mon stat
    log "mon.$MON_ID started again (pid $(mon_pid))"
}

# --- main -------------------------------------------------------------------

answer_help "${1:-}"
(($# == 2)) || usage
DIR=$(sandbox_dir "$2")
CONF=$DIR/ceph.conf
# Nothing from the caller's ceph environment may leak into our admin calls.
unset CEPH_ARGS
# A cluster of another release runs inside its root: this script again, in there (the
# tree is bound at its own path), once.
if [[ -z ${RBDSYNC_IN_CEPH_ROOT:-} ]]; then
    # The knob for start; the other commands follow the cluster's record alone: a shell
    # may still hold the knob it started another cluster with.
    ceph_root=
    if [[ $1 == start ]]; then
        ceph_root=${RBDSYNC_CEPH_ROOT:-}
    elif [[ -f $DIR/$ROOT_RECORD ]]; then
        ceph_root=$(< "$DIR/$ROOT_RECORD")
    fi
    if [[ -n $ceph_root && $1 == stop && ! -d $ceph_root ]]; then
        # Its root is gone: the daemons are still processes of this host.
        log "the root $ceph_root is gone; stopping the cluster from the host"
        ceph_root=
    fi
    if [[ -n $ceph_root ]]; then
        [[ -d $ceph_root ]] || die "RBDSYNC_CEPH_ROOT '$ceph_root' is not a directory"
        # Only /tmp (and the tree) are the same inside the root and out.
        [[ $DIR == /tmp/* ]] || die "with RBDSYNC_CEPH_ROOT, DIR must be under /tmp (got $DIR)"
        RBDSYNC_IN_CEPH_ROOT=$(realpath -- "$ceph_root") exec \
            "$(dirname "$SELF")/debian-root.sh" run "$ceph_root" "$SELF" "$1" "$DIR"
    fi
fi
cd /   # keep no handle on a caller dir; all paths are absolute

case $1 in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    kill-mon) cmd_kill_mon ;;
    start-mon) cmd_start_mon ;;
    *) usage ;;
esac
