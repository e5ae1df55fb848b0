#!/usr/bin/env bash
# drill_train_tui.sh - interactive training in the dashboard's Drill pane:
# read the brief, reveal a hint, rank three hypotheses, pick a check for
# each and a decision, submit; the score with its deductions is shown, and
# the attempt is stored with mode "tui", the person and the answers.
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
FIX="$TT_SRC/tests/fixtures/drills"
H="$TUI_TMP/h.db"

tmx new-session -d -s t -x 110 -y 32 \
  "LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color '$TT_BIN' drill train '$FIX/mini.drill.json' --db '$H' --person dana 2>'$TUI_TMP/tui.err'; echo \$? >'$TUI_TMP/tui.rc'; sleep 60"

tui_wait "Drill mini: Test drill" "the Drill pane is not shown" 15
tui_wait "\[5 Drill\]" "the Drill tab is not active"
tui_wait "First paragraph of the brief" "the brief is not shown"
tui_keys Enter
tui_wait "rank 1 of 3: pick the hypothesis you rank #1" "no ranking step"
# the DAG stays one key away while answering
tui_keys Tab
tui_wait "\[1 DAG\]" "Tab does not reach the DAG"
tui_wait "pricing" "the DAG does not show the drill's data"
tui_keys BTab
tui_wait "\[5 Drill\]" "Shift-Tab does not come back to the drill"
# reveal the first hint (last row), then rank from the top
tui_keys G Enter
tui_wait "hint 1: Hint one\." "the hint is not shown"
tui_keys g Enter
tui_wait "rank 2 of 3" "the first pick did not register"
tui_keys Enter
tui_wait "rank 3 of 3" "the second pick did not register"
# Left undoes the last pick
tui_keys Left
tui_wait "rank 2 of 3" "Left did not undo"
tui_keys Enter Enter
tui_wait "discriminating check for #1 client-pool-wait:pricing" "no check step"
tui_keys Enter
tui_wait "check for #2 class-mix-shift:enterprise" "no second check"
tui_keys Down Enter
tui_wait "check for #3 placement-concentration" "no third check"
tui_keys Down Down Enter
tui_wait "decision: what do you do now" "no decision step"
tui_keys Enter
tui_wait "review your answers" "no review"
tui_wait "#1 client-pool-wait:pricing +check: pool-by-class" "the review lacks the answers"
tui_wait "decision: hold-rollout" "the review lacks the decision"
tui_keys Enter
tui_wait "mini: 95 / 100 points" "the score is not shown" 10
tui_wait "lost 5: Hint 1 was revealed" "the hint's cost is not explained"
tui_keys q
for ((i = 0; i < 100; i++)); do [ -s "$TUI_TMP/tui.rc" ] && break; sleep 0.05; done
[ "$(cat "$TUI_TMP/tui.rc" 2>/dev/null)" = 0 ] || tui_fail "exit status after q"
tui_wait "mini: 95 / 100 points \(1 attempt stored" "no summary after the dashboard closed" 5

"$TT_BIN" drill history --db "$H" >"$TUI_TMP/hist"
grep -Eq "^1 .* dana .* mini .* 95/100 +tui \+hints" "$TUI_TMP/hist" || { cat "$TUI_TMP/hist" >&2; tui_fail "history row"; }
grep -q '"decision":"hold-rollout","hints_used":1' "$TUI_TMP/hist" || tui_fail "history answers"
echo "drill_train_tui: ok"
