#!/usr/bin/env bash
# import_bulk.sh - `tailtriage import` into a database that does not exist
# yet takes the bulk path (README.md, "Importing into a new database"). As a
# user would notice it:
#  - it stores exactly the rows the ordinary (append) path stores, every
#    column of every table, with the same schema, indexes and WAL mode;
#  - a bad file among good ones: located error, exit 1, nothing of the bad
#    file, everything of the others;
#  - kill -9 at any moment leaves no database at all, or a complete one,
#    and the next import cleans up what the killed one left; Ctrl-C, kill
#    or a closed terminal during the load leave nothing at all;
#  - two imports creating the same database at once both land, once each;
#    a database created by another program meanwhile is appended to.
set -u
BIN="${TT_BIN:?}"
TMP="$(mktemp -d)"
bg=""
cleanup() {
  [ -z "$bg" ] || kill -9 $bg 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v sqlite3 >/dev/null || fail "sqlite3 shell is required"

# two-minute phases: what is checked is how rows land, not what they say
# (the default ten-minute phases cost the simulator five times the CPU)
"$BIN" sim mercury --out "$TMP/sim" --traces 600 --set window-s=120 --set warmup-s=20 -q || fail "sim"
TR="$TMP/sim/traces.jsonl" MT="$TMP/sim/metrics.jsonl"
SPANS=$(sed -n 's/.*"spans":[[:space:]]*\([0-9]*\).*/\1/p' "$TMP/sim/manifest.json" | head -1)
[ -n "$SPANS" ] && [ "$SPANS" -gt 10000 ] || fail "manifest spans: '$SPANS'"

# Every row of every table, all columns but the import time, in rowid
# order, quoted exactly; one line per table with its hash.
dump() {
  local db=$1 t cols order
  for t in $(sqlite3 "$db" "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"); do
    cols=$(sqlite3 "$db" "SELECT group_concat('\"' || name || '\"') FROM pragma_table_info('$t')
                          WHERE name <> 'imported_at_ms'")
    # rowid tables in rowid order (with it); WITHOUT ROWID ones by key
    if [ "$(sqlite3 "$db" "SELECT wr FROM pragma_table_list WHERE name = '$t'")" = 1 ]; then
      order=$cols
    else
      cols="rowid,$cols" order=rowid
    fi
    printf '%s %s\n' "$t" "$(sqlite3 -cmd '.mode quote' "$db" "SELECT $cols FROM \"$t\" ORDER BY $order" |
      sha256sum | cut -c1-16)"
  done
  echo "schema $(sqlite3 "$db" "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name" |
    sha256sum | cut -c1-16)"
  sqlite3 "$db" "PRAGMA journal_mode; PRAGMA page_size; PRAGMA user_version; PRAGMA integrity_check"
}

# ---- the same rows as the append path --------------------------------------
: >"$TMP/append.db"   # exists (empty): the ordinary path
"$BIN" import -q --db "$TMP/append.db" "$TR" "$MT" || fail "append import"
"$BIN" import -q --db "$TMP/bulk.db" "$TR" "$MT" || fail "bulk import"
[ -e "$TMP/.bulk.db.import" ] && fail "temporary file left after a bulk import"
dump "$TMP/append.db" >"$TMP/append.dump"
dump "$TMP/bulk.db" >"$TMP/bulk.dump"
cmp -s "$TMP/append.dump" "$TMP/bulk.dump" ||
  fail "bulk and append paths differ: $(diff "$TMP/append.dump" "$TMP/bulk.dump")"
grep -qx wal "$TMP/bulk.dump" || fail "bulk database not in WAL mode: $(cat "$TMP/bulk.dump")"
grep -qx ok "$TMP/bulk.dump" || fail "integrity: $(cat "$TMP/bulk.dump")"
n=$(sqlite3 "$TMP/bulk.db" "SELECT count(*) FROM spans")
[ "$n" = "$SPANS" ] || fail "bulk stored $n spans, expected $SPANS"
# each file's digest is its SHA-256 (a trace file's is computed from the
# bytes as the importer reads them, a metrics file's in a pass before)
for f in "$TR" "$MT"; do
  want=$(sha256sum "$f" | cut -c1-64)
  got=$(sqlite3 "$TMP/bulk.db" "SELECT sha256 FROM sources WHERE path = '$f'")
  [ "$got" = "$want" ] || fail "digest of $f: $got, sha256sum says $want"
done
for ix in spans_identity spans_root_start; do
  sqlite3 "$TMP/bulk.db" "PRAGMA index_list(spans)" | grep -q "|$ix|" || fail "no index $ix"
done
for ix in metric_points_series_ts sources_sha256; do
  [ "$(sqlite3 "$TMP/bulk.db" "SELECT count(*) FROM sqlite_master WHERE name = '$ix'")" = 1 ] ||
    fail "no index $ix"
done
# the indexes hold every row (INDEXED BY fails when an index is unusable)
a=$(sqlite3 "$TMP/bulk.db" "SELECT count(*) FROM spans INDEXED BY spans_root_start WHERE parent_id = '' AND start_ns > 0")
b=$(sqlite3 "$TMP/bulk.db" "SELECT count(*) FROM spans NOT INDEXED WHERE parent_id = '' AND start_ns > 0")
[ -n "$a" ] && [ "$a" = "$b" ] || fail "root-start index holds $a roots, the table $b"
# a second import appends to the finished database as to any other
out=$("$BIN" import --db "$TMP/bulk.db" "$TR") || fail "re-import"
echo "$out" | grep -q "0 spans added, $SPANS already stored" || fail "re-import: $out"

# ---- a bad file among good ones ---------------------------------------------
lines=$(wc -l <"$TR")
half=$((lines / 2))
head -n "$half" "$TR" >"$TMP/good1.jsonl"
tail -n +"$((half + 1))" "$TR" >"$TMP/good2.jsonl"
# valid lines (rows get stored) and then a broken one: all of it must go
{ sed -n "$((half + 1)),$((half + 3))p" "$TR"; echo '{"resourceSpans":[{"resource":{"attributes":[}]}'; } >"$TMP/bad.jsonl"
badline=4
for p in bulk append; do
  rm -f "$TMP/$p-bad.db"
  [ $p = append ] && : >"$TMP/$p-bad.db"
  if "$BIN" import --db "$TMP/$p-bad.db" "$TMP/good1.jsonl" "$TMP/bad.jsonl" "$TMP/good2.jsonl" \
    >"$TMP/$p-bad.out" 2>"$TMP/$p-bad.err"; then
    fail "$p: a bad file was accepted"
  fi
  grep -q "bad.jsonl:$badline:[0-9]*: " "$TMP/$p-bad.err" || fail "$p: no located error: $(cat "$TMP/$p-bad.err")"
  grep -q "bad.jsonl: nothing imported" "$TMP/$p-bad.err" || fail "$p: $(cat "$TMP/$p-bad.err")"
  grep -q "good1.jsonl: otlp-json: [1-9][0-9]* spans added" "$TMP/$p-bad.out" || fail "$p: $(cat "$TMP/$p-bad.out")"
  grep -q "good2.jsonl: otlp-json: [1-9][0-9]* spans added" "$TMP/$p-bad.out" || fail "$p: $(cat "$TMP/$p-bad.out")"
  n=$(sqlite3 "$TMP/$p-bad.db" "SELECT count(*) FROM spans")
  [ "$n" = "$SPANS" ] || fail "$p: $n spans stored with a bad file in between, expected $SPANS"
  [ "$(sqlite3 "$TMP/$p-bad.db" "SELECT count(*) FROM sources WHERE path LIKE '%bad.jsonl'")" = 0 ] ||
    fail "$p: the bad file left a source row"
  dump "$TMP/$p-bad.db" >"$TMP/$p-bad.dump"
done
# only bad files, into a database that does not exist: it is not created
rm -f "$TMP/none.db"
if "$BIN" import --db "$TMP/none.db" "$TMP/bad.jsonl" >"$TMP/none.out" 2>"$TMP/none.err"; then
  fail "only a bad file: accepted"
fi
grep -q "bad.jsonl:$badline:[0-9]*: " "$TMP/none.err" || fail "only a bad file: no located error: $(cat "$TMP/none.err")"
grep -qx "tailtriage: $TMP/none.db: not created: no file could be imported" "$TMP/none.err" ||
  fail "only a bad file: $(cat "$TMP/none.err")"
[ -e "$TMP/none.db" ] && fail "only a bad file: an empty database was left"
[ -e "$TMP/.none.db.import" ] && fail "only a bad file: the temporary file was left"
cmp -s "$TMP/append-bad.dump" "$TMP/bulk-bad.dump" ||
  fail "bad file: bulk and append differ: $(diff "$TMP/append-bad.dump" "$TMP/bulk-bad.dump")"
cmp -s "$TMP/append-bad.out" "$TMP/bulk-bad.out" || fail "bad file: messages differ"

# ---- kill -9 at any moment ---------------------------------------------------
# check_killed DB: no database at all, or a complete one.
none=0 complete=0
check_killed() {
  local db=$1 what=$2
  if [ ! -e "$db" ]; then
    for s in -wal -shm -journal; do [ -e "$db$s" ] && fail "$what: $db$s without $db"; done
    none=$((none + 1))
    return
  fi
  local n ok mode
  n=$(sqlite3 "$db" "SELECT count(*) FROM spans") || fail "$what: unreadable database"
  ok=$(sqlite3 "$db" "PRAGMA integrity_check")
  mode=$(sqlite3 "$db" "PRAGMA journal_mode")
  [ "$n" = "$SPANS" ] && [ "$ok" = ok ] && [ "$mode" = wal ] ||
    fail "$what: partial database: $n of $SPANS spans, integrity $ok, mode $mode"
  complete=$((complete + 1))
}
K="$TMP/k.db"
start=$(date +%s%N)
"$BIN" import -q --db "$TMP/timing.db" "$TR" || fail "timing import"
ms=$((($(date +%s%N) - start) / 1000000))
# a spread of moments: as the load starts, through it, and about when the
# indexes are built and the file is moved into place
for pct in 0 10 30 60 80 90 95 100 105 115; do
  rm -f "$K"
  "$BIN" import -q --db "$K" "$TR" &
  bg=$!
  sleep "$(awk -v m="$ms" -v p="$pct" 'BEGIN { printf "%.3f", m * p / 100000 }')"
  kill -9 $bg 2>/dev/null
  wait $bg 2>/dev/null
  bg=""
  check_killed "$K" "kill at ${pct}% of ${ms} ms"
done
# killed once the progress line is on the terminal (stderr a tty: script(1))
rm -f "$K"
script -qfec "sh -c 'echo \$\$ >$TMP/pid; exec \"$BIN\" import --db \"$K\" \"$TR\"'" "$TMP/tty" >/dev/null 2>&1 &
sc=$!
for _ in $(seq 200); do
  grep -q '%' "$TMP/tty" 2>/dev/null && break
  sleep 0.02
done
grep -q '%' "$TMP/tty" || fail "no progress line on the terminal: $(cat "$TMP/tty")"
kill -9 "$(cat "$TMP/pid")" 2>/dev/null
wait $sc 2>/dev/null
check_killed "$K" "kill after the progress line"
[ $none -gt 0 ] || fail "no kill landed during a load (outcomes: $none none, $complete complete)"
echo "kill -9: $none times no database, $complete times a complete one"
# the next import cleans up after the killed one and creates the database
rm -f "$K"
touch "$TMP/.k.db.import"
"$BIN" import -q --db "$K" "$TR" || fail "import after kills"
[ "$(sqlite3 "$K" "SELECT count(*) FROM spans")" = "$SPANS" ] || fail "import after kills: wrong count"
[ -e "$TMP/.k.db.import" ] && fail "the leftover temporary file is still there"
# ... and an import into an existing database removes a leftover too
touch "$TMP/.k.db.import"
"$BIN" import -q --db "$K" "$MT" || fail "append after kills"
[ -e "$TMP/.k.db.import" ] && fail "the leftover temporary file survived an append"

# ---- a stop signal during a bulk load -----------------------------------------
# The command says nothing was imported, exits 128 + the signal number, and
# removes its temporary file: no database, nothing left beside it. The
# importer is stopped (SIGSTOP) while it reads its input (/proc/PID/fdinfo
# shows the input open and partly read), then gets the signal and is
# continued.
offset() {  # offset PID FILE: how far PID has read FILE (empty: not open)
  local fd
  for fd in /proc/"$1"/fd/*; do
    if [ "$(readlink "$fd" 2>/dev/null)" = "$2" ]; then
      awk '/^pos:/ {print $2}' /proc/"$1"/fdinfo/"${fd##*/}" 2>/dev/null
      return
    fi
  done
}
dflt=()
env --default-signal=INT true 2>/dev/null && dflt=(env --default-signal=INT,TERM,HUP)
for _ in 1 2 3 4; do cat "$TR"; done >"$TMP/big.jsonl"
S="$TMP/s.db"
for sig in INT TERM HUP; do
  rm -f "$S"
  "${dflt[@]}" "$BIN" import --db "$S" "$TMP/big.jsonl" >"$TMP/s.out" 2>"$TMP/s.err" &
  bg=$!
  caught=0
  for _ in $(seq 3000); do
    pos=$(offset $bg "$TMP/big.jsonl")
    if [ -n "$pos" ] && [ "$pos" -gt 0 ]; then
      kill -STOP $bg
      sleep 0.05
      pos=$(offset $bg "$TMP/big.jsonl")  # still open: the load is under way
      if [ -n "$pos" ] && [ -e "$TMP/.s.db.import" ]; then caught=1; break; fi
      kill -CONT $bg
    fi
    kill -0 $bg 2>/dev/null || break
    sleep 0.005
  done
  [ $caught = 1 ] || fail "$sig: could not catch the bulk load reading its input"
  kill -"$sig" $bg
  kill -CONT $bg
  rc=0
  wait $bg || rc=$?
  bg=""
  [ "$rc" = $((128 + $(kill -l "$sig"))) ] || fail "$sig: exit status $rc: $(cat "$TMP/s.err")"
  grep -qx "tailtriage: interrupted: nothing imported; $S was not created" "$TMP/s.err" ||
    fail "$sig: message: $(cat "$TMP/s.err")"
  [ -e "$S" ] && fail "$sig: a database was left"
  [ -e "$TMP/.s.db.import" ] && fail "$sig: the temporary file was left"
done

# ---- two imports creating the same database at once --------------------------
C="$TMP/c.db"
"$BIN" import --db "$C" "$TR" >"$TMP/c1.out" 2>&1 &
bg=$!
"$BIN" import --db "$C" "$MT" >"$TMP/c2.out" 2>&1 || fail "second concurrent import: $(cat "$TMP/c2.out")"
wait $bg || fail "first concurrent import: $(cat "$TMP/c1.out")"
bg=""
grep -q "$SPANS spans added" "$TMP/c1.out" || fail "concurrent 1: $(cat "$TMP/c1.out")"
grep -q "metric points added" "$TMP/c2.out" || fail "concurrent 2: $(cat "$TMP/c2.out")"
[ "$(sqlite3 "$C" "SELECT count(*) FROM spans")" = "$SPANS" ] || fail "concurrent: spans"
[ "$(sqlite3 "$C" "SELECT count(*) FROM sources")" = 2 ] || fail "concurrent: sources"
[ "$(sqlite3 "$C" "PRAGMA integrity_check")" = ok ] || fail "concurrent: integrity"
[ -e "$TMP/.c.db.import" ] && fail "concurrent: temporary file left"

# ---- created by another program meanwhile: appended to -------------------------
# The second import has an input that is not a regular file (/dev/null), so
# it takes the ordinary path and creates the database at once; the bulk
# import then finds it there and imports its files into it instead (or, if
# it finished first, the second one appends).
R="$TMP/r.db"
"$BIN" import --db "$R" "$TR" >"$TMP/r1.out" 2>&1 &
bg=$!
for _ in $(seq 500); do [ -e "$TMP/.r.db.import" ] && break; sleep 0.002; done
head -n 5 "$MT" >"$TMP/mt-small.jsonl"  # short: its transaction must not outlast a busy wait
"$BIN" import -q --db "$R" "$TMP/mt-small.jsonl" /dev/null 2>"$TMP/r2.err" && fail "/dev/null was imported"
grep -q "/dev/null:1:1: file is empty" "$TMP/r2.err" || fail "/dev/null: $(cat "$TMP/r2.err")"
wait $bg || fail "bulk import raced: $(cat "$TMP/r1.out")"
bg=""
[ "$(grep -c "spans added" "$TMP/r1.out")" = 1 ] || fail "raced: $(cat "$TMP/r1.out")"
[ "$(sqlite3 "$R" "SELECT count(*) FROM spans")" = "$SPANS" ] || fail "raced: spans"
[ "$(sqlite3 "$R" "SELECT count(*) FROM sources")" = 2 ] || fail "raced: sources"
[ -e "$TMP/.r.db.import" ] && fail "raced: temporary file left"
if sqlite3 "$R" "SELECT path FROM sources ORDER BY id LIMIT 1" | grep -q 'mt-small.jsonl$'; then
  echo "created meanwhile: the bulk import found the database and appended to it"
else
  echo "created meanwhile: the bulk import finished first (the fallback was not exercised)"
fi
echo "ok"
