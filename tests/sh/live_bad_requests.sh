#!/usr/bin/env bash
# live_bad_requests.sh - `tailtriage serve` against bad requests sent by
# curl and by a raw socket: each gets the right status and a JSON message,
# and the database stays exactly as it was; a slow client is cut off
# without holding up the others.
source "${TT_SRC:?}/tests/js/live_common.bash"

DB="$LIVE_TMP/bad.db"
live_serve "$DB" --max-body 64K --timeout 1
URL="http://127.0.0.1:$LIVE_PORT"

span_doc() { # span_doc TRACE_HEX_SUFFIX N_SPANS
  python3 - "$1" "$2" <<'EOF'
import json, sys
tid = ("%032x" % int(sys.argv[1]))
spans = [{"traceId": tid, "spanId": "%016x" % (i + 1), "name": "op%d" % i, "kind": 2,
          "startTimeUnixNano": str(1700000000000000000 + i * 1000000),
          "endTimeUnixNano": str(1700000000005000000 + i * 1000000)} for i in range(int(sys.argv[2]))]
print(json.dumps({"resourceSpans": [{"resource": {"attributes": [
    {"key": "service.name", "value": {"stringValue": "api"}}]},
    "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]}))
EOF
}

state() { live_sql "$DB" "select (select count(*) from spans) || '/' || (select count(*) from sources)"; }

# post NAME EXPECTED_STATUS BODY_PATTERN curl-args...
post() {
  local name=$1 want=$2 pattern=$3
  shift 3
  local before got
  before=$(state)
  got=$(curl -sS -o "$LIVE_TMP/resp" -w '%{http_code}' "$@") || live_fail "$name: curl failed"
  [ "$got" = "$want" ] || live_fail "$name: status $got, expected $want ($(cat "$LIVE_TMP/resp"))"
  [ -z "$pattern" ] || grep -q -- "$pattern" "$LIVE_TMP/resp" || live_fail "$name: body $(cat "$LIVE_TMP/resp") lacks '$pattern'"
  if [ "$want" != 200 ]; then
    # {code, message} as JSON, or as a protobuf google.rpc.Status
    # (fields 1 and 2) for protobuf requests
    python3 - "$LIVE_TMP/resp" <<'PY' || live_fail "$name: error body is not {code, message}"
import json, sys
b = open(sys.argv[1], "rb").read()
if b[:1] == b"{":
    d = json.loads(b)
    assert isinstance(d["code"], int) and d["message"]
else:
    assert b[0] == 0x08 and b[1] == 3 and b[2] == 0x12 and b[3] == len(b) - 4 or b[3] & 0x80, b
PY
    [ "$(state)" = "$before" ] || live_fail "$name: the database changed ($before -> $(state))"
  fi
  printf '%-28s %s %s\n' "$name" "$got" "$(head -c 110 "$LIVE_TMP/resp")"
}

JSON=(-H 'Content-Type: application/json')
span_doc 1 3 >"$LIVE_TMP/good.json"
head -c 150 "$LIVE_TMP/good.json" >"$LIVE_TMP/trunc.json"
span_doc 2 400 >"$LIVE_TMP/big.json"   # ~80 KB > 64K
python3 -c 'import sys; sys.stdout.buffer.write(b"\0" * (8 << 20))' | gzip -9 >"$LIVE_TMP/bomb.gz"
gzip -c "$LIVE_TMP/good.json" | head -c 60 >"$LIVE_TMP/cut.gz"
echo '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}' >"$LIVE_TMP/badid.json"

post "truncated JSON" 400 '/v1/traces:1:' "${JSON[@]}" --data-binary @"$LIVE_TMP/trunc.json" "$URL/v1/traces"
post "bad trace id" 400 '/v1/traces:1:' "${JSON[@]}" --data-binary @"$LIVE_TMP/badid.json" "$URL/v1/traces"
post "not JSON at all" 400 '"code":3' "${JSON[@]}" --data-binary 'hello' "$URL/v1/traces"
post "empty body" 400 'empty' "${JSON[@]}" --data-binary '' "$URL/v1/traces"
post "JSON sent as protobuf" 400 'byte 0: field 15: groups' -H 'Content-Type: application/x-protobuf' \
  --data-binary @"$LIVE_TMP/good.json" "$URL/v1/traces"
# A real protobuf request (two spans), then cut and corrupted copies.
python3 - "$LIVE_TMP" <<'PY'
import struct, sys
def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80]); v >>= 7
    return out + bytes([v])
def field(n, payload): return varint(n << 3 | 2) + varint(len(payload)) + payload
def span(i):
    return (field(1, b"\xab" + bytes(14) + bytes([i])) + field(2, bytes(7) + bytes([i])) + field(5, b"op")
            + varint(7 << 3 | 1) + struct.pack("<Q", 1700000000000000000)
            + varint(8 << 3 | 1) + struct.pack("<Q", 1700000000001000000))
req = field(1, field(2, field(2, span(1)) + field(2, span(2))))
open(sys.argv[1] + "/good.pb", "wb").write(req)
open(sys.argv[1] + "/trunc.pb", "wb").write(req[:-5])
open(sys.argv[1] + "/badwire.pb", "wb").write(req[:6] + b"\x0f" + req[7:])
PY
PB=(-H 'Content-Type: application/x-protobuf')
post "truncated protobuf" 400 'byte 0: field 1: length' "${PB[@]}" --data-binary @"$LIVE_TMP/trunc.pb" "$URL/v1/traces"
post "corrupt protobuf" 400 'byte 6: field 1: wire type 7' "${PB[@]}" --data-binary @"$LIVE_TMP/badwire.pb" "$URL/v1/traces"
post "text/plain" 415 'must be application/json or application/x-protobuf' -H 'Content-Type: text/plain' \
  --data-binary @"$LIVE_TMP/good.json" "$URL/v1/traces"
post "brotli encoding" 415 'not supported' "${JSON[@]}" -H 'Content-Encoding: br' \
  --data-binary @"$LIVE_TMP/good.json" "$URL/v1/traces"
post "oversized body" 413 'above the limit' "${JSON[@]}" --data-binary @"$LIVE_TMP/big.json" "$URL/v1/traces"
post "oversized, chunked" 413 'above the limit' "${JSON[@]}" -H 'Transfer-Encoding: chunked' \
  --data-binary @"$LIVE_TMP/big.json" "$URL/v1/traces"
post "gzip bomb (8 MiB of zeros)" 413 'inflates to more than' "${JSON[@]}" -H 'Content-Encoding: gzip' \
  --data-binary @"$LIVE_TMP/bomb.gz" "$URL/v1/traces"
post "cut gzip stream" 400 'gzip' "${JSON[@]}" -H 'Content-Encoding: gzip' \
  --data-binary @"$LIVE_TMP/cut.gz" "$URL/v1/traces"
post "unknown path" 404 'unknown path' "${JSON[@]}" --data-binary @"$LIVE_TMP/good.json" "$URL/v1/logs"
post "GET" 405 'use POST' "$URL/v1/traces"

# OTLP: an empty request is valid and unknown fields are ignored, on both
# endpoints alike. A body with only fields the endpoint does not read (the
# other signal's body) is a 200 with a warning, stores nothing, is logged
# and counted (sources.outcome 'unrecognised', shown by the dashboard and
# the report).
for ep in traces metrics; do
  post "empty request on $ep" 200 '^{}$' "${JSON[@]}" --data-binary '{}' "$URL/v1/$ep"
  post "unknown field on $ep" 200 'nothing stored' "${JSON[@]}" --data-binary '{"foo":1}' "$URL/v1/$ep"
done
post "metrics body on traces" 200 'resourceSpans.*nothing stored' "${JSON[@]}" --data-binary '{"resourceMetrics":[]}' "$URL/v1/traces"
post "traces body on metrics" 200 'resourceMetrics.*nothing stored' "${JSON[@]}" --data-binary @"$LIVE_TMP/good.json" "$URL/v1/metrics"
[ "$(live_sql "$DB" "select count(*) from sources where outcome = 'unrecognised'")" = 4 ] ||
  live_fail "expected 4 sources with outcome 'unrecognised'"
[ "$(grep -c '200 .*warning: the body has no' "$LIVE_SERVE_LOG")" = 4 ] ||
  live_fail "expected 4 warning lines in the serve log"

# A slow client sends its headers and part of the body, then stalls. The
# server drops it after the 1 s idle timeout without a response, and
# answers another client meanwhile.
python3 - "$LIVE_PORT" >"$LIVE_TMP/slow.out" <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: 5000\r\n\r\n{\"resourceSpans\":[")
t0 = time.time()
s.settimeout(10)
data = b""
try:
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
except socket.timeout:
    pass
print("%.2f %d" % (time.time() - t0, len(data)))
EOF
slow_pid=$!
sleep 0.3
before=$(state)
post "good request during stall" 200 '{}' "${JSON[@]}" --data-binary @"$LIVE_TMP/good.json" "$URL/v1/traces"
[ "$(state)" != "$before" ] || live_fail "the good request was not stored"
wait $slow_pid
read -r secs bytes <"$LIVE_TMP/slow.out"
echo "slow client: dropped after ${secs}s with $bytes response bytes"
python3 -c "import sys; s=float(sys.argv[1]); assert 0.5 <= s <= 5, s" "$secs" ||
  live_fail "slow client was not dropped after the idle timeout (${secs}s)"
[ "$bytes" = 0 ] || live_fail "slow client got a response"
grep -q 'dropped: connection idle too long' "$LIVE_SERVE_LOG" || live_fail "no drop line in the serve log"

# The good body again: 200 with a partialSuccess warning, nothing added.
before=$(live_sql "$DB" 'select count(*) from spans')
post "retried body" 200 '"rejectedSpans":0' "${JSON[@]}" --data-binary @"$LIVE_TMP/good.json" "$URL/v1/traces"
[ "$(live_sql "$DB" 'select count(*) from spans')" = "$before" ] || live_fail "retry added spans"
# gzip of a good body works.
span_doc 3 2 | gzip -c >"$LIVE_TMP/good.gz"
post "gzip body" 200 '{}' "${JSON[@]}" -H 'Content-Encoding: gzip' --data-binary @"$LIVE_TMP/good.gz" "$URL/v1/traces"
# The good protobuf body: 200, an empty ExportTraceServiceResponse.
post "protobuf body" 200 '' "${PB[@]}" --data-binary @"$LIVE_TMP/good.pb" "$URL/v1/traces"
[ ! -s "$LIVE_TMP/resp" ] || live_fail "protobuf answer is not an empty ExportTraceServiceResponse"

[ "$(live_sql "$DB" 'select count(*) from spans')" = 7 ] || live_fail "expected exactly 7 spans stored"
live_serve_stop
tail -n 1 "$LIVE_SERVE_LOG"
grep -q 'stopped: 26 requests received, 10 accepted (4 with nothing this endpoint reads), 16 rejected' "$LIVE_SERVE_LOG" ||
  live_fail "unexpected counters"
"$TT_BIN" report --db "$DB" >"$LIVE_TMP/report.txt" 2>&1 || true
grep -q '4 files or request bodies with nothing their format reads' "$LIVE_TMP/report.txt" ||
  live_fail "the report does not count the unrecognised bodies: $(cat "$LIVE_TMP/report.txt")"

# Clients waiting their turn are not idle clients. Another process holds
# the database's write lock for 3 s (the receiver waits up to 5 s for it).
# Five clients send their headers and half a body, then the other half
# 0.5 s later; meanwhile a sixth, complete request starts its import and
# waits for the lock. The five have sent everything long before the 1 s
# idle timeout, and wait only for the receiver: all six must be answered
# 200 and stored. A receiver that counted that wait as the clients'
# idleness closed the five without an answer (an OTLP exporter sees
# "socket hang up" and loses its batch), as happened under a burst of
# exports on a loaded machine.
DB2="$LIVE_TMP/busy.db"
live_serve "$DB2" --timeout 1
URL="http://127.0.0.1:$LIVE_PORT"
post "first body" 200 '{}' "${JSON[@]}" --data-binary @"$LIVE_TMP/good.json" "$URL/v1/traces"
for i in 1 2 3 4 5 6; do span_doc $((100 + i)) 200 >"$LIVE_TMP/burst$i.json"; done
python3 - "$LIVE_PORT" "$DB2" "$LIVE_TMP" >"$LIVE_TMP/burst.out" <<'EOF2' || live_fail "the burst did not run: $(cat "$LIVE_TMP/burst.out")"
import socket, sqlite3, subprocess, sys, threading, time
port, db, tmp = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lock = sqlite3.connect(db, isolation_level=None)
lock.execute("BEGIN IMMEDIATE")
got = {}
def upload(i):
    body = open("%s/burst%d.json" % (tmp, i), "rb").read()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body[:len(body) // 2])
    time.sleep(0.5)
    s.sendall(body[len(body) // 2:])
    s.settimeout(30)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    got[i] = data.split(b"\r\n")[0].decode() if data else "closed without a response"
threads = [threading.Thread(target=upload, args=(i,)) for i in range(1, 6)]
for t in threads:
    t.start()
time.sleep(0.2)
sixth = subprocess.Popen(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H",
                          "Content-Type: application/json", "--data-binary", "@%s/burst6.json" % tmp,
                          "http://127.0.0.1:%d/v1/traces" % port], stdout=subprocess.PIPE)
time.sleep(3)
lock.execute("COMMIT")
for t in threads:
    t.join()
got[6] = "HTTP/1.1 %s" % sixth.communicate()[0].decode()
for i in sorted(got):
    print("burst %d: %s" % (i, got[i]))
EOF2
cat "$LIVE_TMP/burst.out"
[ "$(grep -c ' 200' "$LIVE_TMP/burst.out")" = 6 ] ||
  live_fail "exports that waited for a busy database were not all answered 200"
[ "$(live_sql "$DB2" 'select count(*) from spans')" = $((3 + 6 * 200)) ] ||
  live_fail "expected $((3 + 6 * 200)) spans after the burst, found $(live_sql "$DB2" 'select count(*) from spans')"
live_serve_stop
echo "live_bad_requests: ok"
