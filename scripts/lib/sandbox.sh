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
