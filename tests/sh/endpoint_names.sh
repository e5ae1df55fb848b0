#!/usr/bin/env bash
# endpoint_names.sh - an endpoint's name comes from the data and may be any
# length (http.route is the instrumentation's string). A command that
# chooses the endpoint (the first `tailtriage endpoints` lists) or is given
# one too long to hold says so and exits non-zero, naming the way out; it
# never analyses a name cut to fit (which named no endpoint: "the window
# holds no request of the endpoint"). A normal endpoint beside it is
# analysed as usual.
set -u
BIN="${TT_BIN:?}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 - "$TMP/spans.json" <<'PY' || fail "generating spans"
import json, sys
long_route = "/" + "a" * 900
spans = []
t0 = 1700000000000000000
for i in range(300):
    # two of three requests are the long route's: it is listed first
    route = "/ok" if i % 3 == 0 else long_route
    st = t0 + i * 10_000_000
    spans.append({"traceId": "%032x" % (i + 1), "spanId": "%016x" % (i + 1),
                  "name": "GET " + route, "kind": 2,
                  "startTimeUnixNano": str(st), "endTimeUnixNano": str(st + (5 + i % 7) * 1_000_000),
                  "attributes": [{"key": "http.route", "value": {"stringValue": route}},
                                 {"key": "http.request.method", "value": {"stringValue": "GET"}}]})
json.dump({"resourceSpans": [{"resource": {"attributes": [
    {"key": "service.name", "value": {"stringValue": "shop"}}]},
    "scopeSpans": [{"spans": spans}]}]}, open(sys.argv[1], "w"))
PY
DB="$TMP/t.db"
"$BIN" import -q --db "$DB" "$TMP/spans.json" || fail "import"

for cmd in report diagnose; do
  "$BIN" $cmd --db "$DB" >"$TMP/out" 2>"$TMP/err"
  rc=$?
  [ $rc -ne 0 ] || fail "$cmd: a cut endpoint name was analysed (exit 0)"
  grep -q "first endpoint of 'tailtriage endpoints', 'shop GET /aaaa.*' is too long" "$TMP/err" ||
    fail "$cmd: no clear error: $(cut -c1-300 "$TMP/err")"
  grep -q "choose another with --endpoint" "$TMP/err" || fail "$cmd: no way out: $(cut -c1-300 "$TMP/err")"
  grep -q "holds no request" "$TMP/err" && fail "$cmd: analysed a cut name: $(cut -c1-300 "$TMP/err")"
done

"$BIN" report --db "$DB" --endpoint "shop GET /$(printf 'a%.0s' $(seq 900))" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "--endpoint too long: not a usage error: $(cut -c1-300 "$TMP/err")"
grep -q "^tailtriage: --endpoint 'shop GET /aaaa.*\.\.\.' is too long: .*this one: 4 and 905" "$TMP/err" ||
  fail "--endpoint too long: $(cut -c1-300 "$TMP/err")"

"$BIN" report --db "$DB" --endpoint shop "GET /ok" >"$TMP/out" 2>"$TMP/err" ||
  fail "the other endpoint: $(cat "$TMP/err")"
grep -q "GET /ok" "$TMP/out" || fail "the other endpoint's report does not name it"
echo "endpoint_names: ok"
