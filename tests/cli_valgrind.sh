#!/usr/bin/env bash
# cli_valgrind.sh BIN SRCDIR [SANITIZED] - one representative command of
# every CLI command (and the error path of each loader) runs under
# valgrind memcheck with no definite or indirect leak, no invalid read or
# write and no use of uninitialised memory (valgrind exit 99). ASan finds
# most of this in the sanitized build, but only valgrind checks the plain
# binary users run, so both builds keep the paths leak-free. Curated to
# stay under a minute on a shared 2-core machine; cli_topo.sh checks a few
# more topology loads. Skipped (exit 0, with a note) when valgrind is
# missing or BIN is built with sanitizers (they cannot run together).
set -u
bin=$1
src=$(cd "$2" && pwd)
sanitized=${3:-OFF}
if [ "$sanitized" = ON ]; then
  echo "SKIP: sanitized build; valgrind cannot run an ASan binary"; exit 0
fi
if ! command -v valgrind >/dev/null; then
  echo "SKIP: valgrind not installed (scripts/test.sh installs it)"; exit 0
fi
. "$(dirname "$0")/lib.sh"
lib_tmp
vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect
    --error-exitcode=99 --log-file="$tmp/vg.log")
t=$src/topologies
d=$src/tests/data

# A baseline of one small topology with a rule and one prediction: the
# whole check path (load, metrics, rules, bench prediction, JUnit) is cheap.
cat > "$tmp/baseline.yaml" <<EOF
topsim_check: 1
rules:
  - oversubscription <= 1:1
topologies:
  - file: $t/dgx-a100.yaml
    metrics:
      gpus: 8
      hosts: 1
    bench:
      - {op: all_reduce, size: 1MiB, busbw: 1GB/s, tolerance: 1%}
EOF

# vgrun WANT_STATUS ARGS...: run topsim ARGS under valgrind; pass when the
# exit status is WANT_STATUS (so valgrind found nothing, or it would be 99).
vgrun() {
  local want=$1
  shift
  "${vg[@]}" "$bin" "$@" >/dev/null 2>"$tmp/err"
  local st=$?
  if [ $st -eq "$want" ]; then pass=$((pass + 1)); return; fi
  fail=$((fail + 1))
  echo "FAIL: topsim $*: exit $st, want $want"
  head -c 400 "$tmp/err"
  head -n 40 "$tmp/vg.log"
}

# topo: NCCL XML import, the generated fabric, JSON.
vgrun 0 topo "$d/nccl-topo/ibm-cloud-h100-8gpu-topo.xml" --hosts 2 --fabric ib_ndr --json
# topo --validate over several files: YAML errors, an alias bomb, XML errors.
vgrun 65 topo --validate --json "$t/dgx-a100.yaml" "$d/bad/alias_bomb.yaml" \
  "$d/bad_xml/entity_bomb.xml" "$d/bad/dangling_link.yaml" "$d/warn/uneven_uplinks.yaml"
# bench: a collective with nccl-tests JSON; a p2p pattern around a failure.
vgrun 0 bench "$t/dgx-a100.yaml" --op all_reduce -b 1M -e 2M -J "$tmp/bench.json"
vgrun 0 bench "$t/superpod-a100-1su.yaml" --pattern shift:1 --no-pxn -b 1M -e 1M \
  --fail compute/spine-g0-1
# run: a reduced step with a straggler, a fault mid-step and a trace.
vgrun 0 run "$d/workloads/tiny-dense.yaml" --topology "$t/superpod-a100-1su.yaml" \
  --dp 1 --global-batch 2 --set gpus=16 --straggler 3=1.5 \
  --fail-at 1ms:compute/leaf-su0-r0 --trace "$tmp/trace.json" --quiet
vgrun 65 run "$d/bad/work/memory.yaml"
# plan: sizing, BOM as CSV, catalog and power.
vgrun 0 plan --preset b300-superpod --nodes 64 --csv
# sweep: forked workers (valgrind follows forks), CSV and SVG.
vgrun 0 sweep "$d/workloads/tiny-dense.yaml" --topology "$t/superpod-a100-1su.yaml" \
  --gpus 16 --vary tp,pp --quiet --jobs 2 --csv "$tmp/sweep.csv" --svg "$tmp/sweep.svg"
# check: the baseline above, its bench prediction fails (exit 1), JUnit.
vgrun 1 check "$tmp/baseline.yaml" --junit "$tmp/junit.xml"

lib_summary
