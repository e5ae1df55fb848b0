#!/usr/bin/env bash
# pull_many.sh - `tailtriage pull --jaeger` against a back end whose
# searches list every trace several times (tests/py/trace_api.py --repeat 4,
# as a back end reading several replicas of its storage may, each copy of
# a trace but the last with a shorter extent) and list thousands at once
# (--page 20000: 8,000 rows an answer). Checks what a user sees: the
# window's population is the number of distinct traces, not of rows; the
# slowest set is the 10 longest by their longest copy; every chosen trace
# is fetched once and stored once. How long the merging of the rows takes
# is measured in bench/pull_listing.sh, not here (README "Benchmarks").
set -u
BIN="${TT_BIN:?}"
API="${TT_SRC:?}/tests/py/trace_api.py"
TMP="$(mktemp -d)"
SRV_PID=""
cleanup() { [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 2,000 one-span traces of shop "GET /cart", one every 100 ms from T0,
# trace i lasting 5 + (i * 7919 mod 2000) / 10 ms: all lengths differ
T0=1767225600000000000
python3 - "$T0" >"$TMP/traces.jsonl" <<'PY'
import json, sys
t0 = int(sys.argv[1])
spans = []
for i in range(2000):
    s = t0 + i * 10**8
    d = 5 * 10**6 + (i * 7919 % 2000) * 10**5
    spans.append({"traceId": "%032x" % (0xa000 + i), "spanId": "%016x" % (i + 1),
                  "name": "GET /cart", "kind": 2, "startTimeUnixNano": str(s),
                  "endTimeUnixNano": str(s + d)})
print(json.dumps({"resourceSpans": [{"resource": {"attributes": [
    {"key": "service.name", "value": {"stringValue": "shop"}}]},
    "scopeSpans": [{"spans": spans}]}]}))
PY
python3 -c 'for i in range(2000):
    if i * 7919 % 2000 >= 1990: print("%032x" % (0xa000 + i))' | sort >"$TMP/slowest.ref"

python3 "$API" --mode jaeger-v3 --repeat 4 --data "$TMP/traces.jsonl" --port-file "$TMP/port" \
  --log "$TMP/requests.log" --lifetime 300 &
SRV_PID=$!
for _ in $(seq 300); do [ -s "$TMP/port" ] && break; sleep 0.05; done
[ -s "$TMP/port" ] || fail "trace_api.py did not start"
URL="http://127.0.0.1:$(cat "$TMP/port")"

DB="$TMP/t.db"
"$BIN" pull --db "$DB" --jaeger "$URL" --service shop --operation "GET /cart" \
  --window 2026-01-01T00:00:00Z..2026-01-01T00:05:00Z --slowest 10 --sample 200 --page 20000 \
  --retries 0 >"$TMP/out" 2>"$TMP/err" || fail "pull: $(cat "$TMP/err")"

q() { sqlite3 "$DB" "$1"; }
pop=$(q "SELECT population FROM trace_sets WHERE kind = 'sample'")
[ "$pop" = 2000 ] || fail "the sample's population is '$pop', not the 2000 distinct traces listed (8,000 rows)"
n=$(q "SELECT count(*) FROM trace_set_members m JOIN trace_sets s ON s.id = m.set_id WHERE s.kind = 'sample'")
[ "$n" = 200 ] || fail "the sample holds $n traces, not 200"
q "SELECT m.trace_id FROM trace_set_members m JOIN trace_sets s ON s.id = m.set_id
   WHERE s.kind = 'slowest' ORDER BY 1" >"$TMP/slowest.got"
diff "$TMP/slowest.ref" "$TMP/slowest.got" >/dev/null ||
  fail "the slowest set is not the 10 longest traces: $(diff "$TMP/slowest.ref" "$TMP/slowest.got")"

# each chosen trace fetched once, stored once
grep -o '^GET /api/v3/traces/[0-9a-f]*' "$TMP/requests.log" | sort >"$TMP/fetched"
[ -z "$(uniq -d "$TMP/fetched")" ] || fail "traces fetched twice: $(uniq -d "$TMP/fetched" | head -3)"
chosen=$(q "SELECT count(DISTINCT trace_id) FROM trace_set_members")
[ "$(wc -l <"$TMP/fetched")" = "$chosen" ] ||
  fail "$(wc -l <"$TMP/fetched") fetches for $chosen chosen traces"
[ "$(q 'SELECT count(*) FROM spans')" = "$chosen" ] ||
  fail "$(q 'SELECT count(*) FROM spans') spans stored for $chosen one-span traces"
[ "$(q 'SELECT count(*) FROM traces')" = "$chosen" ] || fail "traces stored: $(q 'SELECT count(*) FROM traces')"

echo "pull_many: ok"
