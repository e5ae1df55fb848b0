#!/usr/bin/env bash
# install.sh - `cmake --install` into a fresh prefix, then use the installed
# tailtriage from an unrelated folder, as a user who never saw the source
# tree would: the man page is there, the drills, models and sheets are
# found in PREFIX/share/tailtriage, a bundled model is found by name, and
# the dashboard command that `demo` prints works when pasted as it is (in
# tmux, from another folder).
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
command -v cmake >/dev/null || { echo "SKIP: no cmake"; exit 0; }
PFX="$TUI_TMP/prefix"
cmake --install "$TT_BUILD" --prefix "$PFX" >"$TUI_TMP/install.log" || { cat "$TUI_TMP/install.log" >&2; tui_fail "cmake --install failed"; }
SHARE="$PFX/share/tailtriage"
for f in bin/tailtriage share/man/man1/tailtriage.1 share/tailtriage/models/mercury-home.model.json \
         share/tailtriage/drills/catalog/hypotheses.json \
         share/tailtriage/drills/catalog/pricing-client-wait.drill.json \
         share/tailtriage/data/sheets/pricing-matched-peak.sheet.json; do
  [ -e "$PFX/$f" ] || tui_fail "not installed: $f"
done
if command -v man >/dev/null; then
  man -l "$PFX/share/man/man1/tailtriage.1" 2>/dev/null | grep -q "EXIT STATUS" || tui_fail "the man page does not render"
fi

mkdir "$TUI_TMP/elsewhere"
cd "$TUI_TMP/elsewhere"
export PATH="$PFX/bin:/usr/bin:/bin"
unset TAILTRIAGE_DRILLS TAILTRIAGE_SHARE TAILTRIAGE_DB
tailtriage --help | grep -q "usage: tailtriage COMMAND" || tui_fail "the installed binary does not run"
[ "$(tailtriage drill list | grep -c '^[a-z]')" -ge 5 ] || tui_fail "drill list does not find the installed catalog"
tailtriage drill show pricing-client-wait >"$TUI_TMP/out" 2>&1 || { cat "$TUI_TMP/out" >&2; tui_fail "drill show of an installed drill"; }
# the drill's model and sheet are found relative to the installed drill file
tailtriage diagnose --sheet "$SHARE/data/sheets/pricing-matched-peak.sheet.json" --model mercury-home \
  >"$TUI_TMP/out" 2>&1 || { cat "$TUI_TMP/out" >&2; tui_fail "diagnose with the bundled model by name"; }
grep -Eq "1\. client-pool-wait +pricing" "$TUI_TMP/out" || tui_fail "diagnose on the installed sheet ranks nothing"

# the demo's hint, pasted from another folder
tailtriage demo --no-tui --db demo.db >"$TUI_TMP/demo.out" 2>/dev/null || tui_fail "demo failed"
hint=$(sed -n 's/^Open the dashboard: //p' "$TUI_TMP/demo.out")
case "$hint" in
  "tailtriage tui --db $TUI_TMP/elsewhere/demo.db --model $SHARE/models/mercury-home.model.json --window "*) ;;
  *) tui_fail "the demo's hint is not a command for here: $hint" ;;
esac
# after the report, the Board's answer: the leading hypotheses and the
# supported decisions, the same as the diagnose command it prints says
grep -q "^The Board's answer for the incident window:$" "$TUI_TMP/demo.out" || tui_fail "demo --no-tui does not give the Board's answer"
first=$(sed -n "/^The Board's answer/{n;s/^  1\. \([a-z-]*\) *\([^ ]*\).*/\1 \2/p}" "$TUI_TMP/demo.out")
[ -n "$first" ] || tui_fail "the demo's answer has no first hypothesis"
grep -q "^  supported decision: [a-z:-]*: " "$TUI_TMP/demo.out" || tui_fail "the demo's answer names no supported decision"
dx=$(sed -n 's/^Every hypothesis with its evidence, checks and remedies: //p' "$TUI_TMP/demo.out")
case "$dx" in "tailtriage diagnose --db $TUI_TMP/elsewhere/demo.db "*) ;; *) tui_fail "the demo's diagnose command: $dx" ;; esac
$dx >"$TUI_TMP/dx.out" 2>&1 || { cat "$TUI_TMP/dx.out" >&2; tui_fail "the demo's diagnose command fails"; }
grep -Eq "^ 1\. ${first% *} +${first#* } " "$TUI_TMP/dx.out" || tui_fail "demo says '$first' leads, its diagnose command does not"
# a budget is breached only when its figure's whole 95 % interval is past
# it: the demo's queue-age p99 comes from a histogram, interpolated inside
# its bucket, and the bucket holds the 12 ms budget, so it may be breached
# (with the interval and the source), is not counted by hold-rollout, and
# the dashboard's header says the same
grep -Eq "^  may be breached +endpoint queue age above 12 ms +[0-9.]+ ms \[[0-9.]+, [0-9.]+ ms\] \(metric, [0-9,]+ requests, histogram buckets .*: the interval holds the budget \(12\.0 ms\)" \
  "$TUI_TMP/dx.out" || tui_fail "the demo's queue age is not 'may be breached' with its interval and source: $(grep -m1 'queue age above' "$TUI_TMP/dx.out")"
grep -Eq "^  BREACHED +endpoint queue age" "$TUI_TMP/dx.out" && tui_fail "the demo's queue age is called breached"
grep -Eq "^  supported decision: hold-rollout: .*budgets? breached; [0-9]+ may be \(" "$TUI_TMP/demo.out" ||
  tui_fail "hold-rollout does not say which budgets only may be breached: $(grep -m1 hold-rollout "$TUI_TMP/demo.out")"
mkdir "$TUI_TMP/other"
tmx new-session -d -s t -x 110 -y 32 \
  "cd '$TUI_TMP/other' && PATH='$PATH' LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color $hint 2>'$TUI_TMP/tui.err'; echo \$? >'$TUI_TMP/tui.rc'; sleep 60"
tui_wait "GET /v2/home" "the demo's hint does not open the dashboard" 20
tui_wait "objective 300 ms" "the dashboard opened by the hint has no model"
tui_wait "^budgets .*\? queue_age may be[^✖]*\[[0-9.]+, [0-9.]+ ms\]" "the header does not say the queue age may be breached, with its interval" 60
tui_screen | grep -q "✖ queue_age" && tui_fail "the header calls the demo's queue age breached"
tui_quit
echo "install: ok"
