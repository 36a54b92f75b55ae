#!/usr/bin/env bash
# bench_sweep.sh [BIN] - the issue-10 targets for `topsim sweep` on GPT-3
# 175B over the 7-SU A100 SuperPOD (examples/gpt3-175b-1024-a100.yaml):
# how many valid mappings there are (default keys, and with the order
# string), then timed sweeps with --jobs 2. Not run by ctest: it takes
# minutes. Figures go to docs/performance.md.
set -eu
bin=${1:-build-rel/topsim}
src=$(cd "$(dirname "$0")/../.." && pwd)
g=$src/examples/gpt3-175b-1024-a100.yaml
t() { /usr/bin/time -f "  %e s wall, %M KiB peak RSS" "$@"; }

echo "== valid mappings (enumeration only)"
for vary in default all tp,cp,pp,vp,schedule tp,pp,vp,schedule; do
  args=()
  [ "$vary" = default ] || args=(--vary "$vary")
  echo "-- --vary $vary"
  t "$bin" sweep "$g" "${args[@]}" --dry-run --quiet | tail -1
done

echo "== reduced size: tp, pp, schedule, v varied; global batch 128"
t "$bin" sweep "$g" --vary tp,pp,vp,schedule --set global_batch=128 --jobs 2 \
  --quiet --top 5
echo "== full size: tp, pp, schedule, v varied (the paper's batch 1536)"
t "$bin" sweep "$g" --vary tp,pp,vp,schedule --jobs 2 --quiet --top 5
