#!/usr/bin/env bash
# import_otlp_proto.sh - `tailtriage import` on OTLP protobuf files: one
# request per file, and the OpenTelemetry Collector file exporter's
# length-prefixed stream (`format: proto`), detected from the content. The
# same telemetry as OTLP/JSON, JSON Lines, protobuf files and a protobuf
# stream must store exactly the same rows; a cut or corrupt file gives a
# byte-located error, exit 1 and no rows (no database, when it was new).
set -u
BIN="${TT_BIN:?}"
FX="${TT_SRC:?}/tests/fixtures/otlp_proto"
ROWS="${TT_SRC:?}/tests/js/db_rows.py"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
count() { sqlite3 -batch -noheader "$1" "select (select count(*) from spans) || '/' || (select count(*) from metric_points)"; }

"$BIN" import --db "$TMP/json.db" "$FX/traces.json" "$FX/metrics.json" >/dev/null || fail "json import"
"$BIN" import --db "$TMP/jsonl.db" "$FX/traces.jsonl" "$FX/metrics.jsonl" >/dev/null || fail "jsonl import"
out="$("$BIN" import --db "$TMP/pb.db" "$FX/traces.pb" "$FX/metrics.pb")" || fail "pb import: $out"
echo "$out"
echo "$out" | grep -q 'traces.pb: otlp-proto: 24 spans added' || fail "traces.pb: $out"
echo "$out" | grep -q 'metrics.pb: otlp-proto: 6 metric points added' || fail "metrics.pb: $out"
out="$("$BIN" import --db "$TMP/stream.db" "$FX/stream.pb")" || fail "stream import: $out"
echo "$out"
echo "$out" | grep -q 'stream.pb: otlp-proto: 24 spans added, 0 already stored; 6 metric points added' ||
  fail "stream.pb: $out"
[ "$(count "$TMP/pb.db")" = 24/6 ] || fail "pb counts $(count "$TMP/pb.db")"

for db in json jsonl pb stream; do
  python3 "$ROWS" "$TMP/$db.db" >"$TMP/$db.rows" || fail "db_rows $db"
done
for db in jsonl pb stream; do
  if ! cmp -s "$TMP/json.rows" "$TMP/$db.rows"; then
    diff "$TMP/json.rows" "$TMP/$db.rows" | head -n 10 >&2
    fail "rows from $db differ from the JSON ones"
  fi
done
echo "same rows from JSON, JSON Lines, protobuf and the protobuf stream: $(wc -l <"$TMP/json.rows")"

# The stream again: nothing new.
out="$("$BIN" import --db "$TMP/stream.db" "$FX/stream.pb")" || fail "re-import"
echo "$out" | grep -q '0 spans added, 24 already stored' || fail "re-import: $out"

# A stream cut in its last message: located error, exit 1, nothing stored.
size=$(stat -c %s "$FX/stream.pb")
head -c $((size - 10)) "$FX/stream.pb" >"$TMP/cut.pb"
if "$BIN" import --db "$TMP/cut.db" "$TMP/cut.pb" 2>"$TMP/err"; then fail "a cut stream was accepted"; fi
cat "$TMP/err"
grep -Eq 'cut.pb: byte [0-9]+: file ends in the middle of a message' "$TMP/err" || fail "cut: $(cat "$TMP/err")"
# (nothing could be imported, so the new database is not even created)
[ -e "$TMP/cut.db" ] && fail "a cut stream left a database: $(count "$TMP/cut.db")"

# A corrupt request: the first span's trace_id tag (field 1, length 16)
# turned into wire type 7 is reported at its byte.
python3 - "$FX/traces.pb" "$TMP/bad.pb" <<'PY' >"$TMP/at"
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.index(b"\x0a\x10", 20)
b[i] = 0x0f
open(sys.argv[2], "wb").write(b)
print(i)
PY
at=$(cat "$TMP/at")
if "$BIN" import --db "$TMP/bad.db" "$TMP/bad.pb" 2>"$TMP/err"; then fail "a corrupt request was accepted"; fi
cat "$TMP/err"
grep -q "bad.pb: byte $at: field 1: wire type 7 is not valid" "$TMP/err" || fail "corrupt: $(cat "$TMP/err")"
[ -e "$TMP/bad.db" ] && fail "a corrupt request left a database"
echo "import_otlp_proto: ok"
