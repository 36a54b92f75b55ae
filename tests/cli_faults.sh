#!/usr/bin/env bash
# cli_faults.sh BIN SRCDIR [SANITIZED] - what-if faults end to end, each
# against a closed form on the 1-SU DGX A100 SuperPOD (20 nodes, 8 rails,
# one leaf per rail, NIC rate B = 24 GB/s effective, shift:8 = every GPU to
# its rail peer on the next node: one 1 GiB flow per NIC, uncontended).
set -u
bin=$1
src=$2
fail=0
pass=0
note() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { pass=$((pass + 1)); }
topo=$src/topologies/superpod-a100-1su.yaml
tiny=$src/tests/data/workloads/tiny-dense.yaml
fdir=$src/tests/data/faults

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

# 6. A leaf failing mid-step: slower than healthy, no slower than failed
#    from the start (the DP all-reduces after it reroute through NIC 1).
st() { rj "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_s"])'; }
s0=$(st); s1=$(st --fail compute/leaf-su0-r0); s2=$(st --fail-at 5ms:compute/leaf-su0-r0)
python3 -c "import sys; a,b,c=map(float,sys.argv[1:]); sys.exit(not (a < c <= b * 1.0001))" \
  "$s0" "$s1" "$s2" && ok || note "--fail-at mid-step: healthy $s0, failed $s1, at 5ms $s2"

# 7. Bad input: one message, the right exit status.
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
cut=()
for n in 0 1 2 3 4 5 6 7; do cut+=(--fail dgx0/compute$n); done
want 65 "'dgx0/gpu[0-7]' is cut off from the fabric" bench "$topo" --pattern shift:8 "${cut[@]}"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
