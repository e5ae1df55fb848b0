#!/usr/bin/env bash
# demo_tui.sh - `tailtriage demo` on a terminal: it generates and imports
# the Mercury sample, opens the dashboard on the incident, and once the
# dashboard is closed leaves the Board's answer on the terminal (the
# leading hypotheses and the supported decisions), so nothing seen in the
# dashboard is lost with it.
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
cd "$TUI_TMP"
tmx new-session -d -s t -x 160 -y 50 \
  "LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color '$TT_BIN' demo --db '$TUI_TMP/demo.db' 2>'$TUI_TMP/tui.err'; echo \$? >'$TUI_TMP/tui.rc'; sleep 60"
tui_wait "GET /v2/home" "the demo does not open the dashboard" 120
tui_wait "objective 300 ms" "the demo's dashboard has no model" 30
tui_keys q
for ((i = 0; i < 600; i++)); do [ -s "$TUI_TMP/tui.rc" ] && break; sleep 0.1; done
[ "$(cat "$TUI_TMP/tui.rc" 2>/dev/null)" = 0 ] || tui_fail "demo's exit status after q"
tui_wait "^The Board's answer for the incident window:" "nothing is printed after the dashboard closes" 5
tui_wait "^  1\. [a-z-]+ " "the answer after the dashboard has no first hypothesis"
tui_wait "^  (supported decision: [a-z:-]+: |no decision is supported yet)" "the answer after the dashboard has no decision line"
tui_wait "^Every hypothesis with its evidence, checks and remedies: .* diagnose --db $TUI_TMP/demo.db" \
  "the answer does not say how to see all of it"
echo "demo_tui: ok"
