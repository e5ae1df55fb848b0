#!/usr/bin/env bash
# bench/pull_listing.sh - the "Pull: a search listing many rows" benchmark
# of bench/README.md: the CPU a `tailtriage pull --jaeger` spends on one
# search answer of many rows (tests/py/trace_api.py --repeat: every trace
# listed R times, as a back end reading several replicas may). The pull
# asks for a uniform sample of 368 traces of N one-span traces in one
# window with --page 100000, so one search lists them all (N * R rows),
# then fetches the 368. Measured: the user CPU seconds of the tailtriage
# process (/usr/bin/time), which other processes on the machine do not
# inflate as they do wall time; the trace server's time is not in it.
#
# usage: bench/pull_listing.sh [--traces N] [--repeat R] [BIN...]
#   BIN: tailtriage binaries to compare (default: build/cli/tailtriage);
#   each prints one row: binary, rows listed, distinct traces, the
#   sample's recorded population, user CPU s, wall s.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=50000 R=6
while [ $# -gt 0 ]; do
  case $1 in
  --traces) N=$2; shift 2 ;;
  --repeat) R=$2; shift 2 ;;
  *) break ;;
  esac
done
[ $# -gt 0 ] || set -- "$ROOT/build/cli/tailtriage"
TMP=$(mktemp -d)
SRV_PID=""
cleanup() { [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

T0=1767225600000000000
# N one-span traces of shop "GET /cart" spread over one hour
python3 - "$T0" "$N" >"$TMP/traces.jsonl" <<'PY'
import json, sys
t0, n = int(sys.argv[1]), int(sys.argv[2])
step = 3600 * 10**9 // n
spans = [{"traceId": "%032x" % (0xa000 + i), "spanId": "%016x" % (i + 1), "name": "GET /cart",
          "kind": 2, "startTimeUnixNano": str(t0 + i * step),
          "endTimeUnixNano": str(t0 + i * step + 10**6 * (5 + i % 300))} for i in range(n)]
print(json.dumps({"resourceSpans": [{"resource": {"attributes": [
    {"key": "service.name", "value": {"stringValue": "shop"}}]},
    "scopeSpans": [{"spans": spans}]}]}))
PY
python3 "$ROOT/tests/py/trace_api.py" --mode jaeger-v3 --repeat "$R" --data "$TMP/traces.jsonl" \
  --port-file "$TMP/port" --lifetime 3600 &
SRV_PID=$!
for _ in $(seq 600); do [ -s "$TMP/port" ] && break; sleep 0.05; done
URL="http://127.0.0.1:$(cat "$TMP/port")"

printf '| binary | rows listed | distinct traces | population recorded | user CPU s | wall s |\n'
printf '|---|---:|---:|---:|---:|---:|\n'
for bin in "$@"; do
  rm -f "$TMP/t.db"*
  /usr/bin/time -f '%U %e' -o "$TMP/time" "$bin" pull --db "$TMP/t.db" --jaeger "$URL" \
    --service shop --operation "GET /cart" --window 2026-01-01T00:00:00Z..2026-01-01T01:00:00Z \
    --sample 368 --page 100000 --retries 0 --timeout 600s >/dev/null 2>"$TMP/err" ||
    { echo "pull failed: $(cat "$TMP/err")" >&2; exit 1; }
  pop=$(sqlite3 "$TMP/t.db" "SELECT population FROM trace_sets WHERE kind = 'sample'")
  read -r user wall <"$TMP/time"
  printf '| %s | %d | %d | %s | %s | %s |\n' "$bin" $((N * R)) "$N" "$pop" "$user" "$wall"
done
