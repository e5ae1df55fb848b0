#!/usr/bin/env bash
# drill_replay_tui.sh - `tailtriage drill replay ID --tui` writes the drill's
# telemetry into the database slice by slice while the dashboard on the same
# database follows it: the request count and the replay status change on
# screen without a key press, and the database file grows over time (read
# by an independent sqlite3 process when one is installed).
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
FIX="$TT_SRC/tests/fixtures/drills"
DB="$TUI_TMP/replay.db"

# 20 s of window data in 2 s slices at 4x: a slice every 0.5 s, about 5 s
tmx new-session -d -s t -x 110 -y 32 \
  "LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color '$TT_BIN' drill replay '$FIX/mini.drill.json' --db '$DB' --tui --speed 4 2>'$TUI_TMP/tui.err'; echo \$? >'$TUI_TMP/tui.rc'; sleep 60"

tui_wait "replay [0-9]+/10 slices" "the status line does not show the replay" 15
count() { tui_screen | sed -n 's/.* n=\([0-9,]*\).*/\1/p' | tr -d , | head -1; }
tui_wait " n=[0-9]" "no request count on screen" 10
first=$(count)
first_status=$(tui_screen | grep -Eo "replay [0-9]+/10 slices, [0-9]+ spans" || true)
sizes=()
if command -v sqlite3 >/dev/null; then
  for i in 1 2 3; do
    sizes+=("$(sqlite3 "file:$DB?mode=ro" "select count(*) from spans" 2>/dev/null || echo 0)")
    sleep 0.7
  done
fi
tui_wait "replay done: [0-9]+ spans" "the replay did not finish on screen" 20
# the window's request count on screen grows with the slices (read once
# it has moved, not after a guess at how long a redraw takes)
end=$(tui_deadline)
while last=$(count); [ -n "$first" ] && [ -n "$last" ] && [ "$last" -le "$first" ] && ((SECONDS < end)); do
  sleep 0.1
done
echo "drill_replay_tui: window requests on screen $first -> $last; status '$first_status'; spans in the file ${sizes[*]:-n/a}"
[ -n "$first" ] && [ -n "$last" ] || tui_fail "request counts not found"
[ "$last" -gt "$first" ] || tui_fail "the request count did not grow ($first -> $last)"
tui_screen | grep -Eq "pricing" || tui_fail "the DAG does not show pricing"
if [ "${#sizes[@]}" = 3 ]; then
  [ "${sizes[2]}" -gt "${sizes[0]}" ] || tui_fail "the database did not grow while replaying (${sizes[*]})"
fi
final=$(sqlite3 "file:$DB?mode=ro" "select count(*) from spans" 2>/dev/null || echo "")
tui_screen | grep -q "replay done: ${final:-[0-9]*} spans" || [ -z "$final" ] || tui_fail "status and database disagree ($final)"
tui_quit

# headless: progress lines show the slices arriving over time
start=$(date +%s%N)
"$TT_BIN" drill replay "$FIX/mini.drill.json" --db "$TUI_TMP/h.db" --speed 8 2>"$TUI_TMP/replay.err" \
  || { cat "$TUI_TMP/replay.err" >&2; tui_fail "headless replay failed"; }
ms=$(( ($(date +%s%N) - start) / 1000000 ))
grep -q "slice 5/10" "$TUI_TMP/replay.err" || tui_fail "no progress lines"
grep -q "replayed 10 slices" "$TUI_TMP/replay.err" || tui_fail "no summary line"
# 9 pauses of 2 s / 8 = 0.25 s each
[ "$ms" -ge 2000 ] || tui_fail "the replay was not paced ($ms ms)"
echo "drill_replay_tui: ok (headless replay at 8x took $ms ms)"
