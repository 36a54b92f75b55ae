#!/usr/bin/env bash
# cli_plan.sh BIN SRCDIR [SANITIZED] - drives the real `topsim plan` binary:
#  1. presets print a plan; --json parses; --sus sweeps;
#  2. --emit-yaml writes a topology that `topsim topo` accepts (exit 0) with
#     the plan's switch counts;
#  3. bad requests exit 64 with exactly one "topsim plan:" message line and
#     no crash (a signal gives status >= 128).
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
lib_tmp

for p in a100-superpod h100-superpod b200-superpod; do
  out=$("$bin" plan --preset "$p" --nodes 64 2>&1)
  if [ $? -ne 0 ] || ! grep -q "^plan: 64 x" <<<"$out"; then note "$p: $out"; else ok; fi
done

out=$("$bin" plan --preset a100-superpod --nodes 140)
grep -qE "^core +28 " <<<"$out" && grep -qE "^spine +80 " <<<"$out" && ok || note "140 nodes: $out"

for args in "--preset h100-superpod --gpus 1024" "--preset a100-superpod --sus 1..8"; do
  if "$bin" plan $args --json | python3 -c 'import json,sys; json.load(sys.stdin)'; then ok
  else note "--json $args does not parse"; fi
done

out=$("$bin" plan --preset a100-superpod --sus 1..7)
[ "$(grep -c '^ *[0-9]' <<<"$out")" -eq 7 ] && ok || note "sweep rows: $out"

for args in "--preset a100-superpod --nodes 140" "--preset h100-superpod --nodes 100" \
            "--template hgx-b300 --radix 64 --nodes 30 --reserved-ports 2" \
            "--nodes 128 --oversub 4:1" \
            "--template $src/topologies/dgx-h100.yaml:dgx-h100 --radix 64 --gpus 2048"; do
  "$bin" plan $args --emit-yaml "$tmp/p.yaml" >"$tmp/plan.txt" 2>&1 || { note "emit $args"; continue; }
  topo=$("$bin" topo "$tmp/p.yaml" 2>&1) || { note "topo on emitted ($args): $topo"; continue; }
  leaves=$(awk '$1 == "leaf" {print $2}' "$tmp/plan.txt")
  grep -q "leaf: $leaves switches" <<<"$topo" && ok || note "leaf count $leaves ($args): $topo"
done

# Defect (issue 16): a planned fabric keeps the NVLink efficiency the
# bundled topologies carry (0.8), so one node's all_reduce predicts the same
# bus bandwidth from the emitted file as from topologies/dgx-a100.yaml
# (238 GB/s; without the efficiency it read 297).
"$bin" plan --template dgx-a100 --nodes 2 --emit-yaml "$tmp/nv.yaml" >/dev/null 2>&1 || note "emit nv"
grep -q "nvlink: {link_bandwidth: 25GB/s, efficiency: 0.8," "$tmp/nv.yaml" && ok || note "emitted nvlink lacks efficiency"
busbw() { "$bin" bench "$1" --op all_reduce --nodes 1 -b 1G -e 1G 2>/dev/null | awk '$1 == 1073741824 {print $8}'; }
a=$(busbw "$tmp/nv.yaml")
b=$(busbw "$src/topologies/dgx-a100.yaml")
[ -n "$a" ] && [ "$a" = "$b" ] && ok || note "planned one-node all_reduce busbw $a != bundled $b"

# A planned InfiniBand fabric routes D-mod-k like the bundled IB topologies
# (docs/model.md "Routing"): on 2 SUs of DGX H100, shift:256 sends every
# NIC to the same rail 32 nodes on, across the spines; D-mod-k gives each
# flow its own uplink (the NIC's 400 Gb/s: busbw ~47.9 GB/s), hashing
# collides on some (~24). The file must give what --routing dmodk gives.
"$bin" plan --preset h100-superpod --nodes 64 --emit-yaml "$tmp/ib.yaml" >/dev/null 2>&1 || note "emit ib"
grep -q "technology: ib_ndr, routing: dmodk," "$tmp/ib.yaml" && ok || note "emitted IB plane lacks routing: dmodk"
shiftbw() { "$bin" bench "$tmp/ib.yaml" --pattern shift:256 -b 64M -e 64M "$@" --json 2>/dev/null | jq -r '.rows[0].busbw_GBps'; }
a=$(shiftbw); b=$(shiftbw --routing dmodk); c=$(shiftbw --routing ecmp_hash)
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ] && ok || note "planned IB fabric routes $a, dmodk $b, hashed $c"

# bad requests: exit 64, one message
while IFS='|' read -r args msg; do
  err=$("$bin" plan $args 2>&1 >/dev/null)
  st=$?
  if [ $st -ne 64 ]; then note "'$args': exit $st, want 64 ($err)"; continue; fi
  [ "$(grep -c '^topsim plan:' <<<"$err")" -eq 1 ] || { note "'$args': $err"; continue; }
  grep -qF -- "$msg" <<<"$err" && ok || note "'$args': want '$msg', got: $err"
done <<'CASES'
--preset a100-superpod|give a size
--preset a100-superpod --gpus 0|give a size
--preset a100-superpod --gpus 8 --nodes 1|not both
--preset a100-superpod --nodes 20 --radix 16|cannot hold
--nodes 10 --oversub 39:2|cannot split 39:2
--nodes 10 --oversub 3:0|is not DOWN:UP
--preset a100-superpod --nodes 140 --max-tiers 2|need a third tier
--preset nope --nodes 1|unknown preset
--template dgx-z100 --nodes 1|unknown template
--nodes x|needs a whole number
--nodes 4 --port-speed fast|not a bandwidth
--preset a100-superpod --nodes 20 --workload w.yaml|--workload needs --sus A..B
--nodes 64 --csv --json|give one of
--nodes 64 --diagram png|must be dot or svg
--nodes 64 --leaf-placement side|must be eor or mor
--nodes 64 --rack-power lots|not a power
--preset h100-superpod --nodes 64 --switch NOPE|not in the catalog
--sus 3..1 --preset a100-superpod|is not A..B
--sus 1..2|needs --nodes-per-su
--nodes 4 --bogus|unknown option
CASES

"$bin" plan --help | grep -q "^usage: topsim plan" && ok || note "--help"

# What one more SU buys: a step of a small workload on 1 and 2 SUs, weak
# scaling: dp 10 then 20, and a scaling column that starts at 100%.
out=$("$bin" plan --preset a100-superpod --sus 1..2 \
      --workload "$src/tests/data/workloads/tiny-dense.yaml" 2>&1)
if grep -qE "^ +1 +160 +10 .* 100\.0%$" <<<"$out" && grep -qE "^ +2 +320 +20 " <<<"$out"; then ok
else note "plan --workload rows: $out"; fi
# The sizes run as cli_jobs tasks: the same bytes for any --jobs.
p1=$("$bin" plan --preset a100-superpod --sus 1..3 --jobs 1 --quiet \
     --workload "$src/tests/data/workloads/tiny-dense.yaml")
p3=$("$bin" plan --preset a100-superpod --sus 1..3 --jobs 3 --quiet \
     --workload "$src/tests/data/workloads/tiny-dense.yaml")
[ -n "$p1" ] && [ "$p1" == "$p3" ] && ok || note "plan --workload depends on --jobs"
# Its machine twin: --json gives one array, each size's plan with its
# step, the same figures as the table (step to 4 decimals, scaling against
# the first size that ran), and a size the workload cannot use (tp x pp
# = 64 does not divide one SU's 160 GPUs) an error instead of a step.
"$bin" plan --preset a100-superpod --sus 1..3 --json --quiet \
  --workload "$src/tests/data/workloads/tiny-dense.yaml" >"$tmp/sj.json" ||
  note "plan --sus --workload --json"
sed -e 's/^  pp: 2$/  pp: 8/' "$src/tests/data/workloads/tiny-dense.yaml" >"$tmp/pp8.yaml"
"$bin" plan --preset a100-superpod --sus 1..2 --json --quiet \
  --workload "$tmp/pp8.yaml" >"$tmp/pj.json" || note "plan --json (pp 8)"
python3 - "$tmp/sj.json" "$tmp/pj.json" "$p1" <<'PY' && ok || note "plan --sus --workload --json"
import json, sys
rows, pp8, table = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
assert [r["sus"] for r in rows] == [1, 2, 3] and rows[0]["gpus"] == 160
steps = {int(l.split()[0]): l.split() for l in table.splitlines()
         if l.split() and l.split()[0].isdigit() and len(l.split()) == 8}
base = rows[0]["step"]["tokens_per_s"] / rows[0]["gpus"]
for r in rows:
    s = r["step"]
    assert r["workload"].endswith("tiny-dense.yaml") and s["dp"] == r["gpus"] // 16
    assert f'{s["step_s"]:.4f}' == steps[r["sus"]][3], (s, steps[r["sus"]])
    assert abs(s["scaling"] - s["tokens_per_s_per_gpu"] / base) < 1e-12
assert rows[0]["step"]["scaling"] == 1 and rows[2]["step"]["scaling"] < 1
assert "not a multiple of tp x cp x pp = 64" in pp8[0]["step"]["error"], pp8[0]
assert pp8[1]["step"]["dp"] == 5 and pp8[1]["step"]["scaling"] == 1, pp8[1]
PY
"$bin" plan --template /nonexistent.yaml:x --nodes 1 >/dev/null 2>&1
[ $? -eq 66 ] && ok || note "missing template file should exit 66"

# Bill of materials as CSV: a header and rows of 10 cells; nodes x power.
out=$("$bin" plan --preset h100-superpod --nodes 64 --nodes-per-rack 4 \
      --storage-nics 2 --frontend-nics 1 --csv)
if python3 - "$out" <<'PY'
import csv, io, sys
rows = list(csv.reader(io.StringIO(sys.argv[1])))
assert rows[0][:5] == ["plane", "tier", "item", "part", "quantity"], rows[0]
assert all(len(r) == 10 for r in rows), rows
node = [r for r in rows if r[2] == "node"][0]
assert node[4] == "64" and float(node[6]) == 64 * 10200, node
planes = {r[0] for r in rows}
assert {"compute", "backend", "storage", "frontend"} <= planes, planes
PY
then ok; else note "--csv: $out"; fi

# Power with the bundled catalog: the CSV rows (nodes + switches + optics)
# sum to the JSON total, 1376784 W as derived by hand in test_plan.c
# (test_bundled_catalog): 128 x 10200 + 48 x 747 + 35328 of modules.
csv=$("$bin" plan --preset h100-superpod --nodes 128 --nodes-per-rack 4 --csv)
json=$("$bin" plan --preset h100-superpod --nodes 128 --nodes-per-rack 4 --json)
if python3 - "$csv" "$json" <<'PY'
import csv, io, json, sys
rows = list(csv.reader(io.StringIO(sys.argv[1])))[1:]
total = sum(float(r[6]) for r in rows if r[6])
sw = sum(float(r[6]) for r in rows if r[2] == "switch")
layout = json.loads(sys.argv[2])["layout"]
assert sw == 48 * 747, sw
assert total == layout["power_total_w"] == 1376784, (total, layout)
PY
then ok; else note "power sum: $csv"; fi

# Tier diagram at 131,072 GPUs: well-formed SVG, one box per tier group
# (1 node box + 8 leaf rails + 8 spine rails + 16 core groups = 33).
"$bin" plan --template hgx-b300 --radix 128 --nodes-per-su 64 --nodes 16384 \
  --diagram svg >"$tmp/d.svg" || note "--diagram svg"
if xmllint --noout "$tmp/d.svg" 2>/dev/null &&
   [ "$(grep -c 'class="group"' "$tmp/d.svg")" -eq 33 ]; then ok
else note "svg: $(head -c 300 "$tmp/d.svg")"; fi
"$bin" plan --preset h100-superpod --nodes 128 --diagram dot | grep -q "^graph tiers" \
  && ok || note "--diagram dot"

# Designs side by side: option strings and a YAML design file.
printf 'preset: b200-superpod\noversub: "2:1"\n' >"$tmp/b.yaml"
out=$("$bin" plan --gpus 2048 --compare "--preset h100-superpod" --compare "$tmp/b.yaml")
grep -qE "^spines +32 +16$" <<<"$out" && ok || note "--compare: $out"
printf 'preset: h100-superpod\n' >"$tmp/a.yaml"
out=$("$bin" plan --gpus 2048 --compare "$tmp/a.yaml" "$tmp/b.yaml")
grep -qE "^spines +32 +16$" <<<"$out" && ok || note "--compare A.yaml B.yaml: $out"
"$bin" plan --gpus 2048 --compare "--preset h100-superpod" --json |
  python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[0]["spines"]==32' \
  && ok || note "--compare --json"

out=$("$bin" plan --preset a100-superpod --compare "--sus 1..2" 2>&1)
[ $? -eq 64 ] && grep -q "cannot hold" <<<"$out" && ok || note "nested --sus: $out"

# --compare with --workload: each design's step time equals the one the
# SU sweep predicts for the same size (one engine, one model).
w="$src/tests/data/workloads/tiny-dense.yaml"
cmp=$("$bin" plan --preset a100-superpod --compare "--nodes 20" --compare "--nodes 40" \
      --workload "$w" 2>&1 | awk '/^step time/ {print $3, $5}')
swp=$("$bin" plan --preset a100-superpod --sus 1..2 --workload "$w" 2>&1 |
      awk '$1 ~ /^[12]$/ && $NF ~ /%$/ {printf "%s%s", sep, $4; sep=" "}')
[ -n "$cmp" ] && [ "$cmp" = "$swp" ] && ok || note "compare step '$cmp' vs sweep '$swp'"

# The bundled catalog round-trips through --catalog; a bad one exits 65.
"$bin" plan --print-catalog >"$tmp/cat.yaml"
"$bin" plan --preset h100-superpod --nodes 64 --catalog "$tmp/cat.yaml" >/dev/null \
  && ok || note "--catalog of --print-catalog"
printf 'topsim_catalog: 1\nswitches:\n  - {name: X, ports: 4, speed: 1Gb/s, watts: 3, source: t}\n' >"$tmp/bad.yaml"
out=$("$bin" plan --nodes 4 --catalog "$tmp/bad.yaml" 2>&1)
[ $? -eq 65 ] && grep -q "bad.yaml:3:" <<<"$out" && ok || note "bad catalog: $out"

lib_summary
