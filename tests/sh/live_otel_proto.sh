#!/usr/bin/env bash
# live_otel_proto.sh - the real OpenTelemetry JS SDK exports the same
# workload (tests/js/otel_app.js) through its OTLP/HTTP JSON exporters, its
# OTLP/HTTP protobuf exporters (plain and gzip) and its OTLP/gRPC exporters
# at once: every batch goes to each of four `tailtriage serve` processes,
# one per encoding.
# Every span and metric point must arrive, and the four databases must
# hold exactly the same rows (tests/js/db_rows.py compares every row of
# every telemetry table, ids resolved to what they point at; a sketch's
# smallest and largest value to their bucket, see db_rows.py).
source "${TT_SRC:?}/tests/js/live_common.bash"
live_need_node

declare -A PORT LOG
for enc in json proto gz grpc; do
  live_serve "$LIVE_TMP/$enc.db" --token s3cret
  PORT[$enc]=$LIVE_PORT
  [ "$enc" = grpc ] && PORT[$enc]=$LIVE_GRPC_PORT
  LOG[$enc]=$LIVE_SERVE_LOG
  eval "PID_$enc=$LIVE_SERVE_PID"
done
targets="json=http://127.0.0.1:${PORT[json]},proto=http://127.0.0.1:${PORT[proto]}"
targets+=",proto-gzip=http://127.0.0.1:${PORT[gz]},grpc=http://127.0.0.1:${PORT[grpc]}"

# A wrong token is refused on the protobuf path too (401), nothing stored.
node "$LIVE_JS_DIR/otel_app.js" "proto=http://127.0.0.1:${PORT[proto]}" "$LIVE_TMP/noauth.ids" 3 wrong \
  >"$LIVE_TMP/noauth.json" 2>/dev/null
python3 - "$LIVE_TMP/noauth.json" <<'PY' || live_fail "protobuf export with a wrong token was not refused"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["spans_exported"] == 0 and s["spans_failed"] == 24, s
PY
[ "$(live_sql "$LIVE_TMP/proto.db" 'select count(*) from spans')" = 0 ] || live_fail "spans stored without token"
node "$LIVE_JS_DIR/otel_app.js" "grpc=http://127.0.0.1:${PORT[grpc]}" "$LIVE_TMP/noauth.ids" 3 wrong \
  >"$LIVE_TMP/noauth.json" 2>/dev/null
python3 - "$LIVE_TMP/noauth.json" <<'PY' || live_fail "gRPC export with a wrong token was not refused"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["spans_exported"] == 0 and s["spans_failed"] == 24, s
PY
[ "$(live_sql "$LIVE_TMP/grpc.db" 'select count(*) from spans')" = 0 ] || live_fail "spans stored without token (gRPC)"
grep -q 'UNAUTHENTICATED: missing or wrong bearer token' "${LOG[grpc]}" || live_fail "no UNAUTHENTICATED in the log"

node "$LIVE_JS_DIR/otel_app.js" "$targets" "$LIVE_TMP/ids" 60 s3cret >"$LIVE_TMP/app.json" ||
  live_fail "otel_app.js failed"
cat "$LIVE_TMP/app.json"
python3 - "$LIVE_TMP/app.json" <<'PY' || live_fail "the SDK did not export everything through every encoding"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["spans_failed"] == 0, s
assert s["spans_exported"] == s["spans_started"] == 480, s
assert s["metric_exports_ok"] >= 1 and s["metric_exports_failed"] == 0, s
PY

grep -q 'gRPC /opentelemetry.proto.collector.trace.v1.TraceService/Export OK' "${LOG[grpc]}" ||
  live_fail "no OK for TraceService/Export"
grep -q 'gRPC /opentelemetry.proto.collector.metrics.v1.MetricsService/Export OK' "${LOG[grpc]}" ||
  live_fail "no OK for MetricsService/Export"
for enc in json proto gz grpc; do
  if [ "$enc" != grpc ]; then
    grep -q 'POST /v1/traces 200' "${LOG[$enc]}" || live_fail "$enc: no 200 for /v1/traces"
    grep -q 'POST /v1/metrics 200' "${LOG[$enc]}" || live_fail "$enc: no 200 for /v1/metrics"
  fi
  [ "$(live_sql "$LIVE_TMP/$enc.db" 'select count(*) from spans')" = 480 ] || live_fail "$enc: span count"
  python3 "$LIVE_JS_DIR/db_rows.py" "$LIVE_TMP/$enc.db" --extremes-by-bucket >"$LIVE_TMP/$enc.rows"
done
points=$(live_sql "$LIVE_TMP/proto.db" 'select count(*) from metric_points')
[ "$points" -gt 0 ] || live_fail "no metric points through protobuf"
grep -q '"price.ratio":' "$LIVE_TMP/proto.rows" || live_fail "the typed attributes did not arrive"
for enc in proto gz grpc; do
  if ! cmp -s "$LIVE_TMP/json.rows" "$LIVE_TMP/$enc.rows"; then
    diff "$LIVE_TMP/json.rows" "$LIVE_TMP/$enc.rows" | head -n 20 >&2
    live_fail "rows stored from $enc differ from the JSON ones"
  fi
done
echo "rows identical through json, protobuf, protobuf+gzip and gRPC: $(wc -l <"$LIVE_TMP/json.rows") rows" \
  "(480 spans, $points metric points)"

for enc in json proto gz grpc; do
  LIVE_SERVE_PID=$(eval echo "\$PID_$enc")
  LIVE_SERVE_LOG=${LOG[$enc]}
  live_serve_stop
done
echo "live_otel_proto: ok"
