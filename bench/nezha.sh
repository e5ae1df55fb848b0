#!/usr/bin/env bash
# bench/nezha.sh - the public-benchmark part of the diagnosis accuracy
# measurements (bench/README.md, "A public benchmark: Nezha").
#
# Takes a checkout of the Nezha dataset (FSE'23;
# `git clone https://github.com/IntelligentDDS/Nezha`), converts ONE day of
# its OnlineBoutique traces to OTLP JSON (bench/nezha_otlp.py: span kinds
# derived, see there), imports them with `tailtriage import` (once alone,
# once with the pods' CPU series as OTLP metrics), and for every labelled
# fault of the day runs `tailtriage diagnose --format json` with the fault's
# window and a fault-free baseline before it. The blamed node of each
# hypothesis is mapped to a service and scored top-1 / top-3 against the
# fault's service; a BARO-style baseline (robust z of each service's span
# time) is scored on the same windows (bench/nezha_score.py).
#
# Only the day given is read (default 2022-08-22, the development day): the
# other days and the other system are kept to judge the engine on data it
# has not seen.
#
# Not a test and never run in CI: it measures and records. Results: a
# Markdown table on stdout and, unless --print-only, in bench/README.md
# between the nezha-results markers.
#
# usage: bench/nezha.sh [--print-only] [--reuse] [--day D] NEZHA_DIR
#   --reuse       keep the converted files of the last run of the same day
#                 (re-import and re-diagnose only: for a new binary)
#   NEZHA_DIR     a Nezha checkout (or set $NEZHA)
#   TT_BIN        tailtriage binary (default: build/cli/tailtriage, built if missing)
#   TT_BENCH_OUT  scratch folder (default: bench/out/nezha, gitignored)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${TT_BENCH_OUT:-$ROOT/bench/out/nezha}
DAY=2022-08-22 record=1 reuse=0 NZ=${NEZHA:-}
usage() { echo "usage: $0 [--print-only] [--reuse] [--day D] NEZHA_DIR (or \$NEZHA)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --print-only) record=0; shift ;;
    --reuse) reuse=1; shift ;;
    --day) DAY=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) NZ=$1; shift ;;
  esac
done
[ -n "$NZ" ] || usage
if [ ! -f "$NZ/rca_data/$DAY/$DAY-fault_list.json" ]; then
  echo "$0: $NZ/rca_data/$DAY/$DAY-fault_list.json: not found; get the data with" >&2
  echo "  git clone https://github.com/IntelligentDDS/Nezha" >&2
  exit 1
fi
TT=${TT_BIN:-$ROOT/build/cli/tailtriage}
if [ ! -x "$TT" ]; then
  cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$ROOT/build" -j"$(nproc)" >/dev/null
fi
T0=$(date +%s.%N)
if [ $reuse = 1 ] && [ "$(cat "$OUT/day" 2>/dev/null)" = "$DAY" ] && [ -s "$OUT/faults.tsv" ]; then
  rm -rf "$OUT/dx" "$OUT"/*.db
else
  rm -rf "$OUT"
  mkdir -p "$OUT"
  python3 "$ROOT/bench/nezha_otlp.py" --day "$DAY" "$NZ" "$OUT"
  echo "$DAY" >"$OUT/day"
  python3 -c "print('%.0f' % ($(date +%s.%N) - $T0))" >"$OUT/convert_s"
fi
mkdir -p "$OUT/dx"
T1=$(date +%s.%N)
"$TT" import -q --db "$OUT/traces.db" "$OUT/traces.jsonl"
"$TT" import -q --db "$OUT/metrics.db" "$OUT/traces.jsonl" "$OUT/metrics.json"
T2=$(date +%s.%N)

# one diagnosis per fault and database; the scorer reads them all
: >"$OUT/times.tsv"
# (awk, not read: a tab-separated read merges empty fields)
awk -F'\t' 'NR > 1 && $7 != "" && $8 != "" { print $1, $7, $8 }' "$OUT/faults.tsv" >"$OUT/todo"
while read -r n window base; do
  for db in traces metrics; do
    /usr/bin/time -f "%e %U %S" -o "$OUT/dx/$n-$db.time" \
      "$TT" diagnose --db "$OUT/$db.db" --window "$window" --baseline "$base" \
      --format json >"$OUT/dx/$n-$db.json" 2>"$OUT/dx/$n-$db.err" || true
    read -r wall usr sys <"$OUT/dx/$n-$db.time"
    printf '%s\t%s\t%s\t%s\n' "$n" "$db" "$wall" "$(python3 -c "print('%.2f' % ($usr + $sys))")" >>"$OUT/times.tsv"
  done
done <"$OUT/todo"
T3=$(date +%s.%N)
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
# the engine's state: changes to bench/ or to Markdown do not count
DIRTY=$(git -C "$ROOT" status --porcelain --untracked-files=no -- . ':!bench' ':!*.md' 2>/dev/null |
  grep -q . && echo "+changes" || true)
TABLE=$(python3 "$ROOT/bench/nezha_score.py" "$OUT" \
  --timing "$(cat "$OUT/convert_s") $(python3 -c "print('%.0f %.0f' % ($T2 - $T1, $T3 - $T2))")" \
  --commit "$COMMIT$DIRTY" --day "$DAY" --load "$LOAD")
echo "$TABLE"
if [ $record = 1 ]; then
  python3 - "$ROOT/bench/README.md" "$TABLE" <<'EOF'
import sys
path, table = sys.argv[1:]
s = open(path).read()
begin, end = "<!-- nezha-results:begin -->", "<!-- nezha-results:end -->"
block = "%s\n%s\n%s" % (begin, table, end)
if begin in s:
    a = s.index(begin); b = s.index(end) + len(end)
    s = s[:a] + block + s[b:]
else:
    s += "\n" + block + "\n"
open(path, "w").write(s)
EOF
fi
