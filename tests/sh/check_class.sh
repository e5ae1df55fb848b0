#!/usr/bin/env bash
# check_class.sh - `tailtriage check NAME --class C` either honours the
# class or refuses it: the by-class tables show C's row beside "all", the
# per-request checks count only C's requests, and class-mix (which compares
# the classes) is a usage error naming the checks that take a class, given
# before the database is read. Exit status: 0 ok, 1 failure, 2 usage.
set -euo pipefail
: "${TT_BIN:?TT_BIN must point at the tailtriage binary}"
: "${TT_BUILD:?TT_BUILD must point at the build directory}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tt-check-class.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$TMP/err" ] && cat "$TMP/err" >&2; exit 1; }
"$TT_BUILD/tests/test_tui" --make-db "$TMP/f.db"
"$TT_BUILD/tests/test_tui" --model "$TMP/model.json"
DB="$TMP/f.db"

# json CHECK [ARGS...]: the check's table as JSON in $TMP/out
json() {
  local name=$1
  shift
  "$TT_BIN" check "$name" --db "$DB" --model "$TMP/model.json" --format json "$@" \
    >"$TMP/out" 2>"$TMP/err" || fail "check $name $*: exit status $?"
}
# py EXPR: evaluates a Python expression over the table t (the JSON above)
# with col(name) the list of that column's cells, and prints the result.
py() {
  python3 - "$TMP/out" "$1" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
def col(name):
    i = t["columns"].index(name)
    return [r[i] for r in t["rows"]]
def num(s):
    return int(s.lstrip("~"))
print(eval(sys.argv[2]))
PY
}

# how many requests each class has, from the unfiltered fan-out table
json fanout-by-class
all=$(py 'dict(zip(col("class"), col("requests")))["all"]')
prem=$(py 'dict(zip(col("class"), col("requests")))["premium"]')
[ "$prem" -gt 0 ] && [ "$prem" -lt "$all" ] || fail "fixture: premium $prem of $all requests"

# ---- by-class tables: "all" and the class, nothing else ----------------------
for c in fanout-by-class pool-by-class; do
  json "$c" --class premium
  rows=$(py '",".join(col("class"))')
  [ "$rows" = "all,premium" ] || fail "$c --class premium: rows $rows, expected all,premium"
  grep -q "then class premium" "$TMP/out" || fail "$c --class premium: the note does not say so"
done

# ---- per-request checks count only the class's requests ----------------------
json late-work
[ "$(py 'sum(num(x) for x in col("requests"))')" = "$all" ] || fail "late-work: not all requests"
json late-work --class premium
got=$(py 'sum(num(x) for x in col("requests") if x)')
[ "$got" = "$prem" ] || fail "late-work --class premium counts $got requests, expected $prem"
grep -q "class premium only" "$TMP/out" || fail "late-work --class: the note does not say so"

json endpoint-queue --class premium
got=$(py 'dict(zip(col("host"), col("requests")))["all"]')
[ "$got" = "$prem" ] || fail "endpoint-queue --class premium counts $got requests, expected $prem"

# ---- class-mix refuses a class, before any file is read ----------------------
rc=0
"$TT_BIN" check class-mix --db "$TMP/none.db" --class premium >"$TMP/out" 2>"$TMP/err" || rc=$?
[ "$rc" = 2 ] || fail "check class-mix --class: exit status $rc, expected 2"
grep -q "check class-mix compares all classes and takes no --class (checks that take it: pool-by-class, fanout-by-class, host-concentration, client-vs-server, late-work, endpoint-queue)" "$TMP/err" \
  || fail "check class-mix --class: message does not name the checks that take a class"
grep -q "no such database" "$TMP/err" && fail "class-mix --class read the database first"
[ -e "$TMP/none.db" ] && fail "class-mix --class created a database"

# ---- --help says which checks take a class ----------------------------------
"$TT_BIN" check --help >"$TMP/out"
grep -q "class-mix takes no class" "$TMP/out" || fail "check --help does not say which checks take --class"
echo ok
