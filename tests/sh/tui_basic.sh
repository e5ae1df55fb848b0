#!/usr/bin/env bash
# tui_basic.sh - the dashboard in a real terminal (tmux, 100x30): what an
# engineer looks for first, the help screen from `?`, node detail and the
# waterfall through Enter, Esc back, and q quitting the process.
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
tui_fixture
tui_start 100 30 --db "$TUI_TMP/f.db" --model "$TUI_TMP/model.json" \
  --window 1784052600000..1784053200000 --baseline 1784052000000..1784052600000

# the header: endpoint, objective breached, baseline, budget
tui_wait "GET /v2/home" "the endpoint is not shown"
tui_wait "p99 357.8 ms .* BREACHED objective 300 ms" "the objective status is not shown"
tui_wait "budgets .* ingress p99 above 300 ms \(357.8 ms\)" "the breached budget is not shown"
# the DAG: every node with its tags and split numbers; recommendation unknown
tui_wait "pricing +M core +48 +336.0 .*q +8.00 w +267.0 s +69.0 +\+262.0" "pricing's split is not shown"
tui_wait "recommendation +opt .* w +\? s +\?" "recommendation's unknown split is not shown as unknown"
for n in validate profile entitlement inventory assemble; do
  tui_wait "$n" "node $n is missing"
done
tui_wait "├═ pricing" "the fan-out edge glyph is missing"
tui_wait " LIVE +tick 1.0s" "the status line does not say LIVE"
# colour terminal: the breach is drawn on red (and also says BREACHED)
tmx capture-pane -e -p -t t | grep -q $'\e\\[41m' || tui_fail "no red background for the breach in colour mode"
# no escape sequence from the hostile span name reached the terminal
tui_screen | grep -q "pwned" && tui_fail "an OSC title string was drawn as text"
[ "$(tmx display-message -p -t t '#{pane_title}')" != pwned ] || tui_fail "the OSC sequence set the title"

# help, generated from the key table
tui_keys '?'
tui_wait "keys \(\? or Esc closes" "the help screen did not open"
tui_wait "cycle the workload class" "the help does not list the class key"
tui_keys Escape
tui_gone "keys \(\? or Esc closes" "Esc did not close the help"

# pricing -> node detail -> the slowest trace's waterfall
tui_keys j j j j j
tui_wait "▶.*pricing" "j did not move the selection to pricing"
tui_keys Enter
tui_wait "call mercury-api -> pricing \(pricing.Quote\)" "Enter did not open the node detail"
tui_wait "enterprise +16 +316.0 +329.9 +336.0" "the per-class percentiles are missing"
tui_wait "slowest traces" "the exemplar list is missing"
tui_keys Enter
tui_wait "trace 77303139000000000000000000000000 +357.8 ms +class enterprise" "Enter did not open the waterfall"
tui_wait "selected GET /v2/home server in mercury-api" "the selected span's detail is missing"
tui_keys Escape
tui_wait "\[2 Node pricing\]" "Esc did not go back to the node"
tui_keys Tab
tui_wait "critical path of 8 slow requests" "Tab did not reach tail ownership"
tui_wait "pricing +93.9%" "pricing does not own the tail"

# pause shows PAUSED; q quits with status 0
tui_keys p
tui_wait " PAUSED " "p did not pause"
tui_quit
echo "tui_basic: ok"
