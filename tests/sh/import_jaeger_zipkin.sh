#!/usr/bin/env bash
# import_jaeger_zipkin.sh - `tailtriage import` on Jaeger and Zipkin files
# as a user runs it: detection by content, --format, a located error with a
# non-zero exit and nothing stored, and the same trace written as OTLP,
# Jaeger and Zipkin giving the same `report --format json`.
set -u
BIN="${TT_BIN:?}"
FX="${TT_SRC:?}/tests/fixtures"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# detection by content
out="$("$BIN" import --db "$TMP/a.db" "$FX/jaeger/query.json" "$FX/zipkin/spans.json")" ||
  fail "importing the fixtures failed: $out"
echo "$out" | grep -q 'query.json: jaeger-json: 6 spans added' || fail "jaeger: $out"
echo "$out" | grep -q 'spans.json: zipkin-json: 8 spans added' || fail "zipkin: $out"

# the same file again adds nothing and says so
out="$("$BIN" import --db "$TMP/a.db" "$FX/zipkin/spans.json")" || fail "re-import failed"
echo "$out" | grep -q '0 spans added, 8 already stored' || fail "re-import: $out"

# spans without a duration or a timestamp (Zipkin's own UI test data has
# them): the rest of the file is stored, the skipped ones counted on
# stderr with the place of the first, exit 0
out="$("$BIN" import --db "$TMP/z.db" "$FX/zipkin/incomplete.json" 2>"$TMP/err")" ||
  fail "a file with unfinished spans was refused: $(cat "$TMP/err")"
echo "$out" | grep -q 'incomplete.json: zipkin-json: 6 spans added' || fail "incomplete: $out"
grep -q 'incomplete.json: 6 spans skipped: no duration (an unfinished span, whose end is unknown; the first at .*incomplete.json:8:3)' "$TMP/err" ||
  fail "unfinished spans not reported: $(cat "$TMP/err")"
grep -q 'incomplete.json: 1 span skipped: no start time' "$TMP/err" ||
  fail "untimed span not reported: $(cat "$TMP/err")"
# -q keeps the warnings
"$BIN" import -q --db "$TMP/z2.db" "$FX/zipkin/incomplete.json" 2>"$TMP/err" >"$TMP/out" || fail "-q"
[ -s "$TMP/out" ] && fail "-q printed: $(cat "$TMP/out")"
grep -q '6 spans skipped' "$TMP/err" || fail "-q hid the skipped spans: $(cat "$TMP/err")"

# a malformed file: located error, exit 1, nothing stored
printf '[{"traceId":"463ac35c9f6413ad","id":"b7ad6b7169203331",\n "timestamp":1700000000000000,"duration":-4}]\n' >"$TMP/bad.json"
if "$BIN" import --db "$TMP/b.db" "$TMP/bad.json" 2>"$TMP/err"; then
  fail "a negative duration was accepted"
fi
grep -q "bad.json:2:42: duration must not be negative" "$TMP/err" || fail "message: $(cat "$TMP/err")"
grep -q "nothing imported" "$TMP/err" || fail "no 'nothing imported': $(cat "$TMP/err")"

# --format forces the reader: a Zipkin list read as Jaeger is refused
if "$BIN" import --db "$TMP/b.db" --format jaeger-json "$FX/zipkin/spans.json" 2>"$TMP/err"; then
  fail "a Zipkin file was accepted as Jaeger"
fi
grep -q 'spans.json:2:3: trace has no "spans"' "$TMP/err" || fail "forced format: $(cat "$TMP/err")"

# one trace, three formats, one report
for f in otlp jaeger zipkin; do
  "$BIN" import --db "$TMP/$f.db" -q "$FX/jaeger/equiv/trace.$f.json" || fail "import $f"
  "$BIN" report --db "$TMP/$f.db" --format json >"$TMP/$f.report.json" || fail "report $f"
done
cmp -s "$TMP/otlp.report.json" "$TMP/jaeger.report.json" ||
  fail "jaeger report differs: $(diff "$TMP/otlp.report.json" "$TMP/jaeger.report.json" | head -20)"
cmp -s "$TMP/otlp.report.json" "$TMP/zipkin.report.json" ||
  fail "zipkin report differs: $(diff "$TMP/otlp.report.json" "$TMP/zipkin.report.json" | head -20)"
grep -q '"dependency":[[:space:]]*"pricing"' "$TMP/zipkin.report.json" || fail "no pricing call in the report"
echo "ok"
