#!/usr/bin/env bash
# import_stdin.sh - `tailtriage import -` and inputs that cannot seek (a
# pipe, process substitution): they store exactly the rows the same file
# stores, for a trace format (digest taken while reading) and a metric
# format (hashed before reading), and say "(stdin)" in their messages and
# source rows. A broken or empty piped input gives a located error, exit 1
# and no rows, and no new database when nothing could be imported (nor for
# a file that is not there); the copy kept in $TMPDIR is gone afterwards; a
# $TMPDIR that cannot hold it is an error, not a crash.
set -u
BIN="${TT_BIN:?}"
FX="${TT_SRC:?}/tests/fixtures/otlp_proto"
ROWS="${TT_SRC:?}/tests/js/db_rows.py"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir "$TMP/spool"
export TMPDIR="$TMP/spool"

"$BIN" import -q --db "$TMP/file.db" "$FX/traces.json" "$FX/metrics.pb" || fail "file import"
out="$(cat "$FX/traces.json" | "$BIN" import --db "$TMP/pipe.db" - 2>&1)" || fail "stdin import: $out"
echo "$out"
echo "$out" | grep -q '^(stdin): otlp-json: 24 spans added, 0 already stored$' || fail "stdin: $out"
out="$(cat "$FX/metrics.pb" | "$BIN" import --db "$TMP/pipe.db" - 2>&1)" || fail "piped metrics: $out"
echo "$out" | grep -q '^(stdin): otlp-proto: 6 metric points added' || fail "piped metrics: $out"
for db in file pipe; do
  python3 "$ROWS" "$TMP/$db.db" >"$TMP/$db.rows" || fail "db_rows $db"
done
cmp -s "$TMP/file.rows" "$TMP/pipe.rows" || { diff "$TMP/file.rows" "$TMP/pipe.rows" | head >&2; fail "rows differ"; }
[ "$(sqlite3 "$TMP/pipe.db" "select count(*) from sources where path = '(stdin)'")" = 2 ] ||
  fail "source rows: $(sqlite3 "$TMP/pipe.db" 'select path from sources')"
echo "same rows through a pipe as from the files: $(wc -l <"$TMP/pipe.rows")"

# process substitution: the content was imported before, through stdin
out="$("$BIN" import --db "$TMP/pipe.db" <(cat "$FX/traces.json") 2>&1)" || fail "<(...): $out"
echo "$out" | grep -q 'same content as (stdin), imported before: nothing new' || fail "<(...): $out"

# a broken input through a pipe: located, exit 1, nothing stored
before="$(sqlite3 "$TMP/pipe.db" 'select count(*) from spans')"
head -c 300 "$FX/traces.json" | "$BIN" import --db "$TMP/pipe.db" - >"$TMP/out" 2>&1 && fail "a cut input was accepted"
grep -Eq '^\(stdin\):[0-9]+:[0-9]+: ' "$TMP/out" || fail "no located error: $(cat "$TMP/out")"
[ "$(sqlite3 "$TMP/pipe.db" 'select count(*) from spans')" = "$before" ] || fail "rows added by a cut input"
: | "$BIN" import --db "$TMP/pipe.db" - >"$TMP/out" 2>&1 && fail "an empty input was accepted"
grep -q '^(stdin):1:1: file is empty' "$TMP/out" || fail "empty: $(cat "$TMP/out")"
[ -z "$(ls -A "$TMP/spool")" ] || fail "copies left in TMPDIR: $(ls "$TMP/spool")"

# a new database is created only when something could be imported into
# it, whether the input is a pipe or a file that is not there
printf 'not telemetry' | "$BIN" import --db "$TMP/new.db" - >"$TMP/out" 2>&1 && fail "garbage accepted"
grep -q "new.db: not created: no file could be imported" "$TMP/out" || fail "garbage: $(cat "$TMP/out")"
"$BIN" import --db "$TMP/new.db" "$TMP/missing.json" >"$TMP/out" 2>&1 && fail "a missing file accepted"
grep -q "new.db: not created: no file could be imported" "$TMP/out" || fail "missing: $(cat "$TMP/out")"
[ -z "$(ls -A "$TMP" | grep new.db)" ] || fail "a database or its temporary file was left: $(ls -A "$TMP")"
# a file redirected to the standard input can seek: no copy is needed
"$BIN" import -q --db "$TMP/redirect.db" - <"$FX/traces.json" || fail "redirected file"

# nowhere to keep the copy
cat "$FX/traces.json" | TMPDIR="$TMP/none" "$BIN" import --db "$TMP/pipe.db" - >"$TMP/out" 2>&1 &&
  fail "imported without a copy"
grep -q "(stdin): cannot keep a copy of the input in $TMP/none" "$TMP/out" || fail "no TMPDIR: $(cat "$TMP/out")"
echo "ok"
