#!/usr/bin/env bash
# pull_traces_live.sh - `tailtriage pull --jaeger` beside --prometheus, and
# with --every, against loopback servers: tests/py/trace_api.py answering
# as Jaeger's API v3 from a simulated incident moved to end half a minute
# ago, and Debian's Prometheus (no data that old: every query answers an
# empty vector, which is recorded).
#  - --prometheus with --jaeger: the model's queries (and --query's) are
#    evaluated across the pulled window and baseline, one instant every
#    --range from the first full rate() window to the end of each range,
#    and recorded with those evaluation times;
#  - --every 1s --last 5m: a moving window; each round records its own
#    sets, their windows move forward, every trace of every set is stored,
#    and no trace is fetched twice across rounds (a trace already stored is
#    not fetched again); SIGTERM ends it between rounds, status 0.
# Every server is on 127.0.0.1 and stopped when the test ends.
set -u
BIN="${TT_BIN:?}"
API="${TT_SRC:?}/tests/py/trace_api.py"
TMP="$(mktemp -d)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v prometheus >/dev/null || { echo "SKIP: prometheus is not installed (scripts/setup.sh)"; exit 77; }

"$BIN" sim mercury --out "$TMP/sim" --traces 300 -q || fail "sim"
# the incident's last five minutes end 30 s ago, the five before them are
# the baseline: every time of the data moves by the same amount
python3 - "$TMP/sim/traces.jsonl" "$TMP/sim/manifest.json" "$TMP/live.jsonl" >"$TMP/ranges" <<'PY'
import json, sys, time
m = json.load(open(sys.argv[2]))
end = int(m["window"]["to_ns"])
now = time.time_ns()
delta = now - 30 * 10**9 - end
def shift(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("startTimeUnixNano", "endTimeUnixNano", "timeUnixNano"):
                o[k] = str(int(v) + delta)
            else:
                shift(v)
    elif isinstance(o, list):
        for v in o:
            shift(v)
with open(sys.argv[3], "w") as out:
    for line in open(sys.argv[1]):
        d = json.loads(line)
        shift(d)
        out.write(json.dumps(d) + "\n")
w1 = end + delta
print(w1 - 5 * 60 * 10**9, w1)
PY
read -r W0 W1 <"$TMP/ranges"
ms() { echo $(($1 / 1000000)); }
WIN="$(ms "$W0")..$(ms "$W1")"

python3 "$API" --mode jaeger-v3 --data "$TMP/live.jsonl" --port-file "$TMP/port" \
  --log "$TMP/requests.log" --lifetime 300 &
PIDS+=($!)
PROM_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'global:\n  scrape_interval: 1s\n' >"$TMP/prometheus.yml"
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PIDS+=($!)
PROM="http://127.0.0.1:$PROM_PORT"
for _ in $(seq 600); do [ -s "$TMP/port" ] && curl -fsS "$PROM/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
[ -s "$TMP/port" ] || fail "trace_api.py did not start"
curl -fsS "$PROM/-/ready" >/dev/null 2>&1 || { cat "$TMP/prometheus.log" >&2; fail "Prometheus did not start"; }
URL="http://127.0.0.1:$(cat "$TMP/port")"
SVC=mercury-api
OP="GET /v2/home"

# --prometheus beside --jaeger: the queries of the model across the ranges
"$BIN" pull --db "$TMP/both.db" --jaeger "$URL" --prometheus "$PROM" \
  --model "$TT_SRC/models/mercury-home.model.json" --query 'targets=sum(up)' --range 1m \
  --service "$SVC" --operation "$OP" --window "$WIN" --baseline before --slowest 5 --sample 20 \
  >"$TMP/both.out" 2>"$TMP/both.err" || fail "pull with --prometheus: $(cat "$TMP/both.out" "$TMP/both.err")"
cat "$TMP/both.out"
grep -q "^prometheus $PROM: [0-9]* queries at 5 instants of the window and 5 of the baseline (every 1m); 0 failed" "$TMP/both.out" ||
  fail "the metrics of the ranges were not pulled: $(cat "$TMP/both.out" "$TMP/both.err")"
python3 - "$TMP/both.db" "$(ms "$W0")" "$(ms "$W1")" <<'PY' || fail "the metric queries were not evaluated across the window and the baseline"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
w0, w1 = int(sys.argv[2]) * 10**6, int(sys.argv[3]) * 10**6
b0, b1 = 2 * w0 - w1, w0
rows = db.execute("SELECT name, eval_ns FROM promql_queries").fetchall()
names = {n for n, _ in rows}
evals = sorted({t for _, t in rows})
step = 60 * 10**9
want = [(b0 + k * step) // 10**6 * 10**6 for k in range(1, 6)] + [(w0 + k * step) // 10**6 * 10**6 for k in range(1, 6)]
print("queries:", len(names), "instants:", len(evals), "rows:", len(rows))
ok = ("pool.pricing.used" in names and "targets" in names and "request.rate" in names
      and evals == sorted(want) and len(rows) == len(names) * 10)
# the traces are there too, with their sets
sets = db.execute("SELECT kind, role, count(*) FROM trace_sets GROUP BY 1, 2").fetchall()
print("sets:", sets)
# a slowest set and a sample of each range: four
sys.exit(0 if ok and len(sets) == 4 else 1)
PY

# --every: a moving window, a set of each kind per round, nothing fetched twice
: >"$TMP/requests.log"
"$BIN" pull --db "$TMP/live.db" --jaeger "$URL" --service "$SVC" --operation "$OP" \
  --every 1s --last 5m --baseline before --slowest 5 --sample 20 >"$TMP/live.out" 2>"$TMP/live.err" &
LIVE=$!
PIDS+=($LIVE)
for _ in $(seq 1200); do
  [ "$(grep -c 'traces fetched' "$TMP/live.out")" -ge 3 ] && break
  kill -0 "$LIVE" 2>/dev/null || break
  sleep 0.1
done
kill -TERM "$LIVE" 2>/dev/null
wait "$LIVE"
st=$?
cat "$TMP/live.out"
[ "$st" = 0 ] || fail "pull --every did not end cleanly on SIGTERM (status $st): $(cat "$TMP/live.err")"
rounds=$(grep -c 'traces fetched' "$TMP/live.out")
[ "$rounds" -ge 3 ] || fail "pull --every made $rounds rounds: $(cat "$TMP/live.err")"
python3 - "$TMP/live.db" "$TMP/requests.log" "$rounds" <<'PY' || fail "the moving window's pulls are not idempotent"
import collections, re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rounds = int(sys.argv[3])
wins = [r[0] for r in db.execute(
    "SELECT from_ns FROM trace_sets WHERE kind = 'slowest' AND role = 'window' ORDER BY id")]
missing = db.execute("SELECT count(DISTINCT m.trace_id) FROM trace_set_members m"
                     " WHERE NOT EXISTS (SELECT 1 FROM spans s WHERE s.trace_id = m.trace_id)").fetchone()[0]
fetched = collections.Counter(re.findall(r"/api/v3/traces/([0-9a-f]{32})", open(sys.argv[2]).read()))
twice = [t for t, n in fetched.items() if n > 1]
stored = db.execute("SELECT count(*) FROM traces").fetchone()[0]
print("rounds:", rounds, "slowest sets:", len(wins), "traces fetched:", len(fetched),
      "stored:", stored, "fetched twice:", len(twice), "missing:", missing)
ok = (len(wins) >= rounds and all(b > a for a, b in zip(wins, wins[1:])) and missing == 0
      and not twice and len(fetched) == stored and stored > 0)
sys.exit(0 if ok else 1)
PY
echo "pull_traces_live: ok"
