#!/usr/bin/env bash
# bench/bench.sh - the import benchmark of bench/README.md.
#
# 1. builds tailtriage optimised (build-bench/, -DCMAKE_BUILD_TYPE=Release)
#    unless TT_BIN names a binary;
# 2. generates about 1,000,000 spans with `tailtriage sim mercury` twice, with
#    the same seed: as JSON Lines (traces.jsonl) and as one JSON document
#    (traces.json), and checks both hold the same number of spans;
# 3. imports each file into a fresh database with `tailtriage import` and with
#    bench/peer_import.py (Python json + sqlite3), each under /usr/bin/time -v,
#    and checks the row count of every database;
# 4. prints a Markdown table (spans/s from wall time, CPU seconds, peak RSS)
#    and, unless --print-only, rewrites the results block of bench/README.md
#    (between the import-results markers) with it and the machine facts.
#
# usage: bench/bench.sh [--print-only] [--repeat N] [--no-peer]
#   TT_BIN         tailtriage binary to measure (default: build it)
#   TT_BENCH_OUT   where the big files go (default: bench/out, gitignored)
#   TT_BENCH_TRACES traces per window (default 28935: 1,000,002 spans)
# --repeat N keeps the fastest of N runs of each importer (default 1).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${TT_BENCH_OUT:-$ROOT/bench/out}
TRACES=${TT_BENCH_TRACES:-28935}
record=1 repeat=1 peer=1
while [ $# -gt 0 ]; do
  case $1 in
    --print-only) record=0; shift ;;
    --repeat) repeat=$2; shift 2 ;;
    --no-peer) peer=0; shift ;;
    *) echo "usage: $0 [--print-only] [--repeat N] [--no-peer]" >&2; exit 2 ;;
  esac
done
for tool in /usr/bin/time sqlite3 python3; do
  command -v $tool >/dev/null || { echo "bench: $tool is required" >&2; exit 2; }
done

if [ -z "${TT_BIN:-}" ]; then
  echo "== build (Release) in $ROOT/build-bench" >&2
  cmake -S "$ROOT" -B "$ROOT/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$ROOT/build-bench" -j"$(nproc)" --target tailtriage tt_store_floor >/dev/null
  TT_BIN=$ROOT/build-bench/cli/tailtriage
fi
FLOOR_BIN=${TT_FLOOR_BIN:-$(dirname "$TT_BIN")/../bench/tt_store_floor}
[ -x "$TT_BIN" ] || { echo "bench: no binary at $TT_BIN" >&2; exit 2; }
mkdir -p "$OUT"

# ---- generate -------------------------------------------------------------
gen() {  # gen DIR [--single]: sets gen_spans gen_s gen_kb
  local dir=$1; shift
  /usr/bin/time -f "%e %M" -o "$OUT/gen.time" \
    "$TT_BIN" sim mercury --out "$dir" --traces "$TRACES" -q "$@"
  read -r gen_s gen_kb < "$OUT/gen.time"
  gen_spans=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spans"])' "$dir/manifest.json")
}
echo "== generate $TRACES traces per window" >&2
gen "$OUT/lines"
spans_lines=$gen_spans gen_lines_s=$gen_s gen_lines_kb=$gen_kb
gen "$OUT/doc" --single
spans_doc=$gen_spans gen_doc_s=$gen_s
[ "$spans_lines" = "$spans_doc" ] || { echo "bench: shapes differ ($spans_lines vs $spans_doc spans)" >&2; exit 1; }
SPANS=$spans_lines
size_lines=$(stat -c %s "$OUT/lines/traces.jsonl")
size_doc=$(stat -c %s "$OUT/doc/traces.json")
echo "   $SPANS spans; traces.jsonl $((size_lines >> 20)) MiB in ${gen_lines_s}s (peak ${gen_lines_kb} KiB), traces.json $((size_doc >> 20)) MiB in ${gen_doc_s}s" >&2

# ---- import ---------------------------------------------------------------
# measure NAME FILE CMD...: runs CMD on a fresh $OUT/bench.db, fastest of
# $repeat runs; sets m_wall m_cpu m_kb m_load.
measure() {
  local name=$1 file=$2; shift 2
  local best=""
  for ((r = 0; r < repeat; r++)); do
    rm -f "$OUT/bench.db" "$OUT/bench.db-wal" "$OUT/bench.db-shm"
    sync
    local load; load=$(cut -d' ' -f1 /proc/loadavg)
    if ! /usr/bin/time -v -o "$OUT/import.time" "$@" > "$OUT/import.log" 2>&1; then
      echo "bench: $name failed:" >&2; cat "$OUT/import.log" >&2; exit 1
    fi
    local rows; rows=$(sqlite3 "$OUT/bench.db" "SELECT count(*) FROM spans")
    [ "$rows" = "$SPANS" ] || { echo "bench: $name stored $rows spans, expected $SPANS" >&2; exit 1; }
    local wall cpu kb
    read -r wall cpu kb < <(python3 - "$OUT/import.time" <<'EOF'
import sys
f = {}
for line in open(sys.argv[1]):
    k, _, v = line.strip().rpartition(": ")
    f[k] = v
t = f["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":")
wall = sum(float(x) * 60 ** i for i, x in enumerate(reversed(t)))
cpu = float(f["User time (seconds)"]) + float(f["System time (seconds)"])
print(f"{wall:.2f} {cpu:.2f} {f['Maximum resident set size (kbytes)']}")
EOF
)
    echo "   $name: ${wall}s wall, ${cpu}s CPU, ${kb} KiB peak RSS (load $load before)" >&2
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $wall < $best else 1)"; then
      best=$wall m_wall=$wall m_cpu=$cpu m_kb=$kb m_load=$load
    fi
  done
}

rows=""
row() {  # row SHAPE IMPORTER FILESIZE
  local sps; sps=$(python3 -c "print(f'{$SPANS / $m_wall:,.0f}')")
  local mb; mb=$(python3 -c "print(f'{$3 / 1048576:,.0f}')")
  local rss; rss=$(python3 -c "print(f'{$m_kb / 1024:,.1f}')")
  rows+="| $1 | $2 | $(python3 -c "print(f'{$SPANS:,}')") | $mb | $m_wall | **$sps** | $m_cpu | **$rss** | $m_load |"$'\n'
}

echo "== import" >&2
for shape in lines doc; do
  if [ $shape = lines ]; then file=$OUT/lines/traces.jsonl size=$size_lines label="JSON Lines"
  else file=$OUT/doc/traces.json size=$size_doc label="one document"; fi
  measure "tailtriage $shape" "$file" "$TT_BIN" import -q --db "$OUT/bench.db" "$file"
  row "$label" "tailtriage import" "$size"
  if [ $shape = lines ] && [ -x "$FLOOR_BIN" ]; then
    # the store alone: the same rows through store_spans_add, no parsing
    floor_best=""
    for ((r = 0; r < repeat; r++)); do
      rm -f "$OUT/floor.db" "$OUT/floor.db-wal" "$OUT/floor.db-shm"
      sync
      line=$("$FLOOR_BIN" "$OUT/bench.db" "$OUT/floor.db")
      echo "   store alone: $line" >&2
      s=$(sed -n 's/.* store_s=\([0-9.]*\).*/\1/p' <<< "$line")
      if [ -z "$floor_best" ] || python3 -c "import sys; sys.exit(0 if $s < $floor_best else 1)"; then
        floor_best=$s floor_line=$line
      fi
    done
    # what-if: the same without the identity and root-start indexes
    rm -f "$OUT/floor.db" "$OUT/floor.db-wal" "$OUT/floor.db-shm"
    sync
    bare_line=$("$FLOOR_BIN" "$OUT/bench.db" "$OUT/floor.db" spans_identity spans_root_start)
    echo "   store alone, no indexes: $bare_line" >&2
    rm -f "$OUT/floor.db" "$OUT/floor.db-wal" "$OUT/floor.db-shm"
  fi
  if [ $peer = 1 ]; then
    measure "python peer $shape" "$file" python3 "$ROOT/bench/peer_import.py" "$file" "$OUT/bench.db"
    row "$label" "Python peer" "$size"
  fi
done
rm -f "$OUT/bench.db" "$OUT/bench.db-wal" "$OUT/bench.db-shm"

header="| shape | importer | spans | file MiB | wall s | spans/s | CPU s | peak RSS MiB | load before |
|---|---|---:|---:|---:|---:|---:|---:|---:|"
floor=""
if [ -n "${floor_line:-}" ]; then
  floor=$(python3 - "$floor_line" "$bare_line" <<'EOF'
import sys
f = dict(kv.split("=") for kv in sys.argv[1].split())
g = dict(kv.split("=") for kv in sys.argv[2].split())
print(f"The store alone (`tt_store_floor`: the same {int(f['spans']):,} rows through "
      f"store_spans_add, nothing to read or parse): {f['insert_s']} s inserting + "
      f"{f['commit_s']} s commit and checkpoint = {f['store_s']} s, "
      f"**{float(f['spans_per_s']):,.0f} spans/s**; without its two indexes (what-if, "
      f"one run): {g['insert_s']} s + {g['commit_s']} s = {g['store_s']} s, "
      f"{float(g['spans_per_s']):,.0f} spans/s.")
EOF
)
fi
echo "$header"
printf '%s' "$rows"
[ -z "$floor" ] || printf '\n%s\n' "$floor"

[ $record = 1 ] || exit 0
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD -- importers store common 2>/dev/null || commit="$commit (importers/store/common modified)"
python3 - "$ROOT/bench/README.md" "$header" "$rows" "$commit" "$TT_BIN" "$gen_lines_s" "$gen_lines_kb" "$gen_doc_s" "$repeat" "$(python3 --version 2>&1)" "$(sqlite3 --version | cut -d' ' -f1)" "$floor" <<'EOF'
import datetime, os, re, sys
path, header, rows, commit, binary, gl, glkb, gd, repeat, py, sq, floor = sys.argv[1:13]
cpu = "?"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break
mem = "?"
for line in open("/proc/meminfo"):
    if line.startswith("MemTotal"):
        mem = f"{int(line.split()[1]) / 1048576:.0f} GiB"
        break
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
block = f"""<!-- import-results:begin (rewritten by bench/bench.sh) -->
Recorded {now} at commit {commit}; {os.cpu_count()} cores ({cpu}), {mem} RAM;
{py}, SQLite {sq}; fastest of {repeat} run(s) per row. Generating the spans took
{gl} s as JSON Lines (peak RSS {int(glkb) / 1024:.1f} MiB) and {gd} s as one document.

{header}
{rows.rstrip()}
{chr(10) + floor + chr(10) if floor else ""}<!-- import-results:end -->"""
text = open(path).read()
pat = re.compile(r"<!-- import-results:begin.*?<!-- import-results:end -->", re.S)
if not pat.search(text):
    sys.exit(f"{path}: no import-results markers")
open(path, "w").write(pat.sub(lambda m: block, text))
print(f"recorded in {path}", file=sys.stderr)
EOF
