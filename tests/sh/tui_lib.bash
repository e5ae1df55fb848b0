# tui_lib.bash - shared set-up of the tmux-driven TUI tests
# (tests/sh/tui_*.sh). Sourced, not run.
#
# Each test gets its own tmux server (-L, a unique socket name) and its own
# temporary directory; the EXIT trap kills that server and removes the
# directory, whatever happens. The fixture database is the hand-made one of
# tests/unit/test_tui_fixture.h, written by the test_tui binary.

set -euo pipefail

: "${TT_BIN:?TT_BIN must point at the tailtriage binary}"
: "${TT_BUILD:?TT_BUILD must point at the build directory}"
TT_SRC=${TT_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

if ! command -v tmux >/dev/null; then
  echo "SKIP: tmux is not installed (scripts/setup.sh installs it)"
  exit 0
fi

TUI_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tt-tui.XXXXXX")
TUI_SOCK="tt-tui-$$-$RANDOM"
TUI_FIXTURE_BIN="$TT_BUILD/tests/test_tui"

source "$TT_SRC/tests/sh/tmux_stop.bash"

tui_cleanup() {
  tmux_stop "$TUI_SOCK"
  if [ "${TUI_KEEP:-0}" = 1 ]; then
    echo "tui: kept $TUI_TMP" >&2
  else
    rm -rf "$TUI_TMP"
  fi
}
trap tui_cleanup EXIT

tmx() { tmux -u -L "$TUI_SOCK" "$@"; }

tui_fail() {
  echo "FAIL: $*" >&2
  echo "--- screen" >&2
  tmx capture-pane -p -t t >&2 2>/dev/null || true
  [ -s "$TUI_TMP/tui.err" ] && { echo "--- stderr" >&2; cat "$TUI_TMP/tui.err" >&2; }
  exit 1
}

# tui_fixture: writes $TUI_TMP/f.db and $TUI_TMP/model.json.
tui_fixture() {
  "$TUI_FIXTURE_BIN" --make-db "$TUI_TMP/f.db" || tui_fail "cannot build the fixture database"
  "$TUI_FIXTURE_BIN" --model "$TUI_TMP/model.json" || tui_fail "cannot write the fixture model"
}

# tui_start W H ARGS...: starts `tailtriage tui ARGS` in a detached session
# of W x H; its exit status lands in $TUI_TMP/tui.rc. TUI_ENV, when set,
# is one more NAME=VALUE for its environment.
tui_start() {
  local w=$1 h=$2
  shift 2
  local args="" a env=""
  for a in "$@"; do args+=" '$a'"; done
  [ -z "${TUI_ENV:-}" ] || env="env '$TUI_ENV' "
  tmx new-session -d -s t -x "$w" -y "$h" \
    "LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color $env'$TT_BIN' tui$args 2>'$TUI_TMP/tui.err'; echo \$? >'$TUI_TMP/tui.rc'; sleep 60"
}

# tui_pid: the process id of the dashboard (the pane's shell's child).
tui_pid() {
  pgrep -P "$(tmx display-message -p -t t '#{pane_pid}')" | head -1
}

tui_screen() { tmx capture-pane -p -t t; }

# A deadline, not a measurement: on a loaded machine (a build beside the
# tests, the sanitizer pass) the dashboard can take many times its usual
# time to draw, so every wait below allows at least TUI_PATIENCE seconds
# (default 60) however short the SECONDS a test gives; it returns as soon
# as the condition holds, and only a failing test waits that long.
TUI_PATIENCE=${TUI_PATIENCE:-60}

# tui_deadline [SECONDS]: the SECONDS value at which a wait gives up
tui_deadline() {
  local secs=${1:-0}
  ((secs >= TUI_PATIENCE)) || secs=$TUI_PATIENCE
  echo $((SECONDS + secs))
}

# tui_wait PATTERN WHAT [SECONDS]: waits until the screen matches the
# extended regular expression PATTERN.
tui_wait() {
  local pat=$1 what=$2 t0=$SECONDS end
  end=$(tui_deadline "${3:-}")
  while :; do
    tui_screen | grep -Eq -- "$pat" && return 0
    ((SECONDS < end)) || break
    sleep 0.05
  done
  tui_fail "$what (waited $((SECONDS - t0))s for /$pat/)"
}

# tui_gone PATTERN WHAT [SECONDS]: waits until PATTERN is no longer shown.
tui_gone() {
  local pat=$1 what=$2 t0=$SECONDS end
  end=$(tui_deadline "${3:-}")
  while :; do
    tui_screen | grep -Eq -- "$pat" || return 0
    ((SECONDS < end)) || break
    sleep 0.05
  done
  tui_fail "$what (still shows /$pat/ after $((SECONDS - t0))s)"
}

tui_keys() { tmx send-keys -t t "$@"; }

# tui_quit: presses q and checks that the process ended with status 0.
tui_quit() {
  local end
  end=$(tui_deadline)
  tui_keys q
  while [ ! -s "$TUI_TMP/tui.rc" ] && ((SECONDS < end)); do
    sleep 0.05
  done
  [ -s "$TUI_TMP/tui.rc" ] || tui_fail "q did not end the process"
  [ "$(cat "$TUI_TMP/tui.rc")" = 0 ] || tui_fail "exit status $(cat "$TUI_TMP/tui.rc") after q"
}
