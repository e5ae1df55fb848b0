#!/usr/bin/env bash
# model_infer_otel.sh - a model drafted from telemetry of the real
# OpenTelemetry JS SDK (tests/js/otel_pools_app.js, exported over OTLP/HTTP
# to `tailtriage serve`), with no hand-written model:
#  - `model infer` names the pools by their OpenTelemetry pool names and
#    matches them to services by name tokens (pricing-grpc guards pricing,
#    pricing-pg is pricing's own database pool), optional from absence;
#  - `diagnose` without --model uses the inferred model (and says so) and
#    computes the pricing pool's occupancy and pending count;
#  - the written file re-loads and gives the same pool evidence;
#  - without workload.class, the class attribute is a varying root span
#    attribute (tenant.tier), else a varying resource attribute
#    (deployment.cell); a pool name with terminal escapes stays escaped;
#  - a hand-written model that disagrees with the data yields findings in
#    `model check`, `diagnose` and `report`.
source "${TT_SRC:?}/tests/js/live_common.bash"
live_need_node

DB="$LIVE_TMP/sdk.db"
live_serve "$DB"
node "$LIVE_JS_DIR/otel_pools_app.js" "http://127.0.0.1:$LIVE_PORT" 120 >"$LIVE_TMP/app.json" ||
  live_fail "otel_pools_app.js failed"
live_serve_stop

M="$LIVE_TMP/inferred.model.json"
"$TT_BIN" model infer --db "$DB" -o "$M" >"$LIVE_TMP/why.txt" || live_fail "model infer failed"
cat "$LIVE_TMP/why.txt"
grep -q '^pool      pricing-grpc (client) -> pricing, 48 slots$' "$LIVE_TMP/why.txt" ||
  live_fail "summary does not name the pricing-grpc pool"
grep -q 'why: .*guards calls to pricing' "$LIVE_TMP/why.txt" || live_fail "no reason for the pool"
python3 - "$M" <<'PY' || live_fail "the inferred model is wrong"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["root"]["service"] == "shop-api" and m["root"]["operation"] == "GET /shop", m["root"]
assert m["classes"]["attribute"] == "workload.class", m["classes"]
assert sorted(m["classes"]["values"]) == ["enterprise", "premium", "standard"]
nodes = {(n["service"], n.get("operation")): n for n in m["nodes"]}
assert nodes[("pricing", None)]["mandatory"] is True and nodes[("pricing", None)]["pool"] == "pricing-grpc"
assert nodes[("profile", None)]["pool"] == "profile-grpc"
assert nodes[("recommendation", None)]["mandatory"] is False, nodes[("recommendation", None)]
assert "absent 33.3 %" in nodes[("recommendation", None)]["why"]
assert all("why" in n and "core" not in n for n in m["nodes"])
pools = {p["name"]: p for p in m["pools"]}
g = pools["pricing-grpc"]
assert g["node"] == "pricing" and g["kind"] == "client" and g["size"] == 48, g
assert g["metrics"]["label_key"] == "db.client.connection.pool.name"
assert g["metrics"]["label_value"] == "pricing-grpc"
pg = pools["pricing-pg"]
assert pg["node"] == "pricing" and "own database pool" in pg["why"], pg
# pricing's database call (db.system.name) has its database pool in front
db = nodes[("pricing", "SELECT prices")]
assert db["pool"] == "pricing-pg" and db["why"].startswith("database call"), db
assert pools["profile-grpc"]["node"] == "profile"
# HTTP client connections by server.address, the executor by name and unit
r = pools["recommendation"]
assert r["node"] == "recommendation" and r["metrics"]["used"] == "http.client.open_connections", r
assert r["metrics"]["label_key"] == "server.address" and "peer label" in r["why"], r
assert nodes[("recommendation", None)]["pool"] == "recommendation"
x = pools["shop-api-executor"]
assert x["kind"] == "executor" and x["node"] == "shop-api" and x["size"] == 32, x
assert x["metrics"]["wait"] == "http.server.queue.age", x
print("inferred model ok:", ", ".join(f"{p} -> {pools[p]['node']}" for p in pools))
PY

# diagnose with no model: the inferred one, announced in one line
"$TT_BIN" diagnose --db "$DB" --format json >"$LIVE_TMP/implicit.json" 2>"$LIVE_TMP/implicit.err" ||
  live_fail "diagnose without --model failed"
[ "$(wc -l <"$LIVE_TMP/implicit.err")" = 1 ] && grep -q 'model inferred from the data' "$LIVE_TMP/implicit.err" ||
  live_fail "diagnose did not say (in one line) that it uses an inferred model: $(cat "$LIVE_TMP/implicit.err")"
"$TT_BIN" diagnose --db "$DB" --model "$M" --format json >"$LIVE_TMP/explicit.json" 2>"$LIVE_TMP/explicit.err" ||
  live_fail "diagnose --model (written file) failed"
[ ! -s "$LIVE_TMP/explicit.err" ] || live_fail "diagnose --model said: $(cat "$LIVE_TMP/explicit.err")"
python3 - "$LIVE_TMP/implicit.json" "$LIVE_TMP/explicit.json" <<'PY' || live_fail "pool evidence wrong"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ev = lambda d: {e["name"]: (e["value"], e["missing"]) for e in d["evidence"]}
ea, eb = ev(a), ev(b)
assert ea["pool.recommendation.used"] == (5, False), ea.get("pool.recommendation.used")
assert ea["executor.occupancy"][0] == 30 / 32, ea.get("executor.occupancy")
assert not ea["endpoint.queue_age.p99_ms"][1] and not ea["pool.pricing_grpc.wait.p99_ms"][1]
occ, miss = ea["pool.pricing_grpc.occupancy"]
assert not miss and abs(occ - 46 / 48) < 1e-3, ea["pool.pricing_grpc.occupancy"]
assert ea["pool.pricing_grpc.pending_host_max"] == (9, False), ea["pool.pricing_grpc.pending_host_max"]
# the hypotheses about pricing's pool no longer lack its figures
for h in a["hypotheses"]:
    if h["node"] == "pricing":
        assert not any(x.startswith("pool.pricing") for x in h["missing"]), (h["id"], h["missing"])
# the written file gives the same evidence (values, provenance) and the
# same ranking as the implicit model
full = lambda d: {e["name"]: (e["value"], e["missing"], e["provenance"]) for e in d["evidence"]}
fa, fb = full(a), full(b)
assert fa == fb, sorted(k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))
rank = lambda d: [(h["id"], h["node"], h["score"]) for h in d["hypotheses"]]
assert rank(a) == rank(b)
pa = fa
assert a["model"]["source"] == "inferred" and b["model"]["source"] == "file"
assert a["model"]["findings"] == [] and b["model"]["findings"] == []
print(f"pricing-grpc occupancy {occ:.3f}, pending 9; all {len(pa)} evidence values equal")
PY

# A hand-written model that disagrees with the data (used below).
cat >"$LIVE_TMP/hand.json" <<'JSON'
{ "endpoint": "GET /shop", "root": {"service": "shop-api", "operation": "GET /shop"},
  "classes": {"attribute": "workload.class", "values": ["standard", "premium", "gold"]},
  "nodes": [ {"service": "pricing", "mandatory": true, "pool": "pricing"},
             {"service": "inventory", "mandatory": true} ],
  "pools": [ {"name": "pricing", "kind": "client", "node": "pricing", "size": 256,
              "metrics": {"label_key": "db.client.connection.pool.name", "label_value": "pricing"}},
             {"name": "profile-grpc", "kind": "client", "node": "profile", "size": 256} ] }
JSON

# Without workload.class, a varying low-cardinality root attribute is the
# class attribute (not the constant method, not the per-request user id).
DB2="$LIVE_TMP/tier.db"
live_serve "$DB2"
node "$LIVE_JS_DIR/otel_pools_app.js" "http://127.0.0.1:$LIVE_PORT" 120 tier >/dev/null ||
  live_fail "otel_pools_app.js tier failed"
live_serve_stop
"$TT_BIN" model infer --db "$DB2" >"$LIVE_TMP/tier.json" || live_fail "model infer (tier) failed"
# the hostile pool name: escaped in JSON, sanitized on the terminal
"$TT_BIN" model infer --db "$DB2" -o "$LIVE_TMP/tier2.json" >"$LIVE_TMP/tier.why" ||
  live_fail "model infer -o (tier) failed"
"$TT_BIN" model check --db "$DB2" --model "$LIVE_TMP/hand.json" >"$LIVE_TMP/tier.check" 2>&1 || true
"$TT_BIN" diagnose --db "$DB2" --model "$LIVE_TMP/hand.json" >"$LIVE_TMP/tier.diag" 2>&1 || true
for f in tier.why tier.check tier.diag; do
  if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$LIVE_TMP/$f"; then
    live_fail "$f has control characters from the data"
  fi
done
grep -q 'cache.*grpc' "$LIVE_TMP/tier.check" || live_fail "the hostile pool name is not listed (sanitized)"
python3 - "$LIVE_TMP/tier.json" <<'PY' || live_fail "the hostile pool name did not survive the JSON"
import json, sys
names = [p["name"] for p in json.load(open(sys.argv[1]))["pools"]]
assert "cache\x1b]0;owned\x07\x1b[2J-grpc" in names, names
PY
python3 - "$LIVE_TMP/tier.json" <<'PY' || live_fail "the class attribute was not inferred"
import json, sys
c = json.load(open(sys.argv[1]))["classes"]
assert c["attribute"] == "tenant.tier" and sorted(c["values"]) == ["enterprise", "free", "pro"], c
assert c["mix"]["free"] == 0.5 and "--class-key tenant.tier" in c["why"], c
PY
# given back as a file, it is told that the stored spans carry no such
# classes (they were imported with the default class key)
"$TT_BIN" report --db "$DB2" --model "$LIVE_TMP/tier.json" --format json >"$LIVE_TMP/tier.report" ||
  live_fail "report with the tier model failed"
python3 - "$LIVE_TMP/tier.report" <<'PY' || live_fail "no class finding for the tier model"
import json, sys
f = json.load(open(sys.argv[1]))["model"]["findings"]
assert sorted(x["subject"] for x in f if x["kind"] == "class_absent") == ["enterprise", "free", "pro"], f
PY

# Nor a span attribute: a resource attribute that varies between requests
# (two processes in two cells), not the host that serves them.
DB3="$LIVE_TMP/cell.db"
live_serve "$DB3"
node "$LIVE_JS_DIR/otel_pools_app.js" "http://127.0.0.1:$LIVE_PORT" 120 cell >/dev/null ||
  live_fail "otel_pools_app.js cell failed"
live_serve_stop
"$TT_BIN" model infer --db "$DB3" >"$LIVE_TMP/cell.json" || live_fail "model infer (cell) failed"
python3 - "$LIVE_TMP/cell.json" <<'PY' || live_fail "the resource class attribute was not inferred"
import json, sys
c = json.load(open(sys.argv[1]))["classes"]
assert c["attribute"] == "deployment.cell" and c["values"] == ["a", "b"], c
assert "resource attribute" in c["why"] and c["mix"] == {"a": 0.5, "b": 0.5}, c
PY

# The hand-written model against the first data set: findings everywhere.
"$TT_BIN" model check --db "$DB" --model "$LIVE_TMP/hand.json" >"$LIVE_TMP/check.txt" ||
  live_fail "model check failed"
cat "$LIVE_TMP/check.txt"
grep -q 'pool pricing: its selector db.client.connection.pool.name=pricing matches no series' "$LIVE_TMP/check.txt" &&
  grep -q 'pricing-grpc' "$LIVE_TMP/check.txt" || live_fail "no selector finding"
grep -q 'pool profile-grpc: the model says 256 slots, the metric db.client.connection.max says 64' "$LIVE_TMP/check.txt" ||
  live_fail "no size finding"
grep -q 'model node inventory is absent from the traces' "$LIVE_TMP/check.txt" || live_fail "no node finding"
grep -q 'declared class gold' "$LIVE_TMP/check.txt" || live_fail "no class finding"
"$TT_BIN" diagnose --db "$DB" --model "$LIVE_TMP/hand.json" >"$LIVE_TMP/hand.txt" || live_fail "diagnose failed"
grep -q '^Model and data (model: file ' "$LIVE_TMP/hand.txt" &&
  grep -q 'says 256 slots' "$LIVE_TMP/hand.txt" || live_fail "diagnose shows no model findings"
"$TT_BIN" report --db "$DB" --model "$LIVE_TMP/hand.json" --format json >"$LIVE_TMP/hand.json.out" ||
  live_fail "report failed"
python3 - "$LIVE_TMP/hand.json.out" <<'PY' || live_fail "report json has no model findings"
import json, sys
r = json.load(open(sys.argv[1]))
kinds = sorted(f["kind"] for f in r["model"]["findings"])
assert kinds == ["class_absent", "node_absent", "pool_selector", "pool_size"], kinds
PY
echo "model_infer_otel: ok"
