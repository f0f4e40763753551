#!/usr/bin/env bash
# Install every Debian (bookworm) package rbd-sync needs to build, test and run
# its throwaway Ceph/PostgreSQL test services.
#
#   scripts/deps.sh          # as root (CI runs as root); use sudo otherwise
#
# Idempotent and cheap when there is nothing to do: all packages are checked with
# dpkg-query first, and apt-get (update + install) only runs when something is
# missing, so CI can call this on every run at ~no cost.
set -euo pipefail
source "$(dirname "$0")/lib/usage.sh"
if (($# > 0)); then
    answer_help_or_refuse "$1" "it takes none"
fi

# --- package list -----------------------------------------------------------
# Build tool chain and code-style tools (build-essential: dpkg-buildpackage requires it
# of every package it builds); clang and its runtime libraries
# (libclang_rt.fuzzer and the sanitizers) build the fuzz harnesses of tests/fuzz/.
build_pkgs=(build-essential cmake g++ make pkg-config clang-format clang-tidy git clang libclang-rt-14-dev)

# Libraries (headers + .so). Note: librados-dev ships only the C API; the C++
# API (rados/librados.hpp, which librbd.hpp includes) is in libradospp-dev.
lib_pkgs=(
    librados-dev libradospp-dev librbd-dev
    libpqxx-dev libpq-dev
    libspdlog-dev libfmt-dev libcxxopts-dev nlohmann-json3-dev
    libgtest-dev libgmock-dev
)

# Services and tools used by scripts/ceph-cluster.sh, scripts/pg-server.sh and
# the integration tests: ceph daemons + CLIs, PostgreSQL 15 server + psql,
# uuidgen, runuser (util-linux), pgrep (procps), ss (iproute2). python3 is the
# *system* interpreter: the ceph CLI is a python script that runs on it.
service_pkgs=(
    ceph-mon ceph-osd ceph-mgr ceph-common
    postgresql-15 postgresql-client-15
    uuid-runtime util-linux procps iproute2 python3
)

# Packaging and the tests around it: the package is built with debhelper (dpkg-dev,
# debhelper), checked with lintian, its log rotation with logrotate; the unit files are
# checked with systemd-analyze (systemd); the metrics file is parsed with the
# Prometheus client's own parser, and the web-backend example reads the run history with psycopg2 (both for the system python3). The console's
# Django app (contrib/django, scripts/demo.sh --console) runs on Debian's Django 3.2 and
# psycopg2, and draws its charts with Debian's Chart.js (libjs-chart.js, served from
# /usr/share/javascript/chart.js: no CDN). Its browser test drives Debian's Chromium
# through its chromedriver with selenium (nothing is downloaded: the test names
# /usr/bin/chromedriver) and makes images with python3-rbd.
# groff (groff-base, which man-db pulls in anyway) renders the generated man page in
# the unit test that fails on its warnings.
extra_pkgs=(
    dpkg-dev debhelper lintian logrotate gzip groff-base systemd python3-prometheus-client
    python3-psycopg2 python3-django libjs-chart.js gunicorn
    chromium chromium-driver python3-selenium python3-rados python3-rbd
)
# scripts/test.sh --all builds and tests in a Debian 13 root that mmdebstrap makes from
# Debian's archive (scripts/debian-root.sh).
extra_pkgs+=(mmdebstrap)
# The OCI image (scripts/build-image.sh) and the Kubernetes pods of its tests
# (tests/container/, reading deploy/kubernetes/ with PyYAML): podman with runc
# (scripts/podman-env.sh says why not crun). The console's Python package
# (contrib/django/pyproject.toml): built by pybuild in the Debian package, and as a
# wheel by python3-build for the Django tests, which run against it installed by
# python3-installer.
extra_pkgs+=(podman runc python3-yaml dh-python pybuild-plugin-pyproject python3-all
    python3-setuptools python3-build python3-installer python3-wheel)

all_pkgs=("${build_pkgs[@]}" "${lib_pkgs[@]}" "${service_pkgs[@]}" "${extra_pkgs[@]}")

# --- helpers ----------------------------------------------------------------
die() { echo "deps.sh: $*" >&2; exit 1; }

# Print the packages from "$@" that are not fully installed. dpkg-query's
# status is "install ok installed" only for a configured package; anything
# else (unknown, removed with config left, half-configured) counts as missing.
missing_packages() {
    local -A installed=()
    local pkg status
    # One dpkg-query for all packages (~20x faster than one per package). It
    # exits 1 when some package is unknown, which just means "missing" here.
    while read -r pkg status; do
        [[ $status == "install ok installed" ]] && installed[$pkg]=1
    done < <(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null || true)
    for pkg in "$@"; do
        [[ -n ${installed[$pkg]:-} ]] || printf '%s\n' "$pkg"
    done
}

# --- main -------------------------------------------------------------------
[[ $EUID -eq 0 ]] || die "must run as root (try: sudo $0)"

mapfile -t missing < <(missing_packages "${all_pkgs[@]}")
if [[ ${#missing[@]} -eq 0 ]]; then
    echo "deps.sh: all ${#all_pkgs[@]} packages already installed" >&2
    exit 0
fi

echo "deps.sh: installing ${#missing[@]} missing package(s): ${missing[*]}" >&2
# Never prompt (CI has no stdin); recommends would pull in a lot of unneeded
# extras (ceph-mgr alone recommends dozens of python modules).
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"

# Fail loudly if apt-get "succeeded" but something is still not installed.
mapfile -t still_missing < <(missing_packages "${all_pkgs[@]}")
[[ ${#still_missing[@]} -eq 0 ]] || die "still not installed: ${still_missing[*]}"
echo "deps.sh: done" >&2
