#!/usr/bin/env bash
# import_collector.sh - the file an OpenTelemetry Collector's file exporter
# writes when a traces, a metrics and a logs pipeline share it: one request
# a line, the signals mixed as the pipelines flush (fixtures/otlp_proto/
# collector.jsonl and, in the `format: proto` framing, collector.pb, both
# made by the real OpenTelemetry JS SDK's serializers, tests/js/
# otlp_files.js). Every line is read by its own signal, in the file's one
# transaction: spans and metric points stored, log records counted and
# said to be skipped. Nothing is decided from the first line: the file
# starts with metrics, and the same lines in another order store the same.
# Both ways a database is written: a new one (the bulk load) and an
# existing one (the append path), which must store the same rows.
set -u
BIN="${TT_BIN:?}"
FX="${TT_SRC:?}/tests/fixtures/otlp_proto"
ROWS="${TT_SRC:?}/tests/js/db_rows.py"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
count() { sqlite3 -batch -noheader "$1" "select (select count(*) from spans) || '/' || (select count(*) from metric_points)"; }
rows() { python3 "$ROWS" "$1" | grep -E '^(spans|metric_[a-z]+|resources|scopes|traces):' >"$2" || fail "db_rows $1"; }

[ "$(head -c 20 "$FX/collector.jsonl")" = '{"resourceMetrics":[' ] || fail "the fixture should start with metrics"

# 1. a new database (bulk load)
out="$("$BIN" import --db "$TMP/bulk.db" "$FX/collector.jsonl" 2>"$TMP/err")" ||
  fail "bulk import: $out $(cat "$TMP/err")"
echo "$out"; cat "$TMP/err"
echo "$out" | grep -q 'collector.jsonl: otlp-json: 24 spans added, 0 already stored; 12 metric points added, 0 already stored' ||
  fail "bulk: $out"
grep -q 'collector.jsonl: 16 log records skipped: logs are not read' "$TMP/err" || fail "logs not counted: $(cat "$TMP/err")"
[ "$(count "$TMP/bulk.db")" = 24/12 ] || fail "bulk counts $(count "$TMP/bulk.db")"
rows "$TMP/bulk.db" "$TMP/bulk.rows"

# the spans are the SDK's traces.json, the first six points its metrics.json
"$BIN" import -q --db "$TMP/ref.db" "$FX/traces.json" "$FX/metrics.json" || fail "reference import"
rows "$TMP/ref.db" "$TMP/ref.rows"
grep '^spans:' "$TMP/ref.rows" >"$TMP/a"; grep '^spans:' "$TMP/bulk.rows" >"$TMP/b"
cmp -s "$TMP/a" "$TMP/b" || fail "spans differ from traces.json's: $(diff "$TMP/a" "$TMP/b" | head -5)"

# 2. an existing database (append): the first collection's points are there
"$BIN" import -q --db "$TMP/append.db" "$FX/metrics.json" || fail "seeding the append database"
out="$("$BIN" import --db "$TMP/append.db" "$FX/collector.jsonl" 2>"$TMP/err")" || fail "append import: $out"
echo "$out"
echo "$out" | grep -q '24 spans added, 0 already stored; 6 metric points added, 6 already stored' ||
  fail "append: $out"
grep -q '16 log records skipped' "$TMP/err" || fail "append: logs not counted: $(cat "$TMP/err")"
rows "$TMP/append.db" "$TMP/append.rows"
cmp -s "$TMP/bulk.rows" "$TMP/append.rows" ||
  fail "append stored other rows than the bulk load: $(diff "$TMP/bulk.rows" "$TMP/append.rows" | head -5)"

# 3. the protobuf stream: the same rows, the same log records counted
out="$("$BIN" import --db "$TMP/pb.db" "$FX/collector.pb" 2>"$TMP/err")" || fail "pb import: $out $(cat "$TMP/err")"
echo "$out" | grep -q 'collector.pb: otlp-proto: 24 spans added, 0 already stored; 12 metric points added' ||
  fail "pb: $out"
grep -q 'collector.pb: 16 log records skipped: logs are not read' "$TMP/err" || fail "pb logs: $(cat "$TMP/err")"
rows "$TMP/pb.db" "$TMP/pb.rows"
cmp -s "$TMP/bulk.rows" "$TMP/pb.rows" || fail "pb rows differ: $(diff "$TMP/bulk.rows" "$TMP/pb.rows" | head -5)"

# 4. nothing comes from the first line: spans first, logs first, --format
awk 'NR % 2 == 0' "$FX/collector.jsonl" >"$TMP/mixed.jsonl"
awk 'NR % 2 == 1' "$FX/collector.jsonl" >>"$TMP/mixed.jsonl"
head -c 16 "$TMP/mixed.jsonl" | grep -q resourceSpans || fail "reordered file should start with spans"
tac "$FX/collector.jsonl" >"$TMP/logs-first.jsonl"
head -c 16 "$TMP/logs-first.jsonl" | grep -q resourceLogs || fail "reversed file should start with logs"
for f in mixed logs-first; do
  "$BIN" import --db "$TMP/$f.db" "$TMP/$f.jsonl" >"$TMP/out" 2>"$TMP/err" || fail "$f: $(cat "$TMP/err")"
  grep -q '16 log records skipped' "$TMP/err" || fail "$f: logs not counted"
  rows "$TMP/$f.db" "$TMP/$f.rows"
  cmp -s "$TMP/bulk.rows" "$TMP/$f.rows" || fail "$f: rows differ: $(diff "$TMP/bulk.rows" "$TMP/$f.rows" | head -5)"
done
"$BIN" import -q --format otlp-json --db "$TMP/forced.db" "$FX/collector.jsonl" 2>/dev/null || fail "--format otlp-json"
[ "$(count "$TMP/forced.db")" = 24/12 ] || fail "--format otlp-json counts $(count "$TMP/forced.db")"

# --format otlp-metrics reads metrics only, and says what it left
out="$("$BIN" import --format otlp-metrics --db "$TMP/monly.db" "$FX/collector.jsonl" 2>"$TMP/err")" ||
  fail "--format otlp-metrics: $(cat "$TMP/err")"
echo "$out" | grep -q '12 metric points added' || fail "otlp-metrics: $out"
grep -q 'collector.jsonl: 4 requests skipped: otlp-metrics reads none of their fields' "$TMP/err" ||
  fail "otlp-metrics did not say what it skipped: $(cat "$TMP/err")"

# 5. again: nothing new, the log records skipped again
out="$("$BIN" import --db "$TMP/bulk.db" "$FX/collector.jsonl" 2>"$TMP/err")" || fail "re-import"
echo "$out" | grep -q '0 spans added, 24 already stored; 0 metric points added, 12 already stored' ||
  fail "re-import: $out"
grep -q '16 log records skipped' "$TMP/err" || fail "re-import: logs"

# 6. a bad metrics line between good lines: located, nothing stored, both paths
python3 - "$FX/collector.jsonl" "$TMP/bad.jsonl" <<'PY' >"$TMP/where"
import sys
lines = open(sys.argv[1]).read().split("\n")
n = next(i for i, l in enumerate(lines) if i > 0 and l.startswith('{"resourceMetrics"'))
col = lines[n].index('"asInt"') if '"asInt"' in lines[n] else lines[n].index('"count":')
lines[n] = lines[n][:col] + lines[n][col:].replace('"count":', '"count":-', 1)
open(sys.argv[2], "w").write("\n".join(lines))
print(n + 1)
PY
line=$(cat "$TMP/where")
if "$BIN" import --db "$TMP/badnew.db" "$TMP/bad.jsonl" 2>"$TMP/err"; then fail "a bad metrics line was accepted"; fi
cat "$TMP/err"
grep -Eq "bad.jsonl:$line:[0-9]+: count must not be negative" "$TMP/err" || fail "bad line: $(cat "$TMP/err")"
[ -e "$TMP/badnew.db" ] && fail "a failed bulk import left a database"
before="$(count "$TMP/append.db")"
if "$BIN" import --db "$TMP/append.db" "$TMP/bad.jsonl" 2>"$TMP/err"; then fail "append: bad line accepted"; fi
[ "$(count "$TMP/append.db")" = "$before" ] || fail "append: a failed import changed the database"
echo "import_collector: ok"
