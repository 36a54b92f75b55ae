#!/usr/bin/env bash
# bench_targets.sh [BUILD_DIR] [RUNS] [FILTER] - the speed targets of issue 9,
# each run RUNS times (default 3) with /usr/bin/time: prints every run's
# wall seconds, user CPU seconds and peak RSS, then the median wall time.
# Release build expected (cmake -DCMAKE_BUILD_TYPE=Release). FILTER keeps
# the targets whose name contains it. Fabrics that are not in topologies/
# are generated into $TMPDIR: the 131,072-GPU scale fabric by
# bench_topo_load --write, the one-switch fabrics inline. Figures and
# commands: docs/performance.md ("Real steps at real scale").
set -u
bld=${1:-build-rel}
runs=${2:-3}
filter=${3:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=$bld/topsim
tmp=${TMPDIR:-/tmp}/topsim-bench
mkdir -p "$tmp"

flat() { # flat N: N one-GPU hosts whose NICs all plug into one switch
  cat > "$tmp/flat-$1.yaml" <<YAML
topsim: 1
name: flat-$1
gpu_models:
  H100: {bf16: 989TFLOP/s, hbm: 80GB, hbm_bandwidth: 3350GB/s}
planes:
  - name: net
    kind: backend
    technology: ib_ndr
    bandwidth: 200Gb/s
    switches:
      - {name: sw, radix: $1}
    attach_nics: [sw]
templates:
  box:
    gpu_model: H100
    cpus: 1
    pcie_switches: {count: 1, attach: [cpu0], gen: 5, width: 16}
    gpus: {count: 1, attach: [pcie0], gen: 5}
    nics:
      - {plane: net, count: 1, attach: [pcie0], speed: 200Gb/s}
nodes:
  - {name: n, template: box, count: $1}
YAML
}

target() { # target NAME COMMAND...
  local name=$1
  shift
  [[ -n "$filter" && "$name" != *"$filter"* ]] && return
  local walls=()
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%e %U %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" ||
      { echo "$name: FAILED: $(tail -2 "$tmp/err")"; return; }
    read -r wall user rss <"$tmp/time"
    printf '%-34s run %d: %7.2f s wall %7.2f s user %7.1f MiB\n' "$name" $((i + 1)) \
      "$wall" "$user" "$(echo "$rss / 1024" | bc -l)"
    walls+=("$wall")
  done
  printf '%-34s median %.2f s\n' "$name" \
    "$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
}

ex=$src/examples
g3=("$ex/gpt3-175b-1024-a100.yaml" --quiet)
target llama405b-16k "$bin" run "$ex/validation/llama3-405b-16k-h100.yaml" --quiet
target gpt175b-tp8pp8v6-dp192 "$bin" run "$ex/validation/nemo-gpt3-175b-128-h100-fp8.yaml" \
  --topology "$src/topologies/scale-h100-16k.yaml" --tp 8 --pp 8 --dp 192 \
  --set gpus=12288 --global-batch 1536 --quiet
target gpt3-1024-default "$bin" run "${g3[@]}"
target gpt3-1024-tp4pp16dp16 "$bin" run "${g3[@]}" --tp 4 --pp 16 --dp 16
target gpt3-1024-tp2pp32dp16 "$bin" run "${g3[@]}" --tp 2 --pp 32 --dp 16
target gpt3-1024-tp8pp8dp16 "$bin" run "${g3[@]}" --tp 8 --pp 8 --dp 16
target gpt3-1024-tp8pp32dp4 "$bin" run "${g3[@]}" --tp 8 --pp 32 --dp 4 --set layers=96
target gpt3-1024-tp8pp16dp8-i2 "$bin" run "${g3[@]}" --schedule interleaved --virtual-stages 2
# "Any mapping": the CP + ZeRO 2 interleaved mapping by default (exact
# shortcuts plus batches and beside replays, within 1% of --exact) and
# with --bounded (all three bounded shortcuts), the worst known mapping
# by default and with --bounded
cz=(--schedule interleaved --recompute none --zero 2 --micro-batch 3)
target gpt3-1024-cp2zero2 "$bin" run "${g3[@]}" "${cz[@]}" --tp 4 --cp 2 --pp 8 \
  --virtual-stages 12 --dp 16
target gpt3-1024-cp2zero2-bounded "$bin" run "${g3[@]}" "${cz[@]}" --tp 4 --cp 2 \
  --pp 8 --virtual-stages 12 --dp 16 --bounded
target gpt3-1024-worst "$bin" run "${g3[@]}" "${cz[@]}" --tp 4 --cp 4 --pp 2 \
  --virtual-stages 48 --dp 32
target gpt3-1024-worst-bounded "$bin" run "${g3[@]}" "${cz[@]}" --tp 4 --cp 4 --pp 2 \
  --virtual-stages 48 --dp 32 --bounded
# The example moved to DualPipe, which needs at least 2 x pp micro-batches
# per data-parallel rank (global batch >= 4,096); 1F1B keeps the target's
# 2 micro-batches of 61 layers on 2,048 GPUs.
target deepseek-skew0 "$bin" run "$ex/deepseek-v3-moe.yaml" --global-batch 256 \
  --schedule 1f1b --quiet
# At skew 1.0 the hot experts' activations put stage 1 over its HBM
# under 1F1B (90.2 GiB of 74.5, exit 65, since the memory recipes of
# ed760a5); full recompute fits and moves the same tokens over the fabric.
target deepseek-skew1 "$bin" run "$ex/deepseek-v3-moe.yaml" --global-batch 256 \
  --schedule 1f1b --set routing_skew=1.0 --recompute full --quiet
if [[ -z "$filter" || "131k" == *"$filter"* || "dense-131k" == *"$filter"* ]]; then
  [ -s "$tmp/scale131k-dmodk.yaml" ] ||
    "$bld/tests/bench/bench_topo_load" 16384 --write "$tmp/scale131k-dmodk.yaml" >/dev/null
fi
target dense-131k-tp8pp16dp1024 "$bin" run "$ex/validation/nemo-gpt3-175b-128-h100-fp8.yaml" \
  --topology "$tmp/scale131k-dmodk.yaml" --tp 8 --pp 16 --dp 1024 --set gpus=131072 \
  --schedule 1f1b --global-batch 16384 --quiet
# Symmetric-rank folding (exec_step_fold.c) where it applies: the GPT-3
# example on one-tier rail leaves of 128 ports (no ECMP choice), 128 hosts.
sed -e 's/leaf: {radix: 40}/leaf: {radix: 128}/' -e 's/\(name: dgx.*count: \)40/\1128/' \
  "$src/topologies/cluster-1tier-dgx-a100.yaml" >"$tmp/rail1024.yaml"
target gpt3-1024-rail-fold "$bin" run "${g3[@]}" --topology "$tmp/rail1024.yaml"
target gpt3-1024-rail-exact "$bin" run "${g3[@]}" --topology "$tmp/rail1024.yaml" --exact
flat 4096
flat 65535   # one switch holds at most 65,535 ports (topology-format.md)
# 2 x 4,095 x 4,096 = 33.5M transfers: over the default budget of 16M.
target ring-1G-flat4096-steps "$bin" bench "$tmp/flat-4096.yaml" --op all_reduce \
  -b 1G -e 1G --algo ring --proto Simple --max-descriptors 40000000
target ring-1G-flat65535-compact "$bin" bench "$tmp/flat-65535.yaml" --op all_reduce \
  -b 1G -e 1G --algo ring --proto Simple --compact
