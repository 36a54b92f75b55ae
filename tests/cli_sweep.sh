#!/usr/bin/env bash
# cli_sweep.sh BIN SRCDIR [SANITIZED] - drives `topsim sweep` on the small
# tiny-dense workload over 16 GPUs of a DGX A100 SU: the same bytes for
# --jobs 1, 2 and 3 (table, JSON, CSV), a worker killed mid-task reported in
# its row, JSON that adds up (valid + pruned = candidates, one row per valid
# mapping). cli_sweep_sanity.sh has the sanity results docs/cli.md shows,
# --topologies side by side, --dry-run and the refusals: two ctest entries,
# each within the per-test time budget.
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

# Byte-identical output for any number of workers.
"$bin" sweep "${small[@]}" "${fast[@]}" --jobs 1 --csv "$tmp/1.csv" >"$tmp/1.txt" || note "jobs 1 failed"
"$bin" sweep "${small[@]}" "${fast[@]}" --jobs 2 --csv "$tmp/2.csv" >"$tmp/2.txt" || note "jobs 2 failed"
"$bin" sweep "${small[@]}" "${fast[@]}" --jobs 3 --json >"$tmp/3.json" || note "jobs 3 failed"
"$bin" sweep "${small[@]}" "${fast[@]}" --jobs 1 --json >"$tmp/1.json" || note "jobs 1 json failed"
cmp -s "$tmp/1.txt" "$tmp/2.txt" && cmp -s "$tmp/1.csv" "$tmp/2.csv" \
  && cmp -s "$tmp/1.json" "$tmp/3.json" && ok || note "output depends on --jobs"

# A worker killed mid-task: its mapping fails in its row, the sweep goes
# on, and the bytes still do not depend on the number of workers.
TOPSIM_SWEEP_KILL_TASK=3 "$bin" sweep "${small[@]}" "${fast[@]}" --jobs 2 --json --exhaustive >"$tmp/k2.json" \
  && TOPSIM_SWEEP_KILL_TASK=3 "$bin" sweep "${small[@]}" "${fast[@]}" --jobs 3 --json --exhaustive >"$tmp/k3.json" \
  && cmp -s "$tmp/k2.json" "$tmp/k3.json" && python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["sweeps"][0]
bad = [r for r in s["rows"] if r["status"] != "ok"]
assert len(bad) == 1 and "signal 9" in bad[0]["error"], bad
assert s["simulated"] == 11 and s["failed"] == 1
' "$tmp/k2.json" && ok || note "a killed worker is not reported in its row"

# Counts add up; every valid mapping has a row; ranked by tokens/s.
"$bin" sweep "${small[@]}" "${fast[@]}" --jobs 2 --json --exhaustive >"$tmp/x.json" || note "exhaustive json failed"
python3 - "$tmp/x.json" <<'EOF' && ok || note "JSON does not add up"
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

# Bound-ordered against --exhaustive (issue 10): 267 mappings varying
# recompute and ZeRO too. The default run simulates in increasing order of
# a lower bound on the step time and stops when no bound can reach the
# table: the same top 10 bytes as simulating all of them, whatever --jobs;
# every row it simulated has the exhaustive run's numbers, every row it
# left has status bounded and a bound above the 10th best step (and every
# bound is below its exhaustive step time), and fewer than half were
# simulated.
big=("$W" --topology "$T" --gpus 16 --vary tp,pp,vp,schedule,recompute,zero
     --set global_batch=8 --quiet)
"$bin" sweep "${big[@]}" --jobs 2 --exhaustive --csv "$tmp/bx.csv" >"$tmp/bx.txt" || note "exhaustive failed"
"$bin" sweep "${big[@]}" --jobs 1 --csv "$tmp/b1.csv" >"$tmp/b1.txt" || note "bounded jobs 1 failed"
"$bin" sweep "${big[@]}" --jobs 2 --csv "$tmp/b2.csv" >"$tmp/b2.txt" || note "bounded jobs 2 failed"
cmp -s "$tmp/b1.txt" "$tmp/b2.txt" && cmp -s "$tmp/b1.csv" "$tmp/b2.csv" && ok \
  || note "bound-ordered output depends on --jobs"
cmp -s <(head -n 12 "$tmp/bx.txt") <(head -n 12 "$tmp/b1.txt") && ok \
  || note "top 10 differs from --exhaustive: $(diff <(head -n 12 "$tmp/bx.txt") <(head -n 12 "$tmp/b1.txt"))"
python3 - "$tmp/bx.csv" "$tmp/b1.csv" <<'EOF' && ok || note "bounded rows do not match the exhaustive run"
import csv, sys
key = lambda r: tuple(r[k] for k in ("tp", "cp", "pp", "virtual_stages", "dp",
                      "micro_batch", "schedule", "recompute", "zero_stage", "order"))
ex = {key(r): r for r in csv.DictReader(open(sys.argv[1]))}
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == len(ex) == 267, (len(rows), len(ex))
sim = [r for r in rows if r["status"] == "ok"]
bnd = [r for r in rows if r["status"] == "bounded"]
assert len(sim) + len(bnd) == 267 and 10 <= len(sim) < 267 / 2, (len(sim), len(bnd))
for r in sim:
    assert r["step_s"] == ex[key(r)]["step_s"], (key(r), r["step_s"], ex[key(r)]["step_s"])
tenth = sorted(float(r["step_s"]) for r in sim)[9]
for r in rows:
    b, x = float(r["step_lower_bound_s"]), float(ex[key(r)]["step_s"])
    assert 0 < b <= x, (key(r), b, x)
for r in bnd:
    assert float(r["step_lower_bound_s"]) > tenth, (key(r), r["step_lower_bound_s"], tenth)
EOF

# The early stop (docs/cli.md): a mapping simulated once the table has
# its top rows runs only until the top-th best step; one still busy then
# is bounded with that horizon as its bound (checked above against the
# exhaustive steps). Without it (test hook TOPSIM_SWEEP_NO_HORIZON) the
# same mappings are simulated to the end: the same top 10, more rows with
# a step time, and every row both simulated with the same step.
TOPSIM_SWEEP_NO_HORIZON=1 "$bin" sweep "${big[@]}" --jobs 2 --csv "$tmp/bh.csv" >"$tmp/bh.txt" \
  || note "bounded without the early stop failed"
cmp -s <(head -n 12 "$tmp/bx.txt") <(head -n 12 "$tmp/bh.txt") && ok \
  || note "top 10 without the early stop differs from --exhaustive"
python3 - "$tmp/b1.csv" "$tmp/bh.csv" <<'EOF' && ok || note "the early stop stops no simulation"
import csv, sys
key = lambda r: tuple(r[k] for k in ("tp", "cp", "pp", "virtual_stages", "dp",
                      "micro_batch", "schedule", "recompute", "zero_stage", "order"))
stop = {key(r): r for r in csv.DictReader(open(sys.argv[1]))}
full = {key(r): r for r in csv.DictReader(open(sys.argv[2]))}
ok = lambda d: {k for k, r in d.items() if r["status"] == "ok"}
assert ok(stop) < ok(full), (len(ok(stop)), len(ok(full)))
for k in ok(stop):
    assert stop[k]["step_s"] == full[k]["step_s"], k
for k in ok(full) - ok(stop):
    assert stop[k]["status"] == "bounded", k
    assert float(stop[k]["step_lower_bound_s"]) < float(full[k]["step_s"]), k
EOF

# A bound term that decides part of the cut: without it (its test hook
# set) the same top 10 as --exhaustive costs more simulations (both runs
# without the early stop, which would bound what they simulate).
# Usage: term_decides HOOK NAME OUT
term_decides() {
  env "$1=1" TOPSIM_SWEEP_NO_HORIZON=1 "$bin" sweep "${big[@]}" --jobs 2 \
    --csv "$tmp/$3.csv" >"$tmp/$3.txt" || note "bounded without $2 failed"
  cmp -s <(head -n 12 "$tmp/bx.txt") <(head -n 12 "$tmp/$3.txt") && ok \
    || note "top 10 without $2 differs from --exhaustive"
  python3 - "$tmp/bh.csv" "$tmp/$3.csv" <<'EOF' && ok || note "$2 decides no mapping"
import csv, sys
sim = lambda f: sum(r["status"] == "ok" for r in csv.DictReader(open(f)))
with_term, without = sim(sys.argv[1]), sim(sys.argv[2])
assert with_term < without, (with_term, without)
EOF
}

# The host term (docs/model.md "Step lower bound": ZeRO 3 weight
# all-gathers over a gradient group that spans hosts cross the host's NICs).
term_decides TOPSIM_SWEEP_NO_HOST_BOUND "the host term" bn
# The host fluid terms of the program replay (docs/model.md "Host fluid":
# the bytes a TP group's or a host's instances must push through the
# host's links, in release-date order; 56 against 67 simulations when this
# was written, 36 against 43 with the TP egress term).
term_decides TOPSIM_SWEEP_NO_FLUID "the host fluid" bf
# The TP egress term (docs/model.md "TP egress": a TP group inside one host
# pushes 2 (p-1)/p S per member and all-reduce out through each member's
# NVLinks, 240 GB/s on an A100, after NCCL's least startup latency; 36
# against 63 simulations when this was written).
term_decides TOPSIM_SWEEP_NO_TP_EGRESS "the TP egress term" bt

lib_summary
