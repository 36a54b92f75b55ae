#!/usr/bin/env bash
# cli_faults_plan.sh BIN SRCDIR [SANITIZED] - what-if faults in `topsim
# plan --what-if` and `topsim sweep` (section 7 of the fault tests;
# cli_faults.sh has the network closed forms, cli_faults_run.sh `run`).
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
topo=$src/topologies/superpod-a100-1su.yaml
tiny=$src/tests/data/workloads/tiny-dense.yaml
fdir=$src/tests/data/faults
lib_tmp

# 7. plan --what-if on a 40-node (2-SU, 2-tier) A100 SuperPOD: the healthy
#    row is the step `plan --sus 2..2 --workload` predicts; the leaf and
#    spine rows carry exactly the planner's counted failure figures; a
#    failed leaf or node cable slows the step (GPU 0's rail shares NIC 1, and
#    the DP ring runs at its slowest link), a spine costs no more than that.
plan=(plan --preset a100-superpod --nodes 40 --workload "$tiny")
wi=$("$bin" "${plan[@]}" --what-if --json) || note "plan --what-if failed"
counted=$("$bin" plan --preset a100-superpod --nodes 40 --json)
sweep=$("$bin" plan --preset a100-superpod --sus 2..2 --workload "$tiny" | tail -1)
python3 -c '
import json, sys
w = json.loads(sys.argv[1])["what_if"]; c = json.loads(sys.argv[2])["failure"]
assert [r["fails"] for r in w] == ["none", "leaf", "spine", "cable"], w
healthy = float(sys.argv[3].split()[3])
assert abs(w[0]["step_time_s"] - healthy) < 5e-5, (w[0], healthy)
for r in w[1:3]:
    k = c[r["fails"]]
    assert r["counted"]["gpus_slowed"] == k["gpus_slowed"], (r, k)
    assert r["counted"]["bisection_after_Bps"] == k["bisection_after"], (r, k)
assert w[1]["slowdown"] > 1.05 and w[3]["slowdown"] > 1.05, w
assert 1.0 <= w[2]["slowdown"] <= w[1]["slowdown"], w
' "$wi" "$counted" "$sweep" && ok || note "plan --what-if: $wi"
"$bin" "${plan[@]}" --what-if | grep -q "^leaf   compute/leaf-su0-r0 .* 20 .*%$" \
  && ok || note "plan --what-if text"

# 7a. --what-if under the user's faults: every case adds its failure to a
#    GPU 1.5x slow, so every row is slower than the healthy what-if's, and
#    the first row is the step `plan --sus 2..2 --workload` predicts with
#    the same straggler (both --json, to the printed digit).
ws=$("$bin" "${plan[@]}" --what-if --json --straggler 5=1.5) || note "plan --what-if --straggler"
ss=$("$bin" plan --preset a100-superpod --sus 2..2 --workload "$tiny" --json --straggler 5=1.5)
python3 -c '
import json, sys
s, h = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert s["faults_given"] == 1 and h["faults_given"] == 0, (s, h)
ws, wh = s["what_if"], h["what_if"]
assert [r["fails"] for r in ws] == [r["fails"] for r in wh]
assert all(a["step_time_s"] > b["step_time_s"] for a, b in zip(ws, wh)), (ws, wh)
sus = json.loads(sys.argv[3])[0]["step"]["step_s"]
assert abs(ws[0]["step_time_s"] - sus) <= 1e-11 * sus, (ws[0], sus)
' "$ws" "$wi" "$ss" && ok || note "plan --what-if --straggler: $ws"
"$bin" "${plan[@]}" --what-if --straggler 5=1.5 | grep -q "on top of the 1 fault given" \
  && ok || note "plan --what-if --straggler text"

# 7b. sweep takes the same faults: a GPU 1.5x slow lowers every mapping's
#    tokens/s (pp 1, 2, 4 of the tiny model on the SU), none gets faster.
sw() { "$bin" sweep "$tiny" --topology "$topo" --vary pp --jobs 1 --quiet --csv "$1" "${@:2}" >/dev/null; }
sw "$tmp/h.csv" && sw "$tmp/s.csv" --straggler dgx3/gpu5=1.5 && python3 -c '
import csv, sys
def rows(p): return {(r["tp"], r["pp"], r["dp"]): float(r["tokens_per_s"]) for r in csv.DictReader(open(p))}
h, s = rows(sys.argv[1]), rows(sys.argv[2])
assert h.keys() == s.keys() and len(h) >= 2, (h, s)
assert all(s[k] < h[k] for k in h), (h, s)
' "$tmp/h.csv" "$tmp/s.csv" && ok || note "sweep --straggler"

lib_summary
