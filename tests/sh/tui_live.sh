#!/usr/bin/env bash
# tui_live.sh - an import by another process while the dashboard is open
# shows up on screen within two ticks, without a key press; while paused it
# does not, and it does right after resuming.
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
tui_fixture
tui_start 100 30 --db "$TUI_TMP/f.db" --model "$TUI_TMP/model.json" --refresh 0.5

tui_wait "GET /v2/home +- +80 " "the first analysis is not shown"
tui_wait "data unchanged" "the status line does not say the data is unchanged"
tui_screen | grep -q "audit" && tui_fail "audit shown before it was imported"

# another process imports a second file (OTLP JSON) into the same database
"$TT_BIN" import --db "$TUI_TMP/f.db" "$TT_SRC/tests/fixtures/tui/more.otlp.json" \
  >"$TUI_TMP/import.out" 2>&1 || { cat "$TUI_TMP/import.out" >&2; tui_fail "import failed"; }
start=$(date +%s%N)
# two ticks of 0.5 s, plus slack for a loaded CI machine
tui_wait "audit +\? +2 " "the imported audit call did not appear" 5
tui_wait "GET /v2/home +- +82 " "the request count did not change"
tui_wait "data changed [0-9]{2}:[0-9]{2}:[0-9]{2}Z" "the status line does not say when the data changed"
echo "tui_live: screen changed $(( ($(date +%s%N) - start) / 1000000 )) ms after the import ended"

# paused: a further write is not shown until resumed
tui_keys p
tui_wait " PAUSED " "p did not pause"
"$TUI_FIXTURE_BIN" --more "$TUI_TMP/f.db" || tui_fail "the second writer failed"
tui_wait "data changed .* \(not shown: p resumes\)" "the status line does not say new data is waiting" 5
tui_wait "GET /v2/home +- +82 " "the screen changed while paused"
tui_keys p
tui_wait " LIVE " "p did not resume"
tui_wait "GET /v2/home +- +102 " "the write made while paused did not show after resuming" 5
tui_quit
echo "tui_live: ok"
