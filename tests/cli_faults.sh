#!/usr/bin/env bash
# cli_faults.sh BIN SRCDIR [SANITIZED] - what-if faults end to end, each
# against a closed form on the 1-SU DGX A100 SuperPOD (20 nodes, 8 rails,
# one leaf per rail, NIC rate B = 24 GB/s effective, shift:8 = every GPU to
# its rail peer on the next node: one 1 GiB flow per NIC, uncontended).
# This file: bench and topo (sections 1-3) and bad input (8);
# cli_faults_run.sh has `run` (4-6), cli_faults_plan.sh `plan --what-if` and
# sweep (7): three ctest entries, each within the per-test time budget.
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
topo=$src/topologies/superpod-a100-1su.yaml
tiny=$src/tests/data/workloads/tiny-dense.yaml
fdir=$src/tests/data/faults

# jq and awk (calc, close: tests/lib.sh), not python3, for the per-run
# numbers: one python3 start costs more than most of these runs on a
# loaded machine.
# time_us of the single row of a bench --json run
bt() { "$bin" bench "$topo" "$@" --json | jq -r '.rows[0].time_us'; }

# 1. A failed leaf (or just one NIC's cable, or the NIC): GPU 0 of each
#    affected host fails over to NIC 1 (same NUMA, nearest rail), which now
#    carries two 1 GiB flows at B/2 each: exactly twice the healthy time.
h=$(bt --pattern shift:8 -b 1G -e 1G)
for f in compute/leaf-su0-r0 dgx0/compute0--compute/leaf-su0-r0 dgx0/compute0; do
  x=$(bt --pattern shift:8 -b 1G -e 1G --fail "$f")
  close "$x" "$(calc "2 * $h")" 1e-4 && ok \
    || note "--fail $f: $x us, want 2 x $h"
done

# 2. The leaf dies at t_f = 20 ms: rail-0 flows ran alone at B until then,
#    the rest shares NIC 1 at B/2 with rail 1's flows, which had as much
#    left: T = t_f + (S - B t_f) / (B/2) = 2 S/B - t_f = 2 T_healthy - t_f.
x=$(bt --pattern shift:8 -b 1G -e 1G --fail-at 20ms:compute/leaf-su0-r0)
close "$x" "$(calc "2 * $h - 20000")" 1e-4 && ok \
  || note "--fail-at 20ms: $x us, want 2 x $h - 20000"
# A failure after the transfers ended changes nothing.
x=$(bt --pattern shift:8 -b 1G -e 1G --fail-at 1s:compute/leaf-su0-r0)
[ "$x" = "$h" ] && ok || note "--fail-at after the end: $x us, want $h"

# 3. Hierarchical all_reduce, S = 4 GiB, H = 20 hosts, L = 8 rails:
#    phase 2 (per-rail ring all-reduce of S/L over H hosts) takes
#    2 (H-1) (a + S/(L H B)); with rail 0 failed over to NIC 1, rails 0
#    and 1 share it, so the failure adds one more 2 (H-1) S/(L H B)
#    = 38 x 4 GiB / (160 x 24 GB/s) = 42.50 ms (the NVLink phases and the
#    PXN hop stay unloaded). Within 1% (phases overlap at the edges).
h4=$(bt --op all_reduce --algo hier -b 4G -e 4G)
x4=$(bt --op all_reduce --algo hier -b 4G -e 4G --fail compute/leaf-su0-r0)
close "$(calc "$x4 - $h4")" "$(calc "38 * 4 * 2^30 / (160 * 24e9) * 1e6")" 0.01 && ok \
  || note "hier all_reduce with a failed leaf: +$(calc "$x4 - $h4") us"

# 3b. A failed spine costs 1/spines of the bisection: shift:1 without PXN
#    sends every transfer across rails through the spines, sprayed over the
#    4 spines' bundles; with one spine down the 3 survivors carry it, so the
#    transfer takes 4/3 as long (bisection 1,920 -> 1,440 GB/s).
hs=$(bt --pattern shift:1 --no-pxn --routing spray -b 1G -e 1G)
xs=$(bt --pattern shift:1 --no-pxn --routing spray -b 1G -e 1G --fail compute/spine-g0-1)
close "$xs" "$(calc "$hs * 4 / 3")" 1e-4 && ok \
  || note "failed spine: $xs us, want 4/3 x $hs"

#    The summary says the same statically: `topo --fail` scales capacities.
tf=$("$bin" topo "$topo" --fail compute/spine-g0-1)
printf '%s\n' "$tf" | grep -q "^what-if: bandwidths below are after failing compute/spine-g0-1$" \
  && printf '%s\n' "$tf" | grep -q "^bisection (backend planes): 1440.0 GB/s$" \
  && printf '%s\n' "$tf" | grep -q "leaf: 8 switches.*oversubscription 1.33:1" \
  && ok || note "topo --fail spine: $tf"
"$bin" topo "$topo" --json --degrade compute/spine-g0-1=0.5 |
  jq -e '.bisection_bw_Bps == 1680e9' >/dev/null && ok || note "topo --degrade --json"

# 8. Bad input: one message, the right exit status.
want() { # STATUS TEXT ARGS...
  local st=$1 msg=$2; shift 2
  local err; err=$("$bin" "$@" 2>&1 >/dev/null); local got=$?
  [ $got -eq "$st" ] && [ "$(printf '%s\n' "$err" | grep -c .)" -le 2 ] \
    && printf '%s' "$err" | grep -q -- "$msg" && ok \
    || note "$*: exit $got (want $st), message: $err"
}
want 65 "bad-key.yaml:3:5: error: .*when" run "$tiny" --topology "$topo" --faults "$fdir/bad-key.yaml"
want 65 "bad-name.yaml:2:5: error: no node named 'compute/leaf-su9-r9'" bench "$topo" --pattern shift:8 --faults "$fdir/bad-name.yaml"
want 65 "bad-factor.yaml:3:13: error: expected a slowdown" run "$tiny" --topology "$topo" --faults "$fdir/bad-factor.yaml"
want 66 "" run "$tiny" --topology "$topo" --faults "$fdir/no-such.yaml"
want 64 "degrade takes NAME=F with a factor F with 0 < F <= 1" bench "$topo" --degrade dgx0/compute0=2
want 64 "straggler 'compute/spine-g0-0' is not a GPU" run "$tiny" --topology "$topo" --straggler compute/spine-g0-0=2
want 64 "fail-at takes TIME:NAME" bench "$topo" --fail-at soon:compute/spine-g0-0
want 64 "needs flow fidelity" bench "$topo" --fidelity chunk --pattern shift:8 --fail-at 1ms:compute/spine-g0-0
want 64 "what-if needs --workload" plan --preset a100-superpod --nodes 40 --what-if
want 64 "faults apply to --workload" plan --preset a100-superpod --nodes 40 --fail x
want 64 "stragglers and timed failures need a simulation" topo "$topo" --faults "$fdir/leaf-and-straggler.yaml"
want 64 "faults name parts of one fabric" sweep "$tiny" --topologies "$topo,$topo" --straggler 0=2
cut=()
for n in 0 1 2 3 4 5 6 7; do cut+=(--fail dgx0/compute$n); done
want 65 "'dgx0/gpu[0-7]' is cut off from the fabric" bench "$topo" --pattern shift:8 "${cut[@]}"

lib_summary
