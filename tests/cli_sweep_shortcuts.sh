#!/usr/bin/env bash
# cli_sweep_shortcuts.sh BIN SRCDIR [SANITIZED] - `topsim sweep` takes the
# step options of `topsim run` (--exact, --bounded[=LIST]; docs/model.md
# "Bounded shortcuts") and passes them to the step of every mapping.
# The case: the tiny model at tp 4 over 64 GPUs of the 4:1 fabric, pp 1..8,
# ZeRO 2 with 4 MB gradient buckets, so the DP reduce-scatters contend on
# the oversubscribed leaves and the shortcuts move the step:
#  - every row of --exact is `topsim run --exact` of that mapping, and every
#    row of the default (batch) and of --bounded is `topsim run` of that
#    mapping with the same options, to the picosecond (checked on the rows
#    where the options change the step, which must exist: else the options
#    could be dropped unseen);
#  - --bounded=none gives the rows of --exact (the exact shortcuts keep the
#    step to the picosecond); the default stays within 1% of --exact;
#  - --bounded=bogus exits 64 naming sweep; --help lists both options and
#    says --bounded is not the row status "bounded".
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
lib_tmp
W=$src/tests/data/workloads/tiny-dense.yaml
T=$src/topologies/cluster-2tier-4to1.yaml
sets=(--set global_batch=16 --set zero_stage=2 --set dp_bucket_size=4MB)
sw=("$bin" sweep "$W" --topology "$T" --gpus 64 --vary pp --fix tp=4
    "${sets[@]}" --quiet --jobs 2)

"${sw[@]}" --exhaustive --json --exact >"$tmp/e.json" || note "sweep --exact"
"${sw[@]}" --exhaustive --json --bounded=none >"$tmp/n.json" || note "sweep --bounded=none"
"${sw[@]}" --exhaustive --json >"$tmp/d.json" || note "sweep (default)"
"${sw[@]}" --exhaustive --json --bounded >"$tmp/b.json" || note "sweep --bounded"

# Prints "OPTION tp cp pp vp dp ep mb schedule recompute zero dopt order
# step_ps" for each row to check against `topsim run` (OPTION "default":
# none).
python3 - "$tmp/e.json" "$tmp/n.json" "$tmp/d.json" "$tmp/b.json" >"$tmp/check" <<'PY' && ok || note "sweep rows against each other"
import json, sys
e, n, d, b = ({(r["tp"], r["pp"]): r for r in json.load(open(p))["sweeps"][0]["rows"]}
              for p in sys.argv[1:5])
assert len(e) >= 3 and e.keys() == n.keys() == d.keys() == b.keys(), e.keys()
assert all(r["status"] == "ok" for r in e.values())
ps = lambda r: round(r["step_time_s"] * 1e12)
for k in e:  # none: only the exact shortcuts, the very rows of --exact
    assert ps(n[k]) == ps(e[k]) and n[k]["exposed_s"] == e[k]["exposed_s"], k
    assert abs(ps(d[k]) - ps(e[k])) <= 0.01 * ps(e[k]), (k, ps(d[k]), ps(e[k]))
moved = [k for k in sorted(e) if ps(d[k]) != ps(e[k])]
moved_b = [k for k in sorted(e) if ps(b[k]) != ps(d[k])]
assert moved and moved_b, (moved, moved_b)  # the options reach the step
def line(opt, r):
    keys = ("tp", "cp", "pp", "virtual_stages", "dp", "ep", "micro_batch",
            "schedule", "recompute", "zero_stage")
    print(opt, *(r[x] for x in keys),
          str(r["distributed_optimizer"]).lower(), r["order"], ps(r))
for k in sorted(e):
    line("--exact", e[k])
for k in moved:
    line("default", d[k])
for k in moved_b[:2]:
    line("--bounded", b[k])
PY
while read -r opt tp cp pp vp dp ep mb sch rec zero dopt order want; do
  [ "$opt" = default ] && opt=
  got=$("$bin" run "$W" --topology "$T" "${sets[@]}" --set gpus=64 --tp "$tp" \
        --cp "$cp" --pp "$pp" --virtual-stages "$vp" --dp "$dp" --ep "$ep" \
        --micro-batch "$mb" --schedule "$sch" --recompute "$rec" --zero "$zero" \
        --set distributed_optimizer="$dopt" --set order="$order" \
        --quiet --json $opt | jq '.step_time_s * 1e12 | round')
  [ "$got" = "$want" ] && ok || note "run ${opt:-(default)} tp $tp pp $pp: $got ps, sweep $want ps"
done <"$tmp/check"
[ "$(grep -c -- --exact "$tmp/check")" -ge 3 ] && ok || note "too few rows checked"

"${sw[@]}" --bounded=steady,bogus >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 64 ] && grep -q "^topsim sweep: --bounded takes batch, compact" "$tmp/err" \
  && ok || note "--bounded=bogus: exit $rc, $(cat "$tmp/err")"
"$bin" sweep --help >"$tmp/help"
grep -q -- "--exact " "$tmp/help" && grep -q -- "--bounded\[=LIST\]" "$tmp/help" \
  && grep -q 'not the row status "bounded"' "$tmp/help" && ok \
  || note "sweep --help lacks --exact / --bounded"
lib_summary
