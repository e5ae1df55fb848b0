#!/usr/bin/env bash
# live_otel.sh - the real OpenTelemetry JS SDK exports a small instrumented
# program's traces and metrics to `tailtriage serve` (OTLP/HTTP, JSON, with
# a bearer token). Every span the SDK reports as exported must be in the
# database, and `report --format json` must show the program's calls as
# DAG nodes.
source "${TT_SRC:?}/tests/js/live_common.bash"
live_need_node

DB="$LIVE_TMP/otel.db"
live_serve "$DB" --token s3cret
URL="http://127.0.0.1:$LIVE_PORT"

# Without the token the SDK's export fails (401) and nothing is stored.
node "$LIVE_JS_DIR/otel_app.js" "$URL" "$LIVE_TMP/noauth.ids" 5 >"$LIVE_TMP/noauth.json" 2>/dev/null
python3 - "$LIVE_TMP/noauth.json" <<'EOF' || live_fail "export without token was not refused"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["spans_exported"] == 0 and s["spans_failed"] == 40, s
EOF
[ "$(live_sql "$DB" 'select count(*) from spans')" = 0 ] || live_fail "spans stored without token"
grep -q ' 401: missing or wrong bearer token' "$LIVE_SERVE_LOG" || live_fail "no 401 in serve log"

# With the token: 60 requests x 8 spans (2 of them database calls).
node "$LIVE_JS_DIR/otel_app.js" "$URL" "$LIVE_TMP/ids" 60 s3cret >"$LIVE_TMP/app.json" ||
  live_fail "otel_app.js failed"
cat "$LIVE_TMP/app.json"
python3 - "$LIVE_TMP/app.json" <<'EOF' || live_fail "the SDK did not export every span"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["spans_failed"] == 0, s
assert s["spans_exported"] == s["spans_started"] == 480, s
EOF

# Every acknowledged span is in the database.
{
  echo "CREATE TEMP TABLE acked(trace_id TEXT, span_id TEXT);"
  awk '{ printf "INSERT INTO acked VALUES(\x27%s\x27,\x27%s\x27);\n", $1, $2 }' "$LIVE_TMP/ids"
  echo "SELECT count(*), sum(NOT EXISTS (SELECT 1 FROM spans s WHERE s.trace_id = a.trace_id AND s.span_id = a.span_id)) FROM acked a;"
} >"$LIVE_TMP/check.sql"
read -r acked missing < <(sqlite3 -batch -separator ' ' "$DB" <"$LIVE_TMP/check.sql")
echo "acknowledged spans: $acked, missing from the database: $missing"
[ "$acked" = 480 ] && [ "$missing" = 0 ] || live_fail "acknowledged spans missing from the database"
[ "$(live_sql "$DB" 'select count(*) from spans')" = 480 ] || live_fail "unexpected span count"

# The DAG shows the program's calls.
"$TT_BIN" report --db "$DB" --format json >"$LIVE_TMP/report.json" || live_fail "report failed"
python3 - "$LIVE_TMP/report.json" <<'EOF' || live_fail "report does not show the program's DAG"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["root_service"] == "checkout-api" and r["root_operation"] == "GET /checkout", r["root_operation"]
assert r["window"]["requests"] == 60, r["window"]
nodes = {(n["type"], n.get("dependency") or n["operation"]): n for n in r["nodes"]}
for dep in ("pricing", "inventory"):
    n = nodes.get(("call", dep))
    assert n is not None, f"no call node for {dep}: {list(nodes)}"
    assert n["calls"] == 60 and n["edge"] == "parallel", n
    assert n["unknown_split"] == 0, n
assert nodes[("local", "assemble")]["calls"] == 60
# Database client spans (db.system.name in pricing, the older db.system in
# inventory) are leaf calls: counted as database calls, their client time
# is the call's service time, and none is a call without a server span.
dq = r["data_quality"]
assert dq["db_calls"] == 120 and dq["unpaired_calls"] == 0, dq
for op in ("SELECT prices", "HGET stock"):
    n = nodes.get(("call", op))
    assert n is not None, f"no call node for the database call {op}: {list(nodes)}"
    assert n["calls"] == 60 and n["db_calls"] == 60 and n["unknown_split"] == 0, n
    assert n["service"]["p99_ms"] == n["total"]["p99_ms"] and n["service"]["p99_ms"] > 0, n
    assert n["client_wait"]["p99_ms"] is None, n
print("DAG:", ", ".join(f"{t}:{k}" for t, k in nodes))
EOF
"$TT_BIN" report --db "$DB" >"$LIVE_TMP/report.txt" || live_fail "text report failed"
grep -q 'without a server span' "$LIVE_TMP/report.txt" &&
  live_fail "the report lists database calls as calls without a server span: $(grep 'server span' "$LIVE_TMP/report.txt")"
grep -q '^  120 database calls' "$LIVE_TMP/report.txt" ||
  live_fail "the report does not count the database calls: $(cat "$LIVE_TMP/report.txt")"

# Metrics: stored when this build has an OTLP metrics importer.
if grep -q 'POST /v1/metrics 501' "$LIVE_SERVE_LOG"; then
  echo "note: /v1/metrics answered 501 (no OTLP metrics importer in this build yet)"
else
  python3 - "$LIVE_TMP/app.json" <<'EOF' || live_fail "metric export failed"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["metric_exports_ok"] >= 1 and s["metric_exports_failed"] == 0, s
EOF
  python3 - "$DB" <<'EOF' || live_fail "the exported metrics are not in the database"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute(
    "SELECT f.name, f.type, s.labels, p.count, p.value FROM metric_points p"
    " JOIN metric_series s ON s.id = p.series_id JOIN metric_families f ON f.id = s.family_id"
    " ORDER BY p.ts_ns DESC").fetchall()
last = {}
for name, typ, labels, count, value in rows:
    last.setdefault((name, typ, labels), (count, value))
for cls in ("standard", "premium", "enterprise"):
    key = ("http.server.request.duration", "histogram", json.dumps({"workload.class": cls}, separators=(",", ":")))
    assert last[key][0] == 20, (key, last.get(key))
pool = [v for (n, t, l), v in last.items() if n == "db.client.connection.count"]
assert pool == [(None, 3.0)], pool
print(f"metric points stored: {len(rows)}; request histogram counts 20/20/20, pool gauge 3")
EOF
fi

live_serve_stop
tail -n 1 "$LIVE_SERVE_LOG"
grep -q 'stopped: .* 480 spans' "$LIVE_SERVE_LOG" || live_fail "serve counters do not show 480 spans"
echo "live_otel: ok"
