#!/usr/bin/env bash
# bench/tui_latency.sh - the "TUI latency" benchmark of bench/README.md.
#
# 1. uses the 1,000,002-span JSON Lines file of bench/bench.sh
#    (bench/out/lines/traces.jsonl; generated the same way when missing) and
#    imports it once into bench/out/tui.db;
# 2. opens `tailtriage tui` on it inside tmux (100x30) with the Mercury model,
#    the simulator's incident window and baseline, and --latency-log, which
#    makes the TUI append one line per frame that answers a key or a data
#    change (tui/tui.c says what the columns are);
# 3. presses keys while the screen is idle (moves, panes, help, sort);
# 4. three times: another process imports a small batch of new traces
#    (`tailtriage sim --traces 20 --seed N`, ~700 spans) into the same
#    database; the TUI notices on its tick, recomputes on its worker thread,
#    and draws; meanwhile keys are pressed every 150 ms, to measure keys
#    while a recompute runs;
# 5. prints a Markdown table and, with --record, rewrites the block between
#    the tui-latency markers of bench/README.md.
#
# usage: bench/tui_latency.sh [--record] [--refresh S]
#   TT_BIN          tailtriage binary (default: build Release in build-bench/)
#   TT_BENCH_OUT    where the big files go (default: bench/out, gitignored)
#   TT_BENCH_TRACES traces per window (default 28935: 1,000,002 spans)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${TT_BENCH_OUT:-$ROOT/bench/out}
TRACES=${TT_BENCH_TRACES:-28935}
record=0 refresh=1
while [ $# -gt 0 ]; do
  case $1 in
    --record) record=1; shift ;;
    --refresh) refresh=$2; shift 2 ;;
    *) echo "usage: $0 [--record] [--refresh S]" >&2; exit 2 ;;
  esac
done
for tool in tmux python3 sqlite3; do
  command -v $tool >/dev/null || { echo "tui_latency: $tool is required" >&2; exit 2; }
done
if [ -z "${TT_BIN:-}" ]; then
  echo "== build (Release) in $ROOT/build-bench" >&2
  cmake -S "$ROOT" -B "$ROOT/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$ROOT/build-bench" -j"$(nproc)" --target tailtriage >/dev/null
  TT_BIN=$ROOT/build-bench/cli/tailtriage
fi
[ -x "$TT_BIN" ] || { echo "tui_latency: no binary at $TT_BIN" >&2; exit 2; }
mkdir -p "$OUT"

# ---- data -------------------------------------------------------------------
SRC=$OUT/lines
if [ ! -s "$SRC/traces.jsonl" ]; then
  echo "== generate $TRACES traces per window" >&2
  "$TT_BIN" sim mercury --out "$SRC" --traces "$TRACES" -q
fi
DB=$OUT/tui.db
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spans"])' "$SRC/manifest.json")
have=$( [ -s "$DB" ] && sqlite3 "$DB" "select count(*) from spans" 2>/dev/null || echo 0)
if [ "$have" != "$want" ]; then
  echo "== import $want spans into $DB" >&2
  rm -f "$DB" "$DB-wal" "$DB-shm"
  "$TT_BIN" import -q --db "$DB" "$SRC/traces.jsonl"
fi
read -r WIN BASE < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["window"]["range"], m["baseline"]["range"])' "$SRC/manifest.json")
for i in 1 2 3; do
  [ -s "$OUT/tui-extra-$i/traces.jsonl" ] ||
    "$TT_BIN" sim mercury --out "$OUT/tui-extra-$i" --traces 20 --seed $((1000 + i)) -q
done
# the extra batches are imported by the benchmark: start from the base rows
base_spans=$(sqlite3 "$DB" "select count(*) from spans")
if [ "$base_spans" != "$want" ]; then
  echo "tui_latency: $DB has $base_spans spans, expected $want; delete it to rebuild" >&2
  exit 1
fi
cp "$DB" "$OUT/tui-run.db"
RUNDB=$OUT/tui-run.db
rm -f "$RUNDB-wal" "$RUNDB-shm"

# ---- run ----------------------------------------------------------------------
SOCK="tt-bench-$$"
LOG=$OUT/tui-latency.log
rm -f "$LOG"
tmx() { tmux -u -L "$SOCK" "$@"; }
cleanup() { tmx kill-server 2>/dev/null || true; rm -f "$RUNDB" "$RUNDB-wal" "$RUNDB-shm"; }
trap cleanup EXIT
load_before=$(cut -d' ' -f1 /proc/loadavg)
tmx new-session -d -s t -x 100 -y 30 \
  "LANG=C.UTF-8 TERM=screen-256color '$TT_BIN' tui --db '$RUNDB' --model '$ROOT/models/mercury-home.model.json' --window '$WIN' --baseline '$BASE' --refresh $refresh --latency-log '$LOG'; sleep 600"

count() { # count PATTERN: lines of the log matching PATTERN
  if [ -f "$LOG" ]; then grep -c "$1" "$LOG" || true; else echo 0; fi
}
wait_log() { # wait_log PATTERN COUNT SECONDS
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    [ "$(count "$1")" -ge "$2" ] && return 0
    sleep 0.1
  done
  echo "tui_latency: timed out waiting for $2 '$1' lines" >&2
  tmx capture-pane -p -t t >&2
  exit 1
}
echo "== first analysis of $want spans" >&2
wait_log '^first' 1 300

echo "== keys on an idle screen" >&2
for k in j j j j j k k Tab Tab Tab Enter Escape '?' Escape s s s s j j Enter Down Down Escape; do
  tmx send-keys -t t "$k"
  sleep 0.15
done
sleep 0.5
idle_keys=$(count '^key')

echo "== imports by another process while the TUI runs" >&2
: > "$OUT/tui-commits"
for i in 1 2 3; do
  before=$(count '^data')
  "$TT_BIN" import -q --db "$RUNDB" "$OUT/tui-extra-$i/traces.jsonl"
  date +%s%3N >> "$OUT/tui-commits"
  # keys while the recompute runs (until the frame with the new data)
  for ((n = 0; n < 400; n++)); do
    [ "$(count '^data')" -gt "$before" ] && break
    tmx send-keys -t t "$([ $((n % 2)) = 0 ] && echo j || echo k)"
    sleep 0.15
  done
  wait_log '^data' $((before + 1)) 120
  sleep 0.5
done
tmx send-keys -t t q
load_after=$(cut -d' ' -f1 /proc/loadavg)

# ---- report -------------------------------------------------------------------
table=$(python3 - "$LOG" "$OUT/tui-commits" "$idle_keys" "$want" "$refresh" "$load_before" "$load_after" <<'EOF'
import statistics, sys
log, commits_path, idle_n, spans, refresh, l0, l1 = sys.argv[1:]
idle_n = int(idle_n)
lines = [l.rstrip("\n").split("\t") for l in open(log)]
keys = [float(l[2]) for l in lines if l[0] == "key"]
idle, busy = keys[:idle_n], keys[idle_n:]
data = [l for l in lines if l[0] == "data"]
first = [l for l in lines if l[0] == "first"][0]
commits = [int(x) for x in open(commits_path).read().split()]
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, -(-len(v) * p // 100) - 1))]
def row(name, v, note=""):
    if not v:
        return f"| {name} | 0 | - | - | - | {note} |"
    return f"| {name} | {len(v)} | {q(v, 50):.2f} | {q(v, 95):.2f} | {max(v):.2f} | {note} |"
seen = [float(l[1]) for l in data]
analysis = [float(l[2]) for l in data]
e2e = [float(l[3]) - c for l, c in zip(data, commits)]
print(f"Database: {int(spans):,} spans; window and baseline of the simulator's manifest; "
      f"tick {float(refresh):g} s; terminal 100x30 in tmux; load average {l0} before, {l1} after.\n")
print("| measured | n | p50 ms | p95 ms | max ms | note |")
print("|---|---|---|---|---|---|")
print(row("key press -> frame, idle", idle, "move, Tab, Enter, Esc, help, sort"))
print(row("key press -> frame, recompute running", busy, "j/k every 150 ms during the recompute"))
print(row("data change seen -> frame", seen, "analysis on the worker + draw"))
print(row("of which analysis_run", analysis, "window + baseline over the whole store"))
print(row("import committed -> frame", e2e, "adds the wait for the next tick"))
print(row("start -> first frame with data", [float(first[1])], "first analysis"))
EOF
)
echo "$table"
if [ $record = 1 ]; then
  python3 - "$ROOT/bench/README.md" "$table" "$(date -u +%Y-%m-%d)" "$(nproc)" <<'EOF'
import sys
path, table, day, cpus = sys.argv[1:]
text = open(path).read()
begin, end = "<!-- tui-latency:begin (rewritten by bench/tui_latency.sh --record) -->", "<!-- tui-latency:end -->"
block = f"{begin}\nRecorded {day} on {cpus} CPUs.\n\n{table}\n{end}"
if begin in text and end in text:
    a = text.index(begin)
    b = text.index(end) + len(end)
    text = text[:a] + block + text[b:]
else:
    sys.exit("tui_latency: the tui-latency markers are missing from bench/README.md")
open(path, "w").write(text)
EOF
  echo "recorded in bench/README.md" >&2
fi
