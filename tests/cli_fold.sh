#!/usr/bin/env bash
# cli_fold.sh BIN SRCDIR [SANITIZED] - `topsim run` folds the members of TP
# groups onto one simulated rank when their traffic is provably symmetric
# (exec_step_fold.c): the text report and the JSON (bar its `counters`,
# which count the simulator's own work) are byte-identical to --exact
# with the exact shortcuts alone (--bounded=none: the default adds bounded
# ones, tests/cli_bounded.sh),
# `counters.ranks_simulated` and `counters.fold` say the fold happened (8
# of 64), and a straggler on one TP member refuses it (64 of 64, the
# reason named), still identical.
set -u
bin=$1
. "$(dirname "$0")/lib.sh"
lib_tmp

# Eight DGX A100 in two SUs, rail leaves 4 down + 1 up (4:1) to one spine:
# no ECMP choice, so rail k carries an image of rail 0's traffic.
cat >"$tmp/fab.yaml" <<'YAML'
topsim: 1
name: fold
gpu_models:
  A100: {bf16: 312TFLOP/s, hbm: 80GB, hbm_bandwidth: 2039GB/s}
planes:
  - name: compute
    kind: backend
    technology: ib_hdr
    generator:
      type: rail_optimized
      tiers: 2
      leaf: {radix: 5, down: 4, up: 1}
      spine: {radix: 40}
templates:
  dgx:
    gpu_model: A100
    cpus: 2
    cpu_link: {type: xgmi, bandwidth: 64GB/s, latency: 200ns}
    pcie_switches: {count: 4, attach: [cpu0, cpu1], gen: 4, width: 16}
    gpus: {count: 8, attach: [pcie0, pcie1, pcie2, pcie3], gen: 4, width: 16}
    nvlink: {link_bandwidth: 25GB/s, efficiency: 0.8, switches: 6, links_per_switch: 2, switch_radix: 36}
    nics:
      - {plane: compute, count: 8, attach: [pcie0, pcie1, pcie2, pcie3], speed: 200Gb/s}
nodes:
  - {name: dgx, template: dgx, count: 8, per_rack: 4, per_su: 4}
YAML
cat >"$tmp/work.yaml" <<'YAML'
topsim: 1
name: dense
model: {layers: 4, hidden: 2048, heads: 16, seq_len: 1024, vocab: 128}
training: {global_batch: 32, micro_batch: 1, schedule: 1f1b}
parallelism: {tp: 8, pp: 2, dp: 4, order: tp-cp-pp-dp}
YAML
run=("$bin" run "$tmp/work.yaml" --topology "$tmp/fab.yaml" --quiet --bounded=none)

# same_json A B SIM_A: equal apart from counters; A simulated SIM_A ranks.
same_json() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ca, cb = a.pop("counters"), b.pop("counters")
assert a == b, "JSON differs from --exact"
assert ca["ranks_simulated"] == int(sys.argv[3]), ca["ranks_simulated"]
assert cb["ranks_simulated"] == 64, cb["ranks_simulated"]
assert ca["events"] < cb["events"], (ca["events"], cb["events"])
want = "on: 8 of 64" if sys.argv[3] == "8" else "refused: rank 3 runs another program or straggler"
assert ca["fold"].startswith(want), ca["fold"]
assert cb["fold"] == "off: --exact", cb["fold"]
PY
}

for extra in "" "--straggler 3=1.5"; do
  sim=8
  [ -n "$extra" ] && sim=64
  # shellcheck disable=SC2086
  "${run[@]}" $extra --json >"$tmp/a.json" && "${run[@]}" $extra --exact --json >"$tmp/b.json" \
    && same_json "$tmp/a.json" "$tmp/b.json" $sim && ok || note "json ($extra)"
  # shellcheck disable=SC2086
  a=$("${run[@]}" $extra) && b=$("${run[@]}" $extra --exact) && [ "$a" = "$b" ] && ok \
    || note "text report differs from --exact ($extra)"
done

# Leaves 4 down + 4 up to two spines: an ECMP choice at every leaf. With
# hashed ECMP rail k picks its spines by its own GPU ids and the proof
# refuses (naming the uplink); with `routing: dmodk` the uplink is a digit
# of the destination's position in its rail, the same for every rail, so
# the fold holds (8 of 64) and the reports are still byte-identical.
for r in ecmp_hash dmodk; do
  sed -e 's/leaf: {radix: 5, down: 4, up: 1}/leaf: {radix: 8, down: 4, up: 4}/' \
    -e "s/    technology: ib_hdr/    technology: ib_hdr\n    routing: $r/" \
    "$tmp/fab.yaml" >"$tmp/fab-$r.yaml"
  run2=("$bin" run "$tmp/work.yaml" --topology "$tmp/fab-$r.yaml" --quiet --json --bounded=none)
  "${run2[@]}" >"$tmp/a.json" && "${run2[@]}" --exact >"$tmp/b.json" || note "run ($r)"
  python3 - "$tmp/a.json" "$tmp/b.json" "$r" <<'PY' && ok || note "fold with routing $r"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ca, cb = a.pop("counters"), b.pop("counters")
assert a == b, "JSON differs from --exact"
if sys.argv[3] == "dmodk":
    assert ca["ranks_simulated"] == 8 and ca["fold"].startswith("on: 8 of 64"), ca
else:
    assert ca["ranks_simulated"] == 64 and "(ECMP)" in ca["fold"], ca
PY
done
# The same override from the command line folds the hashed fabric too.
"$bin" run "$tmp/work.yaml" --topology "$tmp/fab-ecmp_hash.yaml" --quiet --json \
  --routing dmodk | grep -q '"ranks_simulated": *8' && ok || note "--routing dmodk"
"$bin" run "$tmp/work.yaml" --topology "$tmp/fab.yaml" --routing bogus >/dev/null 2>&1
[ $? -eq 64 ] && ok || note "--routing bogus is a usage error (64)"

# TP 4 with DP next to TP (the GPT-3 example's shape): each host holds the
# TP groups of two adjacent DP replicas, whose DP ring hop (GPU k -> k+4)
# crosses both groups' NVLinks, so no TP group owns its links. The fold
# runs member 0's share of each TP plan on one representative direction
# per orbit of the TP rotation ("TP groups live", 16 of 64 simulated) and
# replays TP instances in quiet windows; the text report and the JSON bar
# its counters are byte-identical to --exact, and fewer events run.
sed 's/tp: 8, pp: 2, dp: 4, order: tp-cp-pp-dp/tp: 4, pp: 2, dp: 8, order: tp-cp-dp-pp/' \
  "$tmp/work.yaml" >"$tmp/work4.yaml"
run4=("$bin" run "$tmp/work4.yaml" --topology "$tmp/fab.yaml" --quiet --bounded=none)
"${run4[@]}" --json >"$tmp/a.json" && "${run4[@]}" --json --exact >"$tmp/b.json" \
  || note "run (tp 4)"
python3 - "$tmp/a.json" "$tmp/b.json" <<'PY' && ok || note "tp 4: live fold"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ca, cb = a.pop("counters"), b.pop("counters")
assert a == b, "JSON differs from --exact"
assert ca["ranks_simulated"] == 16, ca
assert ca["fold"] == "on: 16 of 64 ranks simulated, TP groups live", ca["fold"]
assert ca["events"] * 10 < cb["events"], (ca["events"], cb["events"])
PY
a=$("${run4[@]}") && b=$("${run4[@]}" --exact) && [ "$a" = "$b" ] && ok \
  || note "tp 4: text report differs from --exact"
"${run4[@]}" --stats | grep -q '^  fold: on: 16 of 64 ranks simulated, TP groups live$' \
  && ok || note "tp 4: --stats fold line"

lib_summary
