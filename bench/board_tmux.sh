#!/usr/bin/env bash
# bench/board_tmux.sh - "window change -> Board updated" through the real
# dashboard (bench/README.md, "Window change -> Board updated").
#
# Opens `tailtriage tui` in tmux (100x30) on bench/out/tui.db (made by
# bench/tui_latency.sh) with the Mercury model and the simulator's window
# and baseline, waits for the first Board (the header's budget line stops
# saying "evaluating..."), then changes the window three times (first half
# of the incident window, second half, whole) with the `w` prompt. For each
# change it prints, from the Enter key sent by `tmux send-keys`:
#   DAG    the header says "evaluating...": the new window's analysis is on
#          screen and its diagnosis is asked for;
#   Board  "evaluating..." is gone: the diagnosis of the new window is drawn.
# The screen is read with `tmux capture-pane` every 50 ms, so each figure is
# late by up to about 60 ms. The dashboard draws a finished diagnosis on its
# tick (--refresh, 1 s here), so Board figures step by about a second.
#
# usage: bench/board_tmux.sh     (TT_BIN: binary, default build/cli/tailtriage)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${TT_BENCH_OUT:-$ROOT/bench/out}
BIN=${TT_BIN:-$ROOT/build/cli/tailtriage}
DB=$OUT/tui.db
[ -s "$DB" ] || { echo "board_tmux: no $DB (run bench/tui_latency.sh first)" >&2; exit 2; }
read -r W B WF WT < <(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
w = m["window"]["range"]
print(w, m["baseline"]["range"], *w.split(".."))' "$OUT/lines/manifest.json")
MID=$(python3 -c '
import datetime as d, sys
p = lambda s: d.datetime.fromisoformat(s.replace("Z", "+00:00"))
a, b = p(sys.argv[1]), p(sys.argv[2])
print((a + (b - a) / 2).strftime("%Y-%m-%dT%H:%M:%S.000Z"))' "$WF" "$WT")
LOG=$(mktemp); S=tt-board-$$
tmx() { tmux -u -L "$S" "$@"; }
trap 'tmx kill-server 2>/dev/null || true; rm -f "$LOG"' EXIT
tmx new-session -d -s t -x 100 -y 30 \
  "LANG=C.UTF-8 TERM=screen-256color '$BIN' tui --db '$DB' --model '$ROOT/models/mercury-home.model.json' --window '$W' --baseline '$B' --latency-log '$LOG'; sleep 600"
ms() { date +%s%3N; }
screen_has() { tmx capture-pane -p -t t | grep -q "$1"; }
wait_until() { # wait_until CMD...: up to 120 s
  local i
  for ((i = 0; i < 2400; i++)); do "$@" && return 0; sleep 0.05; done
  echo "board_tmux: timed out" >&2; tmx capture-pane -p -t t >&2; exit 1
}
no_eval() { ! screen_has evaluating; }
t0=$(ms)
wait_until grep -q '^first' "$LOG"
t1=$(ms)
wait_until no_eval
t2=$(ms)
echo "load average $(cut -d' ' -f1 /proc/loadavg); binary $BIN"
echo "start: first frame $((t1 - t0)) ms, Board $((t2 - t0)) ms"
for nw in "$WF..$MID" "$MID..$WT" "$W"; do
  tmx send-keys -t t w; sleep 0.3
  tmx send-keys -t t -l "$nw"; sleep 0.3
  a=$(ms); tmx send-keys -t t Enter
  wait_until screen_has evaluating
  b=$(ms)
  wait_until no_eval
  c=$(ms)
  echo "window $nw: DAG $((b - a)) ms, Board $((c - a)) ms"
  sleep 1
done
tmx send-keys -t t q
