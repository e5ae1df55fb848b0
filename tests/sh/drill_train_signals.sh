#!/usr/bin/env bash
# drill_train_signals.sh - `drill train` stopped by Ctrl-C, kill or a
# closed terminal removes its scratch folder (tailtriage-train-* holds the
# drill's data database and its simulated telemetry) and exits with 128 +
# the signal number: with --answers while the data is being prepared, and
# interactively while the dashboard runs (the terminal closing: tmux kills
# the window, the process gets SIGHUP).
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
FIX="$TT_SRC/tests/fixtures/drills"
set -m  # background jobs keep SIGINT (a non-interactive shell would ignore it)
export TMPDIR="$TUI_TMP/tmp"
mkdir "$TMPDIR"
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; tui_cleanup' EXIT

# The command under test gets the signals' defaults, like a program started
# from a terminal, whatever whoever runs the test left ignored.
dflt=()
env --default-signal=INT true 2>/dev/null && dflt=(env --default-signal=INT,TERM,HUP)

leftovers() { find "$TMPDIR" -mindepth 1 | head -5; }
scratch() { find "$TMPDIR" -maxdepth 1 -name 'tailtriage-train-*' | head -1; }

# stopped SIG RC ERRFILE: checks the exit status, the message and that
# nothing is left in $TMPDIR.
stopped() {
  local sig=$1 rc=$2 err=$3
  [ "$rc" = $((128 + $(kill -l "$sig"))) ] || { cat "$err" >&2; tui_fail "$sig: exit status $rc"; }
  grep -q "interrupted: drill train stopped, temporary files removed" "$err" \
    || { cat "$err" >&2; tui_fail "$sig: no 'interrupted' message"; }
  [ -z "$(leftovers)" ] || tui_fail "$sig left $(leftovers)"
}

# ---- --answers: a signal while the drill's data is prepared ----------------
# (a catalog drill: its simulator runs take a few seconds)
echo '{}' >"$TUI_TMP/answers.json"
answers_until() {
  local sig=$1 i rc=0
  rm -f "$TUI_TMP/err"
  "${dflt[@]}" "$TT_BIN" drill train "$TT_SRC/drills/catalog/pricing-client-wait.drill.json" \
    --answers "$TUI_TMP/answers.json" --db "$TUI_TMP/h.db" >/dev/null 2>"$TUI_TMP/err" &
  pid=$!
  for ((i = 0; i < 2400; i++)); do  # up to 2 min on a loaded machine
    [ -n "$(scratch)" ] && grep -qs "preparing the data" "$TUI_TMP/err" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  [ -n "$(scratch)" ] || { cat "$TUI_TMP/err" >&2; tui_fail "$sig: no scratch folder while preparing"; }
  kill -"$sig" "$pid"
  wait "$pid" || rc=$?
  pid=
  stopped "$sig" "$rc" "$TUI_TMP/err"
}
answers_until INT
answers_until TERM
answers_until HUP
if [ -e "$TUI_TMP/h.db" ]; then
  n=$(sqlite3 "$TUI_TMP/h.db" 'SELECT count(*) FROM drill_attempts') || tui_fail "history unreadable"
  [ "$n" = 0 ] || tui_fail "an interrupted attempt was stored ($n)"
fi

# ---- interactive: kill while the dashboard runs -----------------------------
# (the inner sh execs tailtriage, so the pid written is the command's)
start_tui() {
  rm -f "$TUI_TMP/tui.rc" "$TUI_TMP/pid"
  tmx new-session -d -s t -x 110 -y 32 \
    "TMPDIR='$TMPDIR' LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color sh -c 'echo \$\$ >\"$TUI_TMP/pid\"; exec \"$TT_BIN\" drill train \"$FIX/mini.drill.json\" --db \"$TUI_TMP/h.db\" 2>\"$TUI_TMP/tui.err\"'; echo \$? >'$TUI_TMP/tui.rc'; sleep 60"
  tui_wait "Drill mini: Test drill" "the Drill pane is not shown" 15
  [ -n "$(scratch)" ] || tui_fail "no scratch folder while training"
}
start_tui
kill -TERM "$(cat "$TUI_TMP/pid")"
for ((i = 0; i < 200; i++)); do
  [ -s "$TUI_TMP/tui.rc" ] && break
  sleep 0.05
done
[ -s "$TUI_TMP/tui.rc" ] || tui_fail "TERM did not end drill train"
stopped TERM "$(cat "$TUI_TMP/tui.rc")" "$TUI_TMP/tui.err"
tmx kill-server
# a fresh server for the second part: a new session on the socket of a
# server that is still shutting down fails ("server exited unexpectedly")
TUI_SOCK="$TUI_SOCK-b"

# ---- interactive: the dashboard's terminal goes away ------------------------
start_tui
tmx kill-server
for ((i = 0; i < 200; i++)); do
  [ -z "$(leftovers)" ] && break
  sleep 0.05
done
[ -z "$(leftovers)" ] || tui_fail "closing the dashboard's terminal left $(leftovers)"
echo "drill_train_signals: ok"
