#!/usr/bin/env bash
# cli_sweep_sanity.sh BIN SRCDIR [SANITIZED] - `topsim sweep` results that
# must hold (docs/cli.md: the best mapping keeps TP in a node; interleaving
# helps when the bubble is large), --topologies side by side, --dry-run
# counts, and refusals (exit 64/65/66, one message, nothing on stdout).
# cli_sweep.sh has the --jobs determinism and the JSON bookkeeping.
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
lib_tmp
W=$src/tests/data/workloads/tiny-dense.yaml
T=$src/topologies/superpod-a100-1su.yaml
small=("$W" --topology "$T" --gpus 16 --vary tp,pp --quiet)
# The simulated sweeps run a global batch of 8, not the file's 40: the same
# 12 mappings (dp in {1, 2, 4, 8} divides both; dp 16 divides neither, the
# one batch prune) with 5x fewer micro-batches to simulate, which keeps
# this test within its time budget under the sanitizers.
fast=(--set global_batch=8)

# Sanity 1: with cross-node TP allowed (tp 16 spans two DGX nodes), the
# best mapping still keeps TP inside a node.
"$bin" sweep "$W" --topology "$T" --gpus 16 --vary tp,pp --allow-cross-node-tp \
  "${fast[@]}" --quiet --json --exhaustive | python3 -c '
import json, sys
rows = json.load(sys.stdin)["sweeps"][0]["rows"]
assert any(r["tp"] == 16 for r in rows), "tp 16 not tried"
assert rows[0]["tp"] <= 8, rows[0]
best16 = max(r["tokens_per_s"] for r in rows if r["tp"] == 16)
assert best16 < rows[0]["tokens_per_s"]
' && ok || note "best mapping does not keep TP inside a node"

# Sanity 2 (Narayanan et al. SC21): pp 4 with 4 micro-batches has a large
# bubble ((p-1)/m = 0.75 of the ideal time); interleaving (v = 2) divides
# it by v and wins, at the same tp, pp, dp and micro-batch.
"$bin" sweep "$W" --topology "$T" --gpus 32 --fix tp=8 --fix pp=4 --fix mb=1 \
  --vary schedule,vp --set global_batch=4 --quiet --json --exhaustive | python3 -c '
import json, sys
rows = json.load(sys.stdin)["sweeps"][0]["rows"]
by = {(r["schedule"], r["virtual_stages"]): r for r in rows}
a, b = by[("1f1b", 1)], by[("interleaved", 2)]
assert b["tokens_per_s"] > a["tokens_per_s"] * 1.05, (a["tokens_per_s"], b["tokens_per_s"])
assert b["bubble_s"] < a["bubble_s"], (a["bubble_s"], b["bubble_s"])
' && ok || note "interleaving does not help with a large bubble"

# Several topologies side by side: one best row each.
out=$("$bin" sweep "$W" --topologies "$T,$src/topologies/cluster-2tier-4to1.yaml" \
  --gpus 16 --vary tp,pp "${fast[@]}" --quiet) || note "--topologies failed"
grep -q "^best mapping per topology" <<<"$out" \
  && [ "$(grep -cE '^(superpod-a100-1su|cluster-2tier-4to1) ' <<<"$out")" -eq 2 ] && ok \
  || note "--topologies: no side-by-side table in: $out"

# --dry-run counts without simulating.
out=$("$bin" sweep "${small[@]}" --vary tp,pp,vp,schedule --dry-run) && grep -q "29 valid" <<<"$out" \
  && grep -q "nothing simulated" <<<"$out" && ok || note "--dry-run: $out"
# GPT-3 175B on one DGX A100 fits no mapping (exit 65, the smallest
# footprint named); with memory_check=warn the 28 layouts are all kept.
gpt=("$src/examples/gpt3-175b-1024-a100.yaml" --gpus 8 --vary tp,pp,dp,zero
     --dry-run --quiet)
out=$("$bin" sweep "${gpt[@]}" 2>&1); rc=$?
[[ $rc == 65 && $out == *"the smallest footprint is 371.7 GiB per GPU"* ]] \
  && ok || note "over-HBM sweep: rc $rc: $out"
out=$("$bin" sweep "${gpt[@]}" --set memory_check=warn) \
  && grep -q "28 candidates, 28 valid, pruned none" <<<"$out" && ok \
  || note "memory_check=warn sweep: $out"

refuse() { # refuse STATUS EXPECTED_MSG ARGS...
  local want=$1 msg=$2
  shift 2
  local err st
  err=$("$bin" sweep "$@" 2>&1 >"$tmp/out")
  st=$?
  if [ "$st" -eq "$want" ] && grep -q -- "$msg" <<<"$err" && [ ! -s "$tmp/out" ]; then
    ok
  else
    note "sweep $* -> status $st, stdout $(wc -c <"$tmp/out") bytes, stderr: $err"
  fi
}
refuse 64 "unknown key 'bogus'" "${small[@]}" --vary tp,bogus
refuse 64 "unknown key 'nope'" "${small[@]}" --fix nope=1
refuse 64 "expected gpipe, 1f1b or interleaved" "${small[@]}" --fix schedule=zigzag
refuse 65 "pruned by tp_heads" "${small[@]}" --gpus 12 --fix tp=3 --allow-cross-node-tp
refuse 65 "tp 5 does not divide the 16 GPUs" "${small[@]}" --fix tp=5
refuse 65 "pruned by tp_domain" "${small[@]}" --fix tp=16
refuse 65 "cannot hold this workload" "$src/examples/gpt3-175b-1024-a100.yaml" \
  --topology "$src/topologies/dgx-a100.yaml" --gpus 8 --quiet
refuse 65 "asks for 4096 GPUs" "${small[@]}" --gpus 4096
refuse 66 "" "$tmp/missing.yaml" --quiet

lib_summary
