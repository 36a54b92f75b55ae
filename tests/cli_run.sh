#!/usr/bin/env bash
# cli_run.sh BIN SRCDIR [SANITIZED] - drives `topsim run`: the bundled
# examples (reduced by overrides to a few micro-batches so each stays well
# under 20 s in the sanitizer build), JSON that parses, a trace that follows
# the Trace Event Format, --placement, and refusals (exit 65, one message).
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
ex=$src/examples
lib_tmp

# Llama 70B on 64 H100 (8 micro-batches instead of 256).
llama=("$ex/llama-70b-64-h100.yaml" --global-batch 16)
out=$("$bin" run "${llama[@]}") || note "llama example failed"
grep -q "^step time" <<<"$out" && grep -q "pipeline bubble" <<<"$out" && ok \
  || note "llama: no breakdown in: $out"

# GPT-3 175B on 1,024 A100: 2 micro-batches, 16 of the 96 layers.
"$bin" run "$ex/gpt3-175b-1024-a100.yaml" --global-batch 16 --set layers=16 \
  >/dev/null && ok || note "gpt3 example failed"

# DeepSeek-V3 on 2,048 H800 shrunk to 128 GPUs (EP 8, PP 2, DP 64), 4 layers,
# DualPipe with 4 micro-batches (2 per direction), FP8 dispatch, node-limited.
"$bin" run "$ex/deepseek-v3-moe.yaml" --pp 2 --ep 8 --dp 64 --set gpus=128 \
  --set layers=4 --set first_stage_layers=2 --set last_stage_layers=2 \
  --global-batch 256 >/dev/null && ok || note "deepseek example failed"

# The published layouts fit with their authors' memory recipes (mapping
# checks memory; --placement stops there): Llama 3 405B on 16,384 H100
# without recompute, DeepSeek-V3 with selective recompute, FP8 caching,
# expert-activation recompute and BF16 moments. Without the last three,
# DeepSeek-V3's stage 1 is refused with the breakdown
# (docs/workload-format.md, "Memory model").
"$bin" run "$ex/validation/llama3-405b-16k-h100.yaml" --placement --json \
  >/dev/null && ok || note "llama 3 405B layout refused"
"$bin" run "$ex/deepseek-v3-moe.yaml" --placement --json >/dev/null && ok \
  || note "deepseek-v3 layout refused"
err=$("$bin" run "$ex/deepseek-v3-moe.yaml" --set activation_cache=bf16 \
  --set recompute_moe_act=false --set optimizer_moments=fp32 2>&1 >/dev/null)
rc=$?
[[ $rc == 65 && $err == *"stage 1 needs 88.3 GiB"*"(weights 6.1, grads 12.2, optimizer 8.0, activations 61.2, buffers 0.8 GiB)"* ]] \
  && ok || note "deepseek-v3 refusal: rc $rc: $err"
# memory_check=warn: the same kind of layout runs, one warning on stderr
# (both stages over; the worst named) and the same one in --json's warnings.
over=("$ex/gpt3-175b-1024-a100.yaml" --set layers=16 --tp 1 --pp 2 --dp 512
      --global-batch 1024)
"$bin" run "${over[@]}" >/dev/null 2>&1; rc=$?
[ $rc -eq 65 ] && ok || note "over-HBM layout: exit $rc, want 65"
err=$("$bin" run "${over[@]}" --set memory_check=warn --json 2>&1 \
  >"$tmp/warn.json") && [[ $err == *"2 of 2 pipeline stages over HBM"*"stage 1 needs 254.4 GiB"* ]] \
  && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["warnings"]) == 1 and "stage 1 needs 254.4 GiB" in d["warnings"][0]
assert d["config"]["training"]["memory_check"] == "warn" and d["step_time_s"] > 0
' "$tmp/warn.json" && ok || note "memory_check=warn: $err"

"$bin" run "${llama[@]}" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["step_time_s"] > 0 and 0 < d["mfu"] < 1, d["mfu"]
assert len(d["ranks"]) == 64 and len(d["busiest_links"]) == 10
b = d["breakdown"]
total = b["compute_s"] + sum(b["exposed_s"].values()) + b["bubble_s"] + b["idle_s"]
assert abs(total - d["step_time_s"]) < 1e-9 * max(1, total), (total, d["step_time_s"])
assert d["counters"]["net_bytes_sent"] == d["counters"]["net_bytes_delivered"]
t = d["config"]["training"]
assert t["schedule"] == "1f1b" and t["recompute"] == "selective", t
assert t["zero_stage"] == 1 and t["dp_mode"] == "zero" and t["micro_batch"] == 1, t
assert t["global_batch"] == 16 and d["config"]["model"]["attention"] == "causal"
assert d["config"]["parallelism"]["tp"] == 8
assert all(k in d["cross_node_bytes_mean"] for k in ("tp", "cp", "ep", "pp", "dp"))
' && ok || note "--json does not parse, add up or echo the configuration"
"$bin" run "${llama[@]}" | grep -q "^recipe  .*schedule=1f1b.*recompute=selective" \
  && ok || note "text report names the recipe"

"$bin" run "${llama[@]}" --trace "$tmp/t.json" --trace-ranks 0-7,8 >/dev/null \
  && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
xs = [e for e in ev if e["ph"] == "X"]
assert xs and all(k in e for e in xs for k in ("name", "ts", "dur", "pid", "tid"))
assert all(e["dur"] >= 0 for e in xs)
assert any(e["ph"] == "C" for e in ev) and any(e["ph"] == "M" for e in ev)
tids = {e["tid"] // 6 for e in xs}
assert tids == set(range(9)), tids
' "$tmp/t.json" && ok || note "--trace is not a valid trace with X slices"

pl=$("$bin" run "${llama[@]}" --placement) || note "--placement failed"
[ "$(grep -c '^[0-9]' <<<"$pl")" -eq 64 ] && grep -q "node7/gpu7" <<<"$pl" && ok \
  || note "--placement does not list 64 ranks"

refuse() { # refuse EXPECTED_MSG ARGS...
  local msg=$1
  shift
  local err st
  err=$("$bin" run "$@" 2>&1 >/dev/null)
  st=$?
  if [ $st -ne 65 ]; then note "run $*: exit $st, want 65"; return; fi
  [ "$(wc -l <<<"$err")" -eq 1 ] && grep -qF -- "$msg" <<<"$err" && ok \
    || note "run $*: want one line with '$msg', got: $err"
}
refuse "tp*cp*pp*dp = 8*1*4*4 = 128" "${llama[@]}" --tp 8 --pp 4 --dp 4
refuse "heads" "${llama[@]}" --tp 3 --pp 1 --dp 21 --set gpus=63
refuse "needs" "${llama[@]}" --global-batch 64 --tp 1 --pp 1 --dp 64 --set distributed_optimizer=false

err=$("$bin" run "${llama[@]}" --schedule sideways 2>&1 >/dev/null)
[ $? -eq 65 ] && ok || note "bad schedule value: $err"
err=$("$bin" run "${llama[@]}" --fidelity fluid 2>&1 >/dev/null)
[ $? -eq 64 ] && grep -q "fidelity must be" <<<"$err" && ok || note "bad fidelity: $err"

# The progress line lives on stderr only: stdout is the same with it forced
# on or off, --quiet prints nothing, and --exact gives the same report as
# the exact shortcuts alone (--bounded=none; the default adds bounded ones,
# tests/cli_bounded.sh; docs/performance.md).
a=$("$bin" run "${llama[@]}" --progress 2>/dev/null)
b=$("$bin" run "${llama[@]}" --quiet 2>"$tmp/quiet.err")
[ "$a" = "$b" ] && [ ! -s "$tmp/quiet.err" ] && ok || note "--progress/--quiet changed stdout or --quiet printed"
c=$("$bin" run "${llama[@]}" --exact --quiet)
n=$("$bin" run "${llama[@]}" --bounded=none --quiet)
[ "$n" = "$c" ] && ok || note "--exact differs from --bounded=none"
# --alpha 0us shortens the step: every collective step loses its latency.
t0=$("$bin" run "${llama[@]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_s"])')
t1=$("$bin" run "${llama[@]}" --alpha 0us --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_s"])')
python3 -c "import sys; sys.exit(0 if $t1 < $t0 else 1)" && ok || note "--alpha 0us: $t1 not below $t0"

# --placement --json is the text table's twin: tiny-dense is TP 8 x PP 2 x
# DP 10 = 160 ranks; rank 9 is the second GPU of the second host, index 1
# of TP group 1 (TP is innermost), on rail 1.
tiny=("$src/tests/data/workloads/tiny-dense.yaml" --topology "$src/topologies/superpod-a100-1su.yaml")
"$bin" run "${tiny[@]}" --placement --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d[9]
assert len(d) == 160, len(d)
assert (r["gpu"], r["host"], r["rail"], r["tp"]) == ("dgx1/gpu1", 1, 1, {"group": 1, "index": 1}), r
' && ok || note "--placement --json"

lib_summary
