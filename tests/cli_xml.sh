#!/usr/bin/env bash
# cli_xml.sh BIN SRCDIR [SANITIZED] - NCCL topology XML through the real
# binary: every reference file loads and validates; --matrix shows NIC rows,
# CPU affinity and the NIC legend; --hosts/--fabric build a cluster; every
# file of the malformed XML corpus (tests/data/bad_xml/EXPECT: file, exit,
# line, message) fails with one "file:LINE: error:" naming the right line.
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
d=$src/tests/data/nccl-topo
lib_tmp

for f in "$d"/*-topo.xml; do
  "$bin" topo --validate "$f" >/dev/null 2>&1 && ok || note "$f does not validate"
done

# IBM H100 dump: 8 GPU + 8 NIC columns; GPU0 row ends with its CPU
# affinity (cpu0 mask 0000ffff,ffffffff,ffffffff = CPUs 0-79), NUMA 0 and
# "GPU NUMA ID" N/A; NIC0 is mlx5_0 (dev 0), which shares a switch with GPU7.
m=$("$bin" topo --matrix "$d/ibm-cloud-h100-8gpu-topo.xml")
head -1 <<<"$m" | grep -qP '^\tGPU0\t.*\tGPU7\tNIC0\t.*\tNIC7\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID$' \
  && ok || note "matrix header: $(head -1 <<<"$m")"
grep -qP '^GPU0\t X \tNV18(\tNV18){6}(\tSYS){4}(\tPHB){3}\tPIX\t0-79\t0\t\tN/A$' <<<"$m" \
  && ok || note "matrix GPU0 row: $(grep ^GPU0 <<<"$m")"
grep -qP '^NIC0(\tSYS){4}(\tPHB){3}\tPIX\t X (\tPHB){3}(\tSYS){4}$' <<<"$m" \
  && ok || note "matrix NIC0 row: $(grep ^NIC0 <<<"$m")"
grep -qx "  NIC0: mlx5_0" <<<"$m" && grep -qx "NIC Legend:" <<<"$m" && ok || note "NIC legend"
# p4d: affinity 000000ff,ffff0000,00ffffff = CPUs 0-23 and 48-71.
"$bin" topo --matrix "$d/aws-p4d-24xl-topo.xml" | grep -qP '^GPU1\t.*\t0-23,48-71\t0\t\tN/A$' \
  && ok || note "p4d affinity"

# The JSON twin of the matrix holds the same classes as the text, for
# every reference file (text self " X " = JSON "X").
for f in "$d"/*-topo.xml; do
  "$bin" topo --matrix "$f" > "$tmp/m.txt" && "$bin" topo --matrix --json "$f" > "$tmp/m.json" \
  && python3 - "$tmp/m.txt" "$tmp/m.json" <<'PY' && ok || note "matrix JSON vs text: $f"
import json, sys
j = json.load(open(sys.argv[2]))
names = [d["name"] for d in j["devices"]]
lines = open(sys.argv[1]).read().split("\n")
assert lines[0].split("\t")[1:len(names) + 1] == names, lines[0]
for i, name in enumerate(names):
    cells = lines[1 + i].split("\t")
    assert cells[0] == name
    assert [c.strip() for c in cells[1:len(names) + 1]] == j["classes"][i], (name, cells)
    if j["devices"][i]["kind"] == "gpu":
        aff = j["devices"][i]["cpu_affinity"] or "N/A"
        assert cells[len(names) + 1:] == [aff, str(j["devices"][i]["numa_affinity"]), "", "N/A"], cells
PY
done

# 4 hosts on ib_ndr: one tier, 8 rail leaves; bench runs on it.
s=$("$bin" topo "$d/ibm-cloud-h100-8gpu-topo.xml" --hosts 4 --fabric ib_ndr)
grep -qx "hosts: 4" <<<"$s" && grep -q "leaf: 8 switches" <<<"$s" && ok || note "--hosts 4: $s"
"$bin" bench "$d/ibm-cloud-h100-8gpu-topo.xml" --hosts 2 --fabric ib_ndr --op all_reduce \
  -b 1M -e 1M >/dev/null && ok || note "bench on an XML cluster"

while IFS=$'\t' read -r file want line msg; do
  [ -n "$file" ] || continue
  path="$src/tests/data/bad_xml/$file"
  err=$("$bin" topo "$path" 2>&1 >/dev/null)
  st=$?
  if [ $st -ne "$want" ]; then note "$file: exit $st, want $want ($err)"; continue; fi
  [ "$(grep -c "error:" <<<"$err")" -eq 1 ] || { note "$file: not one error line: $err"; continue; }
  grep -qF -- "$msg" <<<"$err" || { note "$file: want '$msg', got: $err"; continue; }
  grep -qE "$(basename "$file"):$line(:[0-9]+)?: error:" <<<"$err" || { note "$file: not at line $line: $err"; continue; }
  ok
done < "$src/tests/data/bad_xml/EXPECT"

# An external entity is never fetched (no network, no substitution): the
# file loads as if the reference were absent; strace, when present, shows
# the path was never opened.
x=$src/tests/data/bad_xml/external_entity.xml
"$bin" topo --validate "$x" >/dev/null 2>&1 && ok || note "external_entity.xml should load"
if command -v strace >/dev/null && [ "${3:-OFF}" != ON ]; then
  strace -f -e trace=open,openat,stat,newfstatat "$bin" topo "$x" 2>&1 >/dev/null \
    | grep -q nonexistent && note "external entity was opened" || ok
fi

# Several files with --validate: XML errors keep file:line (no column).
err=$("$bin" topo --validate "$d/azure-ndv2-topo.xml" "$src/tests/data/bad_xml/bad_count.xml" 2>&1 >/dev/null)
[ $? -eq 65 ] && grep -q "bad_count.xml:5: error: <nvlink count=" <<<"$err" && ok \
  || note "--validate several files with XML: $err"

# A YAML reader handed XML says so (here the workload loader).
err=$("$bin" run "$d/aws-p4d-24xl-topo.xml" 2>&1 >/dev/null)
[ $? -eq 65 ] && grep -q "aws-p4d-24xl-topo.xml:1:1: error: this is XML" <<<"$err" && ok \
  || note "run given XML: $err"

lib_summary
