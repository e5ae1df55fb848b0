#!/usr/bin/env bash
# drill_board_tui.sh - the drill modes are complete dashboards: in
# `drill train` (interactive) and `drill replay --tui` the Board pane is
# offered (sealed in training until the answers are scored), its decisions include the ones the drill asks about (degrading
# pricing, which the model declares core, is refused), and the header's
# budgets are evaluated from the drill's data: the telemetry and the
# drill's observation sheet (its late-work figure, over budget, shows up
# as a breach; its fleet CPU figure is quoted by the Board).
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
FIX="$TT_SRC/tests/fixtures/drills"

# the fixture drill with a sheet: the same data, plus figures only a
# sheet can carry (CPU) and a late-work ratio the telemetry does not show
cat >"$TUI_TMP/board.sheet.json" <<'JSON'
{"sheet": "board-test", "version": 1, "endpoint": "GET /v2/home", "window": "incident",
 "observations": [
   {"name": "cpu.fleet_mean", "value": 61, "unit": "%"},
   {"name": "late_work.ratio", "value": 7, "unit": "%"}
 ]}
JSON
sed -e "s|\"model\": \"../../../models/|\"model\": \"$TT_SRC/models/|" \
    -e "s|\"data\": {|\"data\": {\"sheet\": \"$TUI_TMP/board.sheet.json\",|" \
    -e 's|"drill": "mini"|"drill": "board"|' \
    "$FIX/mini.drill.json" >"$TUI_TMP/board.drill.json"
grep -q '"sheet": "/' "$TUI_TMP/board.drill.json" || tui_fail "could not add the sheet"

# checks_board WHAT: the header and the Board of the dashboard on screen
checks_board() {
  local what=$1
  tui_wait "1 DAG.* 6 Board" "$what: no Board tab"
  # late work 7 % from the sheet, against its 2 % budget
  tui_wait "^budgets .*late.work.* \(7\.0 ?%\)" "$what: the sheet's late work is not a breached budget" 20
  # the telemetry's budgets are evaluated too (the TUI alone knows only p99)
  tui_wait "^budgets .*[2-9] within" "$what: budgets not evaluated from the drill's data" 20
  tui_screen | grep -q "evaluating" && tui_fail "$what: still evaluating with the budgets shown"
  tui_keys 6
  if [ "$what" = "drill train" ]; then
    # the engine's ranking is the answer: sealed until the answers are
    # scored (drill_train_tui.sh opens it after a submission)
    tui_wait "the Board opens once you have submitted" "$what: the Board is not sealed"
    return
  fi
  tui_wait "hypotheses, most likely first" "$what: the Board is empty" 20
  tui_wait "refused +degrade:pricing: pricing is core" "$what: degrade:pricing is not judged"
  tui_wait "fleet CPU 61\.0 %" "$what: the Board does not use the drill's sheet"
}

# training on a terminal
tmx new-session -d -s t -x 130 -y 40 \
  "LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color '$TT_BIN' drill train '$TUI_TMP/board.drill.json' --db '$TUI_TMP/h.db' --seed 1 2>'$TUI_TMP/tui.err'; echo \$? >'$TUI_TMP/tui.rc'; sleep 60"
tui_wait "Drill board: Test drill" "the Drill pane is not shown" 15
checks_board "drill train"
tui_keys 5
tui_wait "\[5 Drill\]" "5 does not come back to the Drill pane"
tui_quit
tmx kill-server 2>/dev/null || true
# a fresh tmux server: a new session on the socket of one still exiting
# fails now and then with "server exited unexpectedly"
TUI_SOCK="$TUI_SOCK-2"
rm -f "$TUI_TMP/tui.rc"

# replay into a database the dashboard follows
tmx new-session -d -s t -x 130 -y 40 \
  "LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color '$TT_BIN' drill replay '$TUI_TMP/board.drill.json' --db '$TUI_TMP/r.db' --tui --speed max 2>'$TUI_TMP/tui.err'; echo \$? >'$TUI_TMP/tui.rc'; sleep 60"
tui_wait "replay done: [0-9]+ spans" "the replay did not finish on screen" 20
checks_board "drill replay --tui"
tui_quit
echo "drill_board_tui: ok"
