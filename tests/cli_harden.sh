#!/usr/bin/env bash
# cli_harden.sh BIN SRCDIR [SANITIZED] - hostile and careless command lines
# (issue 14), each reproduced before it was fixed:
#  1. size arguments that are 0 or wrap 64 bits are refused (exit 64, one
#     message) instead of overflowing a row array or sweeping forever;
#  2. every report mode writing to /dev/full exits 74 with a message;
#  3. outputs are opened before simulating (one that cannot be created
#     exits 73 in every command); option pairs that make no sense
#     (--trace-ranks without --trace, a port buffer below one chunk) and
#     degenerate values (--chunk-size 0, --pipeline-chunk 1) say why;
#  4. budgets (docs/cli.md "Budgets") refuse with their own message and can
#     be raised by option or environment variable.
# A signal (status >= 128) is always a failure.
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
lib_tmp
topo=$src/topologies/dgx-a100.yaml
# A hang guard, not a timing test: sanitizer builds on a busy 2-core
# machine run these 5-20x slower than a plain build.
limit=20
case "${3:-OFF}" in ON | on | 1 | TRUE | true) limit=180 ;; esac
llama=("$src/examples/llama-70b-64-h100.yaml" --global-batch 16)

# expect STATUS MESSAGE ARGS...: exit STATUS, stderr contains MESSAGE and
# has a non-empty text after "error:" or "topsim CMD:".
expect() {
  local want=$1 msg=$2
  shift 2
  local err st
  err=$(timeout "$limit" "$bin" "$@" 2>&1 >/dev/null)
  st=$?
  if [ $st -ne "$want" ]; then note "topsim $*: exit $st, want $want: $err"; return; fi
  grep -qF -- "$msg" <<<"$err" && ok || note "topsim $*: want '$msg', got: $err"
}

# 1. sizes: -b 0 used to loop over 80 rows of size 0 and, for sendrecv,
#    overflow an 80-row stack array; 16777216T = 2^64 wrapped to 0.
expect 64 "-b 0: the smallest message must be at least 1 byte" \
  bench "$topo" --pattern permutation -b 0 -e 8
expect 64 "'16777216T' does not fit in 64 bits" \
  bench "$topo" --pattern permutation -b 16777216T -e 8
expect 64 "-b 0: the smallest message" bench "$topo" --op all_reduce -b 0
# The widest legal sweep, 1 B .. 8 EiB by 2, is 64 rows (2^0 .. 2^63): it
# must not be cut at a fixed row count (it is refused by the message budget
# at the first size above it, see 4).
out=$("$bin" bench "$topo" --src 0 --dst 1 -b 1 -e 1M --json)
python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["rows"]) == 21, len(d["rows"])' \
  <<<"$out" && ok || note "1 B .. 1 MiB must give 21 rows"

# 2. every report mode on a full disk.
modes=("topo $topo" "topo --json $topo" "topo --dot $topo" "topo --matrix $topo"
       "topo --validate $topo"
       "bench $topo --src 0 --dst 1 -e 1K" "bench $topo --src 0 --dst 1 -e 1K --json"
       "bench $topo --op all_reduce -e 1K" "bench $topo --op all_reduce -e 1K --json"
       "plan --preset a100-superpod --nodes 64"
       "plan --preset a100-superpod --nodes 64 --json"
       "run ${llama[*]}" "run ${llama[*]} --json" "run ${llama[*]} --placement")
for m in "${modes[@]}"; do
  # shellcheck disable=SC2086
  err=$(timeout "$limit" "$bin" $m 2>&1 >/dev/full)
  st=$?
  [ $st -eq 74 ] && grep -q "cannot write standard output" <<<"$err" && ok \
    || note "topsim $m >/dev/full: exit $st: $err"
done
err=$("$bin" run "${llama[@]}" --trace /dev/full 2>&1 >/dev/null)
[ $? -eq 74 ] && ok || note "--trace /dev/full: $err"

# 3. outputs first, option sanity.
start=$(date +%s%N)
expect 73 "cannot write '$tmp/no/x.json'" run "${llama[@]}" --trace "$tmp/no/x.json"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $ms -lt 2000 ] && ok || note "--trace to a bad path took $ms ms: it should fail before simulating"
# Every command gives an output file it cannot create the same status, 73
# (EX_CANTCREAT), with the OS's reason; 74 stays for a failed write.
expect 73 "No such file or directory" topo "$topo" -o "$tmp/no/t.txt"
expect 73 "No such file or directory" plan --preset a100-superpod --nodes 20 --emit-yaml "$tmp/no/p.yaml"
expect 73 "No such file or directory" bench "$topo" --src 0 --dst 1 -b 1M -e 1M -J "$tmp/no/b.json"
expect 73 "No such file or directory" sweep "$src/tests/data/workloads/tiny-dense.yaml" --topology "$topo" --csv "$tmp/no/s.csv"
expect 64 "--trace-ranks needs --trace FILE" run "${llama[@]}" --trace-ranks 0-7
expect 64 "--chunk-size 0: expected 1 byte" bench "$topo" --op all_reduce --fidelity chunk --chunk-size 0
expect 64 "--port-buffer 1 is smaller than one chunk" \
  bench "$topo" --op all_reduce --fidelity chunk --port-buffer 1
expect 64 "--pipeline-chunk 1: expected at least 1K" bench "$topo" --op all_reduce --pipeline-chunk 1

# 4. budgets: each refusal has its own message and a way to raise it.
# dgx-a100 is one host of 32 devices (8 GPUs, 2 CPUs, 4 PCIe switches,
# 6 NVSwitches, 12 NICs).
expect 65 "over the budget of 31 devices (raise it with --max-devices or TOPSIM_MAX_DEVICES)" \
  topo --max-devices 31 "$topo"
"$bin" topo --max-devices=32 "$topo" >/dev/null && ok || note "--max-devices=32 must load dgx-a100"
err=$(TOPSIM_MAX_DEVICES=31 "$bin" topo "$topo" 2>&1 >/dev/null)
[ $? -eq 65 ] && grep -q "budget of 31 devices" <<<"$err" && ok || note "TOPSIM_MAX_DEVICES: $err"
err=$(TOPSIM_MAX_DEVICES=5000000 "$bin" topo "$src/tests/data/bad/devices_budget.yaml" 2>&1 >/dev/null)
[ $? -eq 65 ] && grep -q "budget of 5000000 devices" <<<"$err" && ok || note "raised budget: $err"
expect 64 "TOPSIM_MAX_EVENTS/--max-events: 'lots' is not a whole number" topo --max-events lots "$topo"
expect 65 "over the budget of 3 events" bench "$topo" --src 0 --dst 1 -b 1M -e 1M --max-events 3
# --exact: a step ring whose flows run alone is computed in closed form and
# builds no transfers, so only the lowered plan meets the budget.
expect 65 "over the budget of 10 descriptors" bench "$topo" --op all_reduce -b 1M -e 1M --max-descriptors 10 --exact
"$bin" bench "$topo" --op all_reduce -b 1M -e 1M --algo ring --max-descriptors 10 >/dev/null 2>&1 && ok ||
  note "closed-form ring refused by the descriptor budget"
expect 65 "over the budget of 1048576 bytes per message" bench "$topo" --src 0 --dst 1 -b 2M -e 2M --max-message-bytes 1048576
# 2^51 bytes (issue example 3): over the default 16 TiB per message.
expect 65 "a message of 2251799813685248 bytes: over the budget of 17592186044416" \
  bench "$topo" --src 0 --dst 1 -b 2048T -e 2048T
# GPU 0's six NVLinks slowed by 10^-12 (issue example 3): 1 GiB at 6 x 0.025
# B/s is 7x10^9 s, past the 10^6 s of simulated time: refused, not a
# wrapped time or an abort.
slow=()
for s in 0 1 2 3 4 5; do slow+=(--degrade "dgx0/gpu0--dgx0/nvsw$s=1e-12"); done
expect 65 "over the budget of 1e+06 s of simulated time" \
  bench "$topo" --src 0 --dst 1 -b 1G -e 1G "${slow[@]}"
expect 65 "over the budget of 1e-06 s of simulated time (raise it with --max-sim-time" \
  bench "$topo" --op all_reduce -b 1M -e 1M --max-sim-time 1us
expect 64 "--alpha '9999999s' is not a time from 0 to 3600s" bench "$topo" --src 0 --dst 1 --alpha 9999999s
# Issue example 5: one descriptor per byte of gradients. At the default
# budget (16,777,216) it is refused after ~3 s and ~0.9 GB in a release
# build; a lower budget shows the same refusal cheaply (and under ASan).
expect 65 "over the budget of 200000 descriptors" \
  run "$src/tests/data/workloads/tiny-dense.yaml" --topology "$src/topologies/superpod-a100-1su.yaml" \
  --set dp_bucket_size=1B --max-descriptors 200000
# Issue example 2: dimensions whose memory used to wrap to a passing fit
# check (and a 2^63 ps step): the saturated sum is refused.
expect 65 "pipeline stage 0 needs 17179869184.0 GiB" \
  run "$src/tests/data/workloads/tiny-dense.yaml" --topology "$src/topologies/superpod-a100-1su.yaml" \
  --set hidden=1073741824 --set seq_len=1073741824 --set layers=100000

# Limits of the 16-bit ids, at the position of the first entry past them
# (were "out of memory", exit 71, no position).
[ "${3:-OFF}" != ON ] && python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
with open(d + "/planes.yaml", "w") as f:
    f.write("topsim: 1\nname: p\nplanes:\n")
    for i in range(65535):
        f.write("  - {name: p%d, kind: backend, technology: ib_ndr}\n" % i)
    f.write("nodes: []\n")
with open(d + "/models.yaml", "w") as f:
    f.write("topsim: 1\nname: m\ngpu_models:\n")
    for i in range(65535):
        f.write("  m%d: {bf16: 1TFLOP/s, hbm: 1GB, hbm_bandwidth: 1GB/s}\n" % i)
    f.write("nodes: []\n")
PY
# 3 MB files: parsing them under ASan on a shared machine passes 20 s, so
# the sanitizer build leaves them to the normal one.
if [ "${3:-OFF}" != ON ]; then
  expect 65 "planes.yaml:65538:5: error: more than 65534 planes" topo "$tmp/planes.yaml"
  expect 65 "models.yaml:65538:3: error: more than 65534 GPU models" topo "$tmp/models.yaml"
fi

# 5. workload refusals name file:line:column of the key to change
#    (tests/data/bad/work/EXPECT: file, exit status, expected text).
while IFS=$'\t' read -r file want msg; do
  [ -n "$file" ] || continue
  err=$("$bin" run "$src/tests/data/bad/work/$file" 2>&1 >/dev/null)
  st=$?
  if [ $st -ne "$want" ]; then note "work/$file: exit $st, want $want ($err)"; continue; fi
  [ "$(grep -c "error:" <<<"$err")" -eq 1 ] && grep -qF -- "$file:$msg" <<<"$err" && ok \
    || note "work/$file: want '$file:$msg', got: $err"
done <"$src/tests/data/bad/work/EXPECT"
# A --set override is named on the command line, not in the file: no line.
err=$("$bin" run "$src/tests/data/bad/work/heads_tp.yaml" --set heads=8 --tp 3 --dp 1 --set gpus=3 2>&1)
grep -q "heads_tp.yaml: error: heads = 8 is not divisible by tp = 3" <<<"$err" && ok \
  || note "override refusal: $err"
# An error inside a referenced topology keeps its own position and says who
# referred to it.
printf 'topsim: 1\nname: x\ntopology: %s\nmodel: {layers: 8, hidden: 64, heads: 8, seq_len: 64, vocab: 100}\ntraining: {global_batch: 8}\n' \
  "$src/tests/data/bad/dangling_link.yaml" >"$tmp/w.yaml"
expect 65 "dangling_link.yaml:10:22: error: link end 'spine9'" run "$tmp/w.yaml"
expect 65 "(in the topology named at $tmp/w.yaml:3:11)" run "$tmp/w.yaml"

lib_summary
