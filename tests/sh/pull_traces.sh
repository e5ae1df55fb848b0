#!/usr/bin/env bash
# pull_traces.sh - `tailtriage pull --jaeger` and `--tempo` against a
# loopback server (tests/py/trace_api.py) that answers with the documented
# response shapes of Jaeger's API v3 (its api_v3 snapshots), Jaeger v1's
# /api/traces and Tempo's /api/search and /api/v2/traces, holding a
# simulated incident (`tailtriage sim`). Checks: the window's slowest 20
# are exactly the 20 slowest entries of the data; the samples are spread
# over the window and the baseline (not the newest 100); the populations
# the analysis reads are the samples alone; a second pull stores nothing; searches paged small (--page, and a server that caps a
# search); 404 "No traces found" / "trace not found"; 429 then success; a
# server killed mid-pull keeps what was stored and a later pull completes
# it; 401 without the tenant (Tempo's X-Scope-OrgID, Jaeger's x-tenant) or token; a
# Mimir that needs the tenant; a server that is neither back end;
# an unreachable one. Every server is on 127.0.0.1 and exits by itself.
set -u
BIN="${TT_BIN:?}"
API="${TT_SRC:?}/tests/py/trace_api.py"
TMP="$(mktemp -d)"
SRV_PID=""
cleanup() { [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# serve MODE [options]: starts trace_api.py, sets URL
serve() {
  [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
  rm -f "$TMP/port"
  python3 "$API" --mode "$1" --data "$TMP/sim/traces.jsonl" --port-file "$TMP/port" \
    --log "$TMP/requests.log" --lifetime 300 "${@:2}" &
  SRV_PID=$!
  for _ in $(seq 300); do [ -s "$TMP/port" ] && break; sleep 0.05; done
  [ -s "$TMP/port" ] || fail "trace_api.py did not start"
  URL="http://127.0.0.1:$(cat "$TMP/port")"
}

"$BIN" sim mercury --out "$TMP/sim" --traces 300 -q || fail "sim"
read -r W B < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["window"]["range"], m["baseline"]["range"])' "$TMP/sim/manifest.json")
SVC=mercury-api
OP="GET /v2/home"

# the answers from the full data: its 20 slowest entries, its diagnosis
"$BIN" import -q --db "$TMP/full.db" "$TMP/sim/traces.jsonl" || fail "import of the full data"
for role in window baseline; do
python3 - "$TMP/sim/traces.jsonl" "$TMP/sim/manifest.json" "$role" >"$TMP/slowest.$role.ref" <<'PY'
import json, sys
m = json.load(open(sys.argv[2]))
w0, w1 = int(m[sys.argv[3]]["from_ns"]), int(m[sys.argv[3]]["to_ns"])
d = []
for line in open(sys.argv[1]):
    for rs in json.loads(line)["resourceSpans"]:
        svc = [a["value"]["stringValue"] for a in rs["resource"]["attributes"] if a["key"] == "service.name"][0]
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                if svc == "mercury-api" and sp["name"] == "GET /v2/home" and not sp.get("parentSpanId"):
                    s, e = int(sp["startTimeUnixNano"]), int(sp["endTimeUnixNano"])
                    if w0 <= s < w1:
                        d.append((e - s, sp["traceId"]))
for _, t in sorted(d, reverse=True)[:20]:
    print(t)
PY
sort -o "$TMP/slowest.$role.ref" "$TMP/slowest.$role.ref"
done
members() { # DB KIND ROLE: the set's trace ids, sorted
  sqlite3 "$1" "SELECT m.trace_id FROM trace_set_members m JOIN trace_sets s ON s.id = m.set_id WHERE s.kind = '$2' AND s.role = '$3' ORDER BY 1"
}
"$BIN" diagnose --db "$TMP/full.db" --window "$W" --baseline "$B" --format json >"$TMP/full.json" 2>/dev/null ||
  fail "diagnose on the full data"
leader() { python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["hypotheses"][0]; print(h["id"], h.get("node",""))' "$1"; }

check_pull() { # NAME MODE [server options] -- [pull options]
  local name=$1 mode=$2
  shift 2
  local sopts=() popts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sopts+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  popts=("$@")
  local be=--jaeger
  case $mode in tempo*) be=--tempo ;; esac
  serve "$mode" "${sopts[@]}"
  local db="$TMP/$name.db"
  "$BIN" pull --db "$db" "$be" "$URL" --service "$SVC" --operation "$OP" --window "$W" --baseline "$B" \
    --slowest 20 --sample 100 "${popts[@]}" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
    fail "$name: pull failed: $(cat "$TMP/$name.out" "$TMP/$name.err")"
  cat "$TMP/$name.out"
  for role in window baseline; do
    members "$db" slowest $role >"$TMP/$name.slowest"
    cmp -s "$TMP/slowest.$role.ref" "$TMP/$name.slowest" ||
      fail "$name: the $role's slowest set is not the data's 20 slowest: $(comm -3 "$TMP/slowest.$role.ref" "$TMP/$name.slowest" | head -5)"
  done
  for role in window baseline; do
    [ "$(members "$db" sample $role | wc -l)" = 100 ] || fail "$name: the $role sample has $(members "$db" sample $role | wc -l) traces"
  done
  # spread over the window: a quarter of it in each quarter, give or take
  python3 - "$db" "$TMP/sim/manifest.json" <<'PY' || fail "$name: the window's sample is not spread over it"
import json, sqlite3, sys
m = json.load(open(sys.argv[2]))
w0, w1 = int(m["window"]["from_ns"]), int(m["window"]["to_ns"])
db = sqlite3.connect(sys.argv[1])
starts = [r[0] for r in db.execute(
    "SELECT min(sp.start_ns) FROM trace_set_members m JOIN trace_sets s ON s.id = m.set_id"
    " JOIN spans sp ON sp.trace_id = m.trace_id WHERE s.kind = 'sample' AND s.role = 'window'"
    " GROUP BY m.trace_id")]
q = [0, 0, 0, 0]
for t in starts:
    q[min(3, (t - w0) * 4 // (w1 - w0))] += 1
print("sample per quarter of the window:", q)
sys.exit(0 if len(starts) == 100 and all(15 <= x <= 35 for x in q) else 1)
PY
  # every trace of the sets is stored
  local missing
  missing=$(sqlite3 "$db" "SELECT count(DISTINCT m.trace_id) FROM trace_set_members m WHERE NOT EXISTS (SELECT 1 FROM spans s WHERE s.trace_id = m.trace_id)")
  [ "$missing" = 0 ] || fail "$name: $missing traces of the sets are not stored"
  # a second pull stores nothing new and fetches nothing
  : >"$TMP/requests.log"
  "$BIN" pull --db "$db" "$be" "$URL" --service "$SVC" --operation "$OP" --window "$W" --baseline "$B" \
    --slowest 20 --sample 100 "${popts[@]}" >"$TMP/$name.out2" 2>"$TMP/$name.err2" || fail "$name: second pull: $(cat "$TMP/$name.err2")"
  grep -q '0 traces fetched, .* already stored; 0 spans added' "$TMP/$name.out2" || fail "$name: second pull: $(cat "$TMP/$name.out2")"
  grep -Eq '/api/(v3/|v2/)?traces/[0-9a-f]' "$TMP/requests.log" && fail "$name: the second pull fetched a trace again"
  # a slowest set and a sample of each range: four sets, none added
  [ "$(sqlite3 "$db" "SELECT count(*) FROM trace_sets")" = 4 ] || fail "$name: the second pull added sets"
  echo "$name: ok"
}

check_pull jaeger-v3 jaeger-v3
# a sample too small to bound a p99 says so (368 is the fewest that can)
grep -q "a sample of 100 traces cannot bound a p99 (368 is the fewest whose p99 has a 95 % upper bound)" "$TMP/jaeger-v3.err" ||
  fail "a --sample 100 pull does not say it cannot bound a p99: $(cat "$TMP/jaeger-v3.err")"
# a multi-tenant Jaeger: --tenant is sent as Jaeger's x-tenant header
check_pull jaeger-v3-old jaeger-v3-old --tenant acme -- --tenant acme
check_pull jaeger-v1 jaeger-v1
check_pull tempo tempo --tenant acme -- --tenant acme
check_pull tempo-v1 tempo-v1
# small pages, and a server that lists at most 40 whatever is asked
check_pull paged jaeger-v3 --max-limit 40 -- --page 40

# the populations are the samples: the slowest traces that no sample
# holds are no requests of the window (its percentiles are the sample's)
"$BIN" report --db "$TMP/jaeger-v3.db" --window "$W" --baseline "$B" --format json >"$TMP/pulled.json" 2>"$TMP/err" ||
  fail "report on the pulled data: $(cat "$TMP/err")"
python3 - "$TMP/pulled.json" <<'PY' || fail "the pulled populations are not the samples"
import json, sys
d = json.load(open(sys.argv[1]))
print("pulled populations:", d["window"]["requests"], d["baseline"]["requests"])
sys.exit(0 if d["window"]["requests"] == 100 and d["baseline"]["requests"] == 100 else 1)
PY
"$BIN" diagnose --db "$TMP/jaeger-v3.db" --window "$W" --baseline "$B" --format json >"$TMP/pulled-dx.json" 2>"$TMP/err" ||
  fail "diagnose on the pulled data: $(cat "$TMP/err")"
echo "diagnosis leader: pulled $(leader "$TMP/pulled-dx.json"), full data $(leader "$TMP/full.json")"
# the pulled data ranks as the full data does: the same first hypothesis
# on the same node. 100 sampled requests a side cannot bound a p99, but the
# slowest sets of both ranges, with the counts the back end listed, give
# the p99 and the bootstrap of its rise as all 300 would (docs/live.md,
# "What the slowest sets are for"), so the rise is shown as on the full
# data and the null hypothesis does not lead; from Jaeger and from Tempo
"$BIN" diagnose --db "$TMP/tempo.db" --window "$W" --baseline "$B" --format json >"$TMP/pulled-tempo-dx.json" 2>"$TMP/err" ||
  fail "diagnose on the data pulled from Tempo: $(cat "$TMP/err")"
for dx in pulled-dx pulled-tempo-dx; do
python3 - "$TMP/$dx.json" "$TMP/full.json" <<'PY' || fail "$dx: the pulled data's diagnosis does not rank first what the full data's does"
import json, sys
d = json.load(open(sys.argv[1]))
p = [(h["id"], h.get("node", "")) for h in d["hypotheses"]]
f = [(h["id"], h.get("node", "")) for h in json.load(open(sys.argv[2]))["hypotheses"]]
ev = {v["name"]: v for v in d["evidence"]}
r = ev["ingress.rise_ms"]
print("pulled:", p[:3], "full:", f[:2], "rise:", round(r["value"], 1), r["interval"], r["n"])
sys.exit(0 if f[0][0] != "insufficient-evidence" and p[0] == f[0]
         and "slowest" in r["provenance"] and r["n"] == 300 else 1)
PY
done
# the figures say they come from a pulled uniform sample, scaled back
"$BIN" diagnose --db "$TMP/jaeger-v3.db" --window "$W" --baseline "$B" >"$TMP/pulled-dx.txt" 2>&1 ||
  fail "diagnose (text) on the pulled data"
grep -q "head sample (a uniform sample pulled from a trace back end.*100 traces of about 300 requests" "$TMP/pulled-dx.txt" ||
  fail "the Board does not say the traces are a pulled sample: $(head -5 "$TMP/pulled-dx.txt")"
grep -q "sampled requests" "$TMP/pulled-dx.txt" || fail "the figures do not say they are the sample's"
# ... but the rise of the p99 is the slowest sets', and the warnings say so
grep -q "^Rise of the objective's percentile: .* n=300 (spans, the 20 slowest of 300 requests, pulled whole)" "$TMP/pulled-dx.txt" &&
  grep -q "the endpoint's p99 and its rise are read off the slowest sets pulled from the trace back end (the 20 slowest of 300 requests in the window, 20 of 300 in the baseline)" "$TMP/pulled-dx.txt" ||
  fail "diagnose does not say the p99 is read off the slowest sets: $(head -8 "$TMP/pulled-dx.txt")"

# the slowest set serves the tail: the window's slow population (critical
# path, exemplars, the waterfall's list) is the 20 pulled slowest, not the
# sample's few slow requests, and the figures say whose they are
python3 - "$TMP/pulled.json" "$TMP/jaeger-v3.db" <<'PY' || fail "the tail's figures are not the slowest set's"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
w = d["window"]
db = sqlite3.connect(sys.argv[2])
only = {r[0] for r in db.execute(
    "SELECT m.trace_id FROM trace_set_members m JOIN trace_sets s ON s.id = m.set_id"
    " WHERE s.kind = 'slowest' AND m.trace_id NOT IN (SELECT m2.trace_id FROM trace_set_members m2"
    " JOIN trace_sets s2 ON s2.id = m2.set_id WHERE s2.kind = 'sample')")}
ex = {e["trace_id"] for n in d["nodes"] for e in n.get("slowest_traces", [])}
print("tail:", w["slow_requests"], w.get("slow_source"), "; slowest traces of no sample:", len(only),
      "of them among the exemplars:", len(ex & only))
sys.exit(0 if w["slow_requests"] == 20 and w.get("slow_from_slowest_set", {}).get("requested") == 20
         and w["slow_source"].startswith("the 20 slowest of the window") and only and ex & only
         and d["baseline"]["slow_source"].startswith("the slow requests of the baseline") else 1)
PY
"$BIN" report --db "$TMP/jaeger-v3.db" --window "$W" --baseline "$B" >"$TMP/pulled-report.txt" 2>&1 ||
  fail "report (text) on the pulled data"
grep -q "^Tail ownership  (critical path of the 20 slowest requests" "$TMP/pulled-report.txt" &&
  grep -q "^(the 20 slowest of the window, pulled from the trace back end (of 300 it listed); the other figures are the sample's)" "$TMP/pulled-report.txt" ||
  fail "report's tail ownership does not say it is the slowest set's: $(grep -A1 'Tail ownership' "$TMP/pulled-report.txt")"
grep -q "the tail's traces (critical path, exemplars, waterfall) are the 20 slowest of the window" "$TMP/pulled-dx.txt" ||
  fail "diagnose does not say the tail's traces are the slowest set"
# the import-time aggregates (the dashboard's first answers) count the
# samples' requests, not the slowest traces beside them
agg=$(sqlite3 "$TMP/jaeger-v3.db" "SELECT sum(c.requests) FROM agg_cells c JOIN agg_nodes n ON n.id = c.node WHERE n.parent = 0 AND c.comp = 0")
stored=$(sqlite3 "$TMP/jaeger-v3.db" "SELECT count(*) FROM traces")
echo "aggregates: $agg requests of $stored traces stored"
[ "$agg" = 200 ] || fail "the aggregates count $agg requests, not the samples' 200 ($stored traces stored)"

# a search that finds nothing: a clear error with the services there are
serve jaeger-v3
if "$BIN" pull --db "$TMP/none.db" --jaeger "$URL" --service nosuch --window "$W" >"$TMP/out" 2>"$TMP/err"; then
  fail "a pull that found nothing succeeded"
fi
grep -q "no trace of nosuch in .*; services seen: .*mercury-api" "$TMP/err" || fail "nothing found: $(cat "$TMP/err")"

# 429 three times, then answers: retried, and the pull succeeds
serve jaeger-v3 --busy 3
"$BIN" pull --db "$TMP/busy.db" --jaeger "$URL" --service "$SVC" --operation "$OP" --window "$W" \
  --slowest 5 --sample 10 >"$TMP/out" 2>"$TMP/err" || fail "after 429s: $(cat "$TMP/err")"
[ "$(members "$TMP/busy.db" slowest window | wc -l)" = 5 ] || fail "after 429s: slowest set: $(cat "$TMP/out" "$TMP/err"; sqlite3 "$TMP/busy.db" "SELECT kind, role, count(*) FROM trace_sets s JOIN trace_set_members m ON m.set_id = s.id GROUP BY s.id")"

# 401: the token is required
serve tempo --token s3cret
if "$BIN" pull --db "$TMP/auth.db" --tempo "$URL" --service "$SVC" --window "$W" 2>"$TMP/err" >/dev/null; then
  fail "a pull without the token succeeded"
fi
grep -q "HTTP 401 (not authenticated)" "$TMP/err" || fail "401: $(cat "$TMP/err")"
"$BIN" pull -q --db "$TMP/auth.db" --tempo "$URL" --token s3cret --service "$SVC" --operation "$OP" \
  --window "$W" --slowest 3 --sample 0 2>"$TMP/err" || fail "with the token: $(cat "$TMP/err")"
# the tenant is required
serve tempo --tenant acme
if "$BIN" pull --db "$TMP/auth.db" --tempo "$URL" --service "$SVC" --window "$W" 2>"$TMP/err" >/dev/null; then
  fail "a pull without the tenant succeeded"
fi
grep -q "401.*--tenant" "$TMP/err" || fail "tenant 401: $(cat "$TMP/err")"
# Jaeger's tenancy header is x-tenant, not Tempo's: X-Scope-OrgID alone is
# a missing tenant there, and the error says what to give
serve jaeger-v3 --tenant acme
if "$BIN" pull --db "$TMP/auth.db" --jaeger "$URL" --service "$SVC" --window "$W" \
  --header 'X-Scope-OrgID: acme' 2>"$TMP/err" >/dev/null; then
  fail "a Jaeger pull without x-tenant succeeded"
fi
grep -q "HTTP 401 (not authenticated): missing tenant header; .*--tenant" "$TMP/err" ||
  fail "Jaeger tenant 401: $(cat "$TMP/err")"
# a header with a line break in it would be a second header: refused
if "$BIN" pull --db "$TMP/auth.db" --jaeger "$URL" --service "$SVC" --window "$W" \
  --tenant "$(printf 'acme\r\nX-Admin: 1')" 2>"$TMP/err" >/dev/null; then
  fail "a tenant with CR LF in it was sent"
fi
grep -q "expected a tenant id" "$TMP/err" || fail "tenant with CR LF: $(cat "$TMP/err")"
# Mimir or Cortex: --prometheus gets the tenant as X-Scope-OrgID, and the
# --header lines too
kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; SRV_PID=""
cat >"$TMP/mimir.json" <<'JSON'
[{"path": "/api/v1/query", "need": [["X-Scope-OrgID", "acme"], ["X-Team", "sre"]],
  "body": "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"__name__\":\"up\",\"job\":\"mercury-api\"},\"value\":[1784052000,\"1\"]}]}}"},
 {"path": "/api/v1/query", "status": 401, "headers": [["Content-Type", "text/plain"]], "body": "no org id\n"}]
JSON
rm -f "$TMP/port"
python3 "$TT_SRC/tests/py/canned_http.py" --routes "$TMP/mimir.json" --port-file "$TMP/port" --lifetime 60 &
SRV_PID=$!
for _ in $(seq 300); do [ -s "$TMP/port" ] && break; sleep 0.05; done
[ -s "$TMP/port" ] || fail "canned_http.py did not start"
URL="http://127.0.0.1:$(cat "$TMP/port")"
if "$BIN" pull --db "$TMP/mimir.db" --prometheus "$URL" --once --model none --query 'up=up' \
  --header 'X-Team: sre' >"$TMP/out" 2>&1; then
  fail "a Mimir pull without the tenant succeeded: $(cat "$TMP/out")"
fi
"$BIN" pull --db "$TMP/mimir.db" --prometheus "$URL" --once --model none --query 'up=up' \
  --tenant acme --header 'X-Team: sre' >"$TMP/out" 2>&1 || fail "a Mimir pull with the tenant: $(cat "$TMP/out")"
[ "$(sqlite3 "$TMP/mimir.db" "SELECT count(*) FROM metric_points")" -ge 1 ] ||
  fail "the Mimir pull stored nothing: $(cat "$TMP/out")"

# a server that is neither
serve html
if "$BIN" pull --db "$TMP/html.db" --jaeger "$URL" --service "$SVC" --window "$W" 2>"$TMP/err" >/dev/null; then
  fail "an HTML server was taken for Jaeger"
fi
grep -q "not Jaeger's query API" "$TMP/err" || fail "html: $(cat "$TMP/err")"
if "$BIN" pull --db "$TMP/html.db" --tempo "$URL" --service "$SVC" --window "$W" 2>"$TMP/err" >/dev/null; then
  fail "an HTML server was taken for Tempo"
fi
grep -q "not Tempo's API" "$TMP/err" || fail "html tempo: $(cat "$TMP/err")"

# unreachable: nothing listens there any more
kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=""
if "$BIN" pull --db "$TMP/gone.db" --jaeger "$URL" --retries 1 --service "$SVC" --window "$W" 2>"$TMP/err" >/dev/null; then
  fail "an unreachable server gave a pull"
fi
grep -q "cannot reach $URL/api/v3/services" "$TMP/err" || fail "unreachable: $(cat "$TMP/err")"

# killed mid-pull: what was stored stays, a later pull completes it
serve jaeger-v3 --die-after 30
if "$BIN" pull --db "$TMP/killed.db" --jaeger "$URL" --retries 1 --service "$SVC" --operation "$OP" \
  --window "$W" --baseline "$B" --slowest 20 --sample 100 >"$TMP/out" 2>"$TMP/err"; then
  fail "a pull from a server that died succeeded"
fi
cat "$TMP/err"
grep -q "traces could not be stored" "$TMP/err" || fail "killed: $(cat "$TMP/err")"
stored=$(sqlite3 "$TMP/killed.db" "SELECT count(DISTINCT trace_id) FROM spans")
[ "$stored" -ge 20 ] && [ "$stored" -lt 220 ] || fail "killed: $stored traces stored"
# a slowest set whose traces are not all stored is no top: the percentiles
# are not read off it, and the diagnosis says why
"$BIN" diagnose --db "$TMP/killed.db" --window "$W" --baseline "$B" --format json >"$TMP/killed.json" 2>/dev/null ||
  fail "diagnose on a pull cut short"
python3 - "$TMP/killed.json" <<'PY' || fail "a slowest set with missing traces was read as a top"
import json, sys
d = json.load(open(sys.argv[1]))
facts = d["facts"]
ev = {v["name"]: v for v in d["evidence"]}
holes = [facts.get(k, "") for k in ("top.window", "top.baseline")]
print("cut short:", holes)
sys.exit(0 if any("may have a hole" in h for h in holes)
         and "slowest" not in (ev.get("ingress.p99_ms") or {}).get("provenance", "") else 1)
PY
SRV_PID=""
serve jaeger-v3
"$BIN" pull --db "$TMP/killed.db" --jaeger "$URL" --service "$SVC" --operation "$OP" --window "$W" \
  --baseline "$B" --slowest 20 --sample 100 >"$TMP/out" 2>"$TMP/err" || fail "after the restart: $(cat "$TMP/err")"
grep -q "already stored" "$TMP/out" || fail "after the restart: $(cat "$TMP/out")"
missing=$(sqlite3 "$TMP/killed.db" "SELECT count(DISTINCT m.trace_id) FROM trace_set_members m WHERE NOT EXISTS (SELECT 1 FROM spans s WHERE s.trace_id = m.trace_id)")
[ "$missing" = 0 ] || fail "after the restart: $missing traces of the sets missing"
echo "pull_traces: ok"
