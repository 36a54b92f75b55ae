#!/usr/bin/env bash
# test.sh - install what is missing, build, and run the whole ctest suite
# twice: a normal build, then an ASan+UBSan build (LeakSanitizer included)
# so every test, the malformed-input corpus among them, also proves no
# crash and no leak; then the fuzz harnesses for 60 s each (scripts/fuzz.sh).
source "$(dirname "$0")/common.sh"
# Test-only tools: python3 and jq read the JSON outputs in tests/cli_*.sh,
# valgrind runs tests/cli_valgrind.sh (docs/architecture.md, Dependencies).
ensure_packages "${TOPSIM_PACKAGES[@]}" valgrind python3 jq
cd "$TOPSIM_ROOT"

echo "== build (RelWithDebInfo) and ctest"
configure_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOPSIM_WERROR=ON \
  -DTOPSIM_MPI=ON
ctest --test-dir build --output-on-failure -j "$JOBS"

# The sanitizer build leaves TOPSIM_MPI off: Open MPI's own allocations
# would drown LeakSanitizer's report; the MPI path runs in the build above.
echo "== build with ASan+UBSan and ctest"
configure_build build-asan -DCMAKE_BUILD_TYPE=Debug -DTOPSIM_SANITIZE=ON -DTOPSIM_WERROR=ON \
  -DTOPSIM_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$JOBS"

# In-tree fuzzing (issue 14): each libFuzzer harness for 60 s when clang is
# installed (the harnesses need libFuzzer, which gcc lacks); any finding
# fails the run. Skipped with TOPSIM_FUZZ_SECONDS=0.
if command -v clang >/dev/null && [ "${TOPSIM_FUZZ_SECONDS:-60}" != 0 ]; then
  echo "== libFuzzer harnesses, ${TOPSIM_FUZZ_SECONDS:-60} s each"
  "$TOPSIM_ROOT/scripts/fuzz.sh" "${TOPSIM_FUZZ_SECONDS:-60}"
else
  echo "== libFuzzer harnesses skipped (no clang, or TOPSIM_FUZZ_SECONDS=0)"
fi
