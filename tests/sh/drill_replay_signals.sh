#!/usr/bin/env bash
# drill_replay_signals.sh - a drill replay stopped by Ctrl-C, kill or a
# closed terminal removes its temporary folder (tailtriage-drill-* holds
# the simulated telemetry, tens of MB for a real drill) and exits with
# 128 + the signal number, whether the signal comes while the data is being
# prepared, while slices are written, or while the dashboard runs (the
# terminal closing: tmux kills the window, the process gets SIGHUP).
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
FIX="$TT_SRC/tests/fixtures/drills"
set -m  # background jobs keep SIGINT (a non-interactive shell would ignore it)
export TMPDIR="$TUI_TMP/tmp"
mkdir "$TMPDIR"
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; tui_cleanup' EXIT

# Whoever runs the test may have left SIGINT ignored (a background job of a
# script); the command under test gets the signals' defaults, like a
# program started from a terminal.
dflt=()
env --default-signal=INT true 2>/dev/null && dflt=(env --default-signal=INT,TERM,HUP)

leftovers() { find "$TMPDIR" -mindepth 1 | head -5; }

# run_until SIG PATTERN: starts a slow replay, waits for PATTERN on its
# stderr, sends SIG, checks the exit status and that nothing is left.
run_until() {
  local sig=$1 pat=$2 i rc=0
  rm -f "$TUI_TMP/err"  # (the last run's would match before this one starts)
  "${dflt[@]}" "$TT_BIN" drill replay "$FIX/mini.drill.json" --db "$TUI_TMP/$sig.db" --speed 0.5 \
    2>"$TUI_TMP/err" &
  pid=$!
  for ((i = 0; i < 2400; i++)); do  # up to 2 min on a loaded machine
    grep -Eqs -- "$pat" "$TUI_TMP/err" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  grep -Eq -- "$pat" "$TUI_TMP/err" || { cat "$TUI_TMP/err" >&2; tui_fail "$sig: never saw /$pat/"; }
  [ -n "$(leftovers)" ] || tui_fail "$sig: no temporary folder while replaying"
  kill -"$sig" "$pid"
  wait "$pid" || rc=$?
  pid=
  [ "$rc" = $((128 + $(kill -l "$sig"))) ] || { cat "$TUI_TMP/err" >&2; tui_fail "$sig: exit status $rc"; }
  grep -q "interrupted: drill replay stopped, temporary files removed" "$TUI_TMP/err" \
    || { cat "$TUI_TMP/err" >&2; tui_fail "$sig: no 'interrupted' message"; }
  [ -z "$(leftovers)" ] || tui_fail "$sig at /$pat/ left $(leftovers)"
}

run_until INT "slice 1/"
run_until TERM "slice 1/"
run_until HUP "slice 1/"
# while preparing: as soon as the drill's data folder exists
run_until INT "preparing the data"

# the dashboard's terminal goes away
tmx new-session -d -s t -x 110 -y 32 \
  "TMPDIR='$TMPDIR' LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color '$TT_BIN' drill replay '$FIX/mini.drill.json' --db '$TUI_TMP/tui.db' --tui --speed 0.5 2>'$TUI_TMP/tui.err'; echo \$? >'$TUI_TMP/tui.rc'"
tui_wait "replay [0-9]+/[0-9]+ slices" "the dashboard does not show the replay" 15
[ -n "$(leftovers)" ] || tui_fail "no temporary folder while the dashboard replays"
tmx kill-server
for ((i = 0; i < 100; i++)); do
  [ -z "$(leftovers)" ] && break
  sleep 0.05
done
[ -z "$(leftovers)" ] || tui_fail "closing the dashboard's terminal left $(leftovers)"
echo "drill_replay_signals: ok"
