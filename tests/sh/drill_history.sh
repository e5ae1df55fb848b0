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
# answers prepared from `drill show --seed N` and scored with --seed N: the
# attempt keeps the seed and the order that show printed
"$TT_BIN" drill show "$FIX/mini.drill.json" --seed 11 >"$TMP/show1"
"$TT_BIN" drill show "$FIX/mini.drill.json" --seed 11 >"$TMP/show2"
cmp -s "$TMP/show1" "$TMP/show2" || fail "the same seed shows a different order"
"$TT_BIN" drill show "$FIX/mini.drill.json" --seed 12 >"$TMP/show2"
cmp -s "$TMP/show1" "$TMP/show2" && fail "seeds 11 and 12 show the same order"
grep -q "seed 11" "$TMP/show1" || fail "drill show does not print its seed"
"$TT_BIN" drill train "$FIX/mini.drill.json" --answers "$FIX/key.answers.json" --seed 11 \
  --db "$TMP/h.db" >/dev/null 2>&1 || fail "third attempt"
"$TT_BIN" drill history --db "$TMP/h.db" --json >"$TMP/out"
sed -n 1p "$TMP/out" | grep -q '"seed":null,"shown":null}$' || fail "no seed given: the order is unknown"
hyps=$(sed -n '/^hypotheses$/,/^checks$/p' "$TMP/show1" | sed -n 's/^ *[0-9]*\. \([^ ]*\).*/"\1"/p' | paste -sd, -)
sed -n 3p "$TMP/out" | grep -qF "\"seed\":11,\"shown\":{\"seed\":11,\"hypotheses\":[$hyps]" \
  || fail "the stored order is not the one drill show printed ($hyps)"
"$TT_BIN" drill history --db "$TMP/h.db" --drill mini >"$TMP/out"
grep -q "choices shown in the order of seed 11" "$TMP/out" || fail "history does not name the seed"
grep -q "choices shown in an unrecorded order" "$TMP/out" || fail "history does not say the order is unknown"
set +e
"$TT_BIN" drill show "$FIX/mini.drill.json" --seed 4294967296 >/dev/null 2>"$TMP/err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "--seed out of range: exit $rc"
grep -q -- "--seed: '4294967296' is not a whole number" "$TMP/err" || fail "--seed message"
echo "drill_history: ok"
