#!/usr/bin/env bash
# cli_plan_shortcuts.sh BIN SRCDIR [SANITIZED] - `topsim plan ... --workload`
# takes the step options of `topsim run` (--exact, --bounded[=LIST];
# docs/model.md "Bounded shortcuts") in all three ways it runs steps
# (--compare, --what-if, --sus). The case: a small model at tp 2 pp 4 with
# ZeRO 2 and 4 MB gradient buckets on an 8-node A100 SuperPOD plan (64
# GPUs, dp 8), where the batched buckets (the default) make the step ~1%
# longer than --exact and --bounded moves it again, so a dropped option
# shows:
#  - --compare --json gives, per option, the step `topsim run` gives with
#    that option on the plan emitted as a topology (dp 8, global batch 8 x
#    the file's 4 per replica), to the picosecond; --bounded=none gives
#    --exact's;
#  - --what-if --exact: its healthy row is run --exact's step;
#  - --sus 1..1 (8 nodes per SU) --exact prints run --exact's step (to the
#    table's 4 decimals, which tell it from the default's);
#  - --bounded=bogus exits 64 naming plan; --exact without --workload is
#    refused; --help lists both options.
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
lib_tmp
cat >"$tmp/w.yaml" <<'YAML'
topsim: 1
name: zero2-pp4
model: {layers: 4, hidden: 2048, ffn_hidden: 8192, heads: 16, seq_len: 2048, vocab: 32000, dtype: bf16}
training: {global_batch: 4, micro_batch: 1, schedule: 1f1b, recompute: selective, zero_stage: 2, dp_bucket_size: 4MB}
parallelism: {tp: 2, pp: 4, dp: 1}
YAML
plan=("$bin" plan --preset a100-superpod --quiet)
"${plan[@]}" --nodes 8 --emit-yaml "$tmp/topo.yaml" >/dev/null || note "plan --emit-yaml"
ps() { jq "$1 | . * 1e12 | round"; }
declare -A run cmp
for opt in default --exact --bounded --bounded=none; do
  o=$opt
  [ "$o" = default ] && o=
  run[$opt]=$("$bin" run "$tmp/w.yaml" --topology "$tmp/topo.yaml" --dp 8 \
              --global-batch 32 --set gpus=64 --quiet --json $o | ps .step_time_s)
  cmp[$opt]=$("${plan[@]}" --compare "--nodes 8" --workload "$tmp/w.yaml" --json $o |
              ps '.[0].step_time_s')
  [ -n "${run[$opt]}" ] && [ "${cmp[$opt]}" = "${run[$opt]}" ] && ok \
    || note "plan --compare $opt: ${cmp[$opt]} ps, run ${run[$opt]} ps"
done
# the options move the step here: else the checks above prove nothing
[ "${run[default]}" != "${run[--exact]}" ] && [ "${run[--bounded]}" != "${run[default]}" ] \
  && [ "${run[--bounded=none]}" = "${run[--exact]}" ] && ok \
  || note "steps: default ${run[default]}, exact ${run[--exact]}, bounded ${run[--bounded]}"
close "${run[default]}" "${run[--exact]}" 0.01 && ok || note "default not within 1% of --exact"

wi=$("${plan[@]}" --nodes 8 --workload "$tmp/w.yaml" --what-if --json --exact | ps '.what_if[0].step_time_s')
[ "$wi" = "${run[--exact]}" ] && ok || note "plan --what-if --exact: $wi ps, run ${run[--exact]} ps"

sus() { "${plan[@]}" --nodes-per-su 8 --sus 1..1 --workload "$tmp/w.yaml" "$@" | awk '$1 == 1 && $2 == 64 {print $4}'; }
se=$(sus --exact)
sd=$(sus)
want=$(awk -v p="${run[--exact]}" 'BEGIN { printf "%.4f", p / 1e12 }')
[ "$se" = "$want" ] && [ "$sd" != "$se" ] && ok \
  || note "plan --sus --exact: '$se', default '$sd', run --exact $want"

"${plan[@]}" --nodes 8 --workload "$tmp/w.yaml" --what-if --bounded=beside,bogus >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 64 ] && grep -q "^topsim plan: --bounded takes batch, compact" "$tmp/err" \
  && ok || note "--bounded=bogus: exit $rc, $(cat "$tmp/err")"
"${plan[@]}" --nodes 8 --exact >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 64 ] && grep -q "apply to --workload steps" "$tmp/err" && ok \
  || note "--exact without --workload: exit $rc"
# inside one --compare design they are refused as belonging to the whole
# comparison (and faults as not applying to --compare)
"${plan[@]}" --compare "--nodes 8 --exact" --workload "$tmp/w.yaml" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 64 ] && grep -q "apply to the whole --compare: give them once" "$tmp/err" \
  && ok || note "--exact in a design: exit $rc, $(cat "$tmp/err")"
"${plan[@]}" --compare "--nodes 8 --straggler 3=1.5" --workload "$tmp/w.yaml" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 64 ] && grep -q "not to --compare" "$tmp/err" \
  && ok || note "a fault in a design: exit $rc, $(cat "$tmp/err")"
"$bin" plan --help >"$tmp/help"
grep -q -- "--exact " "$tmp/help" && grep -q -- "--bounded\[=LIST\]" "$tmp/help" \
  && ok || note "plan --help lacks --exact / --bounded"
lib_summary
