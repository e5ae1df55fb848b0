# live_common.bash - shared set-up of the live ingestion tests
# (tests/sh/live_*.sh) and bench/receiver_load.sh. Sourced, not run.
#
# Every peer (tailtriage serve, the OpenTelemetry JS SDK program, the
# prom-client exporter, Prometheus) is started here on 127.0.0.1 and
# stopped by the EXIT trap. npm packages come from tests/js/package-lock.json
# (npm ci), cached in tests/js/node_modules.

set -euo pipefail

LIVE_JS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# tmux_stop, for the tests that drive the dashboard through tmux
source "$LIVE_JS_DIR/../sh/tmux_stop.bash"
LIVE_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tt-live.XXXXXX")
LIVE_PIDS=()

live_cleanup() {
  local p
  for p in "${LIVE_PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${LIVE_PIDS[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  if [ "${LIVE_KEEP:-0}" = 1 ]; then
    echo "live: kept $LIVE_TMP" >&2
  else
    rm -rf "$LIVE_TMP"
  fi
}
trap live_cleanup EXIT

live_fail() {
  echo "FAIL: $*" >&2
  if [ -n "${LIVE_SERVE_LOG:-}" ] && [ -f "$LIVE_SERVE_LOG" ]; then
    echo "--- serve log (last 20 lines)" >&2
    tail -n 20 "$LIVE_SERVE_LOG" >&2
  fi
  exit 1
}

live_skip() {
  echo "SKIP: $*"
  exit 0
}

# Installs Debian packages that are missing (root only; the same list must be
# in scripts/setup.sh so CI has them before tests run).
live_apt() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || return 1
  echo "live: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        >/dev/null 2>&1
  }
}

# Makes node and the locked npm packages available (npm ci once per lock
# file content; concurrent tests wait on a lock).
live_need_node() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    live_apt nodejs npm || true
  fi
  command -v node >/dev/null && command -v npm >/dev/null ||
    live_skip "node/npm not available and cannot be installed"
  local stamp="$LIVE_JS_DIR/node_modules/.tt-lock-sha"
  local want
  want=$(sha256sum "$LIVE_JS_DIR/package-lock.json" | cut -d' ' -f1)
  (
    flock 9
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
      echo "live: npm ci in $LIVE_JS_DIR" >&2
      (cd "$LIVE_JS_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
        exit 1
      echo "$want" >"$stamp"
    fi
  ) 9>"${TMPDIR:-/tmp}/tailtriage-npm.lock" || live_fail "npm ci failed in $LIVE_JS_DIR"
}

# A free TCP port on 127.0.0.1 (bound and released; the race is harmless
# on a test machine).
live_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# live_serve DB [serve options...]: starts `tailtriage serve` on free
# ports (HTTP, and gRPC unless the options say --grpc-listen); sets
# LIVE_PORT, LIVE_GRPC_PORT (empty without gRPC), LIVE_SERVE_PID and
# LIVE_SERVE_LOG.
live_serve() {
  local db=$1
  shift
  local grpc=(--grpc-listen 127.0.0.1:0)
  case " $* " in *" --grpc-listen "*) grpc=() ;; esac
  LIVE_SERVE_LOG="$LIVE_TMP/serve.$RANDOM.log"
  # created here: the background job opens it only when it gets to run,
  # and reading it before that (set -e) would end the test
  : >"$LIVE_SERVE_LOG"
  "$TT_BIN" serve --db "$db" --listen 127.0.0.1:0 "${grpc[@]}" "$@" 2>"$LIVE_SERVE_LOG" &
  LIVE_SERVE_PID=$!
  LIVE_PIDS+=("$LIVE_SERVE_PID")
  local i
  for i in $(seq 1 100); do
    LIVE_PORT=$(sed -n 's/.*on http:\/\/127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$LIVE_SERVE_LOG" | head -n1)
    LIVE_GRPC_PORT=$(sed -n 's/.*serving OTLP\/gRPC on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$LIVE_SERVE_LOG" | head -n1)
    [ -n "$LIVE_PORT" ] && return 0
    kill -0 "$LIVE_SERVE_PID" 2>/dev/null || live_fail "serve exited: $(cat "$LIVE_SERVE_LOG")"
    sleep 0.05
  done
  live_fail "serve did not start"
}

# Stops serve with SIGINT and waits for it (its last log line has the
# counters).
live_serve_stop() {
  kill -INT "$LIVE_SERVE_PID" 2>/dev/null || true
  local rc=0
  wait "$LIVE_SERVE_PID" 2>/dev/null || rc=$?
  if [ $rc != 0 ] || grep -q 'Sanitizer' "$LIVE_SERVE_LOG"; then
    live_fail "serve exited with status $rc"
  fi
}

# live_sql DB SQL: one value.
live_sql() {
  sqlite3 -batch -noheader "$1" "$2"
}
