#!/usr/bin/env bash
# store_access.sh - how the database file is opened, as a new user meets it:
#  - several processes creating the same new database at once all succeed
#    (imports racing each other, and `serve` racing an import);
#  - every read command works on a database in a read-only folder, the
#    dashboard included (run as an unprivileged user when the test runs as
#    root, since root may write anywhere);
#  - writing into it, a directory given as the database and a database that
#    does not exist each get a message that says what is wrong.
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
TT=$TT_BIN
FIX="$TT_SRC/tests/fixtures"
chmod 755 "$TUI_TMP"
spid=
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; tui_cleanup' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$TUI_TMP/out" ] && cat "$TUI_TMP/out" >&2; exit 1; }

# ---- race-free creation ---------------------------------------------------
for round in 1 2 3 4 5 6; do
  db="$TUI_TMP/race$round.db"
  pids=()
  for i in 1 2 3 4; do
    "$TT" import -q --db "$db" "$FIX/otlp/lines.jsonl" >"$TUI_TMP/race$i.out" 2>&1 &
    pids+=($!)
  done
  for i in 1 2 3 4; do
    wait "${pids[$((i - 1))]}" || { cat "$TUI_TMP/race$i.out" >&2; fail "round $round: import $i of 4 racing on a new database failed"; }
  done
done
# serve and import creating the same database
for round in 1 2 3; do
  db="$TUI_TMP/serve$round.db"
  rm -f "$TUI_TMP/serve.err"
  "$TT" serve --db "$db" --listen 127.0.0.1:0 -q 2>"$TUI_TMP/serve.err" &
  spid=$!
  "$TT" import -q --db "$db" "$FIX/otlp/lines.jsonl" >"$TUI_TMP/out" 2>&1 || fail "round $round: import racing serve failed"
  for ((i = 0; i < 100; i++)); do grep -q serving "$TUI_TMP/serve.err" && break; kill -0 $spid 2>/dev/null || break; sleep 0.05; done
  kill -0 $spid 2>/dev/null || { cat "$TUI_TMP/serve.err" >&2; fail "round $round: serve racing an import died"; }
  kill -TERM $spid
  wait $spid || fail "serve did not stop cleanly"
  spid=
done

# ---- a read-only database -------------------------------------------------
tui_fixture
mkdir "$TUI_TMP/ro"
"$TT" import -q --db "$TUI_TMP/ro/t.db" "$FIX/otlp/lines.jsonl" >/dev/null
cp "$TUI_TMP/model.json" "$TUI_TMP/ro/model.json"
cp "$TUI_TMP/f.db" "$TUI_TMP/ro/f.db"
chmod 444 "$TUI_TMP/ro/"*
chmod 555 "$TUI_TMP/ro"
RO="$TUI_TMP/ro"
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || { echo "SKIP: running as root without setpriv"; exit 0; }
  reader=(setpriv --reuid 65534 --regid 65534 --clear-groups)
else
  reader=()
fi
cd "$TUI_TMP"
for cmd in "report" "report --format json" "diagnose --model $RO/model.json" \
           "check host-concentration --model $RO/model.json" "drill history"; do
  # shellcheck disable=SC2086
  "${reader[@]}" "$TT" $cmd --db "$RO/f.db" >"$TUI_TMP/out" 2>&1 || fail "'$cmd' on a read-only database"
  grep -qi "readonly\|read-only" "$TUI_TMP/out" && fail "'$cmd' complains about a read-only database"
done
"${reader[@]}" "$TT" report --db "$RO/f.db" | grep -q "GET /v2/home" || fail "report on a read-only database shows no endpoint"
"${reader[@]}" "$TT" import --db "$RO/t.db" "$FIX/otlp/single.json" >"$TUI_TMP/out" 2>&1 && fail "import into a read-only database succeeded"
grep -q "t.db: cannot write to this database: the file or its folder is read-only" "$TUI_TMP/out" \
  || fail "import into a read-only database does not say why it failed"

# the dashboard on it, as the same user
printf '#!/bin/sh\nexec %s "%s" "$@"\n' "${reader[*]}" "$TT_BIN" >"$TUI_TMP/as-reader"
chmod 755 "$TUI_TMP/as-reader"
TT_BIN="$TUI_TMP/as-reader"
tui_start 100 30 --db "$RO/f.db" --model "$RO/model.json" \
  --window 1784052600000..1784053200000 --baseline 1784052000000..1784052600000
tui_wait "p99 357.8 ms .* BREACHED objective 300 ms" "the dashboard does not open a read-only database"
tui_quit
TT_BIN=$TT

# ---- wrong kinds of path --------------------------------------------------
rc=0; "$TT" report --db "$TUI_TMP" >"$TUI_TMP/out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "report --db DIR: exit $rc"
grep -q "$TUI_TMP: is a directory" "$TUI_TMP/out" || fail "report --db DIR does not say it is a directory"
"$TT" import --db "$TUI_TMP" "$FIX/otlp/single.json" >"$TUI_TMP/out" 2>&1 && fail "import --db DIR succeeded"
grep -q "is a directory" "$TUI_TMP/out" || fail "import --db DIR does not say it is a directory"
"$TT" report --db "$TUI_TMP/none.db" >"$TUI_TMP/out" 2>&1 && fail "report on a missing database succeeded"
grep -q "none.db: no such database" "$TUI_TMP/out" || fail "report on a missing database does not say so"
[ -e "$TUI_TMP/none.db" ] && fail "report created the missing database"
echo "store_access: ok"
