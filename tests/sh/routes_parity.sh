#!/usr/bin/env bash
# routes_parity.sh - every way spans come in gives them the same routes
# (common/route.h): the real OpenTelemetry JS SDK (tests/js/route_spans.js)
# exports the same spans to `tailtriage serve` through OTLP/HTTP JSON,
# OTLP/HTTP protobuf and OTLP/gRPC, and writes them as OTLP JSON and
# protobuf files that `tailtriage import` reads. The five databases must
# hold the same (span, route, rule) rows, and the routes must be the rule's:
# http.route first, else the RPC method, else the method and the templated
# path (url.path, url.full, or the older http.target and http.url), else
# the span name; a client call has none.
source "${TT_SRC:?}/tests/js/live_common.bash"
live_need_node

declare -A PORT PID
for enc in json proto grpc; do
  # the JSON receiver also reports on an endpoint (its line on stop)
  if [ "$enc" = json ]; then
    live_serve "$LIVE_TMP/$enc.db" --endpoint shop 'GET /api/items/{id}'
    JSON_LOG=$LIVE_SERVE_LOG
  else
    live_serve "$LIVE_TMP/$enc.db"
  fi
  PORT[$enc]=$LIVE_PORT
  [ "$enc" = grpc ] && PORT[$enc]=$LIVE_GRPC_PORT
  PID[$enc]=$LIVE_SERVE_PID
done
targets="json=http://127.0.0.1:${PORT[json]},proto=http://127.0.0.1:${PORT[proto]}"
targets+=",grpc=http://127.0.0.1:${PORT[grpc]}"
node "$LIVE_JS_DIR/route_spans.js" "$targets" "$LIVE_TMP/files" >"$LIVE_TMP/app.json" ||
  live_fail "route_spans.js failed"
for enc in json proto grpc; do
  LIVE_SERVE_PID=${PID[$enc]}
  live_serve_stop
done
# the spans are from 2025: none in the last minute
grep -q "^tailtriage: endpoint shop GET /api/items/{id}: no request in the last 60 s" "$JSON_LOG" ||
  live_fail "serve --endpoint did not report on the endpoint when it stopped"
"$TT_BIN" import -q --db "$LIVE_TMP/file-json.db" "$LIVE_TMP/files/traces.json" ||
  live_fail "import of traces.json failed"
"$TT_BIN" import -q --db "$LIVE_TMP/file-pb.db" "$LIVE_TMP/files/traces.pb" ||
  live_fail "import of traces.pb failed"

# what a reader gets (coalesce: a route equal to the name is stored NULL)
q="select service || ' | ' || name || ' | ' || coalesce(route, case when route_rule is null
   then '-' else name end) || ' | ' || coalesce(route_rule, '-') from spans order by span_id"
for db in json proto grpc file-json file-pb; do
  live_sql "$LIVE_TMP/$db.db" "$q" >"$LIVE_TMP/$db.routes"
done
for db in proto grpc file-json file-pb; do
  if ! cmp -s "$LIVE_TMP/json.routes" "$LIVE_TMP/$db.routes"; then
    diff "$LIVE_TMP/json.routes" "$LIVE_TMP/$db.routes" >&2 || true
    live_fail "routes through $db differ from OTLP/HTTP JSON's"
  fi
done
sort "$LIVE_TMP/json.routes" >"$LIVE_TMP/got"
cat >"$LIVE_TMP/want" <<'EOF'
batch | nightly rollup | nightly rollup | 0
cart | oteldemo.CartService/GetCart | oteldemo.CartService/GetCart | 2
frontend | GET | -
frontend | GET | GET /api/products/{id} | 4
loadgenerator | GET | GET /api/products/{id} | 4
shop | GET /cart/:id | GET /cart/:id | 1
shop | GET | GET /api/cart/{id} | 4
shop | GET | GET /api/items/{id} | 4
shop | GET | GET /api/users/{userId} | 5
shop | POST | POST /api/orders/{id}/{id} | 4
shop | PUT | PUT /a/{id} | 4
EOF
# the client call has neither route nor rule: "-" twice collapses to one
sed -i 's/^frontend | GET | - | -$/frontend | GET | -/' "$LIVE_TMP/got"
sort -o "$LIVE_TMP/want" "$LIVE_TMP/want"
if ! cmp -s "$LIVE_TMP/want" "$LIVE_TMP/got"; then
  diff "$LIVE_TMP/want" "$LIVE_TMP/got" >&2 || true
  live_fail "the routes are not the rule's"
fi
echo "same routes through OTLP/HTTP JSON, protobuf, gRPC and both file encodings ($(wc -l <"$LIVE_TMP/got") spans)"
