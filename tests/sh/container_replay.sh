#!/usr/bin/env bash
# container_replay.sh - a framework's wrapper span around the request's
# calls, in the two shapes production data has (OTLP JSON written by
# tests/fixtures/otlp/wrapper_shapes.py, imported with `tailtriage import`):
#   gateway  FilteringWebHandler.handle, a local span of the gateway that
#            lasts as long as the request, BESIDE its call to orders (the
#            Spring Cloud Gateway shape)
#   servlet  OncePerRequestFilter.doFilter, the PARENT of orders' calls
# In the incident pricing's own handling takes 40 ms more. The counterfactual
# replay and the critical path must go through the wrapper: replaying
# pricing from the baseline removes most of the rise (before containers,
# the gateway's handle kept its recorded length in every replay and every
# locus explained 0 %), the critical path of the slow requests runs through
# pricing, not the handle, and the Board puts dependency-slowdown on pricing
# first, strictly ahead.
set -u
BIN="${TT_BIN:?}"
GEN="${TT_SRC:?}/tests/fixtures/otlp/wrapper_shapes.py"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for shape in gateway servlet; do
  read -r B W < <(python3 "$GEN" "$shape" "$TMP/$shape.json" 600) || fail "$shape: generator"
  "$BIN" import --db "$TMP/$shape.db" -q "$TMP/$shape.json" || fail "$shape: import"
  "$BIN" report --db "$TMP/$shape.db" --window "$W" --baseline "$B" --format json \
    >"$TMP/$shape.report.json" 2>"$TMP/err" || fail "$shape: report: $(cat "$TMP/err")"
  "$BIN" diagnose --db "$TMP/$shape.db" --window "$W" --baseline "$B" --format json \
    >"$TMP/$shape.diag.json" 2>"$TMP/err" || fail "$shape: diagnose: $(cat "$TMP/err")"
  python3 - "$shape" "$TMP/$shape.report.json" "$TMP/$shape.diag.json" <<'PY' || fail "$shape: the replay or the path does not go through the wrapper"
import json, sys
shape = sys.argv[1]
rep = json.load(open(sys.argv[2]))
d = json.load(open(sys.argv[3]))
ev = {e["name"]: e for e in d["evidence"]}
def share(name):
    e = ev[name]
    return e["value"], e["interval"][0], e["interval"][1]
for name in ("dep.pricing.service.explained", "dep.pricing.explained", "dep.inventory.explained"):
    print("  %s %s: %.2f [%.2f, %.2f]" % (shape, name, *share(name)))
# pricing's own time carries the rise; inventory, unchanged, none of it
v, lo, hi = share("dep.pricing.service.explained")
assert lo >= 0.7, (v, lo, hi)
v, lo, hi = share("dep.inventory.explained")
assert hi <= 0.2, (v, lo, hi)
# the slow requests' critical path runs through pricing, not the wrapper
wrapper = {"gateway": "FilteringWebHandler.handle", "servlet": "OncePerRequestFilter.doFilter"}[shape]
nodes = {n["label"]: n for n in rep["nodes"]}
def crit(label):
    return nodes[label]["critical_path"]["share"]
print("  %s critical-path share: pricing %.2f, %s %.2f" % (shape, crit("pricing"), wrapper, crit(wrapper)))
assert crit("pricing") >= 0.6 and crit(wrapper) <= 0.1, (crit("pricing"), crit(wrapper))
if shape == "gateway":
    assert rep["data_quality"]["held_by_container"] > 0, rep["data_quality"]
h = d["hypotheses"]
print("  %s: #1 %s on %s (%+.1f), #2 %s on %s (%+.1f)" % (shape, h[0]["id"], h[0]["node"],
      h[0]["score"], h[1]["id"], h[1]["node"], h[1]["score"]))
assert (h[0]["id"], h[0]["node"]) == ("dependency-slowdown", "pricing"), h[:2]
assert h[0]["score"] > h[1]["score"], h[:2]
PY
done
echo "container replay: ok"
