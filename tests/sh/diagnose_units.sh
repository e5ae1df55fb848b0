#!/usr/bin/env bash
# diagnose_units.sh - values are written by their unit, one rule for every
# command (analysis/budgets.c evidence_format): an index such as the
# placement concentration (1 = the tail follows traffic) reads "2.08", not
# "208.0 %"; shares read as percentages; the JSON says which unit. A check
# table that lists only some rows says in which order and how many it left
# out.
set -euo pipefail
: "${TT_BIN:?TT_BIN must point at the tailtriage binary}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tt-units.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# a wider, quieter fleet than the default: the test reads how many hosts are
# listed and how many are left out; two-minute phases (what is checked is
# how values are written, and every host takes requests in two minutes;
# the default ten-minute phases cost the simulator five times the CPU)
"$TT_BIN" sim mercury --out "$TMP/sim" --traces 3000 --set hosts=24 --set rate=100 \
  --set window-s=120 --set warmup-s=20 -q
"$TT_BIN" import -q --db "$TMP/u.db" "$TMP/sim/traces.jsonl" "$TMP/sim/metrics.jsonl"
args=(--db "$TMP/u.db" --model mercury-home --window 2026-07-14T18:00:00Z..2026-07-14T18:02:00Z --baseline 2026-07-14T17:00:00Z..2026-07-14T17:02:00Z)
"$TT_BIN" diagnose "${args[@]}" >"$TMP/text"
"$TT_BIN" diagnose "${args[@]}" --format json >"$TMP/json"
for name in placement.concentration placement.top_lift; do
  line=$(grep -E "^  $name +" "$TMP/text" || true)
  [ -n "$line" ] || fail "$name is not listed"
  echo "$line" | grep -Eq "^  $name +[0-9]+\.[0-9]{2}  spans:" || fail "$name is not written as an index: $line"
  python3 - "$TMP/json" "$name" <<'PY' || fail "$name: the JSON unit is not 'index'"
import json, sys
d = json.load(open(sys.argv[1]))
v = [e for e in d["evidence"] if e["name"] == sys.argv[2]][0]
sys.exit(0 if v["unit"] == "index" else 1)
PY
done
grep -Eq "^  placement.pool_skew +[0-9]+\.[0-9] %" "$TMP/text" || fail "a ratio is not written as a percentage"
"$TT_BIN" check host-concentration "${args[@]}" >"$TMP/check"
rows=$(grep -c '^api-' "$TMP/check")
[ "$rows" = 15 ] || fail "host-concentration lists $rows hosts, expected 15 of 24"
grep -qx "9 more hosts, lower lift, not listed" "$TMP/check" || fail "the hidden hosts are not counted"
grep -qx "rows: highest lift first, then most requests" "$TMP/check" || fail "the order of the rows is not stated"
# the lift column is in the stated order
awk '/^api-/ {print $(NF-1)}' "$TMP/check" | sort -c -r -g || fail "rows are not by lift"
echo "diagnose_units: ok"
