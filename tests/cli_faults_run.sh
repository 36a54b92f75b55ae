#!/usr/bin/env bash
# cli_faults_run.sh BIN SRCDIR [SANITIZED] - what-if faults in `topsim run`
# (sections 4-6 of the fault tests; cli_faults.sh has the network closed
# forms on the same 1-SU DGX A100 SuperPOD: 20 nodes, 8 rails, one leaf per
# rail), each against a closed form or a by-hand interpolation.
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
topo=$src/topologies/superpod-a100-1su.yaml
tiny=$src/tests/data/workloads/tiny-dense.yaml
fdir=$src/tests/data/faults

# 4. A straggler in `run`: TP 8 x DP 20, pp 1, free communication, so each
#    rank's step is its compute C and every rank waits for the slowest at
#    the DP reduction: T = 1.5 C (per-kernel rounding: under 1 ns), the
#    straggler is the critical rank and the others show 0.5 C as exposed DP.
rj() { "$bin" run "$tiny" --topology "$topo" --pp 1 --dp 20 "$@" --json; }
c=$(rj --free-comm | jq -r '.step_time_s')
out=$(rj --free-comm --straggler dgx3/gpu5=1.5)
python3 -c '
import json, sys
d = json.loads(sys.argv[1]); c = float(sys.argv[2])
assert abs(d["step_time_s"] - 1.5 * c) < 1e-9, (d["step_time_s"], c)
assert d["critical_gpu"] == "dgx3/gpu5", d["critical_gpu"]
r0 = d["ranks"][0]["breakdown"]
assert abs(r0["exposed_s"]["dp"] + r0["idle_s"] - 0.5 * c) < 1e-9, r0
' "$out" "$c" && ok || note "--straggler: $out"

# 5. The faults file says the same as the options, byte for byte.
a=$(rj --faults "$fdir/leaf-and-straggler.yaml")
b=$(rj --fail compute/leaf-su0-r0 --straggler dgx3/gpu5=1.5)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || note "--faults FILE differs from the options"

# 6. A leaf failing mid-step, by hand. pp 1, dp 20, no DP overlap: the
#    step is compute and TP (D, read from rank 0's breakdown) followed by
#    the DP all-reduce, the only traffic on the leaf (healthy A_h, with the
#    leaf failed from the start A_s, both measured). A failure at t_f inside
#    the all-reduce leaves (T_h - t_f) / A_h of it to run at the failed
#    pace: T(t_f) = t_f + (T_h - t_f) * A_s / A_h. Within 1% (the
#    intra-node phases of the all-reduce are not slowed, so the pace is not
#    quite uniform). A failure before D is the static failure's time up to
#    the same 1%, after T_h changes nothing.
rn() { rj --set dp_overlap=false "$@" |
  jq -r '"\(.step_time_s) \(.ranks[0].breakdown | .compute_s + .exposed_s.tp)"'; }
read -r th dd <<<"$(rn)"
read -r ts _ <<<"$(rn --fail compute/leaf-su0-r0)"
for frac in 0.25 0.5 0.75; do
  tf=$(calc "$dd + $frac * ($th - $dd)")
  read -r x _ <<<"$(rn --fail-at "$(calc "$tf * 1e6")us:compute/leaf-su0-r0")"
  want=$(calc "$tf + ($th - $tf) * ($ts - $dd) / ($th - $dd)")
  close "$x" "$want" 0.01 && ok || note "--fail-at at $frac of the all-reduce: $x s, want $want"
done
read -r x _ <<<"$(rn --fail-at 1s:compute/leaf-su0-r0)"
[ "$x" = "$th" ] && ok || note "--fail-at after the step: $x s, want $th"

lib_summary
