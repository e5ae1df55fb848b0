#!/usr/bin/env bash
# live_prometheus.sh - a real Prometheus server (Debian package) scrapes a
# prom-client exporter every second on loopback; `tailtriage pull --once`
# runs the queries the Mercury model implies plus ad-hoc ones (vector,
# scalar, matrix results) and stores what PromQL returns. Then the error
# paths: a PromQL error, an HTTP error, a refused connection and a server
# that never answers all give a clear message and store nothing.
source "${TT_SRC:?}/tests/js/live_common.bash"
live_need_node
command -v prometheus >/dev/null || live_apt prometheus || true
command -v prometheus >/dev/null || live_skip "prometheus not available and cannot be installed"

# The exporter.
node "$LIVE_JS_DIR/prom_exporter.js" "$LIVE_TMP/exporter.port" &
LIVE_PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$LIVE_TMP/exporter.port" ] && break; sleep 0.05; done
EXP_PORT=$(cat "$LIVE_TMP/exporter.port")

# Prometheus with a temporary config and storage, scraping every second.
PROM_PORT=$(live_free_port)
cat >"$LIVE_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: checkout
    static_configs:
      - targets: ['127.0.0.1:$EXP_PORT']
EOF
prometheus --config.file="$LIVE_TMP/prometheus.yml" --storage.tsdb.path="$LIVE_TMP/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$LIVE_TMP/prometheus.log" 2>&1 &
LIVE_PIDS+=($!)
PROM="http://127.0.0.1:$PROM_PORT"

# Ready when rate() over the exporter's counters has two scrapes to use.
ready=0
for _ in $(seq 1 150); do
  if curl -fsS "$PROM/api/v1/query" --data-urlencode \
    'query=count(rate(http_server_request_duration_seconds_count[1m]))' 2>/dev/null |
    grep -q '"value":\[[0-9.]*,"3"\]'; then
    ready=1
    break
  fi
  sleep 0.2
done
[ $ready = 1 ] || { cat "$LIVE_TMP/prometheus.log" >&2; live_fail "Prometheus did not scrape the exporter"; }

DB="$LIVE_TMP/pull.db"
MODEL="$TT_SRC/models/mercury-home.model.json"
"$TT_BIN" pull --db "$DB" --prometheus "$PROM" --model "$MODEL" --once --range 10s \
  --query up --query 'targets_up=sum(up)' --query 'scalar(sum(up))' --query 'up[3s]' \
  >"$LIVE_TMP/pull.out" 2>"$LIVE_TMP/pull.err" ||
  { cat "$LIVE_TMP/pull.out" "$LIVE_TMP/pull.err" >&2; live_fail "pull --once failed"; }
cat "$LIVE_TMP/pull.out"

python3 - "$DB" <<'EOF' || live_fail "pulled results are not what PromQL returned"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def points(family):
    return [(json.loads(l), v, t) for l, v, t in db.execute(
        "SELECT s.labels, p.value, p.ts_ns FROM metric_points p"
        " JOIN metric_series s ON s.id = p.series_id"
        " JOIN metric_families f ON f.id = s.family_id WHERE f.name = ?", (family,))]

# Pool gauges: stored under the model's metric names and label key.
used = points("db.client.connection.count")
byst = {l["db_client_connection_state"]: v for l, v, _ in used
        if l.get("db.client.connection.pool.name") == "pricing"}
assert byst == {"used": 203.0, "idle": 53.0}, used
assert [v for _, v, _ in points("db.client.connection.max")] == [256.0]
pend = points("db.client.connection.pending_requests")
assert len(pend) == 1 and 7 <= pend[0][1] <= 9, pend
# Wait-time p99 from the histogram: one wait in twenty is 70 ms.
p99 = points("pool.pricing.wait.p99")
assert len(p99) == 1 and 0.05 < p99[0][1] <= 0.1, p99
# Class mix from request rates: 14/4/2 of every 20 requests.
mix = {l["workload_class"]: v for l, v, _ in points("class.mix")}
assert set(mix) == {"standard", "premium", "enterprise"}, mix
assert abs(mix["standard"] - 0.7) < 0.02 and abs(mix["enterprise"] - 0.1) < 0.02, mix
rate = points("request.rate")
assert len(rate) == 1 and rate[0][0] == {"job": "checkout"} and rate[0][1] > 10, rate
assert len(points("cpu.process_cores")) == 1
# Ad-hoc queries: a vector that kept __name__, a named aggregate, a
# scalar, and a matrix with one point per scrape.
up = points("up")
assert len(up) >= 2 and all(v == 1.0 for _, v, _ in up), up
assert [v for _, v, _ in points("targets_up")] == [1.0]
assert [v for _, v, _ in points("scalar(sum(up))")] == [1.0]
# Types: computed values are gauges, a raw series keeps "unknown".
types = dict(db.execute("SELECT name, type FROM metric_families WHERE name IN ('up', 'targets_up')"))
assert types == {"up": "unknown", "targets_up": "gauge"}, types
# Every query is recorded with its text, URL and evaluation time.
rows = db.execute("SELECT name, query, result_type, samples, eval_ns FROM promql_queries").fetchall()
names = {r[0]: r for r in rows}
assert names["up[3s]"][2] == "matrix" and names["up[3s]"][3] >= 2, names["up[3s]"]
assert names["scalar(sum(up))"][2] == "scalar"
assert names["pool.pricing.used"][1] == 'db_client_connection_count{db_client_connection_pool_name="pricing"}'
assert len({r[4] for r in rows}) == 1, "one evaluation time per round"
evals = rows[0][4]
assert all(t == evals for _, _, t in points("targets_up"))
print(f"{len(rows)} queries recorded; p99 wait {p99[0][1]*1000:.1f} ms; mix {mix}")
EOF

count() { live_sql "$DB" "select (select count(*) from metric_points) || ' ' || (select count(*) from sources) || ' ' || (select count(*) from promql_queries)"; }
before=$(count)

# Pulling the same instant again adds nothing new for instant vectors, but
# a new round at a new time adds new points.
expect_fail() { # expect_fail PATTERN pull-args...
  local pattern=$1
  shift
  if "$TT_BIN" pull --db "$DB" --once -q "$@" >"$LIVE_TMP/f.out" 2>"$LIVE_TMP/f.err"; then
    live_fail "pull $* succeeded"
  fi
  grep -q -- "$pattern" "$LIVE_TMP/f.err" || { cat "$LIVE_TMP/f.err" >&2; live_fail "no '$pattern' in the message"; }
  sed -n 1p "$LIVE_TMP/f.err"
  [ "$(count)" = "$before" ] || live_fail "a failed pull changed the database"
}
expect_fail 'bad_data' --prometheus "$PROM" --query 'sum(up'
expect_fail 'HTTP 404' --prometheus "$PROM/nope" --query up
DEAD_PORT=$(live_free_port)
expect_fail 'Could not connect\|Connection refused\|Failed to connect' --prometheus "http://127.0.0.1:$DEAD_PORT" --query up
# A server that accepts and never answers.
SILENT_PORT=$(live_free_port)
python3 -c "
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $SILENT_PORT)); s.listen(4)
open(sys.argv[1], 'w').write('ready')
held = []
t0 = time.time()
while time.time() - t0 < 30:
    c, _ = s.accept(); held.append(c)" "$LIVE_TMP/silent.ready" &
LIVE_PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$LIVE_TMP/silent.ready" ] && break; sleep 0.05; done
expect_fail 'no answer within 1000 ms' --prometheus "http://127.0.0.1:$SILENT_PORT" --timeout 1s --query up

# --every: two rounds, then SIGTERM stops it cleanly.
"$TT_BIN" pull --db "$DB" --prometheus "$PROM" --every 1100ms --query 'targets_up=sum(up)' \
  >"$LIVE_TMP/every.out" 2>&1 &
every_pid=$!
for _ in $(seq 1 60); do
  [ "$(grep -c '^round at' "$LIVE_TMP/every.out")" -ge 2 ] && break
  sleep 0.1
done
kill -TERM $every_pid
wait $every_pid || live_fail "pull --every did not exit cleanly on SIGTERM"
[ "$(grep -c '^round at' "$LIVE_TMP/every.out")" -ge 2 ] || live_fail "pull --every did not repeat"
n=$(live_sql "$DB" "select count(*) from metric_points p join metric_series s on s.id = p.series_id join metric_families f on f.id = s.family_id where f.name = 'targets_up'")
[ "$n" -ge 3 ] || live_fail "pull --every stored $n targets_up points"
echo "live_prometheus: ok"
