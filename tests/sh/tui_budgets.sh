#!/usr/bin/env bash
# tui_budgets.sh - the header's budgets and the hypothesis board come from a
# diagnosis computed in the background; when it finishes the screen shows
# them on its own, without a key press and without waiting for the next
# tick (the tick here is a minute: only the finished diagnosis can wake
# the screen in time). A refused diagnosis (a baseline without requests)
# wakes it too, and the Board says why. Data: a small simulated incident with its pool
# metrics, imported like real telemetry.
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
"$TT_BIN" sim mercury --out "$TUI_TMP/sim" --traces 300 -q || tui_fail "sim failed"
"$TT_BIN" import -q --db "$TUI_TMP/s.db" "$TUI_TMP/sim/traces.jsonl" "$TUI_TMP/sim/metrics.jsonl" \
  || tui_fail "import failed"
RANGES=(--window 2026-07-14T18:00:00Z..2026-07-14T18:10:00Z
  --baseline 2026-07-14T17:00:00Z..2026-07-14T17:10:00Z)
tui_start 220 32 --db "$TUI_TMP/s.db" --model "$TT_SRC/models/mercury-home.model.json" \
  "${RANGES[@]}" --refresh 60
tui_wait "GET /v2/home" "the dashboard did not open"
# budgets evaluated on the imported pool metrics, then the board, no keys
# (the dashboard itself knows only the p99 budget: more than one evaluated
# budget means the background diagnosis arrived and was drawn)
tui_wait "budgets .*([2-9]|[1-9][0-9]) within" "the budgets never appeared without a key press" 30
# the header judges every budget as `diagnose` does, on the figure's 95 %
# interval: breached (✖ and its value) only when the whole interval is past
# the threshold, "may be" (? with the interval) when it holds it, counted
# as within when none of it does. Here the executor's queue-age histogram
# puts the p99 inside its 10-25 ms bucket and 300 traces leave the p99
# without an upper bound: neither is shown over its budget.
"$TT_BIN" diagnose --db "$TUI_TMP/s.db" --model "$TT_SRC/models/mercury-home.model.json" \
  "${RANGES[@]}" --format json >"$TUI_TMP/dx.json" || tui_fail "diagnose failed"
row=$(tui_screen | grep '^budgets ' || true)
python3 - "$TUI_TMP/dx.json" "$row" <<'PY' || tui_fail "the header's budgets disagree with diagnose: $row"
import json, re, sys
d = json.load(open(sys.argv[1]))
row = sys.argv[2]
states = {b["id"]: b for b in d["budgets"]}
assert any(b["state"] == "maybe" for b in states.values()), "no budget may be breached here"
assert states["queue_age"]["state"] == "maybe", states["queue_age"]
within = 0
for b in d["budgets"]:
    names = "(%s|%s)" % (re.escape(b["id"]), re.escape(b["label"]))
    breached = re.search("✖ %s \\(" % names, row)
    maybe = re.search("\\? %s may be[^?✖✔]*\\[[0-9.]+[^]]*\\]" % names, row)
    if b["state"] == "breached":
        assert breached and not maybe, (b["id"], "breached in diagnose")
    elif b["state"] == "maybe":
        assert maybe and not breached, (b["id"], "may be breached in diagnose")
    else:
        assert not breached and not maybe, (b["id"], b["state"])
    within += b["state"] == "ok"
assert re.search("✔ %d within" % within, row), ("within", within)
PY
# the node pane shows the pricing pool from the imported metrics
# (move down until the pointer's row is pricing: the order of the rows
# follows the data, not a fixed list)
# (each j waits until the pointer has moved: the screen is read once it
# has settled, not after a guess at how long drawing takes)
selected() { tui_screen | grep -E '^(>|▶)' | head -1; }
tui_keys 1
tui_wait "\[1 DAG\]" "1 did not open the DAG"
for i in $(seq 1 16); do
  row=$(selected)
  case $row in *pricing*) break ;; esac
  tui_keys j
  end=$(tui_deadline)
  while [ "$(selected)" = "$row" ] && ((SECONDS < end)); do sleep 0.05; done
done
tui_keys Enter
tui_wait "call mercury-api -> pricing" "the pricing node did not open"
tui_wait "pool pricing \(client, [^)]*slots[^)]*\): occupancy [0-9.]+%" "the pool line shows no occupancy"
tui_keys 6
tui_wait "hypotheses, most likely first" "the board did not open"
tui_wait " 1 [a-z-]+ " "the board shows no ranked hypothesis"
# the baseline the header suggests, 'before' (17:50-18:00), holds no
# request: the engine refuses it, and the Board says so on its own (no
# key, no tick) with the range and the counts, as `diagnose` does
tui_keys b
tui_keys before Enter
tui_wait "^baseline .*17:50:00\.\.18:00:00Z" "b before did not set the baseline"
tui_wait "no diagnosis of this window and baseline" "the Board did not say why it has no diagnosis" 30
tui_wait "holds no request of the endpoint" "the Board does not give the engine's reason"
tui_screen | grep -q "diagnosing the window" && tui_fail "the Board still says it is diagnosing"
# and back to a baseline with requests: the ranking returns
tui_keys b
tui_keys 2026-07-14T17:00:00Z..2026-07-14T17:10:00Z Enter
tui_wait " 1 [a-z-]+ " "the ranking did not come back with a usable baseline" 30
tui_quit
echo "tui_budgets: ok"
