#!/usr/bin/env bash
# cli_bench.sh BIN SRCDIR [SANITIZED] - drives `topsim bench`: golden table,
# byte-identical reruns, JSON that parses, failures that change the answer,
# and usage errors (exit 64) with one message.
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
topo=$src/topologies/superpod-a100-1su.yaml
lib_tmp

# Files, not $(...): the table ends with nccl-tests' blank line.
"$bin" bench "$topo" --pattern shift:8 -b 1K -e 16M -f 8 > "$tmp/g1.txt" || note "bench failed"
got=$(cat "$tmp/g1.txt")
if diff -u "$src/tests/golden/bench_superpod-a100-1su_shift8.txt" "$tmp/g1.txt"; then ok
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

# --nccl-p2p: shift:1 over the 8 GPUs of a DGX A100, 1 GiB: NCCL gives each
# peer 16 channels of 14 GB/s (ts_coll_p2p_cap) = 224 GB/s, after the p2p
# pipeline's fill (one 512 KiB step at 14 GB/s, ts_coll_p2p_fill) and the
# 400 ns of NVLink latency: busbw = 2^30 / (37.449 us + 0.4 us + 2^30 /
# 224 GB/s) = 222.25 GB/s, where the links alone give 240.
for f in "" --nccl-p2p; do
  "$bin" bench "$src/topologies/dgx-a100.yaml" --pattern shift:1 $f -b 1G -e 1G --json \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["busbw_GBps"])'
done > "$tmp/p2p.txt"
python3 -c "import sys; a,b=[float(x) for x in open('$tmp/p2p.txt')]; w=2**30/(524288/14e9+0.4e-6+2**30/224e9)/1e9; sys.exit(0 if 239.9 < a <= 240 and abs(b-w) < 0.01 else 1)" \
  && ok || note "--nccl-p2p busbw: $(tr '\n' ' ' < "$tmp/p2p.txt"), want 240 and 222.25"

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
usage "--nccl-p2p are for sendrecv" "$src/topologies/dgx-a100.yaml" --op all_reduce --nccl-p2p
usage "NVLS runs only the Simple protocol" "$src/topologies/dgx-h100.yaml" --op all_reduce --algo nvls --proto LL128 -b 1M -e 1M

# Collectives: a golden nccl-tests table, JSON rows with the chosen algorithm.
"$bin" bench "$src/topologies/dgx-a100.yaml" --op all_reduce -b 8 -e 1G -f 64 > "$tmp/g2.txt"
if diff -u "$src/tests/golden/bench_dgx-a100_all_reduce.txt" "$tmp/g2.txt"; then ok
else note "all_reduce output differs from the golden file"; fi
"$bin" bench "$topo" --op all_gather --nodes 2 --json -b 1M -e 16M -f 4 \
  | python3 -c 'import json,sys; d=json.load(sys.stdin); assert [r["algo"] for r in d["rows"]] and d["gpus"]==16, d' \
  && ok || note "all_gather --json"
# A scraper written for nccl-tests (not for topsim): data rows are the
# lines that do not start with '#' after the "out-of-place" header; busbw
# is the sixth field from the end (out-of-place), time the eighth; the
# average comes from "# Avg bus bandwidth". It must read topsim's table
# and agree with topsim's own JSON to the printed precision.
scrape='
import sys, json
table, js = sys.argv[1], json.load(open(sys.argv[2]))
rows, avg, seen = [], None, False
for line in open(table):
    if line.startswith("#"):
        seen |= "out-of-place" in line
        if line.startswith("# Avg bus bandwidth"):
            avg = float(line.split(":")[1])
        continue
    if not seen or not line.strip():
        continue
    f = line.split()
    # nccl-tests widths: 12+2+12+2+8+2+6+2+6, then two groups of 2+7+2+6+2+6+7
    assert len(line.rstrip("\n")) == 116, repr(line)
    assert f[-1] == "N/A" and f[-5] == "N/A", f
    rows.append((int(f[0]), float(f[-8]), float(f[-6]), float(f[-2])))
want = js["rows"]
assert len(rows) == len(want), (rows, want)
for (size, t, bus, bus_in), w in zip(rows, want):
    assert size == w["size"], (size, w)
    assert abs(bus - w["busbw_GBps"]) <= 0.005 + 1e-9, (bus, w)
    assert bus == bus_in
    assert abs(t - w["time_us"]) <= 0.005 + 1e-9 or t > 9999, (t, w)
mean = sum(w["busbw_GBps"] for w in want) / len(want)
assert abs(avg - mean) <= 1e-4 * max(mean, 1), (avg, mean)
print(len(rows))
'
for args in "$src/topologies/dgx-a100.yaml --op all_reduce -b 8 -e 1G -f 4" \
            "$src/topologies/dgx-a100.yaml --op all_gather -b 1M -e 64M -i 9M -d half" \
            "$topo --pattern shift:8 -b 1K -e 16M -f 8"; do
  # shellcheck disable=SC2086
  "$bin" bench $args > "$tmp/table.txt" && "$bin" bench $args --json > "$tmp/rows.json" \
    && n=$(python3 -c "$scrape" "$tmp/table.txt" "$tmp/rows.json") && [ "$n" -gt 3 ] && ok \
    || note "nccl-tests scraper on bench $args"
done

# -J FILE: nccl-tests' JSON (version 3), dates pinned by SOURCE_DATE_EPOCH.
export SOURCE_DATE_EPOCH=1700000000
"$bin" bench "$src/topologies/dgx-a100.yaml" --op reduce_scatter -b 64K -e 1M -f 4 -n 7 -w 3 \
  -J "$tmp/a.json" > "$tmp/a.txt" && cp "$tmp/a.json" "$tmp/b.json" && \
"$bin" bench "$src/topologies/dgx-a100.yaml" --op reduce_scatter -b 64K -e 1M -f 4 -n 7 -w 3 \
  -J "$tmp/a.json" > /dev/null && cmp -s "$tmp/a.json" "$tmp/b.json" && ok || note "-J is not deterministic"
head -1 "$tmp/a.txt" | grep -qx "# Writing JSON output to $tmp/a.json" && ok || note "-J announcement"
python3 - "$tmp/a.json" "$tmp/a.txt" <<'PY' && ok || note "-J JSON content"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["version"] == 3 and j["start_time"] == "2023-11-14 22:13:20", j["start_time"]
c = j["config"]
assert c["ngpus"] == 8 and c["iterations"] == 7 and c["warmup_iters"] == 3 and c["step_factor"] == 4
assert len(c["devices"]) == 8 and c["devices"][3]["device"] == 3
# 64K, 256K, 1M: three sizes; reduce_scatter count is per rank (size/4/8).
r = j["results"]
assert [x["size"] for x in r] == [65536, 262144, 1048576], r
assert [x["count"] for x in r] == [2048, 8192, 32768], r
assert all(x["redop"] == "sum" and x["root"] == "    -1" and x["type"] == "float" for x in r)
assert all(x["out_of_place"] == x["in_place"] and x["out_of_place"]["nwrong"] is None for x in r)
assert j["out_of_bounds"] == {"count": 0, "okay": "true"}
avg = sum(x["out_of_place"]["bus_bw"] for x in r) / 3
assert abs(j["average_bus_bandwidth"]["bandwidth"] - avg) < 1e-6 * avg  # 10 digits printed
table = [l.split() for l in open(sys.argv[2]) if l[0] != "#"]
assert [float(t[-6]) for t in table if t] == [round(x["out_of_place"]["bus_bw"], 2) for x in r]
PY
unset SOURCE_DATE_EPOCH

usage "-d bogus: expected one of" "$topo" --pattern permutation -d bogus
usage "-o all: expected sum" "$topo" --op all_reduce -o all
usage "-f 1 needs -i" "$topo" --pattern permutation -f 1
usage "give one of -g, --gpus and --nodes" "$topo" --op all_reduce -g 8 --nodes 1
# -g N is the first N GPUs (nccl-tests' GPUs per process, one process).
"$bin" bench "$topo" --op all_reduce -g 16 -b 1M -e 1M | grep -q "^# nThread 1 nGpus 16 " \
  && ok || note "-g 16"

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
# MoE dispatch/combine from the routing model: the hand-worked example of
# tests/test_work.c (test_moe_matrix): 4 ranks on 2 DGX nodes, 4 experts,
# top-2, 300 tokens of hidden 128: per rank 67,200 bytes over NVLink
# (33,600 own + 33,600 forwarded) and 57,600 over RDMA; FP8 dispatch sends
# 132 instead of 256 bytes a token (57,600 x 132/256 = 29,700); combine is
# the transpose in bf16, so its means equal the bf16 dispatch's.
moe="--gpus 0,1,8,9 --moe tokens=300,hidden=128,topk=2,experts=4"
for spec in "moe_dispatch::67200:57600" "moe_dispatch:,dtype=fp8:34650:29700" \
            "moe_combine:,dtype=fp8:67200:57600"; do
  IFS=: read -r op extra nvl rdma <<<"$spec"
  "$bin" bench "$topo" --op "$op" $moe$extra --json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['nvl_bytes_per_rank'] == $nvl and d['rdma_bytes_per_rank'] == $rdma, d
assert d['nodes'] == 2 and d['bottleneck'] == 'rdma' and d['rdma_GBps'] > 0, d
" && ok || note "$op$extra: bytes per rank"
done
out=$("$bin" bench "$topo" --op moe_dispatch --nodes 1 --moe experts=8,topk=2,tokens=512)
grep -q "nvl$" <<<"$out" && ok || note "one node: NVLink is the bottleneck: $out"
usage "--moe: 'foo' is not one of" "$topo" --op moe_dispatch --nodes 2 --moe foo=1
usage "must be a multiple of the 3 GPUs" "$topo" --op moe_dispatch --gpus 0,1,8 --moe experts=4,topk=2

# An output file that cannot be created: exit 73 and the OS's reason.
err=$("$bin" bench "$topo" --op all_reduce -b 1M -e 1M -J "$tmp/no/such/dir/x.json" 2>&1 >/dev/null)
st=$?
[ $st -eq 73 ] && grep -q "cannot write '.*x.json': No such file or directory" <<<"$err" && ok \
  || note "-J into a missing directory: exit $st: $err"

"$bin" bench --help | grep -q "usage: topsim bench" && ok || note "bench --help"

# D-mod-k on the k=8 fat tree (docs/model.md "Routing"): shift:16 sends
# every NIC's flow out of its pod, and D-mod-k gives every flow its own
# edge and aggregation uplink (tests/test_route.c test_dmodk_shift), so each
# runs at the NIC's 200 Gb/s x 0.96 = 24 GB/s less the path latency: 64 MiB
# in ~2,799 us, busbw >= 23.7 GB/s. Hashed ECMP puts two or more flows on
# some uplink, so the slowest pair runs at most at half rate: busbw <= 12.
ft=$src/topologies/fat-tree-k8.yaml
for r in dmodk ecmp_hash; do
  "$bin" bench "$ft" --pattern shift:16 -b 64M -e 64M --routing $r --json |
    python3 -c "
import json, sys
j = json.load(sys.stdin); bw = j['rows'][0]['busbw_GBps']
assert j['routing'] == '$r', j['routing']
assert (bw >= 23.7) if '$r' == 'dmodk' else (bw <= 12.0), bw" && ok ||
    note "shift:16 on the fat tree with --routing $r"
done

lib_summary
