#!/usr/bin/env bash
# bench/scale.sh - the "Interactive at scale" benchmark of bench/README.md
# (issue 14): `tailtriage report` and `tailtriage diagnose` with window,
# baseline and model, each beside the plain SQL pass over the same database
# measured in the same run.
#
# 1. generates `tailtriage sim mercury --traces N` (default 28935: 1,000,002
#    spans) into bench/out/scale-N/ unless it is there, and imports traces
#    and metrics once into a new database bench/out/scale-N.db;
# 2. times, RUNS times in turn, the plain SQL pass (the sqlite3 shell
#    summing the span fields the analysis reads), then `report` and
#    `diagnose` (wall time and peak RSS from /usr/bin/time); with
#    TT_BIN_BEFORE set, the same commands of that binary too, alternating,
#    so a change is measured against its parent under the same load;
# 3. prints a Markdown table of the medians and the ratio to the SQL pass.
#
# usage: bench/scale.sh [--runs N]
#   TT_BIN          tailtriage binary (default: build Release in build-bench/)
#   TT_BIN_BEFORE   a second binary to compare with (optional)
#   TT_BENCH_OUT    where the big files go (default: bench/out, gitignored)
#   TT_BENCH_TRACES traces per window (default 28935)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${TT_BENCH_OUT:-$ROOT/bench/out}
TRACES=${TT_BENCH_TRACES:-28935}
runs=3
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N]" >&2; exit 2 ;;
  esac
done
for tool in /usr/bin/time sqlite3 python3; do
  command -v $tool >/dev/null || { echo "scale: $tool is required" >&2; exit 2; }
done
if [ -z "${TT_BIN:-}" ]; then
  echo "== build (Release) in $ROOT/build-bench" >&2
  cmake -S "$ROOT" -B "$ROOT/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$ROOT/build-bench" -j2 --target tailtriage >/dev/null
  TT_BIN=$ROOT/build-bench/cli/tailtriage
fi
mkdir -p "$OUT"

SRC=$OUT/scale-$TRACES
DB=$OUT/scale-$TRACES.db
if [ ! -s "$SRC/manifest.json" ]; then
  echo "== generate $TRACES traces per window" >&2
  "$TT_BIN" sim mercury --out "$SRC" --traces "$TRACES" -q
fi
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spans"])' "$SRC/manifest.json")
have=$( [ -s "$DB" ] && sqlite3 "$DB" "select count(*) from spans" 2>/dev/null || echo 0)
if [ "$have" != "$want" ]; then
  echo "== import $want spans into $DB" >&2
  rm -f "$DB" "$DB-wal" "$DB-shm"
  "$TT_BIN" import -q --db "$DB" "$SRC/traces.jsonl" "$SRC/metrics.jsonl"
fi
read -r WIN BASE < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["window"]["range"], m["baseline"]["range"])' "$SRC/manifest.json")

PASS_SQL="SELECT count(*), sum(length(trace_id)), sum(length(span_id)), sum(length(parent_id)),
 sum(length(name)), sum(length(service)), sum(length(host)), sum(length(wclass)),
 total(start_ns), total(end_ns), total(queue_ns) FROM spans"

declare -A T   # T[name]="s s s", R[name]="kb kb kb"
declare -A R
timed() {  # timed NAME CMD...: wall seconds and peak RSS appended to T/R
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$OUT/scale.time" "$@" > "$OUT/scale.out" 2>&1 ||
    { echo "scale: $name failed:" >&2; cat "$OUT/scale.out" >&2; exit 1; }
  local s kb; read -r s kb < "$OUT/scale.time"
  T[$name]+="$s "; R[$name]+="$kb "
  echo "   $name: ${s}s, ${kb} KiB" >&2
}
bins=("after:$TT_BIN")
[ -n "${TT_BIN_BEFORE:-}" ] && bins=("before:$TT_BIN_BEFORE" "${bins[@]}")
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < runs; r++)); do
  echo "== run $((r + 1)) of $runs" >&2
  timed "SQL pass" sqlite3 "$DB" "$PASS_SQL"
  for b in "${bins[@]}"; do
    tag=${b%%:*} bin=${b#*:}
    timed "report ($tag)" "$bin" report --db "$DB" --model mercury-home --window "$WIN" --baseline "$BASE"
    timed "diagnose ($tag)" "$bin" diagnose --db "$DB" --model mercury-home --window "$WIN" --baseline "$BASE"
  done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

med() { python3 -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' $1; }
pass=$(med "${T[SQL pass]}")
echo "$want spans, $runs runs, load average $load0 before, $load1 after (1, 5, 15 min)"
echo
echo "| measured | runs, s | median s | / SQL pass | peak RSS MiB |"
echo "|---|---|---:|---:|---:|"
for name in "SQL pass" "report (before)" "report (after)" "diagnose (before)" "diagnose (after)"; do
  [ -n "${T[$name]:-}" ] || continue
  m=$(med "${T[$name]}")
  kb=$(python3 -c 'import sys; print(f"{max(int(x) for x in sys.argv[1:]) / 1024:.0f}")' ${R[$name]})
  label=$name
  [ -z "${TT_BIN_BEFORE:-}" ] && label=${name% (after)}
  echo "| $label | ${T[$name]% } | $m | $(python3 -c "print(f'{$m / $pass:.1f}')") | $kb |"
done
