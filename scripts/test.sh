#!/usr/bin/env bash
# scripts/test.sh - install what is missing, then run every stage of the
# project's checks and say how each one went:
#
#   build        a normal build of what the next two stages run (the
#                binary and the statistics tests' programs), warnings are
#                errors
#   tests        on that build, the end-to-end tests labelled "product":
#                the binary a user installs (install.sh: cmake --install,
#                then the installed tailtriage used from another folder;
#                demo_tui.sh: `demo` on a terminal), and the unit tests
#                labelled "statistics" (below). Every other test runs
#                once, in asan-tests (see "Which test runs where" below)
#   asan-build   a build with AddressSanitizer + UndefinedBehaviorSanitizer
#                (gcc, Debug at -O1, warnings are errors: gcc warns
#                differently there, and CI once failed on exactly that)
#   asan-tests   every test, unit and end-to-end, on that build, but those
#                labelled "realtime", "statistics" or "install"
#                (tests/CMakeLists.txt says which and why: their time is
#                real-time traffic made by Node.js services, or millions of
#                simulated requests, or the installation of the binary a
#                user gets, and every C path they reach runs sanitized in
#                another test)
#   fuzz-build   the libFuzzer harnesses (clang)
#   fuzz-smoke   a short, fixed-seed libFuzzer run of every parser
#   realtime-tests  the tests labelled "realtime", on the normal build,
#                one at a time, after the tests stage, beside asan-tests
#
# Which test runs where. Each test runs at least once, and every one but
# the two realtime tests, the statistics tests and install.sh under
# AddressSanitizer and UBSan: a test's
# assertions are the same on both builds, and the sanitized run checks
# every memory access and undefined behaviour besides, so a second run on
# the normal build repeats the same checks with less watching, for about
# 300 of the run's CPU seconds (a quarter of what is left). What the
# normal build alone can show is kept: it is built with -Werror at -O2
# (gcc's -O2 warnings, e.g. -Wmaybe-uninitialized, are errors there), the
# tests labelled "product" run on it (the installed binary and the demo, as
# a user gets them), and so do the realtime tests (the receiver, its
# threads and the analysis at full speed under real SDK traffic). What is
# given up: a bug that shows only in the -O2 binary and that neither the
# sanitizers nor those tests meet (an uninitialised read that -O1 happens
# to hide; a race whose timing differs); the fuzz harnesses, also built
# optimised (clang -O1 with sanitizers), cover the parsers beside it.
# The tests labelled "statistics" (three cmocka programs' tests whose
# assertions are statistics of whole simulated incidents: the demo's
# default simulation, every shipped drill, a class mix over 4,000 requests)
# run on the normal build only: their CPU is millions of simulated requests,
# which the sanitizers make twice as slow (about 250 CPU s sanitized, 70
# plain), and a sanitizer sees a code path in the first thousand requests
# as well as in the millionth; every C path they reach runs sanitized in
# the program's other tests and the tests tests/CMakeLists.txt names.
#
# Three lanes run side by side: build, tests, then realtime-tests;
# asan-build then asan-tests; fuzz-build then fuzz-smoke. Much of a test's
# time is spent waiting (for servers, for phases of real traffic, for a
# dashboard in tmux), so two cores have room for the lanes together, and
# the tests are written to pass on a loaded machine (they check that an
# injected fault showed before they judge it): the lanes slow each other's
# clocks, not their verdicts. The fuzz lane runs at a lower priority (10
# nice levels below the script, 19 while the realtime tests run): it only
# computes, and fills what the others leave; once they have all ended it is
# back at the script's priority, so that other work on the machine cannot
# starve it. The normal build makes only what its lane runs; the unit
# test programs are compiled (warnings are errors there too) and run in
# the sanitized lane, so their own -O2 warnings are not looked for.
#
# The realtime tests judge a fault injected into real Node.js services by
# what those services' own clocks measured against a baseline phase made
# seconds before, so what matters to them is that the machine's load does
# not change between the two phases, more than how high it is. They start
# once the normal and sanitized builds have ended (compilers come and go:
# with them beside, a baseline phase was once as slow as the incident, in
# three regenerations), beside the sanitized tests, which keep two tests
# running at all times, and the fuzz lane, then at the lowest priority
# (nice 19: its compiler or harnesses get a CPU only when the other lanes
# leave it idle). They regenerate a phase whose fault did not show
# (tests/sh/sdk_http_diagnosis.sh).
#
# Every stage runs even when another one failed, except one that needs a
# build that failed (tests need build, and so on). Each output line carries
# its stage's name; the whole of each stage's output is also kept in
# build-logs/STAGE.log. The last lines are one summary line per stage
# (result, seconds, the CPU seconds its processes used, what passed), the
# total, and the machine's load average; the exit status is non-zero when
# any stage failed or was skipped.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
set +e
tt_install_packages clang libclang-rt-14-dev ninja-build || exit 1

# The tests start python3, sqlite3, tmux and node hundreds of times: take the
# Debian packages installed above, not a version manager's shims earlier in
# PATH (a pyenv shim costs about 0.3 s per python3 start).
export PATH="/usr/bin:/bin:$PATH"

jobs=$(nproc)
LOGS=$TT_ROOT/build-logs
rm -rf "$LOGS"
mkdir -p "$LOGS"
T0=$SECONDS
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
STAGES=(build tests asan-build asan-tests fuzz-build fuzz-smoke realtime-tests)


# stage NAME NEEDS FUNCTION: runs FUNCTION unless the stage NEEDS (or "")
# did not pass; its output goes to the terminal, each line prefixed with
# [NAME], and to $LOGS/NAME.log; its verdict to $LOGS/NAME.result
# ("pass|FAIL|skip SECONDS DETAIL").
stage() {
  local name=$1 need=$2 fn=$3 t0=$SECONDS rc detail verdict cpu0 cpu1
  if [ -n "$need" ] && [ "$(stage_result "$need")" != pass ]; then
    echo "== $name: skipped ($need did not pass)"
    echo "skip 0 $need did not pass" >"$LOGS/$name.result"
    return
  fi
  echo "== $name: started"
  children_cpu >"$LOGS/.cpu0.$BASHPID"; read -r cpu0 <"$LOGS/.cpu0.$BASHPID"
  (set -e; "$fn") 2>&1 | tee "$LOGS/$name.log" | sed -u "s/^/[$name] /"
  rc=${PIPESTATUS[0]}
  detail=$(stage_detail "$name" "$rc")
  verdict=$([ "$rc" = 0 ] && echo pass || echo FAIL)
  children_cpu >"$LOGS/.cpu1.$BASHPID"; read -r cpu1 <"$LOGS/.cpu1.$BASHPID"
  rm -f "$LOGS/.cpu0.$BASHPID" "$LOGS/.cpu1.$BASHPID"
  detail="cpu $((cpu1 - cpu0)) s${detail:+; $detail}"
  echo "== $name: $verdict ($((SECONDS - t0)) s) $detail"
  echo "$verdict $((SECONDS - t0)) $detail" >"$LOGS/$name.result"
}

# children_cpu: the CPU seconds (user + system) of this shell's finished
# children so far; a stage's share is the difference across it (each lane
# runs its stages one after another). On a shared machine it tells the
# stage's own work from the time it waited for the cores.
# (times runs in this shell, not in a pipeline's subshell, whose children
# would be others)
children_cpu() {
  local f=$LOGS/.times.$BASHPID
  times >"$f"
  tail -1 "$f" | awk '{ n = 0
    for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] }
    printf "%d\n", n + 0.5 }'
  rm -f "$f"
}

# stage_result NAME: pass, FAIL, skip (the stage has ended: each lane runs
# its stages in order, so a stage's NEEDS is always in its own lane)
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
      grep -m1 '^left out' "$log"
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

# configure DIR [cmake args...]: a build tree in DIR made for Ninja, which
# runs the compilers with less of its own work than make's recursive
# Makefiles (the sanitized build: 99 CPU s instead of 117, measured alone).
# A tree that another generator made (a build by hand in build-asan, say)
# is started over: CMake refuses to change a tree's generator.
configure() {
  local dir=$1
  shift
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$dir/CMakeCache.txt"; then
    echo "$dir was made by another CMake generator: starting it over with Ninja"
    rm -rf "$dir"
  fi
  cmake -G Ninja -S "$TT_ROOT" -B "$dir" "$@" >/dev/null
}

# The normal build makes what this lane runs (target plain_lane: the binary
# and the statistics tests' programs); every unit test program is built,
# and run, in the sanitized lane. It compiles 5 nice levels below the
# sanitized build: that one starts the longest chain of stages (asan-build,
# asan-tests: about four fifths of the run), this lane has minutes to spare
# (its realtime tests end well before the sanitized tests), and at the same
# priority the two builds shared the cores evenly.
st_build() {
  configure "$TT_ROOT/build-test" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_WERROR=ON &&
    nice -n 5 cmake --build "$TT_ROOT/build-test" -j"$jobs" --target plain_lane
}

# --timeout is a guard against a hung test, not a speed limit: the longest
# tests run real traffic for a minute or two and regenerate it when a
# loaded machine hid the fault they inject.
# Only the tests labelled product or statistics run here (see "Which test
# runs where" above); the others, unit and end-to-end, run in asan-tests.
st_tests() {
  echo "left out (run in asan-tests): $(ctest --test-dir "$TT_ROOT/build-test" -N -LE 'product|statistics|realtime' |
    sed -n 's/^Total Tests: //p') tests"
  ctest --test-dir "$TT_ROOT/build-test" -j"$jobs" -L 'product|statistics' --output-on-failure --timeout 600
}

st_realtime_tests() {
  ctest --test-dir "$TT_ROOT/build-test" -j1 -L realtime --output-on-failure --timeout 1200
}

st_asan_build() {
  configure "$TT_ROOT/build-asan" -DTT_WERROR=ON -DTT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug &&
    cmake --build "$TT_ROOT/build-asan" -j"$jobs"
}

st_asan_tests() {
  # allocation and free stacks of 8 frames instead of 30, and a 64 MB
  # quarantine for freed memory instead of 256: together the sanitized pass
  # runs about a quarter faster, and a report still names the code at fault.
  # The tests labelled realtime, statistics or install are left out (see
  # the top of this file).
  echo "left out (label realtime, statistics, install): $(ctest --test-dir "$TT_ROOT/build-asan" -N -L 'realtime|statistics|install' |
    sed -n 's/^ *Test *#[0-9]*: //p' | paste -sd' ' -)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:malloc_context_size=8:quarantine_size_mb=64 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$TT_ROOT/build-asan" -j"$jobs" -LE 'realtime|statistics|install' --output-on-failure --timeout 600
}

st_fuzz_build() {
  configure "$TT_ROOT/build-fuzz-smoke" -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DTT_FUZZ=ON -DTT_WERROR=ON &&
    cmake --build "$TT_ROOT/build-fuzz-smoke" -j"$jobs" --target fuzz_all
}

st_fuzz_smoke() {
  # the same lighter stacks and quarantine as the sanitized pass (libFuzzer
  # looks for leaks itself)
  ASAN_OPTIONS=malloc_context_size=8:quarantine_size_mb=64 \
    bash "$TT_ROOT/tests/fuzz/smoke.sh" "$TT_ROOT/build-fuzz-smoke"
}

# Each lane is a process group of its own (set -m), so that Ctrl-C or a
# kill of this script stops the lanes and everything they started, and
# nothing else. Their input is /dev/null, as a background job's is without
# job control. The fuzz lane starts first: the normal lane renices it
# (its process group: the lane, smoke.sh, the harnesses; it may have ended)
# around the realtime tests.
FUZZ_NICE=$(($(nice) + 10))
((FUZZ_NICE > 19)) && FUZZ_NICE=19
set -m
{
  renice -n "$FUZZ_NICE" $BASHPID >/dev/null
  stage fuzz-build "" st_fuzz_build
  stage fuzz-smoke fuzz-build st_fuzz_smoke
} </dev/null &
FUZZ=$!
{
  stage build "" st_build
  stage tests build st_tests
  # the sanitized build ends first on its own (it compiles 5 nice levels
  # above this lane's build), but not always on a loaded machine
  while [ ! -f "$LOGS/asan-build.result" ]; do sleep 1; done
  renice -n 19 -g "$FUZZ" >/dev/null 2>&1
  stage realtime-tests build st_realtime_tests
  renice -n "$FUZZ_NICE" -g "$FUZZ" >/dev/null 2>&1
} </dev/null &
LANES=($! $FUZZ)
{
  stage asan-build "" st_asan_build
  stage asan-tests asan-build st_asan_tests
} </dev/null &
LANES+=($!)
set +m
trap 'trap - INT TERM; for l in "${LANES[@]}"; do kill -- -"$l" 2>/dev/null; done; exit 130' INT TERM
wait "${LANES[0]}" "${LANES[2]}"
# then back at this script's own priority: the fuzz lane was niced to keep
# out of the other lanes' way, but once they have ended a nice lane only
# yields to other people's work, and on a machine kept busy by a build at
# nice 0 it barely ran (5 % of a core against four busy loops: its 260 CPU
# seconds would have taken over an hour)
renice -n "$(nice)" -g "$FUZZ" >/dev/null 2>&1
wait
trap - INT TERM

echo
echo "== summary (logs in $LOGS)"
failed=0
for s in "${STAGES[@]}"; do
  read -r result secs detail <"$LOGS/$s.result"
  printf '%-11s %-4s %5d s  %s\n' "$s" "$result" "$secs" "$detail"
  [ "$result" = pass ] || failed=1
done
printf '%-11s %-4s %5d s\n' total "$([ $failed = 0 ] && echo pass || echo FAIL)" $((SECONDS - T0))
echo "load average: $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end ($(nproc) cores)"
exit $failed
