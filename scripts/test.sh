#!/usr/bin/env bash
# scripts/test.sh - install what is missing, build with warnings as errors,
# run every test (unit, golden, tmux, end-to-end), then build again with
# AddressSanitizer + UndefinedBehaviorSanitizer and run every test again,
# then give every parser a short, fixed-seed libFuzzer run (clang).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
tt_install_packages

# The tests start python3, sqlite3, tmux and node hundreds of times: take the
# Debian packages installed above, not a version manager's shims earlier in
# PATH (a pyenv shim costs about 0.3 s per python3 start).
export PATH="/usr/bin:/bin:$PATH"

jobs=$(nproc)
echo "== build (warnings are errors)"
tt_build "$TT_ROOT/build-test" -DTT_WERROR=ON
echo "== tests"
ctest --test-dir "$TT_ROOT/build-test" -j"$jobs" --output-on-failure --timeout 300

echo "== build (ASan + UBSan)"
tt_build "$TT_ROOT/build-asan" -DTT_WERROR=ON -DTT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
echo "== tests under ASan + UBSan"
# allocation and free stacks of 8 frames instead of 30, and a 64 MB
# quarantine for freed memory instead of 256: together the sanitized pass
# runs about a quarter faster, and a report still names the code at fault
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:malloc_context_size=8:quarantine_size_mb=64 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$TT_ROOT/build-asan" -j"$jobs" --output-on-failure --timeout 600

echo "== fuzz smoke (libFuzzer + ASan + UBSan, fixed seed, every parser)"
tt_install_packages clang libclang-rt-14-dev
cmake -S "$TT_ROOT" -B "$TT_ROOT/build-fuzz-smoke" -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DTT_FUZZ=ON -DTT_WERROR=ON >/dev/null
cmake --build "$TT_ROOT/build-fuzz-smoke" -j"$jobs" --target fuzz_all
# the same lighter stacks and quarantine as the sanitized pass (libFuzzer
# looks for leaks itself)
ASAN_OPTIONS=malloc_context_size=8:quarantine_size_mb=64 \
  bash "$TT_ROOT/tests/fuzz/smoke.sh" "$TT_ROOT/build-fuzz-smoke"
