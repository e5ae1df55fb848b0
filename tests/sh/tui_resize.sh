#!/usr/bin/env bash
# tui_resize.sh - terminal size changes: the screen is redrawn for the new
# size, a clear notice below the minimum, and the dashboard again when the
# terminal grows back. Also the ASCII glyphs and monochrome mode (--ascii,
# NO_COLOR) that terminals without UTF-8 line drawing or colour need, and
# the dashboard without a model (--model none: no inferred one either).
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
tui_fixture
tmx new-session -d -s t -x 100 -y 30 \
  "LANG=C.UTF-8 NO_COLOR=1 TERM=screen-256color '$TT_BIN' tui --db '$TUI_TMP/f.db' --model none --ascii 2>'$TUI_TMP/tui.err'; echo \$? >'$TUI_TMP/tui.rc'; sleep 60"

tui_wait "mercury-api GET /v2/home" "the endpoint is not shown"
tui_wait "\|= pricing" "ASCII fan-out glyph missing"
tui_wait "budgets +none \(no model; --model FILE\)" "the no-model budget note is missing"
# NO_COLOR: attributes only, no colour escape at all
if tmx capture-pane -e -p -t t | grep -Eq $'\e\\[([0-9;]*;)?(3[0-7]|4[0-7]|38;5|48;5)(;[0-9;]*)?m'; then
  tui_fail "colour escapes despite NO_COLOR"
fi
# nothing outside ASCII is drawn in ASCII mode (the CJK span name too)
if tui_screen | LC_ALL=C grep -q '[^ -~]'; then
  tui_fail "non-ASCII output with --ascii"
fi

tmx resize-window -t t -x 50 -y 12
tui_wait "terminal too small: 50x12" "no notice below the minimum size"
tui_wait "need at least 60x16" "the notice does not say the minimum"

tmx resize-window -t t -x 80 -y 24
tui_gone "terminal too small" "the notice stayed after growing"
tui_wait "\|= pricing" "the DAG did not come back at 80x24"
# the layout is for 80 columns now: the calls column is gone, lines fit
tui_screen | grep -q "calls" && tui_fail "the calls column should be dropped at 80 columns"
[ "$(tui_screen | awk '{ if (length($0) > 80) n++ } END { print n + 0 }')" = 0 ] ||
  tui_fail "a line is wider than the terminal"
tmx resize-window -t t -x 120 -y 40
tui_wait "calls" "the calls column did not come back at 120 columns"
tui_quit
echo "tui_resize: ok"
