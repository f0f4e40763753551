#!/usr/bin/env bash
# A throwaway podman for the container tests: its own image store and settings in DIR,
# nothing of the host's (/var/lib/containers, /etc/containers) read or changed.
#
#   scripts/podman-env.sh start DIR   # writes DIR/containers.conf, DIR/storage.conf and
#                                     # DIR/env.sh (source it: CONTAINERS_CONF and
#                                     # CONTAINERS_STORAGE_CONF point podman at DIR)
#   scripts/podman-env.sh stop DIR    # removes its containers, images and DIR
#
# The settings are what makes podman run on a CI machine like ours (rootful, Debian 12,
# cgroups v1 with a v2 mount beside it, a hard limit of open files below podman's
# default), found by trying (docs/testing.md):
#   - runtime runc: Debian 12's default, crun, fails there ("cgroups in hybrid mode not
#     supported", and setrlimit EPERM before that);
#   - default_ulimits: podman asks for 1048576 open files by default, above the host's
#     hard limit, and the runtime's setrlimit fails with EPERM;
#   - storage driver vfs: needs nothing of the file system below it (overlay needs
#     an upper directory that supports it, which a CI root on overlay may not give);
#     the image is imported once, so vfs's copies cost only disk;
#   - events and logs to files: no journald on a CI machine.
set -euo pipefail
source "$(dirname "$0")/lib/usage.sh"
PROG=${0##*/}
die() { echo "$PROG: $*" >&2; exit 1; }

answer_help "${1:-}"
cmd=${1:-}
dir=${2:-}
[[ -n $cmd && -n $dir ]] || die "usage: $PROG start|stop DIR"
dir=$(realpath -m -- "$dir")

case $cmd in
    start)
        command -v podman >/dev/null || die "command 'podman' not found (run scripts/deps.sh)"
        command -v runc >/dev/null || die "command 'runc' not found (run scripts/deps.sh)"
        [[ ! -e $dir || -z $(ls -A -- "$dir") ]] || die "$dir is not empty (run: $PROG stop $dir)"
        mkdir -p "$dir/storage" "$dir/run" "$dir/tmp" "$dir/networks"
        cat >"$dir/containers.conf" <<EOF
# Made by scripts/podman-env.sh: a throwaway podman for the container tests.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$dir/events.log"
tmp_dir = "$dir/tmp"

[network]
# Not the host's /etc/containers/networks: nothing here may change the host's networks.
network_config_dir = "$dir/networks"
EOF
        cat >"$dir/storage.conf" <<EOF
# Made by scripts/podman-env.sh: a throwaway image store for the container tests.
[storage]
driver = "vfs"
graphroot = "$dir/storage"
runroot = "$dir/run"
EOF
        {
            echo "# Made by scripts/podman-env.sh; source it to use the throwaway podman in DIR."
            printf 'export CONTAINERS_CONF=%q\n' "$dir/containers.conf"
            printf 'export CONTAINERS_STORAGE_CONF=%q\n' "$dir/storage.conf"
        } >"$dir/env.sh"
        # podman reads the settings once here: a mistake in them fails the start, not a test.
        (
            # shellcheck source=/dev/null
            source "$dir/env.sh"
            podman info --format '{{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}}' >/dev/null
        ) || die "podman does not start with the settings in $dir"
        echo "$PROG: podman ready in $dir (source $dir/env.sh)" >&2
        ;;
    stop)
        [[ -d $dir ]] || exit 0
        if [[ -f $dir/env.sh ]]; then
            (
                # shellcheck source=/dev/null
                source "$dir/env.sh"
                # Its own containers and images only (`system reset` would also clear the
                # networks directory, and it must not touch anything but DIR).
                podman rm --all --force --time 0 >/dev/null 2>&1 || true
                podman rmi --all --force >/dev/null 2>&1 || true
            )
        fi
        rm -rf --one-file-system -- "$dir"
        ;;
    *) die "unknown command '$cmd' (start or stop)" ;;
esac
