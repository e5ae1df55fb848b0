#!/usr/bin/env bash
# skew_critical_path.sh - the checkout trace of issue 16 through
# `tailtriage import` and `report --format json`: three serial children
# (cart 20-300 us, tax 296-450, ship 447-800) that each start a few us
# before the previous one ends are all on the critical path, the 7
# overlapping us split at their midpoints so the path adds up to the
# root's 800 us; the same trace with opaque span ids ("R", "G", "H", "I")
# imports and gives the same path; --skew-tolerance 0 restores the strict
# rule, under which tax drops off.
set -u
BIN="${TT_BIN:?}"
FX="${TT_SRC:?}/tests/fixtures/jaeger"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# prints "label=ms ..." for the critical path and checks its invariants
path_of() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cp = d["critical_path"]
tot = lambda e: e["queue_ms"] + e["client_wait_ms"] + e["service_ms"]
print(" ".join("%s=%.4f" % (e["dependency"], tot(e)) for e in sorted(cp, key=lambda e: e["node"])))
print("sum=%.4f pairs=%d" % (sum(tot(e) for e in cp), d["data_quality"]["skew_serial_pairs"]))
print("edges=" + ",".join(n["edge"] for n in d["nodes"]))
PY
}

near() { # near VALUE WANT TOLERANCE
  python3 -c "import sys; sys.exit(0 if abs($1 - $2) <= $3 else 1)"
}

"$BIN" import --db "$TMP/a.db" -q "$FX/skew_serial.json" || fail "import"
"$BIN" report --db "$TMP/a.db" --format json >"$TMP/a.json" || fail "report"
out="$(path_of "$TMP/a.json")" || fail "reading the report"
echo "$out"
for want in checkout=0.02 cart=0.278 tax=0.15 ship=0.35; do
  label="${want%=*}"
  got="$(echo "$out" | grep -o "$label=[0-9.]*" | cut -d= -f2)"
  [ -n "$got" ] || fail "$label is not on the critical path: $out"
  near "$got" "${want#*=}" 0.003 || fail "$label: $got ms, want about ${want#*=}"
done
echo "$out" | grep -q "sum=0.800[0-9] pairs=2" || echo "$out" | grep -q "sum=0.799[0-9] pairs=2" ||
  fail "the path does not add up to 0.8 ms, or the pairs are not counted: $out"
echo "$out" | grep -q "edges=root,serial,serial,serial" || fail "edges: $out"

# the text report says how many pairs were taken as serial
"$BIN" report --db "$TMP/a.db" | grep -q "2 sibling pairs overlapping within the skew tolerance" ||
  fail "no data-quality line for the skewed pairs"

# strict rule: tax drops off, its time goes to checkout
"$BIN" report --db "$TMP/a.db" --skew-tolerance 0 --format json >"$TMP/s.json" || fail "report 0"
out="$(path_of "$TMP/s.json")"
echo "$out" | grep -q "tax=" && fail "tax on the path without a tolerance: $out"
echo "$out" | grep -q "checkout=0.1670" || fail "strict path: $out"

# a bad tolerance is a usage error
"$BIN" report --db "$TMP/a.db" --skew-tolerance 3parsecs >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "a bad --skew-tolerance did not exit 2"
grep -q "skew-tolerance" "$TMP/err" || fail "message: $(cat "$TMP/err")"
for cmd in report tui diagnose; do
  "$BIN" "$cmd" --help | grep -q -- "--skew-tolerance" || fail "$cmd --help does not document it"
  "$BIN" "$cmd" --db "$TMP/a.db" --skew-tolerance 1%+5us >/dev/null 2>&1 </dev/null
  [ $? -eq 2 ] || fail "$cmd accepted --skew-tolerance 1%+5us"
done
"$BIN" diagnose --db "$TMP/a.db" --skew-tolerance 20us+2% >/dev/null || fail "diagnose with a tolerance"

# opaque span ids: imported, parents resolved, the same path
out="$("$BIN" import --db "$TMP/o.db" "$FX/skew_opaque.json" 2>&1)" || fail "opaque ids refused: $out"
echo "$out" | grep -q "4 spans added" || fail "opaque import: $out"
out="$("$BIN" import --db "$TMP/o.db" "$FX/skew_opaque.json" 2>&1)" || fail "re-import: $out"
echo "$out" | grep -q "0 spans added, 4 already stored" || fail "re-import added spans: $out"
"$BIN" report --db "$TMP/o.db" --format json >"$TMP/o.json" || fail "report opaque"
[ "$(path_of "$TMP/o.json")" = "$(path_of "$TMP/a.json")" ] ||
  fail "opaque ids give another path: $(path_of "$TMP/o.json")"
echo "ok"
