#!/usr/bin/env bash
# drill_history.sh - two attempts by two people are stored with time,
# person, answers and score; `drill history` lists both (oldest first),
# --person filters, --json carries answers and the explained deductions.
set -euo pipefail
: "${TT_BIN:?TT_BIN must point at the tailtriage binary}"
TT_SRC=${TT_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
FIX="$TT_SRC/tests/fixtures/drills"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tt-drill-hist.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$TMP/out" ] && cat "$TMP/out" >&2; exit 1; }

"$TT_BIN" drill history --db "$TMP/h.db" >"$TMP/out"
grep -q "no attempts recorded" "$TMP/out" || fail "empty history"

before=$(date -u +%Y-%m-%dT%H:%M)
"$TT_BIN" drill train "$FIX/mini.drill.json" --answers "$FIX/partial.answers.json" \
  --person "new engineer" --db "$TMP/h.db" >/dev/null 2>&1 || fail "first attempt"
# the person comes from the answers file when --person is not given
"$TT_BIN" drill train "$FIX/mini.drill.json" --answers "$FIX/key.answers.json" \
  --db "$TMP/h.db" >/dev/null 2>&1 || fail "second attempt"

"$TT_BIN" drill history --db "$TMP/h.db" >"$TMP/out"
[ "$(grep -c '^[0-9]' "$TMP/out")" = 2 ] || fail "history does not list two attempts"
first=$(grep '^[0-9]' "$TMP/out" | head -1)
second=$(grep '^[0-9]' "$TMP/out" | tail -1)
case "$first" in *"new engineer"*"mini"*"57.5/100"*answers*) ;; *) fail "first row: $first" ;; esac
case "$second" in *"ana"*"mini"*"100/100"*) ;; *) fail "second row: $second" ;; esac
case "$first" in *"$before"*|*T*) ;; *) fail "no time in: $first" ;; esac
grep -q 'answers {"hypotheses":\["class-mix-shift:enterprise","client-pool-wait:pricing"' "$TMP/out" \
  || fail "the first attempt's answers are not listed"
grep -q '"decision":"hold-rollout"' "$TMP/out" || fail "the second attempt's answers are not listed"

"$TT_BIN" drill history --db "$TMP/h.db" --person ana >"$TMP/out"
[ "$(grep -c '^[0-9]' "$TMP/out")" = 1 ] || fail "--person ana"
"$TT_BIN" drill history --db "$TMP/h.db" --json >"$TMP/out"
[ "$(wc -l <"$TMP/out")" = 2 ] || fail "--json: one line per attempt"
head -1 "$TMP/out" | grep -q '"person":"new engineer","drill":"mini","drill_version":2' || fail "--json fields"
head -1 "$TMP/out" | grep -q '"score":57.5,"max_score":100,"hints_used":1' || fail "--json score"
head -1 "$TMP/out" | grep -q '"lost":10,"answer":"endpoint-queue","reason":"endpoint-queue does not separate' \
  || fail "--json deductions"
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$TMP/out" || fail "--json is not JSON"
fi
echo "drill_history: ok"
