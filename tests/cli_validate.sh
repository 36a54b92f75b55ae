#!/usr/bin/env bash
# cli_validate.sh BIN SRCDIR [SANITIZED] - `topsim topo --validate` over
# several files, text and --json: errors (exit 65) and warnings (legal but
# suspicious designs, exit unchanged), each with file, line, column.
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
w=$src/tests/data/warn
bad=$src/tests/data/bad/disconnected_plane.yaml
ok=$src/topologies/dgx-a100.yaml

# Every bundled topology at once: valid, exit 0; the one 4:1 build warns.
out=$("$bin" topo --validate "$src"/topologies/*.yaml 2>&1)
[ $? -eq 0 ] || note "bundled topologies: $out"
[ "$(grep -c ': valid' <<<"$out")" = "$(ls "$src"/topologies/*.yaml | wc -l)" ] ||
  note "one verdict per file expected: $out"
grep -qF "cluster-2tier-4to1.yaml:15:5: warning: plane 'compute' (backend): the leaf tier is 4:1 oversubscribed" <<<"$out" ||
  note "4:1 warning missing: $out"
grep -qF "cluster-2tier-4to1.yaml: valid, 1 warning" <<<"$out" || note "warning verdict"

# Warnings: uneven uplinks (6 and 2 NDR cables: 288 and 96 GB/s at 48 GB/s
# per cable) and more up than down (16 ports up, 8 down = 0.5:1).
out=$("$bin" topo --validate "$w/uneven_uplinks.yaml" "$w/more_up_than_down.yaml" 2>&1)
[ $? -eq 0 ] || note "warnings must not fail: $out"
grep -qF "uneven_uplinks.yaml:13:9: warning: plane 'p': 2 leaf switches have uneven uplinks (e.g. 'p/leaf0': 96 to 288 GB/s per upper switch)" <<<"$out" ||
  note "uneven warning: $out"
grep -qF "more_up_than_down.yaml:8:5: warning: plane 'p': the leaf tier has more uplink than downlink bandwidth (0.5:1, 16 ports up, 8 down)" <<<"$out" ||
  note "more-up warning: $out"

# An error among valid files: exit 65, every file still reported.
out=$("$bin" topo --validate "$ok" "$bad" "$w/uneven_uplinks.yaml" 2>&1)
[ $? -eq 65 ] || note "an invalid file must exit 65"
grep -qF "dgx-a100.yaml: valid" <<<"$out" || note "valid file after error"
grep -qF "disconnected_plane.yaml: 1 problem found" <<<"$out" || note "problem count"
"$bin" topo --validate "$ok" "$src/nope.yaml" >/dev/null 2>&1
[ $? -eq 66 ] || note "a missing file alone must exit 66"

# JSON: one document, problems with file/line/column/severity/message.
if command -v jq >/dev/null; then
  "$bin" topo --validate --json "$ok" "$bad" "$w/uneven_uplinks.yaml" "$src/nope.yaml" >"${TMPDIR:-/tmp}/v.$$.json"
  st=$?
  j=${TMPDIR:-/tmp}/v.$$.json
  [ $st -eq 65 ] || note "--json exit $st"
  v=$(jq -r '[.valid, (.files|length), (.problems|length)] | @tsv' "$j")
  [ "$v" = "$(printf 'false\t4\t3')" ] || note "JSON totals: $v"
  v=$(jq -r '.problems[] | [.severity, (.line|tostring), (.column|tostring)] | @tsv' "$j" | tr '\n' ' ')
  [ "$v" = "$(printf 'error\t15\t5 warning\t13\t9 error\tnull\tnull ')" ] || note "JSON problems: $v"
  v=$(jq -r '.files[] | "\(.valid):\(.errors):\(.warnings)"' "$j" | tr '\n' ' ')
  [ "$v" = "true:0:0 false:1:0 true:0:1 false:1:0 " ] || note "JSON files: $v"
  rm -f "$j"
fi

# Usage: --validate mixes only with --json; several files only with it.
"$bin" topo --validate --dot "$ok" >/dev/null 2>&1
[ $? -eq 64 ] || note "--validate --dot must be a usage error"
"$bin" topo "$ok" "$ok" >/dev/null 2>&1
[ $? -eq 64 ] || note "two files without --validate must be a usage error"

[ $fail -eq 0 ] && echo "cli_validate: all passed"
exit $((fail > 0))
