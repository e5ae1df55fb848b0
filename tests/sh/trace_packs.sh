#!/usr/bin/env bash
# trace_packs.sh - `report` and `diagnose` answer the same, to the byte,
# whether the traces are read from their packs (what an import writes) or
# from their spans (a database without packs: from before them, or with
# them deleted), with the whole window read and with a sample of it.
set -u
BIN="${TT_BIN:?}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v sqlite3 >/dev/null || fail "sqlite3 shell is required"

# two-minute phases (the comparison is packs against spans on the same data;
# the default ten-minute phases cost the simulator five times the CPU)
"$BIN" sim mercury --out "$TMP/sim" --traces 400 --set window-s=120 --set warmup-s=20 -q || fail "sim"
"$BIN" import -q --db "$TMP/p.db" "$TMP/sim/traces.jsonl" "$TMP/sim/metrics.jsonl" || fail "import"
rooted=$(sqlite3 "$TMP/p.db" "SELECT count(DISTINCT trace_key) FROM spans WHERE parent_id = ''")
packs=$(sqlite3 "$TMP/p.db" "SELECT count(*) FROM trace_packs")
[ "$rooted" -gt 500 ] && [ "$packs" = "$rooted" ] || fail "$packs packs for $rooted requests"
cp "$TMP/p.db" "$TMP/s.db"
sqlite3 "$TMP/s.db" "DELETE FROM trace_packs"

W=2026-07-14T18:00:00Z..2026-07-14T18:02:00Z
B=2026-07-14T17:00:00Z..2026-07-14T17:02:00Z
M="$TT_SRC/models/mercury-home.model.json"
for args in "" "--sample 150"; do
  for cmd in report diagnose; do
    for db in p s; do
      # shellcheck disable=SC2086
      "$BIN" $cmd --db "$TMP/$db.db" --model "$M" --window $W --baseline $B --format json $args \
        >"$TMP/$cmd.$db.json" || fail "$cmd $args on $db.db"
    done
    grep -q '"p99' "$TMP/$cmd.p.json" || grep -q '"hypotheses"' "$TMP/$cmd.p.json" ||
      fail "$cmd $args: no figures in the output"
    cmp -s "$TMP/$cmd.p.json" "$TMP/$cmd.s.json" || {
      diff "$TMP/$cmd.p.json" "$TMP/$cmd.s.json" | head -n 10 >&2
      fail "$cmd $args differs between packs and spans"
    }
  done
done
echo "trace_packs: ok ($packs packs; report and diagnose the same from packs and from spans)"
