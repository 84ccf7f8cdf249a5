#!/usr/bin/env bash
# Install the system packages the tests need, when they are missing (called by `make test`).
#
#   scripts/system_deps.sh BINARY:PACKAGE [BINARY:PACKAGE ...]
#   e.g. scripts/system_deps.sh /usr/bin/chromium:chromium '/usr/lib/postgresql/*/bin/initdb:postgresql'
#
# For each pair: BINARY present and executable -> nothing to do. BINARY may be a glob, for programs whose folder
# names a version: present when any match is executable. Otherwise PACKAGE is installed with Debian's
# apt-get (DEBIAN_FRONTEND=noninteractive; through sudo when not root). Without apt-get it names the missing
# packages and fails: install them with your system's package manager, then rerun.
set -euo pipefail

if [ "$#" -eq 0 ]; then
    echo "usage: $0 BINARY:PACKAGE [BINARY:PACKAGE ...]" >&2
    exit 2
fi

present() {  # BINARY, or any match of it as a glob, is executable (IFS empty: no word splitting, only globbing)
    local IFS='' match
    for match in $1; do
        [ -x "$match" ] && return 0
    done
    return 1
}

missing_bins=()
missing_pkgs=()
for pair in "$@"; do
    bin="${pair%%:*}"
    pkg="${pair#*:}"
    if [ -z "$bin" ] || [ -z "$pkg" ] || [ "$bin" = "$pair" ]; then
        echo "$0: expected BINARY:PACKAGE, got '$pair'" >&2
        exit 2
    fi
    if ! present "$bin"; then
        missing_bins+=("$bin")
        missing_pkgs+=("$pkg")
    fi
done
[ "${#missing_pkgs[@]}" -eq 0 ] && exit 0

explain() {  # the packages still to install, one line each
    for i in "${!missing_pkgs[@]}"; do
        echo "  install Debian/Ubuntu package '${missing_pkgs[$i]}' (${missing_bins[$i]}) $1" >&2
    done
}

if ! command -v apt-get >/dev/null 2>&1; then
    echo "The tests need system packages and apt-get is not available here:" >&2
    explain "or its equivalent with your package manager, then rerun"
    exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "The tests need system packages; not root and no sudo to install them:" >&2
        explain "as root (apt-get install -y ${missing_pkgs[*]}), then rerun"
        exit 1
    fi
    sudo=(sudo)
fi

echo "Installing system packages for the tests: ${missing_pkgs[*]} (apt-get${sudo:+, with sudo})" >&2
# `env` inside sudo: sudo resets the environment, so an exported DEBIAN_FRONTEND would not reach apt-get.
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing_pkgs[@]}"

status=0
for i in "${!missing_bins[@]}"; do
    if ! present "${missing_bins[$i]}"; then
        echo "package '${missing_pkgs[$i]}' is installed but ${missing_bins[$i]} is still missing" >&2
        status=1
    fi
done
exit "$status"
