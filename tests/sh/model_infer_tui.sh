#!/usr/bin/env bash
# model_infer_tui.sh - the dashboard on telemetry of the real OpenTelemetry
# JS SDK (tests/js/otel_pools_app.js) with no model: it says "model:
# inferred", the pricing node's pane shows the pricing-grpc pool's
# occupancy, pending count and wait from the SDK's db.client.connection.*
# metrics, and M writes the inferred model (never over an existing file).
# Then a hand-written model that disagrees with the data: the title counts
# the disagreements, the status line says the first, the node pane shows
# the pool's own (a selector that matches no series; the model's size
# against the metric's max).
source "${TT_SRC:?}/tests/js/live_common.bash"
live_need_node
command -v tmux >/dev/null || live_apt tmux || true
command -v tmux >/dev/null || live_skip "tmux not available and cannot be installed"

SOCK="tt-infer-$$"
tmx() { tmux -L "$SOCK" "$@"; }
trap 'tmux_stop "$SOCK"; live_cleanup' EXIT

DB="$LIVE_TMP/sdk.db"
live_serve "$DB"
node "$LIVE_JS_DIR/otel_pools_app.js" "http://127.0.0.1:$LIVE_PORT" 120 >"$LIVE_TMP/app.json" ||
  live_fail "otel_pools_app.js failed"
live_serve_stop

OUT="$LIVE_TMP/written.model.json"
tmx new-session -d -s t -x 130 -y 32 \
  "cd '$LIVE_TMP' && LANG=C.UTF-8 TERM=xterm-256color '$TT_BIN' tui --db '$DB' --ascii --model-out '$OUT' 2>'$LIVE_TMP/tui.err'; echo \$? >'$LIVE_TMP/tui.rc'; sleep 30"
screen() { tmx capture-pane -p -t t; }
# wait_for ERE WHAT: until the screen matches; a deadline of 60 s, not a
# measurement (a loaded machine draws late; only a failing test waits it out)
wait_for() {
  local end=$((SECONDS + 60))
  while ((SECONDS < end)); do
    screen | grep -Eq -- "$1" && return 0
    sleep 0.1
  done
  screen >&2
  cat "$LIVE_TMP/tui.err" >&2 || true
  live_fail "$2"
}

wait_for "model: inferred" "the title does not say the model is inferred"
wait_for "pricing" "the DAG did not show pricing"
# the first node below the root is the pricing call (it starts first)
tmx send-keys -t t j Enter
wait_for "call shop-api -> pricing" "the pricing node did not open"
wait_for "pool pricing-grpc \(client, 48 slots\): occupancy 95\.8%  pending 9\.0  wait p99 [0-9.]+ ms" \
  "the node pane does not show the pricing pool's occupancy and pending count" 
# pricing's own database pool, below the pool in front of it
wait_for "own pool pricing-pg \(client, 20 slots\): occupancy 35\.0%" "the node pane does not show pricing's own pool"
screen | grep -E "^ (own )?pool " | sed 's/  */ /g'

tmx send-keys -t t M
wait_for "wrote the inferred model to .*written\.model\.json" "M did not write the model"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert any(p["name"] == "pricing-grpc" and p["node"] == "pricing" for p in m["pools"]), m["pools"]' \
  "$OUT" || live_fail "the written model does not name the pricing pool"
"$TT_BIN" diagnose --db "$DB" --model "$OUT" --format json >/dev/null || live_fail "the written model does not load"
# a second M does not overwrite it
tmx send-keys -t t M
wait_for "cannot write .*written\.model\.json: File exists" "M overwrote an existing file"

tmx send-keys -t t q
end=$((SECONDS + 60)); while [ ! -s "$LIVE_TMP/tui.rc" ] && ((SECONDS < end)); do sleep 0.1; done
[ "$(cat "$LIVE_TMP/tui.rc" 2>/dev/null)" = 0 ] || live_fail "tui exited with status $(cat "$LIVE_TMP/tui.rc" 2>/dev/null)"
grep -q 'no --model: using a model inferred from the data' "$LIVE_TMP/tui.err" ||
  live_fail "tui did not say it uses an inferred model"
tmux_stop "$SOCK"
SOCK="tt-infer2-$$" # a fresh server

# A hand-written model that selects the pricing pool by the label value
# "pricing" (the SDK says "pricing-grpc") and sizes profile-grpc at 256
# (the metric says 64): the dashboard says so instead of staying silent.
cat >"$LIVE_TMP/hand.json" <<'JSON'
{ "endpoint": "GET /shop", "root": {"service": "shop-api", "operation": "GET /shop"},
  "nodes": [ {"service": "pricing", "mandatory": true, "pool": "pricing"},
             {"service": "profile", "mandatory": true, "pool": "profile-grpc"} ],
  "pools": [ {"name": "pricing", "kind": "client", "node": "pricing", "size": 256,
              "metrics": {"label_key": "db.client.connection.pool.name", "label_value": "pricing"}},
             {"name": "profile-grpc", "kind": "client", "node": "profile", "size": 256} ] }
JSON
rm -f "$LIVE_TMP/tui.rc"
tmx new-session -d -s t -x 150 -y 34 \
  "LANG=C.UTF-8 TERM=xterm-256color '$TT_BIN' tui --db '$DB' --ascii --model '$LIVE_TMP/hand.json' 2>'$LIVE_TMP/tui.err'; echo \$? >'$LIVE_TMP/tui.rc'; sleep 30"
wait_for "model hand\.json, 2 disagreements with the data" "the title does not count the disagreements"
wait_for "model vs data: pool pricing: its selector" "the status line does not say what disagrees"
tmx send-keys -t t j Enter
wait_for "call shop-api -> pricing" "the pricing node did not open"
wait_for "pool pricing \(client, 256 slots\): occupancy, queue age: no metrics" "no pool line for pricing"
wait_for "pool pricing: its selector db\.client\.connection\.pool\.name=pricing matches no series" \
  "the node pane does not say the pricing selector matches nothing"
screen | grep -E "^ pool |selector" | sed 's/  */ /g'
tmx send-keys -t t Escape j j Enter
wait_for "call shop-api -> profile" "the profile node did not open"
wait_for "pool profile-grpc \(client, model 256 slots, metric max 64\): occupancy 18\.8%" \
  "the node pane does not show the model's size against the metric's max"
screen | grep -E "^ pool |says" | sed 's/  */ /g'
tmx send-keys -t t q
echo "model_infer_tui: ok"
