#!/usr/bin/env bash
# A root file system of another Debian release (trixie, sid), made from Debian's archive
# with mmdebstrap, to build rbd-sync against that release's libraries and to run that
# release's Ceph or PostgreSQL beside the host's. Needs root (CI runs as root).
#
#   scripts/debian-root.sh make SUITE DIR    # make DIR (skipped when DIR is already a
#                                            # root of SUITE with today's package list)
#   scripts/debian-root.sh run DIR CMD...    # run CMD inside DIR
#   scripts/debian-root.sh packages SUITE    # the package list, one per line
#
# `run` enters a private mount namespace, binds /proc, /sys, /dev, /run, /tmp and the
# source tree at their own paths, and chroots: paths under /tmp and the tree mean the
# same inside and out, ports are the host's (no network namespace), and the bind
# mounts vanish with the last process of the namespace, so nothing is left mounted on
# the host (daemons started inside keep their namespace while they run).
#
# Why a chroot and not a container: mmdebstrap needs nothing but Debian's archive and
# makes a root in 2-3 minutes; a daemon started from it is an ordinary process of the
# host, which the sandbox scripts start, wait for and kill as they do the host's.
set -euo pipefail
source "$(dirname "$0")/lib/usage.sh"

PROG=${0##*/}
root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "$PROG: $*" >&2; exit 1; }
log() { echo "$PROG: $*" >&2; }

usage() {
    print_header >&2
    exit 2
}

# What a root needs to build rbd-sync and its tests, build its Debian package, and run
# the throwaway services: the same roles as scripts/deps.sh, without the tools that only
# the host's runs use (clang-tidy, clang-format, fuzzing, Chromium). `postgresql` and
# `postgresql-client` are the release's default major version (17 on trixie).
# python3-selenium: Django's runner imports every test module of the console, the
# browser test's too (which is left out: no Chromium in a root).
packages() {
    local suite=$1
    local -a pkgs=(
        build-essential cmake g++ make pkg-config git
        librados-dev libradospp-dev librbd-dev libpqxx-dev libpq-dev
        libspdlog-dev libfmt-dev libcxxopts-dev nlohmann-json3-dev libgtest-dev libgmock-dev
        ceph-mon ceph-osd ceph-mgr ceph-common postgresql postgresql-client
        uuid-runtime util-linux procps iproute2 python3 python3-django python3-psycopg2
        python3-selenium
        dpkg-dev debhelper lintian logrotate gzip groff-base systemd systemd-dev
        python3-prometheus-client
        dh-python pybuild-plugin-pyproject python3-all python3-setuptools python3-build
        python3-installer python3-wheel python3-yaml
    )
    case $suite in
        trixie | sid) ;;
        *) die "unknown suite '$suite' (trixie or sid)" ;;
    esac
    printf '%s\n' "${pkgs[@]}"
}

cmd_make() {
    local suite=$1 dir=$2 want stamp
    [[ $EUID -eq 0 ]] || die "must run as root (mmdebstrap and chroot need it)"
    # One maker per root: two suites started together wait for each other here.
    mkdir -p "$(dirname -- "$dir")"
    exec 9>"$dir.lock"
    flock 9
    command -v mmdebstrap >/dev/null || die "command 'mmdebstrap' not found (run scripts/deps.sh)"
    want="$suite $(packages "$suite" | sort | tr '\n' ' ')"
    stamp=$dir/.rbd-sync-root
    if [[ -f $stamp && $(< "$stamp") == "$want" ]]; then
        log "$dir is already a $suite root with today's packages"
        return 0
    fi
    if [[ -e $dir ]]; then
        [[ -f $stamp ]] || [[ -z $(ls -A -- "$dir" 2>/dev/null) ]] ||
            die "$dir exists and is not a root made by $PROG; remove it or choose another DIR"
        rm -rf --one-file-system -- "$dir"
    fi
    local t0=$SECONDS tmp=$dir.partial
    rm -rf --one-file-system -- "$tmp"
    # sid's Release file may be past its Valid-Until date in an archive snapshot.
    mmdebstrap --variant=apt --mode=root \
        --aptopt='Acquire::Check-Valid-Until "false"' \
        --include="$(packages "$suite" | paste -sd,)" \
        "$suite" "$tmp" || die "mmdebstrap of $suite failed (is Debian's archive reachable?)"
    echo "$want" > "$tmp/.rbd-sync-root"
    mv -T -- "$tmp" "$dir"
    log "made a $suite root in $dir in $((SECONDS - t0))s ($(du -sh --one-file-system "$dir" | cut -f1))"
}

cmd_run() {
    local dir=$1
    shift
    [[ $EUID -eq 0 ]] || die "must run as root (chroot needs it)"
    [[ -f $dir/.rbd-sync-root ]] || die "$dir is not a root made by '$PROG make'"
    (($# > 0)) || die "run: no command given"
    # The inner script gets DIR, the tree and the command as arguments: nothing is
    # re-parsed by a shell. --rbind keeps the host's submounts (e.g. /dev/shm, /dev/pts).
    exec unshare --mount --propagation private -- bash -euc '
        dir=$1 tree=$2
        shift 2
        for m in /proc /sys /dev /run /tmp "$tree"; do
            mkdir -p "$dir$m"
            mount --rbind "$m" "$dir$m"
        done
        # The caller'"'"'s directory when it exists in there too (the tree, /tmp), else /.
        wd=/
        [[ -d $dir$PWD ]] && wd=$PWD
        exec chroot "$dir" /usr/bin/env -C "$wd" "$@"
    ' bash "$dir" "$root" "$@"
}

(($# >= 1)) || usage
case $1 in
    make) (($# == 3)) || usage; cmd_make "$2" "$3" ;;
    run) (($# >= 3)) || usage; shift; cmd_run "$@" ;;
    packages) (($# == 2)) || usage; packages "$2" ;;
    -h | --help) answer_help "$1" ;;
    *) usage ;;
esac
