#!/usr/bin/env bash
# The OCI image of rbd-sync, from Debian packages only: no registry, no Dockerfile, no
# base image. Needs root (mmdebstrap in root mode, the chroot of scripts/debian-root.sh)
# and podman (scripts/deps.sh installs both).
#
#   scripts/build-image.sh [--deb DEB] [--tag NAME] [--save FILE] OUT_DIR
#
#   1. the Debian package of rbd-sync, built in a sid root (scripts/debian-root.sh,
#      scripts/build-deb.sh) unless --deb names one built for sid;
#   2. a root file system from sid's archive with mmdebstrap: the Essential packages,
#      that .deb and its dependencies, no recommends, no documentation;
#   3. `podman import` of it as NAME (default rbd-sync:VERSION): entrypoint
#      /usr/bin/rbd-sync, the user rbd-sync (uid and gid 999), its home as the
#      working directory;
#   4. with --save, `podman save --format oci-archive` of it into FILE, for `podman load`,
#      `skopeo copy` or a registry.
#
# Why sid: current Rook clusters (Rook >= 1.19.9 on Ceph >= 19.2.6) give their clients
# aes256k keys, and of Debian's releases only sid's Ceph 20 client libraries know them
# (bookworm's Ceph 16 and trixie's 18 fail with "unknown key type"); docs/container.md.
#
# Leaves in OUT_DIR: rbd-sync-rootfs.tar (what was imported), deb/ (the package, unless
# --deb) and image.txt (name, id, sizes). Podman's storage and engine settings come from
# the environment (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF: scripts/podman-env.sh makes
# throwaway ones for the tests).
set -euo pipefail
source "$(dirname "$0")/lib/usage.sh"
PROG=${0##*/}
root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "$PROG: $*" >&2; exit 1; }
log() { echo "$PROG: $*" >&2; }
usage() {
    print_header >&2
    exit 64
}

deb="" tag="" save=""
while [[ ${1:-} == --* ]]; do
    case $1 in
        --deb) deb=$(realpath -e -- "${2:?--deb needs a path}") || die "no package at '$2'"; shift 2 ;;
        --tag) tag=${2:?--tag needs a name}; shift 2 ;;
        --save) save=$(realpath -m -- "${2:?--save needs a file}"); shift 2 ;;
        -h | --help) answer_help "$1" ;;
        *) die "unknown option '$1' (--deb, --tag, --save)" ;;
    esac
done
(($# == 1)) || usage
out=$(realpath -m -- "$1")
[[ $EUID -eq 0 ]] || die "must run as root (mmdebstrap and the sid root need it)"
for tool in mmdebstrap podman systemd-tmpfiles; do
    command -v "$tool" >/dev/null || die "command '$tool' not found (run scripts/deps.sh)"
done
version=$(sed -n '1s/^rbd-sync (\([^)]*\)).*/\1/p' "$root/debian/changelog")
tag=${tag:-rbd-sync:${version%-*}}
mkdir -p "$out"
t0=$SECONDS

if [[ -z $deb ]]; then
    roots=${RBDSYNC_ROOTS:-/var/cache/rbd-sync/roots}
    "$root/scripts/debian-root.sh" make sid "$roots/sid"
    log "building the package in the sid root"
    rm -rf -- "$out/deb"
    "$root/scripts/debian-root.sh" run "$roots/sid" "$root/scripts/build-deb.sh" "$out/deb" >/dev/null
    deb=$(ls "$out"/deb/rbd-sync_*.deb)
fi
t_deb=$SECONDS

# The user exists before the package is installed, with a fixed uid and gid: a Pod's
# runAsUser, runAsGroup and fsGroup must name it by number (runAsNonRoot refuses a
# user name it cannot check). 999 is in adduser's system range, so the package's
# postinst (`adduser --system`) finds its own user and leaves it as it is.
add_user='printf "%s\n" "rbd-sync:x:999:999:rbd-sync inventory sync:/var/lib/rbd-sync:/usr/sbin/nologin" >>"$1/etc/passwd"
printf "%s\n" "rbd-sync:*:20000:0:99999:7:::" >>"$1/etc/shadow"
printf "%s\n" "rbd-sync:x:999:" >>"$1/etc/group"
printf "%s\n" "rbd-sync:!::" >>"$1/etc/gshadow"'
# What the package's tmpfiles.d entry makes at boot (the lock directory root:rbd-sync
# 3770 and its lock file): no systemd runs in a container, so it is made in the image,
# from the package's own file. Then what an image does not need: apt's and dpkg's
# caches, logs.
prepare='systemd-tmpfiles --root="$1" --create rbd-sync.conf
rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/var/log/*.log "$1"/var/cache/debconf/*-old'
log "making the root file system from sid's archive"
# Check-Valid-Until: sid's Release file may be past its Valid-Until in an archive
# snapshot (as scripts/debian-root.sh knows). file-mirror-automount: apt outside the
# root hands dpkg inside it the .deb's path, which the hook copies in (and out again).
mmdebstrap --mode=root --variant=essential --format=tar \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --essential-hook="$add_user" \
    --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
    --include="$deb" \
    --customize-hook="$prepare" \
    sid "$out/rbd-sync-rootfs.tar" >"$out/mmdebstrap.log" 2>&1 || {
    tail -n 30 "$out/mmdebstrap.log" >&2
    die "mmdebstrap failed (log above; is Debian's archive reachable?)"
}
t_rootfs=$SECONDS

log "importing it as $tag"
id=$(podman import \
    --change 'ENTRYPOINT ["/usr/bin/rbd-sync"]' \
    --change 'CMD ["--help"]' \
    --change 'USER 999:999' \
    --change 'WORKDIR /var/lib/rbd-sync' \
    --change 'ENV HOME=/var/lib/rbd-sync' \
    --change "LABEL org.opencontainers.image.title=rbd-sync" \
    --change "LABEL org.opencontainers.image.version=$version" \
    --change "LABEL org.opencontainers.image.description=Keeps a PostgreSQL inventory of Ceph RBD images up to date" \
    --message "rbd-sync $version from Debian sid packages (scripts/build-image.sh)" \
    "$out/rbd-sync-rootfs.tar" "$tag")
if [[ -n $save ]]; then
    rm -f -- "$save"
    podman save --quiet --format oci-archive -o "$save" "$tag"
fi
size=$(podman image inspect --format '{{.Size}}' "$tag")
{
    echo "image $tag"
    echo "id $id"
    echo "size_bytes $size"
    echo "rootfs_tar_bytes $(stat -c %s "$out/rbd-sync-rootfs.tar")"
    echo "deb $(basename "$deb") $(stat -c %s "$deb")"
} >"$out/image.txt"
log "$tag: $((size / 1000000)) MB; package $((t_deb - t0))s, root file system $((t_rootfs - t_deb))s, import $((SECONDS - t_rootfs))s"
echo "$tag"
