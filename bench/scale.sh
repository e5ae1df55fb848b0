#!/usr/bin/env bash
# bench/scale.sh - the "Interactive at scale" benchmark of bench/README.md
# (issue 14): what a user waits for on a large incident, each figure beside
# the plain SQL pass over the same database measured in the same run.
#
# 1. generates `tailtriage sim mercury --traces N` (default 18790: 999,852
#    spans with the simulator's case fleet) into bench/out/scale-N/ unless
#    it is there;
# 2. import: RUNS times, the JSON Lines trace file into a new database
#    (the bulk path, aggregates included), wall time and peak RSS from
#    /usr/bin/time (with TT_BIN_BEFORE set, that binary's import too, in
#    the same rounds, into a database of its own beside it, which its
#    report and diagnose then read: a binary may not read a newer schema);
#    then the metrics file into each (not timed);
# 3. RUNS rounds of: the plain SQL pass (the sqlite3 shell summing the span
#    fields the analysis reads), `report` and `diagnose` with
#    --model mercury-home, the simulator's window and baseline (wall time,
#    peak RSS), as they run by default (a uniform sample past 20,000
#    requests a population), with --sample 5000 and with --sample all
#    (every request); with TT_BIN_BEFORE set, that binary's report and
#    diagnose too, alternating (a change against its parent, same load);
# 4. unless --no-tui, RUNS times: `tailtriage tui` in tmux (110x32) with
#    the same model, window and baseline and --latency-log; the first frame
#    with numbers is timed from the moment the command is launched (the
#    log's epoch ms of that frame minus the launch time), then the exact
#    frame; then a window change (the `w` prompt: the first five minutes of
#    the incident) and a class change (`c`), each timed from the request to
#    the frame that shows the approximate answer and to the exact one (the
#    log's "answer" lines, tui/tui.c);
# 5. prints a Markdown table of the medians; --record also writes it into
#    bench/README.md between the scale-results markers for that span count.
#
# usage: bench/scale.sh [--runs N] [--no-tui] [--record]
#   TT_BIN          tailtriage binary (default: build Release in build-bench/)
#   TT_BIN_BEFORE   a second binary for report/diagnose (optional)
#   TT_BENCH_OUT    where the big files go (default: bench/out, gitignored)
#   TT_BENCH_TRACES traces per window (default 28935)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${TT_BENCH_OUT:-$ROOT/bench/out}
TRACES=${TT_BENCH_TRACES:-18790}
runs=3 tui=1 record=0
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --no-tui) tui=0; shift ;;
    --record) record=1; shift ;;
    *) echo "usage: $0 [--runs N] [--no-tui] [--record]" >&2; exit 2 ;;
  esac
done
for tool in /usr/bin/time sqlite3 python3; do
  command -v $tool >/dev/null || { echo "scale: $tool is required" >&2; exit 2; }
done
[ $tui = 0 ] || command -v tmux >/dev/null || { echo "scale: tmux is required (or --no-tui)" >&2; exit 2; }
if [ -z "${TT_BIN:-}" ]; then
  echo "== build (Release) in $ROOT/build-bench" >&2
  cmake -S "$ROOT" -B "$ROOT/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$ROOT/build-bench" -j2 --target tailtriage >/dev/null
  TT_BIN=$ROOT/build-bench/cli/tailtriage
fi
TT_BIN=$(cd "$(dirname "$TT_BIN")" && pwd)/$(basename "$TT_BIN")
mkdir -p "$OUT"

SRC=$OUT/scale-$TRACES
DB=$OUT/scale-$TRACES.db
if [ ! -s "$SRC/manifest.json" ]; then
  echo "== generate $TRACES traces per window" >&2
  "$TT_BIN" sim mercury --out "$SRC" --traces "$TRACES" -q
fi
SPANS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spans"])' "$SRC/manifest.json")
read -r WIN BASE WIN5 < <(python3 - "$SRC/manifest.json" <<'EOF'
import json, sys, datetime
m = json.load(open(sys.argv[1]))
f = datetime.datetime.fromisoformat(m["window"]["from"].replace("Z", "+00:00"))
half = (f + datetime.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
print(m["window"]["range"], m["baseline"]["range"], m["window"]["from"] + ".." + half)
EOF
)

PASS_SQL=$(cat "$ROOT/bench/plain_pass.sql")

declare -A T R  # T[name]="s s s" (seconds), R[name]="kb kb" (peak RSS)
add() { T[$1]+="$2 "; [ -z "${3:-}" ] || R[$1]+="$3 "; echo "   $1: $2 s${3:+, $3 KiB}" >&2; }
timed() {  # timed NAME CMD...
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$OUT/scale.time" "$@" > "$OUT/scale.out" 2>&1 ||
    { echo "scale: $name failed:" >&2; cat "$OUT/scale.out" >&2; exit 1; }
  local s kb; read -r s kb < "$OUT/scale.time"
  add "$name" "$s" "$kb"
}
pass() {
  local t0 t1; t0=$(date +%s%N)
  sqlite3 "$DB" "$PASS_SQL" > /dev/null
  t1=$(date +%s%N)
  add "plain SQL pass" "$(python3 -c "print(f'{($t1 - $t0) / 1e9:.3f}')")"
}
DBB=$OUT/scale-$TRACES.before.db
wipe() { rm -f "$1" "$1-wal" "$1-shm"; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- import -------------------------------------------------------------------
for ((r = 0; r < runs; r++)); do
  echo "== import, run $((r + 1)) of $runs" >&2
  if [ -n "${TT_BIN_BEFORE:-}" ]; then
    wipe "$DBB"; sync
    timed "import (before)" "$TT_BIN_BEFORE" import -q --db "$DBB" "$SRC/traces.jsonl"
  fi
  wipe "$DB"; sync
  timed "import (new database, aggregates included)" "$TT_BIN" import -q --db "$DB" "$SRC/traces.jsonl"
  pass
done
[ "$(sqlite3 "$DB" "SELECT count(*) FROM spans")" = "$SPANS" ] || { echo "scale: span count" >&2; exit 1; }
[ "$(sqlite3 "$DB" "SELECT covered = (SELECT max(id) FROM spans) FROM agg_meta")" = 1 ] ||
  { echo "scale: the import did not build the aggregates" >&2; exit 1; }
"$TT_BIN" import -q --db "$DB" "$SRC/metrics.jsonl"
[ -z "${TT_BIN_BEFORE:-}" ] || "$TT_BIN_BEFORE" import -q --db "$DBB" "$SRC/metrics.jsonl"

# ---- report, diagnose ------------------------------------------------------------
bins=("after:$TT_BIN:$DB")
[ -n "${TT_BIN_BEFORE:-}" ] && bins=("before:$TT_BIN_BEFORE:$DBB" "${bins[@]}")
for ((r = 0; r < runs; r++)); do
  echo "== report, diagnose, run $((r + 1)) of $runs" >&2
  pass
  for b in "${bins[@]}"; do
    IFS=: read -r tag bin db <<<"$b"
    sfx=""; [ ${#bins[@]} -gt 1 ] && sfx=" ($tag)"
    timed "report$sfx" "$bin" report --db "$db" --model mercury-home --window "$WIN" --baseline "$BASE"
    timed "diagnose$sfx" "$bin" diagnose --db "$db" --model mercury-home --window "$WIN" --baseline "$BASE"
  done
  for n in 5000 all; do
    timed "report --sample $n" "$TT_BIN" report --db "$DB" --model mercury-home --window "$WIN" --baseline "$BASE" --sample $n
    timed "diagnose --sample $n" "$TT_BIN" diagnose --db "$DB" --model mercury-home --window "$WIN" --baseline "$BASE" --sample $n
  done
done

[ -z "${TT_BIN_BEFORE:-}" ] || wipe "$DBB"

# ---- the dashboard -------------------------------------------------------------
# wait_line N PATTERN: until the latency log has N lines matching PATTERN
wait_line() {
  local n=$1 pat=$2 i c
  for ((i = 0; i < 6000; i++)); do
    c=$(grep -c -- "$pat" "$LOG" 2>/dev/null || true)
    [ "${c:-0}" -ge "$n" ] && return 0
    sleep 0.05
  done
  echo "scale: the dashboard never logged '$pat' ($n)" >&2; exit 1
}
nth() { grep -- "$2" "$LOG" | sed -n "${1}p"; }
# answers NAME SINCE: the answer lines after the first SINCE ones, up to the
# first exact one: their times (ms from the request) as NAME -> approx/exact
answers() {
  local name=$1 since=$2 kind ms
  while IFS=$'\t' read -r _ kind ms _; do
    add "$name -> $kind frame" "$(python3 -c "print(f'{$ms / 1000:.3f}')")"
    [ "$kind" = exact ] && break
  done < <(grep "^answer" "$LOG" | tail -n +"$((since + 1))")
}
if [ $tui = 1 ]; then
  SOCK="tt-scale-$$"
  trap 'tmux -L "$SOCK" kill-server 2>/dev/null || true' EXIT
  for ((r = 0; r < runs; r++)); do
    echo "== dashboard, run $((r + 1)) of $runs" >&2
    pass
    LOG=$OUT/scale-latency.log
    rm -f "$LOG"
    t0=$(python3 -c 'import time; print(int(time.time() * 1000))')
    tmux -L "$SOCK" new-session -d -s s -x 110 -y 32 \
      "LANG=C.UTF-8 TERM=screen-256color '$TT_BIN' tui --db '$DB' --model mercury-home --window '$WIN' --baseline '$BASE' --latency-log '$LOG'"
    wait_line 1 "^first"
    wait_line 1 "^answer	exact"
    wait_line 1 "^board"
    first=$(nth 1 "^first" | cut -f4) exact=$(nth 1 "^answer	exact" | cut -f5)
    board=$(nth 1 "^board" | cut -f3)
    add "dashboard start -> first frame with numbers" "$(python3 -c "print(f'{($first - $t0) / 1000:.3f}')")"
    add "dashboard start -> exact frame" "$(python3 -c "print(f'{($exact - $t0) / 1000:.3f}')")"
    add "dashboard start -> Board" "$(python3 -c "print(f'{($board - $t0) / 1000:.3f}')")"
    sleep 1
    since=$(grep -c "^answer" "$LOG")
    tmux -L "$SOCK" send-keys -t s w
    sleep 0.3
    tmux -L "$SOCK" send-keys -t s -l "$WIN5"
    tmux -L "$SOCK" send-keys -t s Enter
    wait_line 2 "^answer	exact"
    wait_line 2 "^board"
    answers "window change" "$since"
    add "window change -> Board" "$(python3 -c "print(f'{$(nth 2 "^board" | cut -f2) / 1000:.3f}')")"
    sleep 1
    since=$(grep -c "^answer" "$LOG")
    tmux -L "$SOCK" send-keys -t s c
    wait_line 3 "^answer	exact"
    answers "class change" "$since"
    tmux -L "$SOCK" send-keys -t s q
    sleep 0.5
    tmux -L "$SOCK" kill-server 2>/dev/null || true
  done
  echo "== dashboard without --model" >&2
  rm -f "$LOG"
  t0=$(python3 -c 'import time; print(int(time.time() * 1000))')
  tmux -L "$SOCK" new-session -d -s s -x 110 -y 32 \
    "LANG=C.UTF-8 TERM=screen-256color '$TT_BIN' tui --db '$DB' --window '$WIN' --baseline '$BASE' --latency-log '$LOG'"
  wait_line 1 "^first"
  first=$(nth 1 "^first" | cut -f4)
  add "dashboard start, no --model -> first frame" "$(python3 -c "print(f'{($first - $t0) / 1000:.3f}')")"
  tmux -L "$SOCK" send-keys -t s q
  sleep 0.5
  tmux -L "$SOCK" kill-server 2>/dev/null || true
fi
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- table ----------------------------------------------------------------------
med() { python3 -c 'import statistics,sys; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.3f}")' $1; }
P=$(med "${T[plain SQL pass]}")
table="| measured | runs, s | median s | / SQL pass | peak RSS MiB |
|---|---|---:|---:|---:|"
for name in "plain SQL pass" "import (before)" "import (new database, aggregates included)" \
            "report (before)" "report (after)" "report" "diagnose (before)" "diagnose (after)" "diagnose" \
            "report --sample 5000" "diagnose --sample 5000" "report --sample all" "diagnose --sample all" \
            "dashboard start -> first frame with numbers" "dashboard start -> exact frame" \
            "dashboard start -> Board" "dashboard start, no --model -> first frame" \
            "window change -> approx frame" "window change -> exact frame" "window change -> Board" \
            "class change -> approx frame" "class change -> exact frame"; do
  [ -n "${T[$name]:-}" ] || continue
  m=$(med "${T[$name]}")
  kb="-"
  [ -n "${R[$name]:-}" ] && kb=$(python3 -c 'import sys; print(f"{max(int(x) for x in sys.argv[1:]) / 1024:.0f}")' ${R[$name]})
  table+=$'\n'"| $name | ${T[$name]% } | $m | $(python3 -c "print(f'{$m / $P:.2f}')") | $kb |"
done
sps=$(python3 -c "print(f'{$SPANS / $(med "${T[import (new database, aggregates included)]}"):,.0f}')")
head="$(python3 -c "print(f'{$SPANS:,}')") spans, $runs run(s), load average $load0 before, $load1 after (1, 5, 15 min); import $sps spans/s at the median"
if [ -n "${T[import (before)]:-}" ]; then
  head+=" ($(python3 -c "print(f'{$SPANS / $(med "${T[import (before)]}"):,.0f}')") spans/s before, same rounds)"
fi
echo "$head"
echo
echo "$table"
[ $record = 1 ] || exit 0
python3 - "$ROOT/bench/README.md" "$SPANS" "$head" "$table" "$(git -C "$ROOT" rev-parse --short HEAD)" <<'EOF'
import datetime, os, re, sys
path, spans, head, table, commit = sys.argv[1:6]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
block = (f"<!-- scale-results-{spans}:begin (rewritten by bench/scale.sh --record) -->\n"
         f"Recorded {now} at commit {commit}; {os.cpu_count()} cores ({cpu}); {head}.\n\n"
         f"{table}\n<!-- scale-results-{spans}:end -->")
text = open(path).read()
pat = re.compile(rf"<!-- scale-results-{spans}:begin.*?<!-- scale-results-{spans}:end -->", re.S)
if not pat.search(text):
    sys.exit(f"{path}: no scale-results-{spans} markers")
open(path, "w").write(pat.sub(lambda m: block, text))
print(f"recorded in {path}", file=sys.stderr)
EOF
