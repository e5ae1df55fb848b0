#!/usr/bin/env bash
# bench/bench.sh - the import benchmark of bench/README.md.
#
# 1. builds tailtriage optimised (build-bench/, -DCMAKE_BUILD_TYPE=Release)
#    unless TT_BIN names a binary;
# 2. generates about 1,000,000 spans with `tailtriage sim mercury` twice, with
#    the same seed: as JSON Lines (traces.jsonl) and as one JSON document
#    (traces.json), and checks both hold the same number of spans;
# 3. imports each file with `tailtriage import` into a database that does not
#    exist yet (the bulk path) and, for JSON Lines, into an existing empty
#    one (the WAL append path), and with bench/peer_import.py (Python json +
#    sqlite3), each under /usr/bin/time -v; checks the row count of every
#    database, and that the bulk one is in WAL mode with its span indexes;
# 4. right after each import, times the plain SQL pass over the database it
#    wrote (bench/plain_pass.sql, with the sqlite3 shell), so every figure has a
#    yardstick measured on the same machine at the same moment;
# 5. prints a Markdown table (spans/s from wall time, CPU seconds, peak RSS,
#    the SQL pass and the ratio) and, unless --print-only, rewrites the
#    results block of bench/README.md (between the import-results markers)
#    with it and the machine facts.
#
# usage: bench/bench.sh [--print-only] [--repeat N] [--no-peer]
#   TT_BIN         tailtriage binary to measure (default: build it)
#   TT_BENCH_OUT   where the big files go (default: bench/out, gitignored)
#   TT_BENCH_TRACES traces per window (default 28935: 1,000,002 spans)
# --repeat N keeps the fastest of N runs of each tailtriage row and of the
# store-alone figures (default 1); the Python peer runs once.
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
# The plain SQL pass: one read of the span fields the analysis needs.
PASS_SQL=$(cat "$ROOT/bench/plain_pass.sql")

wipe() { rm -f "$1" "$1-wal" "$1-shm" "$(dirname "$1")/.$(basename "$1").import"; }

# measure NAME DBMODE RUNS CMD...: runs CMD RUNS times on $OUT/bench.db,
# which is absent before each run (DBMODE new) or an empty file (existing:
# `tailtriage import` then appends in WAL mode); keeps the fastest. Sets
# m_wall m_cpu m_kb m_load m_pass (the SQL pass right after that run) and
# m_thr (CPU seconds of the two busiest threads, bench/thread_cpu.py).
measure() {
  local name=$1 dbmode=$2 runs=$3; shift 3
  local best=""
  for ((r = 0; r < runs; r++)); do
    wipe "$OUT/bench.db"
    [ "$dbmode" = existing ] && : > "$OUT/bench.db"
    sync
    local load; load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -v -o "$OUT/import.time" "$@" > "$OUT/import.log" 2>&1 &
    local tp=$! rc=0
    python3 "$ROOT/bench/thread_cpu.py" "$tp" "$OUT/threads.cpu" &
    local pp=$!
    wait "$tp" || rc=$?
    wait "$pp"
    if [ "$rc" != 0 ]; then
      echo "bench: $name failed:" >&2; cat "$OUT/import.log" >&2; exit 1
    fi
    local thr; thr=$(head -n 2 "$OUT/threads.cpu" | paste -sd+ | sed 's/+/ + /')
    local rows; rows=$(sqlite3 "$OUT/bench.db" "SELECT count(*) FROM spans")
    [ "$rows" = "$SPANS" ] || { echo "bench: $name stored $rows spans, expected $SPANS" >&2; exit 1; }
    local pass t0 t1
    t0=$(date +%s%N)
    sqlite3 "$OUT/bench.db" "$PASS_SQL" > /dev/null
    t1=$(date +%s%N)
    pass=$(python3 -c "print(f'{($t1 - $t0) / 1e9:.3f}')")
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
    echo "   $name: ${wall}s wall, ${cpu}s CPU (busiest threads $thr), ${kb} KiB peak RSS (load $load before); SQL pass ${pass}s" >&2
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $wall < $best else 1)"; then
      best=$wall m_wall=$wall m_cpu=$cpu m_kb=$kb m_load=$load m_pass=$pass m_thr=$thr
    fi
  done
}

# the database a bulk import wrote must be what the store opens any day
check_bulk_db() {
  local mode ix
  mode=$(sqlite3 "$OUT/bench.db" "PRAGMA journal_mode")
  ix=$(sqlite3 "$OUT/bench.db" "SELECT count(*) FROM pragma_index_list('spans')
        WHERE name IN ('spans_identity', 'spans_root_start')")
  [ "$mode" = wal ] && [ "$ix" = 2 ] ||
    { echo "bench: bulk database: journal_mode $mode, $ix of 2 span indexes" >&2; exit 1; }
}

rows=""
row() {  # row SHAPE IMPORTER DATABASE FILESIZE
  local sps; sps=$(python3 -c "print(f'{$SPANS / $m_wall:,.0f}')")
  local mb; mb=$(python3 -c "print(f'{$4 / 1048576:,.0f}')")
  local rss; rss=$(python3 -c "print(f'{$m_kb / 1024:,.1f}')")
  local ratio; ratio=$(python3 -c "print(f'{$m_wall / $m_pass:.1f}' if $m_pass > 0 else '-')")
  rows+="| $1 | $2 | $3 | $(python3 -c "print(f'{$SPANS:,}')") | $mb | $m_wall | **$sps** | $m_cpu | $m_thr | **$rss** | $m_pass | $ratio | $m_load |"$'\n'
}

# floor_best ARGS...: fastest of $repeat runs of tt_store_floor ARGS; sets fl
floor_best() {
  local best="" line s
  for ((r = 0; r < repeat; r++)); do
    wipe "$OUT/floor.db"
    sync
    line=$("$FLOOR_BIN" "$@")
    echo "   store alone ($*): $line" >&2
    s=$(sed -n 's/.* store_s=\([0-9.]*\).*/\1/p' <<< "$line")
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $s < $best else 1)"; then
      best=$s fl=$line
    fi
  done
  wipe "$OUT/floor.db"
}

echo "== import" >&2
for shape in lines doc; do
  if [ $shape = lines ]; then file=$OUT/lines/traces.jsonl size=$size_lines label="JSON Lines"
  else file=$OUT/doc/traces.json size=$size_doc label="one document"; fi
  measure "tailtriage $shape, new database" new "$repeat" \
    "$TT_BIN" import -q --db "$OUT/bench.db" "$file"
  check_bulk_db
  row "$label" "tailtriage import" "new (bulk)" "$size"
  if [ $shape = lines ] && [ -x "$FLOOR_BIN" ]; then
    # the store alone: the same rows through store_spans_add, no parsing
    cp "$OUT/bench.db" "$OUT/floor-src.db"
    floor_best "$OUT/floor-src.db" "$OUT/floor.db"; floor_wal=$fl
    floor_best --bulk "$OUT/floor-src.db" "$OUT/floor.db"; floor_bulk=$fl
    # what-if: WAL append without the identity and root-start indexes
    repeat_saved=$repeat repeat=1
    floor_best "$OUT/floor-src.db" "$OUT/floor.db" spans_identity spans_root_start; floor_bare=$fl
    repeat=$repeat_saved
    rm -f "$OUT/floor-src.db"
  fi
  if [ $shape = lines ]; then
    measure "tailtriage $shape, existing database" existing "$repeat" \
      "$TT_BIN" import -q --db "$OUT/bench.db" "$file"
    row "$label" "tailtriage import" "existing (WAL append)" "$size"
  fi
  if [ $peer = 1 ]; then
    measure "python peer $shape" new 1 python3 "$ROOT/bench/peer_import.py" "$file" "$OUT/bench.db"
    row "$label" "Python peer" "new (one transaction)" "$size"
  fi
done
wipe "$OUT/bench.db"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

header="| shape | importer | database | spans | file MiB | wall s | spans/s | CPU s | busiest threads CPU s | peak RSS MiB | SQL pass s | import / pass | load before |
|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
floor=""
if [ -n "${floor_wal:-}" ]; then
  floor=$(python3 - "$floor_wal" "$floor_bulk" "$floor_bare" <<'EOF'
import sys
w, b, g = (dict(kv.split("=") for kv in a.split()) for a in sys.argv[1:4])
print(f"The store alone (`tt_store_floor`: the same {int(w['spans']):,} rows through "
      f"store_spans_add, nothing to read or parse): appending in WAL mode "
      f"{w['insert_s']} s inserting + {w['commit_s']} s commit and checkpoint = "
      f"{w['store_s']} s, **{float(w['spans_per_s']):,.0f} spans/s**; as a bulk load of a "
      f"new database {b['insert_s']} s + {b['commit_s']} s commit, indexes, sync and "
      f"rename = {b['store_s']} s, **{float(b['spans_per_s']):,.0f} spans/s**; WAL without "
      f"its two span indexes (what-if, one run): {g['insert_s']} s + {g['commit_s']} s = "
      f"{g['store_s']} s, {float(g['spans_per_s']):,.0f} spans/s.")
EOF
)
fi
echo "$header"
printf '%s' "$rows"
[ -z "$floor" ] || printf '\n%s\n' "$floor"

[ $record = 1 ] || exit 0
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD -- importers store common 2>/dev/null || commit="$commit (importers/store/common modified)"
python3 - "$ROOT/bench/README.md" "$header" "$rows" "$commit" "$TT_BIN" "$gen_lines_s" "$gen_lines_kb" "$gen_doc_s" "$repeat" "$(python3 --version 2>&1)" "$(sqlite3 --version | cut -d' ' -f1)" "$floor" "$load_after" <<'EOF'
import datetime, os, re, sys
path, header, rows, commit, binary, gl, glkb, gd, repeat, py, sq, floor, load_after = sys.argv[1:14]
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
{py}, SQLite {sq}; fastest of {repeat} run(s) per tailtriage row, the peer once;
load average after the runs {load_after} (1, 5, 15 min). Generating the spans took
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
