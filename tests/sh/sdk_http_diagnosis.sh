#!/usr/bin/env bash
# sdk_http_diagnosis.sh - telemetry as the OpenTelemetry JS SDK's HTTP
# auto-instrumentation makes it (tests/js/http_app.js: five real HTTP
# services on loopback, each its own process, real requests, no span made
# by hand), sent to `tailtriage serve`, read with no model. Such data names
# every call "GET", names its peer only by net.peer.name 127.0.0.1 and
# net.peer.port, and ends server spans just after their client on about
# half of the calls. The DAG must still have one node per dependency with
# one call per request each, the calls that got their answer must not be
# taken for late work (which made every dependency optional), and when
# catalog slows down, or storefront's connection pool to quote shrinks to
# one socket, the Board must blame it, strictly ahead. When catalog is
# CPU-bound, calls to it also wait before its server span opens, as they
# do in front of a short pool: the Board must blame catalog itself
# (its own time rose with the wait), not the caller's pool.
# When storefront itself is starved (a burner keeps its event loop busy),
# every call it makes waits longer, toward all four callees at once, while
# their server spans do not move: the Board must blame storefront, the
# caller (caller-saturation), not the pool in front of one callee; and with
# the one-socket pool, whose wait rises toward quote alone, the caller's
# signature must not hold.
#
# The services run beside other work: the app reports the p90 its load saw
# in each phase and the p99 of each process's event-loop delay, and a run
# whose incident did not show in the load, or whose storefront was starved
# in the incident by the machine rather than by its cause (or not starved
# by its burner), is made again, up to three times, before the Board is
# judged.
source "${TT_SRC:?}/tests/js/live_common.bash"
live_need_node

run() { # cause want_id want_node min_p90_rise_ms [rate seconds_per_phase]
  local cause=$1 want=$2 node=$3 rise=$4 rate=${5:-20} secs=${6:-8} attempt ok=0
  local db="$LIVE_TMP/http-$cause.db"
  for attempt in 1 2 3; do
    rm -f "$db" "$db-wal" "$db-shm"
    live_serve "$db"
    node "$LIVE_JS_DIR/http_app.js" "http://127.0.0.1:$LIVE_PORT" "$cause" "$rate" "$secs" >"$LIVE_TMP/win.json" ||
      live_fail "http_app.js $cause failed"
    live_serve_stop
    if python3 - "$LIVE_TMP/win.json" "$cause" "$attempt" "$rise" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
cause, rise = sys.argv[2], float(sys.argv[4])
p, loop = d["p90_ms"], d["loop_p99_ms"]["storefront"]
print("  %s, attempt %s: load p90 %.1f -> %.1f ms, storefront's event-loop delay p99 %.1f -> %.1f ms"
      % (cause, sys.argv[3], p[0], p[1], loop[0], loop[1]))
# the incident showed in the load's own latency; storefront's loop was
# starved in the incident exactly when the cause is its burner (the
# machine's other work must not starve it more than in the baseline)
shown = p[1] - p[0] >= rise
starved = loop[1] - loop[0] >= 10
sys.exit(0 if shown and starved == (cause == "busy") else 1)
PY
      ok=1
      break
    fi
  done
  [ $ok = 1 ] || live_fail "cause $cause: the machine was too busy to produce the incident (3 runs)"
  read -r W B < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["incident"], d["baseline"])' "$LIVE_TMP/win.json")

  "$TT_BIN" report --db "$db" --window "$W" --baseline "$B" --format json >"$LIVE_TMP/report.json" \
    2>"$LIVE_TMP/report.err" || live_fail "report failed: $(cat "$LIVE_TMP/report.err")"
  python3 - "$LIVE_TMP/report.json" <<'PY' || live_fail "cause $cause: the DAG of auto-instrumented HTTP calls is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
nodes = d["nodes"]
req = d["window"]["requests"]
calls = {n["dependency"]: n for n in nodes if n["type"] == "call"}
print("  calls:", {k: (v["operation"], v["calls"]) for k, v in calls.items()})
# four dependencies, each its own node although every client span is "GET"
assert sorted(calls) == ["catalog", "quote", "reviews", "session"], calls
for dep, n in calls.items():
    assert n["operation"] == "GET", n
    assert n["calls"] == req, (dep, n["calls"], req)
    # always called and answered: mandatory, not "cut short"
    assert n["mandatory"] is True, (dep, n["mandatory"])
dq = d["data_quality"]
print("  data quality: late work %d, clipped %d, skew %d" % (dq["late_server"], dq["clipped"], dq["clock_skew"]))
assert dq["late_server"] == 0, dq
PY

  "$TT_BIN" diagnose --db "$db" --window "$W" --baseline "$B" --format json >"$LIVE_TMP/diag.json" \
    2>"$LIVE_TMP/diag.err" || live_fail "diagnose failed: $(cat "$LIVE_TMP/diag.err")"
  python3 - "$LIVE_TMP/diag.json" "$want" "$node" <<'PY' || live_fail "cause $cause: the Board does not blame $node"
import json, sys
d = json.load(open(sys.argv[1]))
h = d["hypotheses"]
print("  %s: #1 %s on %s (%+.1f), #2 %s on %s (%+.1f)" % (sys.argv[2], h[0]["id"], h[0]["node"],
      h[0]["score"], h[1]["id"], h[1]["node"], h[1]["score"]))
assert (h[0]["id"], h[0]["node"]) == (sys.argv[2], sys.argv[3]), h[:3]
assert h[0]["score"] > h[1]["score"], h[:2]
ev = {e["name"]: e for e in d["evidence"]}
for k in ("waits_rose", "waits_flat", "starved", "callees"):
    e = ev.get("caller.storefront." + k)
    print("    caller.storefront.%s = %s" % (k, e and e["value"]))
# a single callee's pool is not a starved caller
if sys.argv[2] == "client-pool-wait":
    c = [x for x in h if x["id"] == "caller-saturation"][0]
    assert not c["signature"], c
PY
}

# the last argument: how much the load's own p90 must rise for the run to
# count (catalog's 40 ms, quote's queue, catalog's busy loop, storefront's
# busy loop each add more than that to most requests)
run slow dependency-slowdown catalog 15
# about 240 calls a phase: too few for a p99 to show that the wait doubled
# (its upper bound lies past the sample), so the Board must find the pool
# from the p90 of quote's wait, which rose while no other dependency's did.
# 30 requests/s: one socket toward quote (15 ms a call and its HTTP round
# trip) is then busy about half the time, so calls queue for it whatever
# the machine's speed; at 20/s it was busy a third of the time, and on a
# busy machine the load's p90 moved more with the machine than with the
# queue (CI: 168 -> 111, 325 -> 75, 83 -> 75 ms in three attempts)
run pool client-pool-wait quote 15 30 8
run cpu dependency-slowdown catalog 15
# storefront's own loop is busy 60 % of the time: half the rate, so that
# what it has left serves the load (each callee still gets ~160 calls a
# phase)
run busy caller-saturation storefront 10 20 8
echo "sdk http diagnosis: ok"
