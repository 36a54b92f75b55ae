#!/usr/bin/env bash
# cli_tiers.sh BIN SRCDIR [SANITIZED] - tier-level diagrams:
#  1. `topo --svg` is well-formed XML (xmllint) with one box per tier group:
#     superpod-a100-7su = 1 NIC box + 8 rail leaf boxes + 8 spine groups +
#     2 core groups = 19; `--dot --level tier` draws 8 + 8 + 16 = 32 edges
#     whose NIC-leaf labels sum to the 1120 NICs;
#  2. a pod-sized plan (41 A100 SUs: 3 pods, 24 spine groups, 20 core
#     groups) draws the same boxes from the plan (`plan --diagram svg`) and
#     from its emitted topology (`topo --svg`): 1 + 8 rail leaf boxes + 8
#     rail spine boxes (24 groups > 16: by the rail they serve) + 1 core box
#     (20 groups > 16: merged) = 18.
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
lib_tmp
boxes() { grep -c 'class="group"' "$1"; }

"$bin" topo "$src/topologies/superpod-a100-7su.yaml" --svg >"$tmp/a.svg" || note "topo --svg"
xmllint --noout "$tmp/a.svg" && [ "$(boxes "$tmp/a.svg")" -eq 19 ] && ok ||
  note "7su svg: $(boxes "$tmp/a.svg") boxes"
"$bin" topo "$src/topologies/superpod-a100-7su.yaml" --dot --level tier >"$tmp/a.dot"
[ "$(grep -c -- ' -- ' "$tmp/a.dot")" -eq 32 ] && ok || note "7su dot edges"
sum=$(grep -E '^  b0 -- ' "$tmp/a.dot" | sed -E 's/.*label="([0-9]+)".*/\1/' |
      awk '{s += $1} END {print s}')
[ "$sum" = 1120 ] && ok || note "NIC-leaf cables $sum, want 1120"

"$bin" plan --preset a100-superpod --nodes 820 --emit-yaml "$tmp/p.yaml" \
  --diagram svg >"$tmp/p.svg" || note "plan --diagram svg"
"$bin" topo "$tmp/p.yaml" --svg >"$tmp/t.svg" || note "topo --svg of the plan"
xmllint --noout "$tmp/p.svg" "$tmp/t.svg" && ok || note "pod svgs not XML"
[ "$(boxes "$tmp/p.svg")" -eq 18 ] && [ "$(boxes "$tmp/t.svg")" -eq 18 ] && ok ||
  note "pod boxes: plan $(boxes "$tmp/p.svg"), topo $(boxes "$tmp/t.svg")"

"$bin" topo "$src/topologies/dgx-a100.yaml" --svg --json >/dev/null 2>&1
[ $? -eq 64 ] && ok || note "--svg with --json should exit 64"

lib_summary
