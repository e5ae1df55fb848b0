#!/usr/bin/env bash
# import_interrupt.sh - a stop signal in the middle of an import (Ctrl-C,
# kill, a closed terminal): the command says which file got nothing,
# exits 128 + the signal number (130 for Ctrl-C) and the file adds no row;
# files imported before it stay.
#
# The importer is stopped (SIGSTOP) while it has the big file open and has
# read some of it (/proc/PID/fd and fdinfo show both), then gets the signal
# and is continued: the signal always lands in the middle of that file's
# import, however fast the machine.
set -euo pipefail
set -m  # background jobs keep SIGINT (a non-interactive shell would ignore it)
: "${TT_BIN:?TT_BIN must point at the tailtriage binary}"
TT_SRC=${TT_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tt-import-int.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$TMP/err" ] && cat "$TMP/err" >&2; exit 1; }
[ -d /proc/self/fdinfo ] || { echo "SKIP: no /proc/PID/fdinfo"; exit 0; }

# two-minute phases: the traces' number, not their time span, makes the file
"$TT_BIN" sim mercury --out "$TMP/sim" --traces 400 --set window-s=120 --set warmup-s=20 -q
# about 80 MB (the same requests eight times: the copies count as already
# stored), so that the import takes long enough to be caught with the file
# open
big="$TMP/big.jsonl"
for i in 1 2 3 4 5 6 7 8; do cat "$TMP/sim/traces.jsonl"; done >"$big"
rm -r "$TMP/sim"
small="$TT_SRC/tests/fixtures/otlp/lines.jsonl"

# offset PID FILE: how far PID has read FILE (empty when it has not opened it)
offset() {
  local fd
  for fd in /proc/"$1"/fd/*; do
    if [ "$(readlink "$fd" 2>/dev/null)" = "$2" ]; then
      awk '/^pos:/ {print $2}' /proc/"$1"/fdinfo/"${fd##*/}" 2>/dev/null
      return
    fi
  done
}

# Whoever runs the test may have left SIGINT ignored (a background job of a
# script); the command under test gets the signals' defaults, like a
# program started from a terminal.
dflt=()
env --default-signal=INT true 2>/dev/null && dflt=(env --default-signal=INT,TERM,HUP)

spans() { sqlite3 "$1" "SELECT count(*) FROM spans" 2>/dev/null || echo 0; }

for sig in INT TERM HUP; do
  db="$TMP/$sig.db"
  "$TT_BIN" import -q --db "$db" "$small" || fail "the small file did not import"
  before=$(spans "$db")
  [ "$before" -gt 0 ] || fail "the small file added no spans"
  "${dflt[@]}" "$TT_BIN" import --db "$db" "$big" >"$TMP/out" 2>"$TMP/err" &
  pid=$!
  pos=
  for ((i = 0; i < 3000; i++)); do
    pos=$(offset "$pid" "$big")
    if [ -n "$pos" ] && [ "$pos" -gt 0 ]; then
      kill -STOP "$pid"
      sleep 0.05
      pos=$(offset "$pid" "$big")  # still open: the file is being imported
      [ -n "$pos" ] && break
      kill -CONT "$pid"
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  [ -n "$pos" ] || fail "$sig: could not catch the import with the file open"
  kill -"$sig" "$pid"
  kill -CONT "$pid"
  rc=147
  while [ "$rc" = 147 ]; do  # with job control, wait also returns when the job stops
    rc=0
    wait "$pid" || rc=$?
  done
  pid=
  want=$((128 + $(kill -l "$sig")))
  [ "$rc" = "$want" ] || fail "$sig: exit status $rc, expected $want"
  grep -qx "tailtriage: interrupted: nothing imported from $big" "$TMP/err" \
    || fail "$sig: no 'interrupted: nothing imported from FILE' message"
  [ "$(spans "$db")" = "$before" ] || fail "$sig: the interrupted file left rows ($(spans "$db") spans, $before before)"
  # the database is still good: the same file imports completely afterwards
  "$TT_BIN" import -q --db "$db" "$big" || fail "$sig: the file does not import after the interruption"
  [ "$(spans "$db")" -gt "$before" ] || fail "$sig: nothing imported after the interruption"
done
echo "import_interrupt: ok"
