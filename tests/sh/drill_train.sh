#!/usr/bin/env bash
# drill_train.sh - headless training: `tailtriage drill train ID --answers F`
# scores right, partly right and wrong answers with a reason for every
# point lost (from the drill file and from the diagnosis engine on the
# drill's data), rejects a malformed answers file with a located error and
# exit status 2, and stores nothing for it.
set -euo pipefail
: "${TT_BIN:?TT_BIN must point at the tailtriage binary}"
TT_SRC=${TT_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
FIX="$TT_SRC/tests/fixtures/drills"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tt-drill-train.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
has() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$3: no '$2'"; }; }

train() { # answers-file person -> $TMP/out
  "$TT_BIN" drill train "$FIX/mini.drill.json" --answers "$FIX/$1" --person "$2" \
    --db "$TMP/h.db" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "train $1 failed"; }
}

train key.answers.json ana
has "$TMP/out" "mini: 100 / 100 points" "the key"
grep -q "lost" "$TMP/out" && fail "the key lost points"
has "$TMP/out" "the diagnosis engine on this data" "the key"

train partial.answers.json bob
has "$TMP/out" "mini: 57.5 / 100 points" "partly right"
has "$TMP/out" "lost 10: The key ranks client-pool-wait:pricing #1; you ranked it #2." "partly right"
has "$TMP/out" "WRONG-C admission is fine." "partly right"
has "$TMP/out" "PARTIAL-D only with proof of the bound." "partly right"
has "$TMP/out" "Hint 1 was revealed" "partly right"
# every lost line carries a reason after the colon
if grep -E "lost [0-9.]+:\s*$" "$TMP/out"; then fail "a deduction without a reason"; fi

train wrong.answers.json carol
has "$TMP/out" "mini: 0 / 100 points" "wrong"
has "$TMP/out" "WRONG-D pricing is core." "wrong"
has "$TMP/out" "premature closure" "wrong"
n_lost=$(grep -c "lost [0-9.]*:" "$TMP/out")
[ "$n_lost" -ge 9 ] || fail "wrong answers: only $n_lost explained deductions"

# a malformed answers file: located error, exit 2, no attempt stored
set +e
"$TT_BIN" drill train "$FIX/mini.drill.json" --answers "$FIX/bad.answers.json" \
  --db "$TMP/h.db" >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "bad answers: exit $rc, want 2"
has "$TMP/err" "bad.answers.json:2:17: hypothesis \"client-pool-wait:pricng\" is not one of" "bad answers"
"$TT_BIN" drill history --db "$TMP/h.db" >"$TMP/hist"
[ "$(grep -c '^[0-9]' "$TMP/hist")" = 3 ] || { cat "$TMP/hist" >&2; fail "want 3 attempts"; }

# the issue's examples on the shipped pricing drill
cat >"$TMP/a.json" <<'JSON'
{"hypotheses": ["client-pool-wait:pricing", "class-mix-shift:enterprise", "placement-concentration"],
 "checks": {"client-pool-wait:pricing": "pool-by-class"}, "decision": "degrade:pricing"}
JSON
"$TT_BIN" drill train pricing-client-wait --answers "$TMP/a.json" --db "$TMP/h.db" \
  --max-traces 300 >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "pricing drill"; }
has "$TMP/out" "Pricing is a core field of the response." "degrade:pricing"
# every decision the drill offers is judged, whatever the engine ranks
# first: pricing is core in the model, so degrading it is refused
has "$TMP/out" "The diagnosis engine finds degrade:pricing refused" "degrade:pricing"
has "$TMP/out" "is refused because it breaks an invariant" "degrade:pricing"
sed -i 's/"degrade:pricing"/"raise-endpoint-concurrency"/' "$TMP/a.json"
"$TT_BIN" drill train pricing-client-wait --answers "$TMP/a.json" --db "$TMP/h.db" \
  --max-traces 300 >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "pricing drill"; }
has "$TMP/out" "raise-endpoint-concurrency unsupported" "raise-endpoint-concurrency"
has "$TMP/out" "queue age" "raise-endpoint-concurrency"
has "$TMP/out" "inside budget" "raise-endpoint-concurrency"

# an unknown drill and a discussion drill without a terminal
set +e
"$TT_BIN" drill train no-such-drill --answers "$FIX/key.answers.json" --db "$TMP/h.db" 2>"$TMP/err"
rc=$?
"$TT_BIN" drill train recommendation-mandatory --db "$TMP/h.db" </dev/null >"$TMP/out" 2>&1
rc2=$?
set -e
[ "$rc" = 1 ] || fail "unknown drill: exit $rc"
has "$TMP/err" "no drill 'no-such-drill'" "unknown drill"
[ "$rc2" = 2 ] || fail "no terminal, no answers: exit $rc2"
has "$TMP/out" "give the answers with --answers FILE" "no terminal"
# a catalog with a broken drill: the good ones are listed, the broken one is
# reported with its location, and the exit status says something is wrong
mkdir "$TMP/cat"
cp "$FIX/mini.drill.json" "$TMP/cat/"
printf '{\n  "drill": "broken",\n  "version": 0\n}\n' >"$TMP/cat/broken.drill.json"
set +e
"$TT_BIN" drill list --catalog "$TMP/cat" >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "drill list with a broken drill: exit $rc"
has "$TMP/out" "mini" "drill list"
has "$TMP/err" "broken.drill.json:1:1: a drill file needs \"title\"" "drill list"
echo "drill_train: ok"
