#!/usr/bin/env bash
# diagnose_cli.sh - `tailtriage diagnose`, `check` and the report's budgets
# and exemplars as a user runs them: the case's matched-peak sheet alone
# (no database), usage and input errors with their exit codes, and a small
# simulated incident imported with its metrics.
set -u
BIN="${TT_BIN:?}"
SRC="${TT_SRC:?}"
MODEL="$SRC/models/mercury-home.model.json"
SHEET="$SRC/data/sheets/pricing-matched-peak.sheet.json"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$TMP" || exit 1

# a sheet alone, no database in sight
"$BIN" diagnose --sheet "$SHEET" --model "$MODEL" --format json >sheet.json 2>err ||
  fail "diagnose --sheet: $(cat err)"
python3 - sheet.json <<'PY' || fail "sheet diagnosis"
import json, sys
d = json.load(open(sys.argv[1]))
h = d["hypotheses"]
assert [x["rank"] for x in h] == list(range(1, len(h) + 1)), "rank order"
assert (h[0]["id"], h[0]["node"]) == ("client-pool-wait", "pricing"), h[0]
assert {h[1]["id"], h[2]["id"]} == {"class-mix-shift", "placement-concentration"}, (h[1], h[2])
v = {x["id"]: x for x in d["decisions"]}
assert v["raise-endpoint-concurrency"]["verdict"] == "unsupported"
assert v["add-api-hosts"]["verdict"] == "unsupported" and "weak" in v["add-api-hosts"]["reason"]
assert v["degrade:pricing"]["verdict"] == "refused"
assert v["hold-rollout"]["verdict"] == "supported"
e = {x["name"]: x for x in d["evidence"]}
assert e["dep.pricing.client_wait.p99_ms"]["source"] == "sheet"
assert e["mix.change"]["source"] == "derived"
PY
"$BIN" diagnose --sheet "$SHEET" --model "$MODEL" >sheet.txt || fail "text output"
grep -q "tailtriage check pool-by-class --node pricing" sheet.txt || fail "no check in text"
grep -q "refused      degrade:pricing" sheet.txt || fail "no refused degrade in text"

# usage and input errors
"$BIN" diagnose --db "$TMP/none.db" >/dev/null 2>err && fail "a missing database was accepted"
"$BIN" diagnose --sheet "$SHEET" --format xml >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad --format not a usage error"
printf '{"sheet": "x",\n "window": "w", "observations": [ {"name": "a", "value": 1, "unit": "furlong"} ]}\n' >bad.sheet.json
"$BIN" diagnose --sheet bad.sheet.json >/dev/null 2>err && fail "a bad sheet was accepted"
grep -q "bad.sheet.json:2:" err || fail "sheet error not located: $(cat err)"
printf '{"version": 1,\n  "hypotheses": [ nope ]}\n' >bad.catalog.json
"$BIN" diagnose --sheet "$SHEET" --catalog bad.catalog.json >/dev/null 2>err && fail "a bad catalog was accepted"
grep -q "bad.catalog.json:2:" err || fail "catalog error not located: $(cat err)"
n=$("$BIN" check --list | wc -l)
[ "$n" -ge 6 ] || fail "check --list lists $n checks"
"$BIN" check no-such-check --db x.db >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown check not a usage error"

# a simulated incident with its metrics
"$BIN" sim mercury --out sim --traces 300 --set window-s=60 --set warmup-s=20 --set hosts=6 -q ||
  fail "sim"
"$BIN" import --db t.db sim/traces.jsonl sim/metrics.jsonl >/dev/null || fail "import"
W=$(python3 -c "import json;m=json.load(open('sim/manifest.json'));print(m['window']['range'])")
B=$(python3 -c "import json;m=json.load(open('sim/manifest.json'));print(m['baseline']['range'])")
"$BIN" report --db t.db --model "$MODEL" --window "$W" --baseline "$B" --format json >r.json ||
  fail "report json"
python3 - r.json <<'PY' || fail "report budgets/exemplars"
import json, sys
d = json.load(open(sys.argv[1]))
b = {x["id"]: x for x in d["budgets"]}
assert b["p99"]["source"] == "spans" and "exact" in b["p99"]["provenance"], b["p99"]
assert b["pool_occupancy"]["source"] == "metric", b["pool_occupancy"]
assert b["recovery"]["state"] == "unknown" and b["recovery"]["value"] is None
ex = d["exemplars"]
assert ex and all(len(x["trace_id"]) == 32 for x in ex if x["trace_id"]), ex[:2]
assert any(x["metric"] == "db.client.connection.wait_time" for x in ex)
PY
"$BIN" report --db t.db --model "$MODEL" --window "$W" --baseline "$B" >r.txt || fail "report text"
grep -q "^Budgets" r.txt || fail "no Budgets section"
grep -q "metric: used / max" r.txt || fail "no metric provenance in the budgets"
"$BIN" check pool-by-class --db t.db --model "$MODEL" --window "$W" --baseline "$B" --node pricing >c.txt ||
  fail "check pool-by-class"
grep -q "enterprise" c.txt || fail "pool-by-class has no enterprise row"
"$BIN" diagnose --db t.db --model "$MODEL" --window "$W" --baseline "$B" --format json >d.json ||
  fail "diagnose on the database"
python3 -c "import json;d=json.load(open('d.json'));assert d['hypotheses'] and d['decisions']" ||
  fail "diagnose json"

# nothing to compare: report and diagnose refuse it alike, exit status 1,
# with the range and the counts (an empty window, an empty baseline, and a
# baseline that is the window); a baseline that overlaps the window is
# diagnosed with a warning
EMPTY=2030-01-01T00:00:00Z..2030-01-01T00:10:00Z
for cmd in report diagnose; do
  "$BIN" $cmd --db t.db --model "$MODEL" --window "$EMPTY" >out 2>err; rc=$?
  [ $rc -eq 1 ] || fail "$cmd on an empty window: exit $rc, not 1"
  grep -q "the window 2030-01-01T00:00:00.000Z..2030-01-01T00:10:00.000Z holds no request of the endpoint ([0-9]* root spans" err ||
    fail "$cmd on an empty window: $(cat err)"
  [ ! -s out ] || fail "$cmd printed a report of an empty window"
  "$BIN" $cmd --db t.db --model "$MODEL" --window "$W" --baseline "$EMPTY" >/dev/null 2>err; rc=$?
  [ $rc -eq 1 ] || fail "$cmd on an empty baseline: exit $rc, not 1"
  grep -q "holds no request of the endpoint (the window holds [0-9]*" err || fail "$cmd on an empty baseline: $(cat err)"
  "$BIN" $cmd --db t.db --model "$MODEL" --window "$W" --baseline "$W" >/dev/null 2>err; rc=$?
  [ $rc -eq 1 ] || fail "$cmd with the window as baseline: exit $rc, not 1"
  grep -q "the baseline is the window" err || fail "$cmd with the window as baseline: $(cat err)"
done
WF=${W%%..*}
OVL="$WF..$(python3 -c "import datetime as d,sys;t=d.datetime.fromisoformat(sys.argv[1].replace('Z','+00:00'));print((t+d.timedelta(seconds=20)).strftime('%Y-%m-%dT%H:%M:%SZ'))" "$WF")"
"$BIN" diagnose --db t.db --model "$MODEL" --window "$W" --baseline "$OVL" >ovl.txt 2>err ||
  fail "diagnose with an overlapping baseline: $(cat err)"
grep -q "! the baseline .* overlaps the window (100 % of the baseline)" ovl.txt ||
  fail "no warning for a baseline inside the window: $(head -5 ovl.txt)"

# each leading hypothesis says what to do about it (the catalog's remedy)
"$BIN" diagnose --db t.db --model "$MODEL" --window "$W" --baseline "$B" >d.txt || fail "diagnose text"
grep -q "^    remedy: .*Cost: .*Worked when: " d.txt || fail "no remedy line in diagnose's text"
python3 -c "import json;d=json.load(open('d.json'));r=d['hypotheses'][0]['remedy'];assert r['change'] and r['cost'] and r['shows'], r" ||
  fail "no remedy in diagnose's JSON"
echo "ok"
