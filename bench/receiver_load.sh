#!/usr/bin/env bash
# bench/receiver_load.sh - throughput of `tailtriage serve` on loopback.
#
# For each protocol (OTLP/HTTP JSON, OTLP/HTTP protobuf, OTLP/gRPC) and
# configuration (concurrent senders x spans per request) it starts serve on
# a fresh database, runs tests/js/load_sender.js (Node.js; keep-alive
# connections, or one gRPC channel) for a fixed time, stops serve, and
# checks that every request answered 200 (gRPC: OK) is in the database with
# all its spans. Prints one Markdown table row per run; --record replaces
# the table in the "## Receiver throughput" section of bench/README.md.
#
# usage: bench/receiver_load.sh [--seconds N] [--repeat N] [--record] [--protocols LIST] [C:B ...]
#   TT_BIN     tailtriage binary (default: build/cli/tailtriage)
#   C:B        concurrency and batch size (default: 1:1 8:1 8:50 32:50)
#   LIST       comma-separated: json, proto, grpc (default: all three)
#   --repeat N each row is the run with the median spans/s of N runs
#              (default 1; the machine is shared, single runs are noisy)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TT_SRC=$ROOT
: "${TT_BIN:=$ROOT/build/cli/tailtriage}"
[ -x "$TT_BIN" ] || { echo "receiver_load: no binary at $TT_BIN (set TT_BIN)" >&2; exit 2; }
export TT_BIN

seconds=3
repeat=1
record=0
configs=()
protocols=json,proto,grpc
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --record) record=1; shift ;;
    --protocols) protocols=$2; shift 2 ;;
    *:*) configs+=("$1"); shift ;;
    *) echo "usage: $0 [--seconds N] [--repeat N] [--record] [--protocols LIST] [C:B ...]" >&2; exit 2 ;;
  esac
done
[ ${#configs[@]} -gt 0 ] || configs=(1:1 8:1 8:50 32:50)

source "$ROOT/tests/js/live_common.bash"
live_need_node

# run_one PROTOCOL C B: prints a table row; fails if an acknowledged span
# is missing.
run_one() {
  local proto=$1 conc=$2 batch=$3 db="$LIVE_TMP/load-$1-$2-$3.db"
  live_serve "$db" -q --max-connections $((conc + 8))
  local port=$LIVE_PORT
  [ "$proto" = grpc ] && port=$LIVE_GRPC_PORT
  node "$LIVE_JS_DIR/load_sender.js" "http://127.0.0.1:$port" "$seconds" "$conc" "$batch" \
    "$LIVE_TMP/acked-$conc-$batch" "$proto" >"$LIVE_TMP/load.json" || live_fail "load_sender failed"
  live_serve_stop
  kill -0 "$LIVE_SERVE_PID" 2>/dev/null && live_fail "serve did not stop"
  grep -q '^tailtriage: stopped' "$LIVE_SERVE_LOG" || live_fail "serve did not stop cleanly (crash?)"
  {
    echo "CREATE TEMP TABLE acked(trace_id TEXT PRIMARY KEY);"
    echo "BEGIN;"
    sed "s/.*/INSERT INTO acked VALUES('&');/" "$LIVE_TMP/acked-$conc-$batch"
    echo "COMMIT;"
    echo "SELECT count(*), (SELECT count(*) FROM acked a WHERE (SELECT count(*) FROM spans s WHERE s.trace_id = a.trace_id) <> $batch) FROM acked;"
  } >"$LIVE_TMP/check.sql"
  local acked bad
  read -r acked bad < <(sqlite3 -batch -separator ' ' "$db" <"$LIVE_TMP/check.sql")
  [ "$bad" = 0 ] || live_fail "$bad of $acked acknowledged requests are not fully stored"
  python3 - "$LIVE_TMP/load.json" "$acked" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["acked_requests"] == int(sys.argv[2]), (s, sys.argv[2])
other = {k: v for k, v in s["statuses"].items() if k != "200"}
names = {"json": "HTTP JSON", "proto": "HTTP protobuf", "grpc": "gRPC"}
print("| %s | %d | %d | %.1f | %d | %.0f | %.0f | %.1f | %.1f | %s |" % (
    names[s["protocol"]], s["concurrency"], s["batch"], s["seconds"], s["requests"], s["requests_per_s"],
    s["spans_per_s"], s["latency_ms"]["p50"], s["latency_ms"]["p99"],
    ", ".join(f"{v}x{k}" for k, v in other.items()) or "none"))
EOF
}

header="| protocol | senders | spans/request | seconds | requests | requests/s | spans/s stored | p50 ms | p99 ms | non-200 |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
# median_row: of the table rows on stdin, the one with the median spans/s.
median_row() {
  sort -t'|' -k8,8n | awk '{ r[NR] = $0 } END { print r[int((NR + 1) / 2)] }'
}
rows=$(for c in "${configs[@]}"; do
  for p in ${protocols//,/ }; do
    for _ in $(seq 1 "$repeat"); do run_one "$p" "${c%%:*}" "${c##*:}"; done | median_row
  done
done)
echo "$header"
echo "$rows"

if [ $record = 1 ]; then
  readme="$ROOT/bench/README.md"
  python3 - "$readme" "$header" "$rows" "$seconds" "$load_before" "$repeat" <<'EOF'
import datetime, os, platform, re, subprocess, sys
path, header, rows, seconds, load, repeat = sys.argv[1:7]
runs = "one run" if repeat == "1" else f"the run with the median spans/s of {repeat}"

cpu = "?"
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
except OSError:
    pass
node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
body = f"""## Receiver throughput

`bench/receiver_load.sh --record` (this table is rewritten by it). Each row:
`tailtriage serve -q` on a fresh database on 127.0.0.1, `tests/js/load_sender.js`
(Node.js {node}) sending OTLP trace requests for {seconds} s, one new trace per
request: OTLP/HTTP with JSON or protobuf bodies on keep-alive connections, or
OTLP/gRPC on one channel (@grpc/grpc-js), the same spans in each encoding. After
each run the script checks that every request answered 200 (gRPC: OK) is in the
database with all its spans (it fails otherwise). Each row is {runs}. Machine: {os.cpu_count()} cores, {cpu}; sender and server share them
(load average before the runs: {load}; other work on the machine lowers the figures).
Recorded {datetime.date.today().isoformat()}.

{header}
{rows}

Reading it: one request is one SQLite transaction on the receiver's single writer
connection (a 200 means committed; WAL, synchronous=NORMAL), so small requests are
bound by the per-transaction cost and more senders only queue behind it, while
batching spans is what raises throughput (the OpenTelemetry SDK's batch processor
sends up to 512 spans per request by default). The Node.js sender takes a good
part of the two cores at high request rates. A protobuf body is decoded into the
OTLP/JSON text of the same request and imported by the same importer (one set of
checks, the same rows), so HTTP protobuf costs about what JSON does. gRPC adds
thread hand-offs per call (gRPC's network threads, then the receiver's thread
that runs the imports one at a time) and its Node.js client is heavier than
plain HTTP; four calls are in flight on the server side so that the next ones are
read while one is imported.
"""
text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
pat = re.compile(r"^## Receiver throughput\n.*?(?=^## |\Z)", re.S | re.M)
if pat.search(text):
    text = pat.sub(lambda m: body + "\n", text)
else:
    text = text.rstrip("\n") + "\n\n" + body
open(path, "w").write(text)
print(f"recorded in {path}", file=sys.stderr)
EOF
fi
