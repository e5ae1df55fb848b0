#!/usr/bin/env bash
# scripts/test.sh - install what is missing, then run every stage of the
# project's checks and say how each one went:
#
#   build        a normal build, warnings are errors
#   tests        every test of that build (unit, golden, tmux, end-to-end)
#   asan-build   a build with AddressSanitizer + UndefinedBehaviorSanitizer
#   asan-tests   every test again, on that build
#   fuzz-build   the libFuzzer harnesses (clang)
#   fuzz-smoke   a short, fixed-seed libFuzzer run of every parser
#
# Every stage runs even when an earlier one failed, except those that need
# a build that failed (tests need build, and so on). The last lines are one
# summary line per stage (result, seconds, what passed); the exit status is
# non-zero when any stage failed or was skipped. Each stage's output is
# also kept in build-logs/STAGE.log.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
set +e
tt_install_packages clang libclang-rt-14-dev || exit 1

# The tests start python3, sqlite3, tmux and node hundreds of times: take the
# Debian packages installed above, not a version manager's shims earlier in
# PATH (a pyenv shim costs about 0.3 s per python3 start).
export PATH="/usr/bin:/bin:$PATH"

jobs=$(nproc)
LOGS=$TT_ROOT/build-logs
rm -rf "$LOGS"
mkdir -p "$LOGS"
T0=$SECONDS

# stage NAME NEEDS FUNCTION: runs FUNCTION unless the stage NEEDS (or "")
# did not pass; its output goes to the terminal and to $LOGS/NAME.log, its
# verdict to $LOGS/NAME.result ("pass|FAIL|skip SECONDS DETAIL").
stage() {
  local name=$1 need=$2 fn=$3 t0=$SECONDS rc
  if [ -n "$need" ] && [ "$(stage_result "$need")" != pass ]; then
    echo "== $name: skipped ($need did not pass)"
    echo "skip 0 $need did not pass" >"$LOGS/$name.result"
    return
  fi
  echo "== $name"
  (set -e; "$fn") 2>&1 | tee "$LOGS/$name.log"
  rc=${PIPESTATUS[0]}
  local detail
  detail=$(stage_detail "$name" "$rc")
  if [ "$rc" = 0 ]; then
    echo "pass $((SECONDS - t0)) $detail" >"$LOGS/$name.result"
  else
    echo "FAIL $((SECONDS - t0)) $detail" >"$LOGS/$name.result"
  fi
}

# stage_result NAME: pass, FAIL, skip, or nothing while it has not ended
stage_result() {
  [ -f "$LOGS/$1.result" ] && cut -d' ' -f1 "$LOGS/$1.result"
}

# stage_detail NAME RC: what the summary says about the stage, from its log
stage_detail() {
  local log=$LOGS/$1.log
  case $1 in
    *tests)
      # "97% tests passed, 2 tests failed out of 74" and the failed names
      sed -n 's/^[0-9]*% tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\1 \2/p' "$log" |
        tail -1 | { read -r f n && echo "$((n - f)) of $n tests passed"; }
      [ "$2" = 0 ] || sed -n '/^The following tests FAILED:/,$s/^[[:space:]]*[0-9]* - \([^ ]*\).*/\1/p' "$log" |
        paste -sd' ' - | sed 's/^./failed: &/'
      ;;
    fuzz-smoke)
      echo "$(grep -c '^fuzz smoke: .*, ok (' "$log") of" \
        "$(grep -c '^  "fuzz_' "$TT_ROOT/tests/fuzz/smoke.sh") harnesses passed"
      ;;
    *)
      [ "$2" = 0 ] || grep -m1 -E 'error|Error' "$log" | cut -c1-100
      ;;
  esac | paste -sd';' - | sed 's/;/; /g'
}

st_build() {
  tt_build "$TT_ROOT/build-test" -DTT_WERROR=ON
}

st_tests() {
  ctest --test-dir "$TT_ROOT/build-test" -j"$jobs" --output-on-failure --timeout 300
}

st_asan_build() {
  tt_build "$TT_ROOT/build-asan" -DTT_WERROR=ON -DTT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
}

st_asan_tests() {
  # allocation and free stacks of 8 frames instead of 30, and a 64 MB
  # quarantine for freed memory instead of 256: together the sanitized pass
  # runs about a quarter faster, and a report still names the code at fault
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:malloc_context_size=8:quarantine_size_mb=64 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$TT_ROOT/build-asan" -j"$jobs" --output-on-failure --timeout 600
}

st_fuzz_build() {
  cmake -S "$TT_ROOT" -B "$TT_ROOT/build-fuzz-smoke" -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DTT_FUZZ=ON -DTT_WERROR=ON >/dev/null &&
    cmake --build "$TT_ROOT/build-fuzz-smoke" -j"$jobs" --target fuzz_all
}

st_fuzz_smoke() {
  # the same lighter stacks and quarantine as the sanitized pass (libFuzzer
  # looks for leaks itself)
  ASAN_OPTIONS=malloc_context_size=8:quarantine_size_mb=64 \
    bash "$TT_ROOT/tests/fuzz/smoke.sh" "$TT_ROOT/build-fuzz-smoke"
}

stage build "" st_build
stage tests build st_tests
stage asan-build "" st_asan_build
stage asan-tests asan-build st_asan_tests
stage fuzz-build "" st_fuzz_build
stage fuzz-smoke fuzz-build st_fuzz_smoke

echo
echo "== summary (logs in $LOGS)"
failed=0
for s in build tests asan-build asan-tests fuzz-build fuzz-smoke; do
  read -r result secs detail <"$LOGS/$s.result"
  printf '%-11s %-4s %5d s  %s\n' "$s" "$result" "$secs" "$detail"
  [ "$result" = pass ] || failed=1
done
printf '%-11s %-4s %5d s\n' total "$([ $failed = 0 ] && echo pass || echo FAIL)" $((SECONDS - T0))
exit $failed
