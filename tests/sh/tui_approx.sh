#!/usr/bin/env bash
# tui_approx.sh - the dashboard's first frame of a question comes from the
# import-time aggregates, marked, and the exact analysis replaces it
# (docs/tui.md, "Approximate figures"), in a real terminal (tmux, 110x32)
# on simulator data imported by `tailtriage import` (which builds the
# aggregates). As a user would notice it:
#  - at start, the p99 shows as "~NNN" with "~ approximate" in the header
#    and the status line, then as the exact figure with no mark left, and
#    the two agree within the stated 1 %;
#  - a class change and a window change go through the same two steps.
# The exact analysis of ~350,000 spans takes long enough (hundreds of
# milliseconds at least) for the marked frame to be seen.
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"

# two-minute phases: the simulator runs every request of a phase, traced or
# not, and the 10,000 traces are as many at two minutes as at ten (17 CPU s
# sanitized at ten, 5 at two)
"$TT_BIN" sim mercury --out "$TUI_TMP/sim" --traces 10000 --set window-s=120 --set warmup-s=20 -q ||
  tui_fail "sim"
"$TT_BIN" import -q --db "$TUI_TMP/s.db" "$TUI_TMP/sim/traces.jsonl" || tui_fail "import"
[ "$(sqlite3 "$TUI_TMP/s.db" "SELECT covered = (SELECT max(id) FROM spans) FROM agg_meta")" = 1 ] ||
  tui_fail "the import did not build the aggregates"
WIN=2026-07-14T18:00:00.000Z..2026-07-14T18:02:00.000Z
BASE=2026-07-14T17:00:00.000Z..2026-07-14T17:02:00.000Z

# p99 NUMBER of the objective row of the screen on stdin (the "~" kept)
p99_of() { sed -n 's/^p99 \(~\{0,1\}[0-9.]*\) ms.*/\1/p' | head -1; }

# wait_approx_then_exact WHAT: sees the marked frame, remembers its p99,
# waits for the exact one, checks the mark is gone and 1 % agreement.
# Everything about the marked frame is read from one capture of it: the
# exact one may replace it at any moment. A capture can also land while
# the terminal is being redrawn (the top of the marked frame already
# there, the status line not yet), so the marked frame is the first
# capture in which both the p99 carries its "~" and the status line says
# the figures are approximate.
wait_approx_then_exact() {
  local what=$1 i scr="" p="" approx="" exact=""
  for ((i = 0; i < 400; i++)); do
    scr=$(tui_screen)
    p=$(p99_of <<<"$scr")
    if [[ $p == "~"* ]] &&
      grep -q " | ~ approximate (aggregates, within 1 %): exact computing" <<<"$scr"; then
      approx=$p
      break
    fi
    sleep 0.01
  done
  [ -n "$approx" ] ||
    tui_fail "$what: no frame with a marked p99 and a status line saying the figures are approximate"
  tui_gone "~ approximate" "$what: the exact analysis did not replace the approximate one" 30
  tui_screen | grep -q "~" && tui_fail "$what: a '~' mark is left after the exact analysis"
  exact=$(tui_screen | p99_of)
  python3 - "${approx#\~}" "$exact" "$what" <<'EOF' || tui_fail "$what: approximate p99 $approx vs exact $exact"
import sys
a, e = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if abs(a - e) <= 0.01 * e + 0.05 else 1)
EOF
  echo "$what: approximate p99 $approx ms, exact $exact ms"
}

# The approximate answer of each new question stays on screen 3 s before
# the exact analysis starts (a test seam, analysis/live.c): on a loaded
# machine the exact answer replaced it between two looks at the screen,
# and the test failed for the machine's speed, not the dashboard's.
TUI_ENV=TAILTRIAGE_TEST_HOLD_APPROX_MS=3000
tui_start 110 32 --db "$TUI_TMP/s.db" --model mercury-home --window "$WIN" --baseline "$BASE"
wait_approx_then_exact "start"
tui_wait "computed in" "the status line does not say the exact analysis was computed"

# class change: premium
tui_keys c
tui_wait "class [a-z]+" "c did not change the class"
wait_approx_then_exact "class change"

# window change: the first minute of the incident
tui_keys w
tui_wait "window" "w did not open the window prompt"
tmx send-keys -t t -l "2026-07-14T18:00:00Z..2026-07-14T18:01:00Z"
tui_keys Enter
wait_approx_then_exact "window change"
tui_wait "window +2026-07-14 18:00:00..18:01:00Z" "the new window is not shown"
tui_quit
echo "tui_approx: ok"
