# shellcheck shell=bash
# Shared by scripts/ceph-cluster.sh and scripts/pg-server.sh: messages, timing, port
# checks, the DIR argument and the guarded removal of a sandbox directory.
# The sourcing script sets PROG and MARKER (the file that marks a DIR as its own).

log() { echo "$PROG: $*" >&2; }
die() { log "$*"; exit 1; }

# Wall clock in microseconds (bash >= 5 has EPOCHREALTIME; strip the decimal
# separator, which is locale dependent).
now_us() { echo "${EPOCHREALTIME//[!0-9]/}"; }
# Seconds (one decimal) since the microsecond timestamp $1.
elapsed_since() {
    local ds=$(( ($(now_us) - $1) / 100000 ))
    printf '%d.%d' $((ds / 10)) $((ds % 10))
}

port_is_free() { [[ -z $(ss -Hltn "( sport = :$1 )" 2>/dev/null) ]]; }

# Services started with an automatic port (the default) choose it under this lock and
# keep it until they listen, so that two suites started at the same moment never pick
# the same block. Held by flock(1) -o: the daemons a start leaves running do not
# inherit it.
readonly PORTS_LOCK=/tmp/rbd-sync-test-ports.lock

# Re-runs this script's `start DIR` under PORTS_LOCK, once: call it first thing in a
# start whose port is automatic. $1: the script's own absolute path.
start_under_ports_lock() {
    local self=$1
    [[ -n ${RBDSYNC_PORTS_LOCK_HELD:-} ]] && return 0
    command -v flock >/dev/null || die "command 'flock' not found (run scripts/deps.sh)"
    RBDSYNC_PORTS_LOCK_HELD=1 exec flock -o "$PORTS_LOCK" "$self" start "$DIR"
}

# Prints, one per line and sorted, the local port of every TCP and UDP socket (listening
# or connected). With both -t and -u, ss puts a Netid column first, so the local
# address is field 5; reading field 4 (Send-Q) once made every port look free.
ports_in_use() {
    local lines
    lines=$(ss -Htanu) || die "ss -Htanu failed: cannot tell which ports are in use"
    awk '$1 == "tcp" || $1 == "udp" {n = split($5, a, ":"); print a[n]}' <<< "$lines" | sort -un
}

# Prints the first of $1 consecutive TCP ports that no socket uses (listening or
# connected), below the kernel's ephemeral range, where no outgoing connection can take
# one later (the fixed ports of old, 46789 and 55432, lay inside it). Blocks of 100 from
# a random one on. Call it holding PORTS_LOCK (start_under_ports_lock).
free_port_block() {
    local count=$1 ephemeral_low first=20000 blocks start i base p used
    read -r ephemeral_low _ < /proc/sys/net/ipv4/ip_local_port_range
    blocks=$(( (ephemeral_low - count - first) / 100 ))
    ((blocks > 0)) || die "no room for $count ports between $first and the ephemeral range ($ephemeral_low)"
    # Not inside a pipeline or a bare $(...): set -e does not reach in there, and a
    # failing ss would leave every port looking free.
    used=$(ports_in_use) || die "cannot tell which ports are in use"
    used=" ${used//$'\n'/ } "
    start=$((RANDOM % blocks))
    for ((i = 0; i < blocks; i++)); do
        base=$((first + (start + i) % blocks * 100))
        for ((p = base; p < base + count; p++)); do
            [[ $used == *" $p "* ]] && continue 2
        done
        echo "$base"
        return 0
    done
    die "no $count consecutive free ports in $first-$((ephemeral_low - 1))"
}

# Who listens on port $1, e.g. "by ceph-mon pid 1234" (for error messages).
port_owner() {
    local users
    users=$(ss -Hltnp "( sport = :$1 )" 2>/dev/null) || true
    if [[ $users =~ \(\(\"([^\"]+)\",pid=([0-9]+) ]]; then
        echo "by ${BASH_REMATCH[1]} pid ${BASH_REMATCH[2]}"
    fi
}

# The DIR argument as an absolute path (it ends up in config files and /proc
# cmdlines), restricted to characters that need no quoting anywhere.
sandbox_dir() {
    local dir
    [[ -n $1 ]] || die "DIR must not be empty"
    dir=$(realpath -m -- "$1")
    [[ $dir != / ]] || die "refusing to use / as DIR"
    [[ $dir =~ ^[A-Za-z0-9._/+@-]+$ ]] || die "DIR may only contain [A-Za-z0-9._/+@-] (got '$dir')"
    echo "$dir"
}

# Stops a sandbox: runs the function $1 (which kills its processes), then removes
# DIR, but only a directory this script created (it holds MARKER) or an empty one.
# A missing DIR is fine: there is nothing to stop. $2 names the sandbox in messages.
stop_sandbox() {
    local kill_processes=$1 what=$2 t0
    t0=$(now_us)
    if [[ ! -e $DIR ]]; then
        log "$DIR does not exist; nothing to stop"
        return 0
    fi
    [[ -d $DIR ]] || die "$DIR is not a directory"
    if [[ ! -f $DIR/$MARKER && -n $(ls -A -- "$DIR") ]]; then
        die "refusing to remove $DIR: not a $PROG directory (no $MARKER)"
    fi
    "$kill_processes"
    rm -rf -- "$DIR"
    log "$what stopped in $(elapsed_since "$t0")s"
}
