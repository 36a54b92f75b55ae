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
fail=0
pass=0
note() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { pass=$((pass + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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
--preset a100-superpod --nodes 20 --workload w.yaml|needs --sus A..B
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
"$bin" plan --template /nonexistent.yaml:x --nodes 1 >/dev/null 2>&1
[ $? -eq 66 ] && ok || note "missing template file should exit 66"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
