#!/usr/bin/env bash
# cli_fold.sh BIN SRCDIR [SANITIZED] - `topsim run` folds the members of TP
# groups onto one simulated rank when their traffic is provably symmetric
# (exec_step_fold.c): the text report and the JSON (bar its `counters`,
# which count the simulator's own work) are byte-identical to --exact,
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
run=("$bin" run "$tmp/work.yaml" --topology "$tmp/fab.yaml" --quiet)

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

lib_summary
