#!/usr/bin/env bash
# cli_sweep.sh BIN SRCDIR [SANITIZED] - drives `topsim sweep` on the small
# tiny-dense workload over 16 GPUs of a DGX A100 SU: the same bytes for
# --jobs 1 and --jobs 2 (table, JSON, CSV), JSON that adds up (valid +
# pruned = candidates, one row per valid mapping), the sanity results
# docs/cli.md shows (best mapping keeps TP in a node; interleaving helps
# when the bubble is large), a worker killed mid-task reported in its row,
# --topologies side by side, and refusals (exit 64/65, one message).
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
lib_tmp
W=$src/tests/data/workloads/tiny-dense.yaml
T=$src/topologies/superpod-a100-1su.yaml
small=("$W" --topology "$T" --gpus 16 --vary tp,pp --quiet)

# Byte-identical output for any number of workers.
"$bin" sweep "${small[@]}" --jobs 1 --csv "$tmp/1.csv" >"$tmp/1.txt" || note "jobs 1 failed"
"$bin" sweep "${small[@]}" --jobs 2 --csv "$tmp/2.csv" >"$tmp/2.txt" || note "jobs 2 failed"
"$bin" sweep "${small[@]}" --jobs 3 --json >"$tmp/3.json" || note "jobs 3 failed"
"$bin" sweep "${small[@]}" --jobs 1 --json --top 3 >"$tmp/1.json" || note "jobs 1 json failed"
cmp -s "$tmp/1.txt" "$tmp/2.txt" && cmp -s "$tmp/1.csv" "$tmp/2.csv" \
  && cmp -s "$tmp/1.json" "$tmp/3.json" && ok || note "output depends on --jobs"

# A worker killed mid-task: its mapping fails in its row, the sweep goes
# on, and the bytes still do not depend on the number of workers.
TOPSIM_SWEEP_KILL_TASK=3 "$bin" sweep "${small[@]}" --jobs 2 --json >"$tmp/k2.json" \
  && TOPSIM_SWEEP_KILL_TASK=3 "$bin" sweep "${small[@]}" --jobs 3 --json >"$tmp/k3.json" \
  && cmp -s "$tmp/k2.json" "$tmp/k3.json" && python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["sweeps"][0]
bad = [r for r in s["rows"] if r["status"] != "ok"]
assert len(bad) == 1 and "signal 9" in bad[0]["error"], bad
assert s["simulated"] == 11 and s["failed"] == 1
' "$tmp/k2.json" && ok || note "a killed worker is not reported in its row"

# Counts add up; every valid mapping has a row; ranked by tokens/s.
python3 - "$tmp/1.json" <<'EOF' && ok || note "JSON does not add up"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["sweeps"][0]
assert s["gpus"] == 16
assert s["valid"] + sum(s["pruned"].values()) == s["candidates"], s
assert len(s["rows"]) == s["valid"] == s["simulated"] == 12, s["valid"]
keys = {"tp", "cp", "pp", "virtual_stages", "dp", "ep", "micro_batch",
        "schedule", "recompute", "zero_stage", "distributed_optimizer", "order"}
for r in s["rows"]:
    assert keys <= r.keys()
    assert r["tp"] * r["cp"] * r["pp"] * r["dp"] == 16
    assert r["status"] == "ok" and r["error"] is None
    b = r["compute_s"] + sum(r["exposed_s"].values()) + r["bubble_s"]
    assert b <= r["step_time_s"] * (1 + 1e-9), (b, r["step_time_s"])
t = [r["tokens_per_s"] for r in s["rows"]]
assert t == sorted(t, reverse=True)
assert any(r["pareto"] for r in s["rows"])
EOF

# Sanity 1: with cross-node TP allowed (tp 16 spans two DGX nodes), the
# best mapping still keeps TP inside a node.
"$bin" sweep "$W" --topology "$T" --gpus 16 --vary tp,pp --allow-cross-node-tp \
  --quiet --json | python3 -c '
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
  --vary schedule,vp --set global_batch=4 --quiet --json | python3 -c '
import json, sys
rows = json.load(sys.stdin)["sweeps"][0]["rows"]
by = {(r["schedule"], r["virtual_stages"]): r for r in rows}
a, b = by[("1f1b", 1)], by[("interleaved", 2)]
assert b["tokens_per_s"] > a["tokens_per_s"] * 1.05, (a["tokens_per_s"], b["tokens_per_s"])
assert b["bubble_s"] < a["bubble_s"], (a["bubble_s"], b["bubble_s"])
' && ok || note "interleaving does not help with a large bubble"

# Several topologies side by side: one best row each.
out=$("$bin" sweep "$W" --topologies "$T,$src/topologies/cluster-2tier-4to1.yaml" \
  --gpus 16 --vary tp,pp --quiet) || note "--topologies failed"
grep -q "^best mapping per topology" <<<"$out" \
  && [ "$(grep -cE '^(superpod-a100-1su|cluster-2tier-4to1) ' <<<"$out")" -eq 2 ] && ok \
  || note "--topologies: no side-by-side table in: $out"

# --dry-run counts without simulating.
out=$("$bin" sweep "${small[@]}" --vary tp,pp,vp,schedule --dry-run) && grep -q "29 valid" <<<"$out" \
  && grep -q "nothing simulated" <<<"$out" && ok || note "--dry-run: $out"

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

echo "cli_sweep: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
