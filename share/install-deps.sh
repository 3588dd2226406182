#!/bin/sh
# Installs the Debian packages jackdaw builds and tests with, and nothing else.
# Called by `make run` and `make check` before building; a no-op when every package
# is already there, so it costs one dpkg query per package on a ready machine.
set -eu

# iproute2 (ip, tc) makes the network-namespace test bed, openssh-client is launch's
# default remote shell, slurm-wlm and munge run the private Slurm of the tests, chromium
# loads the HTML pages in a real browser (t_97b; about 45 s to install), libsimgrid-dev
# is `jackdaw sim --engine simgrid`'s (headers at build time, the library loaded by that
# engine alone; about 200 MB with Boost and ns-3).
packages="gcc make pkg-config libuv1-dev libsodium-dev libjansson-dev libcmocka-dev
zlib1g-dev libdeflate-dev libavro-dev libncurses-dev tmux gnuplot-nox python3 python3-avro
iproute2 openssh-client slurm-wlm munge chromium libsimgrid-dev"

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "install-deps: need root (or sudo) to install:$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# A stale package index makes apt-get install fail with 404s on a fresh machine.
$sudo apt-get update -qq >/dev/null || true
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
