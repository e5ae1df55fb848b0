#!/usr/bin/env bash
# live_grpc_bad.sh - the OTLP/gRPC listener of `tailtriage serve` against
# @grpc/grpc-js (tests/js/grpc_call.js sends file bytes as the message):
# good requests (plain and gzip) are OK and stored once, a retry is OK with
# a partial_success warning, and a cut message (INVALID_ARGUMENT naming the
# byte), an unknown method (UNIMPLEMENTED), a missing token
# (UNAUTHENTICATED) and an oversized message (RESOURCE_EXHAUSTED) are
# refused with nothing stored.
source "${TT_SRC:?}/tests/js/live_common.bash"
live_need_node

FX="${TT_SRC}/tests/fixtures/otlp_proto"
DB="$LIVE_TMP/g.db"
live_serve "$DB" --max-body 64K --token s3cret
ADDR="127.0.0.1:${LIVE_GRPC_PORT:?no gRPC port in the serve log}"
state() { live_sql "$DB" "select (select count(*) from spans) || '/' || (select count(*) from metric_points)"; }

# call NAME WANT_STATUS DETAILS_PATTERN WANT_STATE METHOD FILE [gzip|-] [TOKEN]
call() {
  local name=$1 want=$2 pattern=$3 after=$4
  shift 4
  node "$LIVE_JS_DIR/grpc_call.js" "$ADDR" "$@" >"$LIVE_TMP/out" || live_fail "$name: grpc_call.js failed"
  printf '%-24s %s\n' "$name" "$(head -c 160 "$LIVE_TMP/out")"
  python3 - "$LIVE_TMP/out" "$want" "$pattern" <<'PY' || live_fail "$name: $(cat "$LIVE_TMP/out")"
import json, re, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == sys.argv[2], r
assert re.search(sys.argv[3], r["details"] + " " + bytes.fromhex(r["response"]).decode("latin-1")), r
PY
  [ "$(state)" = "$after" ] || live_fail "$name: database holds $(state), expected $after"
}

head -c 3000 "$FX/traces.pb" >"$LIVE_TMP/cut.pb"
python3 -c 'import os, sys; sys.stdout.buffer.write(os.urandom(100000))' >"$LIVE_TMP/big.bin"

call "no token" UNAUTHENTICATED 'missing or wrong bearer token' 0/0 traces "$FX/traces.pb"
call "wrong token" UNAUTHENTICATED 'missing or wrong bearer token' 0/0 traces "$FX/traces.pb" - nope
call "cut message" INVALID_ARGUMENT '^TraceService/Export: byte 0: field 1: length' 0/0 \
  traces "$LIVE_TMP/cut.pb" - s3cret
call "metrics sent as traces" INVALID_ARGUMENT 'TraceService/Export: byte [0-9]+: ' 0/0 \
  traces "$FX/metrics.pb" - s3cret
call "unknown method" UNIMPLEMENTED 'unknown method' 0/0 /opentelemetry.proto.collector.logs.v1.LogsService/Export \
  "$FX/traces.pb" - s3cret
call "oversized message" RESOURCE_EXHAUSTED 'larger than max' 0/0 traces "$LIVE_TMP/big.bin" - s3cret
call "traces" OK '' 24/0 traces "$FX/traces.pb" - s3cret
call "metrics, gzip" OK '' 24/6 metrics "$FX/metrics.pb" gzip s3cret
call "traces again" OK '24 of 24 spans were already stored' 24/6 traces "$FX/traces.pb" gzip s3cret

# A second serve on the same gRPC port fails to start (no SO_REUSEPORT
# sharing of calls between two databases), with one clear message.
if timeout -s INT 5 "$TT_BIN" serve --db "$LIVE_TMP/other.db" --listen 127.0.0.1:0 --grpc-listen "$ADDR" \
     2>"$LIVE_TMP/second.log"; then
  live_fail "a second serve bound the same gRPC port"
fi
cat "$LIVE_TMP/second.log"
grep -q "serve: --grpc-listen: cannot listen for gRPC on $ADDR" "$LIVE_TMP/second.log" ||
  live_fail "no bind error for the second serve"
[ "$(wc -l <"$LIVE_TMP/second.log")" = 1 ] || live_fail "more than the one error line on stderr"

live_serve_stop
grep 'gRPC stopped' "$LIVE_SERVE_LOG"
grep -q 'gRPC stopped: 9 calls received, 3 accepted, 6 rejected; 24 spans and 6 metric points stored, 24 already stored' \
  "$LIVE_SERVE_LOG" || live_fail "unexpected gRPC counters"
echo "live_grpc_bad: ok"
