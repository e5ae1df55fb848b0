#!/usr/bin/env bash
# bench/diagnosis.sh - the diagnosis accuracy benchmark of bench/README.md.
#
# For every single-cause incident mechanism of `tailtriage sim mercury` and
# for `incident=none`, over SEEDS seeds and two sizes (300 and 3,000 traces
# per window), it simulates, imports the traces with and without the
# metrics file, runs `tailtriage diagnose` with the bundled model and the
# simulator's windows, and scores the ranking against the mechanism's
# expected (hypothesis, node): top-1 and top-3 accuracy per mechanism and
# per setting, the false-alarm rate on `none` (anything but
# insufficient-evidence first), and the time per diagnosis. As the
# counterfactual confirmation of the expected answer it also runs the same
# seed with the mechanism switched off (incident=none) and records how much
# of the window's p99 rise disappears.
#
# Not a timed test: it measures and records. Results: a Markdown table on
# stdout and, unless --print-only, in bench/README.md between the
# diagnosis-results markers.
#
# usage: bench/diagnosis.sh [--print-only] [--seeds N] [--sizes "300 3000"]
#   TT_BIN        tailtriage binary (default: build/cli/tailtriage, built if missing)
#   TT_BENCH_OUT  scratch folder (default: bench/out/diagnosis, gitignored)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${TT_BENCH_OUT:-$ROOT/bench/out/diagnosis}
SEEDS=10 SIZES="300 3000" record=1
while [ $# -gt 0 ]; do
  case $1 in
    --print-only) record=0; shift ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    *) echo "usage: $0 [--print-only] [--seeds N] [--sizes \"300 3000\"]" >&2; exit 2 ;;
  esac
done
TT=${TT_BIN:-$ROOT/build/cli/tailtriage}
if [ ! -x "$TT" ]; then
  cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$ROOT/build" -j"$(nproc)" >/dev/null
fi
MODEL=$ROOT/models/mercury-home.model.json
mkdir -p "$OUT"
RES=$OUT/results.tsv
: >"$RES"
: >"$OUT/off.tsv"

# The fleets (the simulator's `fleet` preset): "case" is the default (the
# case's busy release, pools near their occupancy at the peak); "light" is
# the quiet fleet the single-cause mechanisms are meant for (the unit tests
# use it too), where one cause at a time does not push every pool past
# capacity.
LIGHT=(fleet=light)

# mechanism  expected-hypothesis  expected-node (* = any host; a|b = either:
# dependency-slowdown slows profile and recommendation together)  fleet
# [label key=value...]: a setting of the mechanism's strength, shown as
# mechanism/label (default: the fleet).
#
# A mechanism at a strength that does not move the p99 beyond noise at
# 3,000 traces tests nothing: its "weak" row is right when
# insufficient-evidence leads, and its "strong" row sets the strength at
# which its own rise is significant at 3,000 traces (in at least 2 of 3
# seeds tried; the quiet row with the same stragglers checks that they
# alone are no incident). A weak row must move neither the p99 nor the p90
# beyond noise (the engine attributes the p90's rise when the p99's is not
# shown): the light fleet's defaults do for placement-hotspot,
# wider-fanout and pricing-pool-shrink; class-mix-shift's default (5 % ->
# 9 % enterprise) and retry-storm's (30 % of inventory attempts fail) moved
# the p90 by +9 to +12 ms beyond noise in seeds 1 and 2 and the p99 in
# seed 3, so their weak rows are 5 % -> 6 % and 10 % (no rise shown in 3 of
# 3 seeds; bench/README.md has the numbers).
MECHS=(
  "pricing-client-wait client-pool-wait pricing case"
  "none insufficient-evidence none case"
  "pricing-pool-shrink insufficient-evidence none light weak"
  "pricing-pool-shrink client-pool-wait pricing light strong rate=70"
  "executor-saturation endpoint-queue-saturation mercury-api light"
  "dependency-slowdown dependency-slowdown profile|recommendation light"
  "single-slowdown dependency-slowdown inventory light"
  "class-mix-shift insufficient-evidence none light weak incident-enterprise-share=0.06"
  "class-mix-shift class-mix-shift enterprise light strong incident-enterprise-share=0.3"
  "placement-hotspot insufficient-evidence none light weak"
  "placement-hotspot placement-concentration * light strong hot-hosts=1 hot-share=1 enterprise-share=0.1"
  "serial-hop serial-hop inventory light"
  "wider-fanout insufficient-evidence none light weak"
  "wider-fanout fanout-tail-amplification pricing light strong straggler-p=0.004 straggler-mult=50"
  "retry-storm insufficient-evidence none light weak retry-p=0.1"
  "retry-storm retry-amplification inventory light strong retry-p=0.85"
  "none insufficient-evidence none light"
  "none insufficient-evidence none light stragglers straggler-p=0.004 straggler-mult=50"
)

windows() { # manifest -> "W B"
  python3 - "$1" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
ph = {p["name"]: p for p in m["phases"]}
def r(p): return p["range"]["range"]
print(r(ph["incident"]), r(ph["baseline"]))
EOF
}

for spec in "${MECHS[@]}"; do
  read -r mech want node fleet label strength <<<"$spec"
  label=${label:-$fleet}
  sets=()
  if [ "$fleet" = light ]; then
    for kv in "${LIGHT[@]}"; do sets+=(--set "$kv"); done
  fi
  for kv in $strength; do sets+=(--set "$kv"); done
  for size in $SIZES; do
    for seed in $(seq 1 "$SEEDS"); do
      d=$OUT/$mech-$label-$size-$seed
      rm -rf "$d"
      "$TT" sim mercury --out "$d" -q "${sets[@]}" --set incident="$mech" --seed "$seed" --traces "$size"
      read -r W B < <(windows "$d/manifest.json")
      for met in 1 0; do
        db=$d/m$met.db
        files=$d/traces.jsonl
        [ "$met" = 1 ] && files="$files $d/metrics.jsonl"
        # shellcheck disable=SC2086
        "$TT" import -q --db "$db" $files >/dev/null
        t0=$(date +%s.%N)
        "$TT" diagnose --db "$db" --model "$MODEL" --window "$W" --baseline "$B" \
          --format json >"$d/dx$met.json" 2>"$d/dx$met.err" || true
        t1=$(date +%s.%N)
        python3 - "$d/dx$met.json" "$mech/$label" "$want" "$node" "$size" "$seed" "$met" \
          "$(python3 -c "print($t1 - $t0)")" >>"$RES" <<'EOF'
import json, sys
path, mech, want, node, size, seed, met, secs = sys.argv[1:]
try:
    d = json.load(open(path))
    hs = d["hypotheses"]
except Exception:
    hs = []
def ok(h):
    if h["id"] != want:
        return False
    if node == "*":
        return True
    return h["node"] in node.split("|")
rank = next((h["rank"] for h in hs if ok(h)), 99)
top = "%s:%s" % (hs[0]["id"], hs[0]["node"]) if hs else "error"
rise = next((e["value"] for e in d.get("evidence", []) if e["name"] == "ingress.rise_ms"), None) if hs else None
# the one verdict on the rise (docs/diagnosis.md): 1 rose, 0 did not, - cannot tell
rose = next((e["value"] for e in d.get("evidence", []) if e["name"] == "ingress.rose"), None) if hs else None
rose = "-" if rose is None else "%d" % rose
# the same verdict for the p99 or the p90 (ingress.moved): a rise the
# attribution explains
moved = next((e["value"] for e in d.get("evidence", []) if e["name"] == "ingress.moved"), None) if hs else None
moved = "-" if moved is None else "%d" % moved
print("\t".join([mech, size, seed, met, str(rank), top, secs, str(rise), rose, moved]))
EOF
      done
      # the counterfactual confirmation: same seed, mechanism off
      if [ "$mech" != none ] && [ "$met" = 0 ] && [ "$seed" = 1 ]; then
        c=$OUT/$mech-$label-$size-$seed-off
        rm -rf "$c"
        "$TT" sim mercury --out "$c" -q "${sets[@]}" --set incident=none --seed "$seed" --traces "$size"
        "$TT" import -q --db "$c/db" "$c/traces.jsonl" >/dev/null
        "$TT" diagnose --db "$c/db" --model "$MODEL" --window "$W" --baseline "$B" \
          --format json >"$c/dx.json" 2>/dev/null || true
        python3 - "$c/dx.json" "$mech/$label" "$size" >>"$OUT/off.tsv" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rise = next((e["value"] for e in d["evidence"] if e["name"] == "ingress.rise_ms"), None)
print("\t".join([sys.argv[2], sys.argv[3], str(rise)]))
EOF
      fi
      rm -f "$d"/*.db "$d"/*.db-wal "$d"/*.db-shm "$d/traces.jsonl" "$d/metrics.jsonl"
    done
  done
done

TABLE=$(python3 - "$RES" "$OUT/off.tsv" "$SEEDS" <<'EOF'
import sys, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
off = {}
try:
    for l in open(sys.argv[2]):
        m, s, r = l.rstrip("\n").split("\t")
        off[(m, s)] = r
except FileNotFoundError:
    pass
expect = {}
g = collections.OrderedDict()
times = []
for row in rows:
    mech, size, seed, met, rank, top, secs, rise = row[:8]
    rose = row[8] if len(row) > 8 else "-"
    moved = row[9] if len(row) > 9 else "-"
    g.setdefault((mech, size, met), []).append((int(rank), top, rise, rose, moved))
    times.append(float(secs))
sizes = sorted({k[1] for k in g}, key=int)
print("| mechanism/setting | traces/window | metrics | runs | top-1 | top-3 | most common #1 when wrong | p99 rose (runs) | p99 rise (seed 1) | rise with mechanism off |")
print("|---|---|---|---|---|---|---|---|---|---|")
def frac(k, n):
    # k of n with Wilson's 95 % interval: a row of a few seeds is a small sample
    z = 1.96
    c = (k / n + z * z / (2 * n)) / (1 + z * z / n)
    h = z * ((k / n * (1 - k / n) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return "%d/%d = %d %% [%d-%d]" % (k, n, round(100 * k / n), round(100 * max(0, c - h)), round(100 * min(1, c + h)))
for (mech, size, met), v in g.items():
    n = len(v)
    t1 = sum(1 for r in v if r[0] == 1)
    t3 = sum(1 for r in v if r[0] <= 3)
    wrong = collections.Counter(r[1] for r in v if r[0] != 1).most_common(1)
    w = "%s (%d)" % wrong[0] if wrong else ""
    rise = v[0][2]
    rise = "%+.0f ms" % float(rise) if rise not in ("None", "") else "-"
    o = off.get((mech, size))
    o = "%+.0f ms" % float(o) if o not in (None, "None") else "-"
    shown = sum(1 for r in v if r[3] == "1")
    # the p99's or else the p90's rise shown (ingress.moved): what the
    # attribution then explains
    moved = sum(1 for r in v if r[4] == "1")
    print("| %s | %s | %s | %d | %s | %s | %s | %d of %d (p99 or p90: %d) | %s | %s |" % (
        mech, size, "yes" if met == "1" else "no", n, frac(t1, n), frac(t3, n), w,
        shown, n, moved, rise, o))
times.sort()
if times:
    print()
    print("Time per diagnosis (wall, including process start): median %.2f s, max %.2f s over %d runs." % (
        times[len(times) // 2], times[-1], len(times)))
EOF
)
echo "$TABLE"
if [ $record = 1 ]; then
  python3 - "$ROOT/bench/README.md" "$TABLE" "$SEEDS" "$SIZES" <<'EOF'
import sys, datetime, platform, os
path, table, seeds, sizes = sys.argv[1:]
s = open(path).read()
begin, end = "<!-- diagnosis-results:begin -->", "<!-- diagnosis-results:end -->"
block = "%s\nRecorded %s on %s (%d cores); %s seeds, sizes %s.\n\n%s\n%s" % (
    begin, datetime.date.today().isoformat(), platform.machine(), os.cpu_count(), seeds, sizes, table, end)
if begin in s:
    a = s.index(begin); b = s.index(end) + len(end)
    s = s[:a] + block + s[b:]
else:
    s += "\n" + block + "\n"
open(path, "w").write(s)
EOF
fi
