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

# tt_build_quiet DIR [cmake args...]: tt_build, saying only how far it got
# on stderr ("building tailtriage: 45 %", one line rewritten on a terminal,
# a line per tenth otherwise); the whole output is kept in DIR/build.log
# and printed when the build fails.
tt_build_quiet() {
  local dir=$1 log
  mkdir -p "$dir"
  log=$dir/build.log
  local tty=0
  [ -t 2 ] && tty=1
  set +e
  tt_build "$@" 2>&1 | tee "$log" | awk -v tty=$tty '
    match($0, /^\[ *[0-9]+%\]/) {
      p = substr($0, RSTART + 1, RLENGTH - 3) + 0
      if (tty) { printf "\rbuilding tailtriage: %3d %%", p > "/dev/stderr"; fflush("/dev/stderr") }
      else if (int(p / 10) > last) { last = int(p / 10); printf "building tailtriage: %d %%\n", p > "/dev/stderr" }
    }
    END { if (tty) printf "\r\033[K" > "/dev/stderr" }'
  local rc=${PIPESTATUS[0]}
  set -e
  if [ "$rc" != 0 ]; then
    cat "$log" >&2
    echo "setup: the build failed (its output is above and in $log)" >&2
  fi
  return "$rc"
}
