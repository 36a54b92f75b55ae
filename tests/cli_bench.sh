#!/usr/bin/env bash
# cli_bench.sh BIN SRCDIR [SANITIZED] - drives `topsim bench`: golden table,
# byte-identical reruns, JSON that parses, failures that change the answer,
# and usage errors (exit 64) with one message.
set -u
bin=$1
src=$2
fail=0
pass=0
note() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { pass=$((pass + 1)); }
topo=$src/topologies/superpod-a100-1su.yaml

got=$("$bin" bench "$topo" --pattern shift:8 -b 1K -e 16M -f 8) || note "bench failed"
if diff -u "$src/tests/golden/bench_superpod-a100-1su_shift8.txt" <(printf '%s\n' "$got"); then ok
else note "bench output differs from the golden file"; fi
[ "$got" = "$("$bin" bench "$topo" --pattern shift:8 -b 1K -e 16M -f 8)" ] && ok \
  || note "bench is not byte-identical across runs"

"$bin" bench "$topo" --pattern permutation --json -b 1M -e 4M \
  | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["rows"])==3, d' \
  && ok || note "--json does not parse or has the wrong rows"

# Two spines down: cross-rail traffic without PXN gets slower, not stuck.
a=$("$bin" bench "$topo" --pattern shift:1 --no-pxn --routing spray -b 16M -e 16M --json \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["time_us"])')
b=$("$bin" bench "$topo" --pattern shift:1 --no-pxn --routing spray -b 16M -e 16M --json \
    --fail compute/spine-g0-0 --fail compute/spine-g0-1 \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["time_us"])')
python3 -c "import sys; r=$b/$a; sys.exit(0 if 1.9 < r < 2.1 else 1)" && ok \
  || note "two of four spines down should double the time ($a -> $b us)"

"$bin" bench "$topo" --src dgx0/gpu0 --dst dgx1/gpu0 --fidelity chunk -b 1M -e 1M >/dev/null \
  && ok || note "chunk fidelity sendrecv failed"

# Every spine down: cross-rail traffic without PXN has no route: exit 65 and
# one message naming both GPUs, never a hang.
err=$("$bin" bench "$topo" --pattern shift:1 --no-pxn -b 1M -e 1M \
      --fail compute/spine-g0-0 --fail compute/spine-g0-1 \
      --fail compute/spine-g0-2 --fail compute/spine-g0-3 2>&1 >/dev/null)
st=$?
[ $st -eq 65 ] && grep -q "no route from 'dgx0/gpu7' to 'dgx1/gpu0'" <<<"$err" && ok \
  || note "disconnection: exit $st, $err"

usage() { # usage EXPECTED_MSG ARGS...
  local msg=$1
  shift
  local err
  err=$("$bin" bench "$@" 2>&1 >/dev/null)
  local st=$?
  if [ $st -ne 64 ]; then note "bench $*: exit $st, want 64"; return; fi
  grep -qF -- "$msg" <<<"$err" && ok || note "bench $*: want '$msg', got: $err"
}
usage "give either --src and --dst, or --pattern" "$topo"
usage "--pattern must be" "$topo" --pattern ring
usage "shift:200 needs" "$topo" --pattern shift:200
usage "names no GPU" "$topo" --src dgx0/gpu9 --dst 1
usage "is not a size" "$topo" --pattern permutation -b 1X
usage "--fidelity must be flow or chunk" "$topo" --pattern permutation --fidelity fluid
usage "no node named" "$topo" --pattern permutation --fail compute/spine-g9-9
usage "are for sendrecv" "$topo" --op all_reduce --pattern permutation
usage "--op all_to_allv: expected" "$topo" --op all_to_allv
usage "--algo fastest: expected" "$topo" --op all_reduce --algo fastest
usage "NVLS needs one host with an NVSwitch" "$topo" --op all_gather --algo nvls --nodes 1

# Collectives: a golden nccl-tests table, JSON rows with the chosen algorithm.
got=$("$bin" bench "$src/topologies/dgx-a100.yaml" --op all_reduce -b 8 -e 1G -f 64)
if diff -u "$src/tests/golden/bench_dgx-a100_all_reduce.txt" <(printf '%s\n' "$got"); then ok
else note "all_reduce output differs from the golden file"; fi
"$bin" bench "$topo" --op all_gather --nodes 2 --json -b 1M -e 16M -f 4 \
  | python3 -c 'import json,sys; d=json.load(sys.stdin); assert [r["algo"] for r in d["rows"]] and d["gpus"]==16, d' \
  && ok || note "all_gather --json"
# --alpha reaches collectives: an 8-byte ring all-reduce on one DGX A100
# is 2(p-1) = 14 steps of (alpha + 2 x 200 ns NVLink hops) = 14 x 0.4 us =
# 5.60 us with --alpha 0us, 14 x 1.4 us = 19.60 us with 1us.
for a in 0us:5.60 1us:19.60; do
  us=$("$bin" bench "$src/topologies/dgx-a100.yaml" --op all_reduce -b 8 -e 8 \
       --algo ring --proto Simple --alpha "${a%%:*}" | awk '$1 == 8 {print $6}')
  [ "$us" = "${a#*:}" ] && ok || note "--alpha ${a%%:*}: ring time $us us, want ${a#*:}"
done
"$bin" bench "$src/no/such.yaml" --pattern permutation >/dev/null 2>&1
[ $? -eq 66 ] && ok || note "missing topology should exit 66"
"$bin" bench --help | grep -q "usage: topsim bench" && ok || note "bench --help"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
