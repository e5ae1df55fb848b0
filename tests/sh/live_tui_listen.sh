#!/usr/bin/env bash
# live_tui_listen.sh - `tailtriage tui --listen`: the receiver runs inside
# the dashboard process (own thread and connection). Driven through tmux:
# the OpenTelemetry JS SDK program exports to it, the status line shows
# the receiver's counters, the DAG fills in without a restart, and a model
# is inferred from the data once it arrives.
source "${TT_SRC:?}/tests/js/live_common.bash"
live_need_node
command -v tmux >/dev/null || live_apt tmux || true
command -v tmux >/dev/null || live_skip "tmux not available and cannot be installed"

SOCK="tt-live-$$"
tmx() { tmux -L "$SOCK" "$@"; }
trap 'tmux_stop "$SOCK"; live_cleanup' EXIT

DB="$LIVE_TMP/tui.db"
PORT=$(live_free_port)
tmx new-session -d -s t -x 150 -y 30 \
  "TERM=xterm-256color '$TT_BIN' tui --db '$DB' --listen 127.0.0.1:$PORT --refresh 0.2 --ascii 2>'$LIVE_TMP/tui.err'; echo \$? >'$LIVE_TMP/tui.rc'; sleep 30"

screen() { tmx capture-pane -p -t t; }
# wait_for ERE WHAT: until the screen matches; a deadline of 60 s, not a
# measurement (a loaded machine draws late; only a failing test waits it out)
wait_for() {
  local end=$((SECONDS + 60))
  while ((SECONDS < end)); do
    screen | grep -Eq -- "$1" && return 0
    sleep 0.1
  done
  screen >&2
  cat "$LIVE_TMP/tui.err" >&2 || true
  live_fail "$2"
}

wait_for "rx :$PORT 0 req, 0 stored, 0 rejected" "status line without receiver counters"
node "$LIVE_JS_DIR/otel_app.js" "http://127.0.0.1:$PORT" "$LIVE_TMP/ids" 30 >"$LIVE_TMP/app.json" ||
  live_fail "otel_app.js failed"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["spans_exported"] == 240 and s["spans_failed"] == 0, s' \
  "$LIVE_TMP/app.json" || live_fail "the SDK did not export every span to the TUI's receiver"
wait_for "rx :$PORT [0-9]* req, 2[4-5][0-9] stored, 0 rejected" "receiver counters did not reach 240 stored items (spans + metric points)"
wait_for "pricing" "the DAG did not show the pricing call"
wait_for "inventory" "the DAG did not show the inventory call"
# started on a new database, without --model: once the data arrived the
# dashboard drafts a model from it, as it does at start on a database
# with data (the title says so and the DAG's calls get their tags)
wait_for "model: inferred" "no model was inferred from the data that arrived"
# (the title can say so a redraw before the rows carry their tags)
wait_for "-> pricing|pricing +(M|opt) " "the pricing call has no tag from the inferred model"
screen | grep -E "GET /checkout|pricing|inventory|rx :" | sed 's/  */ /g'
[ "$(live_sql "$DB" 'select count(*) from spans')" = 240 ] || live_fail "spans missing from the database"
tmx send-keys -t t q
end=$((SECONDS + 60))
while [ ! -s "$LIVE_TMP/tui.rc" ] && ((SECONDS < end)); do
  sleep 0.1
done
[ "$(cat "$LIVE_TMP/tui.rc" 2>/dev/null)" = 0 ] || live_fail "tui did not quit cleanly"
# The receiver thread stopped with the TUI: the port is free again.
python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1])))" "$PORT" ||
  live_fail "port still bound after quitting"
echo "live_tui_listen: ok"
