#!/usr/bin/env bash
# drill_train_tui.sh - interactive training in the dashboard's Drill pane:
# read the brief, reveal a hint, rank three hypotheses, pick a check for
# each and a decision, submit (the choices in the order of --seed, the
# same as `drill show --seed` prints); the score with its deductions is shown, and
# the attempt is stored with mode "tui", the person and the answers.
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
FIX="$TT_SRC/tests/fixtures/drills"
H="$TUI_TMP/h.db"

SEED=5
# the pane shows the choices in the order `drill show --seed` prints
"$TT_BIN" drill show "$FIX/mini.drill.json" --seed $SEED >"$TUI_TMP/show"
shown() { # SECTION -> the ids in the order shown
  sed -n "/^$1\$/,/^[a-zA-Z]/p" "$TUI_TMP/show" | sed -n 's/^ *[0-9]*\. \([^ ]*\).*/\1/p'
}
# choose SECTION ID [PICKED...]: moves the selection to ID's row (picked
# hypotheses leave the list) and presses Enter
choose() {
  local section=$1 id=$2 n=0 x
  shift 2
  while read -r x; do
    [ "$x" = "$id" ] && break
    local skip=0 p
    for p in "$@"; do [ "$p" = "$x" ] && skip=1; done
    [ $skip = 1 ] || n=$((n + 1))
  done < <(shown "$section")
  tui_keys g
  for ((; n > 0; n--)); do tui_keys Down; done
  tui_wait "^▶ +$id( |\$)" "the selection is not on $id"
  tui_keys Enter
}

tmx new-session -d -s t -x 110 -y 32 \
  "LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color '$TT_BIN' drill train '$FIX/mini.drill.json' --db '$H' --person dana --seed $SEED 2>'$TUI_TMP/tui.err'; echo \$? >'$TUI_TMP/tui.rc'; sleep 60"

tui_wait "Drill mini: Test drill" "the Drill pane is not shown" 15
tui_wait "\[5 Drill\]" "the Drill tab is not active"
tui_wait "First paragraph of the brief" "the brief is not shown"
tui_keys Enter
tui_wait "rank 1 of 3: pick the hypothesis you rank #1" "no ranking step"
# the DAG stays a key away while answering; the Board, which shows the
# engine's own ranking (the answer), is sealed until the answers are in
tui_keys Tab
tui_wait "\[6 Board\]" "Tab does not reach the Board"
tui_wait "the Board opens once you have submitted" "the Board is not sealed during training"
tui_keys Enter Right
sleep 0.5
tui_screen | grep -q "most likely first\|client-pool-wait\|hold-rollout" &&
  tui_fail "the sealed Board shows the engine's ranking or decisions"
tui_keys Tab
tui_wait "\[7 Endpoints\]" "Tab does not reach the Endpoints"
tui_keys Tab
tui_wait "\[1 DAG\]" "Tab does not reach the DAG"
tui_wait "pricing" "the DAG does not show the drill's data"
tui_keys BTab BTab BTab
tui_wait "\[5 Drill\]" "Shift-Tab does not come back to the drill"
# the list is in the attempt's shuffled order, not the file's
first=$(shown hypotheses | head -1)
tui_wait "^▶ +$first( |\$)" "the first row is not the first choice of drill show --seed $SEED"
# reveal the first hint (last row), then rank
tui_keys G Enter
tui_wait "hint 1: Hint one\." "the hint is not shown"
choose hypotheses client-pool-wait:pricing
tui_wait "rank 2 of 3" "the first pick did not register"
choose hypotheses cpu-saturation client-pool-wait:pricing
tui_wait "rank 3 of 3" "the second pick did not register"
# Left undoes the last pick
tui_keys Left
tui_wait "rank 2 of 3" "Left did not undo"
choose hypotheses class-mix-shift:enterprise client-pool-wait:pricing
tui_wait "rank 3 of 3" "the second pick did not register"
choose hypotheses placement-concentration client-pool-wait:pricing class-mix-shift:enterprise
tui_wait "discriminating check for #1 client-pool-wait:pricing" "no check step"
choose checks pool-by-class
tui_wait "check for #2 class-mix-shift:enterprise" "no second check"
choose checks fanout-by-class
tui_wait "check for #3 placement-concentration" "no third check"
choose checks host-concentration
tui_wait "decision: what do you do now" "no decision step"
choose decisions hold-rollout
tui_wait "review your answers" "no review"
tui_wait "#1 client-pool-wait:pricing +check: pool-by-class" "the review lacks the answers"
tui_wait "decision: hold-rollout" "the review lacks the decision"
tui_keys Enter
tui_wait "mini: 95 / 100 points" "the score is not shown" 10
tui_wait "lost 5: Hint 1 was revealed" "the hint's cost is not explained"
# scored: now the engine's answer may be compared with the trainee's
tui_keys 6
tui_wait "hypotheses, most likely first" "the Board stays sealed after the answers were scored" 30
tui_keys 5
tui_keys q
for ((i = 0; i < 100; i++)); do [ -s "$TUI_TMP/tui.rc" ] && break; sleep 0.05; done
[ "$(cat "$TUI_TMP/tui.rc" 2>/dev/null)" = 0 ] || tui_fail "exit status after q"
tui_wait "mini: 95 / 100 points \(1 attempt stored" "no summary after the dashboard closed" 5

"$TT_BIN" drill history --db "$H" >"$TUI_TMP/hist"
grep -Eq "^1 .* dana .* mini .* 95/100 +tui \+hints" "$TUI_TMP/hist" || { cat "$TUI_TMP/hist" >&2; tui_fail "history row"; }
grep -q '"decision":"hold-rollout","hints_used":1' "$TUI_TMP/hist" || tui_fail "history answers"
grep -q "choices shown in the order of seed $SEED" "$TUI_TMP/hist" || tui_fail "history seed"
"$TT_BIN" drill history --db "$H" --shown >"$TUI_TMP/hist"
want="hypotheses $(shown hypotheses | awk '{printf "%s%d.%s", (NR > 1 ? " " : ""), NR, $0}')"
grep -qF -- "$want" "$TUI_TMP/hist" || { cat "$TUI_TMP/hist" >&2; tui_fail "history --shown: want '$want'"; }
echo "drill_train_tui: ok"
