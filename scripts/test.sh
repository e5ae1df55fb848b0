#!/usr/bin/env bash
# scripts/test.sh - install what is missing, build with warnings as errors,
# run every test (unit, golden, tmux, end-to-end), then build again with
# AddressSanitizer + UndefinedBehaviorSanitizer and run every test again,
# then give every parser a short, fixed-seed libFuzzer run (clang).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
tt_install_packages

jobs=$(nproc)
echo "== build (warnings are errors)"
tt_build "$TT_ROOT/build-test" -DTT_WERROR=ON
echo "== tests"
ctest --test-dir "$TT_ROOT/build-test" -j"$jobs" --output-on-failure --timeout 300

echo "== build (ASan + UBSan)"
tt_build "$TT_ROOT/build-asan" -DTT_WERROR=ON -DTT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
echo "== tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$TT_ROOT/build-asan" -j"$jobs" --output-on-failure --timeout 600

echo "== fuzz smoke (libFuzzer + ASan + UBSan, fixed seed, every parser)"
tt_install_packages clang libclang-rt-14-dev
cmake -S "$TT_ROOT" -B "$TT_ROOT/build-fuzz-smoke" -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DTT_FUZZ=ON -DTT_WERROR=ON >/dev/null
cmake --build "$TT_ROOT/build-fuzz-smoke" -j"$jobs" --target fuzz_all
bash "$TT_ROOT/tests/fuzz/smoke.sh" "$TT_ROOT/build-fuzz-smoke"
