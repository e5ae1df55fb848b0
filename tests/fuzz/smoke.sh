#!/usr/bin/env bash
# tests/fuzz/smoke.sh - a short, repeatable libFuzzer run of every parser
# harness, as the last stage of scripts/test.sh.
#
# usage: tests/fuzz/smoke.sh BUILD_DIR [RUNS]
#
# Each harness starts from the test fixtures of its format (copied to a
# temporary folder: libFuzzer writes new inputs into its corpus folder) and
# runs RUNS inputs (default 5000) with a fixed seed, under ASan and UBSan.
# (The edges reached grow slowly past a few thousand inputs. Measured at
# 4,096 inputs against 10,000, same seed and corpus: fuzz_import_prometheus
# 1,942 of 1,963 edges, fuzz_import_zipkin_json 1,739 of 1,758,
# fuzz_import_otlp_json 2,936 of 3,010: 1 to 2.5 % fewer, for about half
# the CPU, which the test command's 12 minutes did not have. Earlier,
# from 8,192 to 20,000 inputs they grew by 1.5 % to 4 %. Longer runs find
# new bugs, as below; this one guards against regressions.)
# UBSan's findings stop a harness (halt_on_error: clang's -fsanitize=undefined
# reports and carries on by default, so a float cast out of range passed).
# The harnesses assert the importers' contract besides the sanitizers': a
# failure carries a located message and leaves no rows. A crash, a sanitizer
# report, a leak or a broken contract fails the stage; the input that did
# it is kept in the printed folder. A harness that leaves temporary files
# behind after a clean run also fails it (each gets its own TMPDIR). An
# input that runs for more than TIMEOUT seconds (default 120) is a hang:
# the limit is wall-clock time, so it leaves room for a loaded machine (at
# 10 s, two harnesses of nine timed out on a machine at a load average of
# 20). Longer runs to look for new bugs:
# tests/fuzz/CMakeLists.txt.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$(cd "${1:?usage: smoke.sh BUILD_DIR [RUNS]}" && pwd)
RUNS=${2:-5000}
TIMEOUT=${TIMEOUT:-120}
FIX=$SRC/tests/fixtures
WORK=$(mktemp -d /tmp/tt-fuzz-smoke-XXXXXX)

# harness  seed corpus (fixture folder). fuzz_otlp and
# fuzz_import_otlp_json both reach the OTLP/JSON trace parser, the first
# directly with every input rolled back (an empty store each time), the
# second through import_memory() into a store that keeps what it imported
# (the duplicate paths) and checks that a failure leaves no rows.
HARNESSES=(
  "fuzz_otlp otlp"
  "fuzz_import_otlp_json otlp"
  "fuzz_import_prometheus prom"
  "fuzz_import_openmetrics prom"
  "fuzz_import_otlp_metrics otlp_metrics"
  "fuzz_import_sheet sheets"
  "fuzz_import_jaeger_json jaeger"
  "fuzz_import_zipkin_json zipkin"
  "fuzz_import_otlp_proto otlp_proto"
  "fuzz_trace_pull trace_pull"
)

# one harness: its verdict on stdout, its failure details on stderr
run_one() {
  local name=$1 corpus=$2 bin=$BUILD/tests/fuzz/$1 dir=$WORK/$1 start=$SECONDS
  mkdir -p "$dir/corpus" "$dir/found" "$dir/tmp"
  find "$FIX/$corpus" -type f -size -64k -exec cp {} "$dir/corpus/" \;
  local dict=()
  case $name in *otlp*) dict=(-dict="$SRC/tests/fuzz/otlp.dict") ;; esac
  if (cd "$dir/found" && TMPDIR="$dir/tmp" UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$bin" -seed=1 -runs="$RUNS" -max_len=65536 -timeout="$TIMEOUT" \
        -rss_limit_mb=1024 -print_final_stats=0 "${dict[@]}" "$dir/corpus" \
        > "$dir/log" 2>&1); then
    echo "fuzz smoke: $name: $RUNS inputs from $corpus, ok ($((SECONDS - start)) s)"
    if [ -n "$(ls -A "$dir/tmp")" ]; then
      echo "fuzz smoke: $name left temporary files behind: $(ls -A "$dir/tmp" | tr '\n' ' ')" >&2
      return 1
    fi
  else
    echo "fuzz smoke: $name FAILED; input and log in $dir" >&2
    tail -40 "$dir/log" >&2
    return 1
  fi
}

for h in "${HARNESSES[@]}"; do
  read -r name _ <<< "$h"
  [ -x "$BUILD/tests/fuzz/$name" ] || { echo "fuzz smoke: $BUILD/tests/fuzz/$name is missing" >&2; exit 2; }
done

# Each harness is one process on one core: run as many at once as there
# are cores (the longest first, so the short ones fill in beside them).
jobs=$(nproc)
failed=0 running=0
for h in "${HARNESSES[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run_one $h &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
[ $failed = 0 ] && rm -rf "$WORK"
exit $failed
