#!/usr/bin/env bash
# cli_faults.sh BIN SRCDIR [SANITIZED] - what-if faults end to end, each
# against a closed form on the 1-SU DGX A100 SuperPOD (20 nodes, 8 rails,
# one leaf per rail, NIC rate B = 24 GB/s effective, shift:8 = every GPU to
# its rail peer on the next node: one 1 GiB flow per NIC, uncontended).
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
topo=$src/topologies/superpod-a100-1su.yaml
tiny=$src/tests/data/workloads/tiny-dense.yaml
fdir=$src/tests/data/faults
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT

# time_us of the single row of a bench --json run
bt() { "$bin" bench "$topo" "$@" --json | python3 -c \
  'import json,sys; print(json.load(sys.stdin)["rows"][0]["time_us"])'; }
# close A B REL: |A - B| <= REL * B
close() { python3 -c "import sys; a,b,r=map(float,sys.argv[1:]); sys.exit(abs(a-b) > r*b)" "$@"; }

# 1. A failed leaf (or just one NIC's cable, or the NIC): GPU 0 of each
#    affected host fails over to NIC 1 (same NUMA, nearest rail), which now
#    carries two 1 GiB flows at B/2 each: exactly twice the healthy time.
h=$(bt --pattern shift:8 -b 1G -e 1G)
for f in compute/leaf-su0-r0 dgx0/compute0--compute/leaf-su0-r0 dgx0/compute0; do
  x=$(bt --pattern shift:8 -b 1G -e 1G --fail "$f")
  close "$x" "$(python3 -c "print(2*$h)")" 1e-4 && ok \
    || note "--fail $f: $x us, want 2 x $h"
done

# 2. The leaf dies at t_f = 20 ms: rail-0 flows ran alone at B until then,
#    the rest shares NIC 1 at B/2 with rail 1's flows, which had as much
#    left: T = t_f + (S - B t_f) / (B/2) = 2 S/B - t_f = 2 T_healthy - t_f.
x=$(bt --pattern shift:8 -b 1G -e 1G --fail-at 20ms:compute/leaf-su0-r0)
close "$x" "$(python3 -c "print(2*$h - 20000)")" 1e-4 && ok \
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
close "$(python3 -c "print($x4 - $h4)")" \
  "$(python3 -c "print(38 * 4 * 2**30 / (160 * 24e9) * 1e6)")" 0.01 && ok \
  || note "hier all_reduce with a failed leaf: +$(python3 -c "print($x4-$h4)") us"

# 3b. A failed spine costs 1/spines of the bisection: shift:1 without PXN
#    sends every transfer across rails through the spines, sprayed over the
#    4 spines' bundles; with one spine down the 3 survivors carry it, so the
#    transfer takes 4/3 as long (bisection 1,920 -> 1,440 GB/s).
hs=$(bt --pattern shift:1 --no-pxn --routing spray -b 1G -e 1G)
xs=$(bt --pattern shift:1 --no-pxn --routing spray -b 1G -e 1G --fail compute/spine-g0-1)
close "$xs" "$(python3 -c "print($hs * 4 / 3)")" 1e-4 && ok \
  || note "failed spine: $xs us, want 4/3 x $hs"

#    The summary says the same statically: `topo --fail` scales capacities.
tf=$("$bin" topo "$topo" --fail compute/spine-g0-1)
printf '%s\n' "$tf" | grep -q "^what-if: bandwidths below are after failing compute/spine-g0-1$" \
  && printf '%s\n' "$tf" | grep -q "^bisection (backend planes): 1440.0 GB/s$" \
  && printf '%s\n' "$tf" | grep -q "leaf: 8 switches.*oversubscription 1.33:1" \
  && ok || note "topo --fail spine: $tf"
"$bin" topo "$topo" --json --degrade compute/spine-g0-1=0.5 | python3 -c '
import json, sys; d = json.load(sys.stdin); assert d["bisection_bw_Bps"] == 1680e9, d["bisection_bw_Bps"]' \
  && ok || note "topo --degrade --json"

# 4. A straggler in `run`: TP 8 x DP 20, pp 1, free communication, so each
#    rank's step is its compute C and every rank waits for the slowest at
#    the DP reduction: T = 1.5 C (per-kernel rounding: under 1 ns), the
#    straggler is the critical rank and the others show 0.5 C as exposed DP.
rj() { "$bin" run "$tiny" --topology "$topo" --pp 1 --dp 20 "$@" --json; }
c=$(rj --free-comm | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_s"])')
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
rn() { rj --set dp_overlap=false "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin); b = d["ranks"][0]["breakdown"]
print(d["step_time_s"], b["compute_s"] + b["exposed_s"]["tp"])'; }
read -r th dd <<<"$(rn)"
read -r ts _ <<<"$(rn --fail compute/leaf-su0-r0)"
for frac in 0.25 0.5 0.75; do
  tf=$(python3 -c "print($dd + $frac * ($th - $dd))")
  read -r x _ <<<"$(rn --fail-at "$(python3 -c "print($tf * 1e6)")us:compute/leaf-su0-r0")"
  want=$(python3 -c "print($tf + ($th - $tf) * ($ts - $dd) / ($th - $dd))")
  close "$x" "$want" 0.01 && ok || note "--fail-at at $frac of the all-reduce: $x s, want $want"
done
read -r x _ <<<"$(rn --fail-at 1s:compute/leaf-su0-r0)"
[ "$x" = "$th" ] && ok || note "--fail-at after the step: $x s, want $th"

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

# 7b. sweep takes the same faults: a GPU 1.5x slow lowers every mapping's
#    tokens/s (pp 1, 2, 4 of the tiny model on the SU), none gets faster.
sw() { "$bin" sweep "$tiny" --topology "$topo" --vary pp --jobs 1 --quiet --csv "$1" "${@:2}" >/dev/null; }
sw "$tmpd/h.csv" && sw "$tmpd/s.csv" --straggler dgx3/gpu5=1.5 && python3 -c '
import csv, sys
def rows(p): return {(r["tp"], r["pp"], r["dp"]): float(r["tokens_per_s"]) for r in csv.DictReader(open(p))}
h, s = rows(sys.argv[1]), rows(sys.argv[2])
assert h.keys() == s.keys() and len(h) >= 2, (h, s)
assert all(s[k] < h[k] for k in h), (h, s)
' "$tmpd/h.csv" "$tmpd/s.csv" && ok || note "sweep --straggler"

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
