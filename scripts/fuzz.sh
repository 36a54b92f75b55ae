#!/usr/bin/env bash
# fuzz.sh [SECONDS] [HARNESS...] - build the libFuzzer harnesses of
# tests/fuzz with clang (build-fuzz/, -DTOPSIM_FUZZ=ON: coverage + ASan +
# UBSan with float-cast-overflow) and run each for SECONDS (default 60),
# seeded from the bundled topologies, examples and the malformed corpus,
# with tests/fuzz/topsim.dict. New interesting inputs accumulate in
# build-fuzz/corpus/<harness>; a finding (crash, leak, undefined behaviour,
# timeout, out-of-memory) is saved as build-fuzz/artifacts/<harness>-* and
# makes the script exit 1. Harnesses: fuzz_topo fuzz_workload fuzz_units
# fuzz_xml (the NCCL topology XML importer).
# Runs nice'd, one harness at a time (the machine may be shared).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
secs=${1:-60}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(fuzz_topo fuzz_workload fuzz_units fuzz_xml)
if ! command -v clang >/dev/null; then
  echo "fuzz.sh: clang not found: skipping (install clang to fuzz)" >&2
  exit 0
fi
build=$ROOT/build-fuzz
CC=clang cmake -S "$ROOT" -B "$build" -DTOPSIM_FUZZ=ON -DTOPSIM_WERROR=ON -DTOPSIM_TESTS=OFF \
  -DTOPSIM_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
nice -n 10 cmake --build "$build" -j 2 >/dev/null

# Seeds: topology files, workload files, and quantities for the parsers.
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds/units" "$seeds/workload" "$build/artifacts"
find "$ROOT/examples" "$ROOT/tests/data/workloads" "$ROOT/tests/data/bad/work" \
  -name '*.yaml' -exec cp {} "$seeds/workload/" \;
i=0
for q in 8 64K 1M 8G 16777216T 0 18446744073709551615 450GB/s 400Gb/s "1.6 TB/s" \
         500ns 1.2us 3601s 9223372036854775808ps 80GB 64KiB 989TFLOP/s 14.5kW \
         1000000s 4194304 0.5 . 1..2; do
  printf '%s' "$q" >"$seeds/units/$i"
  i=$((i + 1))
done
declare -A dirs=(
  [fuzz_topo]="$ROOT/topologies $ROOT/tests/data/bad"
  [fuzz_workload]="$seeds/workload"
  [fuzz_units]="$seeds/units"
  [fuzz_xml]="$ROOT/tests/data/nccl-topo $ROOT/tests/data/bad_xml"
)

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for h in "${harnesses[@]}"; do
  corpus=$build/corpus/$h
  mkdir -p "$corpus"
  echo "== $h for ${secs}s"
  # shellcheck disable=SC2086
  if ! nice -n 10 "$build/tests/fuzz/$h" -max_total_time="$secs" -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
        -dict="$ROOT/tests/fuzz/topsim.dict" -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$h-" "$corpus" ${dirs[$h]} \
        >"$build/$h.log" 2>&1; then
    echo "fuzz.sh: $h found a problem (build-fuzz/$h.log, build-fuzz/artifacts/):"
    grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$build/$h.log" | head -5
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$build/$h.log" | tr '\n' ' '
    echo
  fi
done
exit $status
