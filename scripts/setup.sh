#!/usr/bin/env bash
# scripts/setup.sh - install the Debian packages tailtriage needs (only the
# missing ones) and build it. Sourced by demo.sh and test.sh; safe to run
# again: when everything is present it installs nothing.
set -euo pipefail

TT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TT_ROOT

TT_PACKAGES=(
  build-essential cmake pkg-config
  libsqlite3-dev sqlite3 libcjson-dev libyajl-dev libsimdjson-dev libncurses-dev libssl-dev zlib1g-dev
  libmicrohttpd-dev libcurl4-openssl-dev
  libprotobuf-c-dev protobuf-c-compiler libgrpc-dev
  libcmocka-dev tmux python3 ncurses-term
  prometheus curl
)
# Node.js for the OpenTelemetry JS SDK tests: keep whatever node/npm the
# machine has (e.g. NodeSource's nodejs, which conflicts with Debian's npm);
# install Debian's only when missing.
if ! command -v npm >/dev/null 2>&1; then
  TT_PACKAGES+=(nodejs npm)
fi

tt_install_packages() {
  local missing=()
  local p
  for p in "${TT_PACKAGES[@]}" "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "setup: installing ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# tt_build DIR [cmake args...]: configure and build into DIR.
tt_build() {
  local dir=$1
  shift
  cmake -S "$TT_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
}
