#!/usr/bin/env bash
# cli_check.sh BIN SRCDIR [SANITIZED] - drives the real `topsim check`:
#  1. the shipped baseline (topologies/check/baseline.yaml) passes: exit 0;
#  2. the issue's scenario: a copy of superpod-a100-1su.yaml recorded with
#     --update, then every leaf's uplinks halved (leaf up 20 -> 10), must
#     fail (exit 1) and say what moved in words;
#  3. the JUnit XML validates against tests/data/junit.xsd (xmllint) and
#     meets what a GitLab-style consumer reads (counts, names, times,
#     failure messages carrying the moved values);
#  4. --json carries the same moves as numbers, and is deterministic;
#  5. --update keeps rules and tolerances, is idempotent, refuses broken
#     topologies;
#  6. every malformed baseline (tests/data/check/EXPECT) exits 65 with
#     file:line:column; broken topologies give error cases and exit 65.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
. "$(dirname "$0")/lib.sh"
has() { grep -qF -- "$2" <<<"$1" || note "$3: missing '$2' in: $1"; }
lib_tmp

# 1. shipped baseline
out=$("$bin" check "$src/topologies/check/baseline.yaml" 2>&1)
st=$?
[ $st -eq 0 ] || note "shipped baseline exited $st: $out"
has "$out" " 0 failed, 0 errors, 0 skipped" "shipped baseline"

# 2. the scenario. superpod-a100-1su: 8 rail leaves of radix 40, 20 down
# (20 DGX) / 20 up to 4 spines; 160 HDR NICs x 24 GB/s. Halving the
# uplinks: leaf oversubscription 20:10 = 2:1; 8 x 10 = 80 uplinks fill
# 80 / 40 = 2 spines; bisection = half the smallest tier cut =
# min(160 x 24, 80 x 24) / 2 = 960 GB/s (was min(3840, 3840) / 2 = 1920).
cp "$src/topologies/superpod-a100-1su.yaml" "$tmp/sp.yaml"
cat >"$tmp/b.yaml" <<'EOF'
topsim_check: 1
rules:
  - oversubscription <= 1:1
topologies:
  - file: sp.yaml
    rules: ["bisection >= 1920GB/s"]
    tolerance: {bisection: 5%}
EOF
"$bin" check "$tmp/b.yaml" --update >/dev/null 2>&1 || note "--update of the scenario"
grep -q 'compute.leaf.oversubscription: "1:1"' "$tmp/b.yaml" || note "--update recorded no 1:1 leaf"
"$bin" check "$tmp/b.yaml" >/dev/null 2>&1 || note "recorded scenario does not pass"
sed -i 's/leaf: {radix: 40, down: 20, up: 20}/leaf: {radix: 40, down: 20, up: 10}/' "$tmp/sp.yaml"
grep -q 'up: 10}' "$tmp/sp.yaml" || note "scenario edit did not apply"
out=$("$bin" check "$tmp/b.yaml" --junit "$tmp/j.xml" 2>&1)
st=$?
[ $st -eq 1 ] || note "halved uplinks exited $st (want 1): $out"
has "$out" "compute plane leaf oversubscription 1:1 -> 2:1 (rule: <= 1:1)" scenario
has "$out" "bisection -50%: 1920 -> 960 GB/s" scenario
has "$out" "compute plane spine switches 4 -> 2" scenario
has "$out" "FAIL  $tmp/sp.yaml (superpod-a100-1su): 3 of 4 checks failed" scenario
has "$out" "1 topology, 4 checks: 1 passed, 3 failed, 0 errors, 0 skipped" scenario

# 3. JUnit: the schema, then a GitLab-style reader's expectations.
if command -v xmllint >/dev/null; then
  xmllint --noout --schema "$src/tests/data/junit.xsd" "$tmp/j.xml" 2>"$tmp/xl" ||
    note "JUnit does not validate: $(cat "$tmp/xl")"
  x() { xmllint --xpath "$1" "$tmp/j.xml" 2>/dev/null; }
  [ "$(x 'count(/testsuites/testsuite)')" = 1 ] || note "JUnit: one testsuite expected"
  [ "$(x 'count(//testcase)')" = "$(x 'string(/testsuites/@tests)')" ] || note "JUnit: tests count"
  [ "$(x 'count(//testcase)')" = 4 ] || note "JUnit: 4 testcases expected"
  [ "$(x 'count(//testcase[failure])')" = 3 ] || note "JUnit: 3 failures expected"
  [ "$(x 'string(/testsuites/testsuite/@failures)')" = 3 ] || note "JUnit: failures attribute"
  [ "$(x 'count(//testcase[not(@name) or @name="" or not(@classname) or @classname=""])')" = 0 ] ||
    note "JUnit: a testcase lacks name or classname"
  [ "$(x 'count(//testcase[not(number(@time) >= 0)])')" = 0 ] || note "JUnit: a time is not a number"
  [ "$(x 'count(//failure[not(@message) or @message=""])')" = 0 ] || note "JUnit: failure without message"
  rule=$(x 'string(//testcase[@name="rule: oversubscription <= 1:1"]/failure/@message)')
  has "$rule" "compute plane leaf oversubscription 1:1 -> 2:1 (rule: <= 1:1)" "JUnit rule message"
  body=$(x 'string(//testcase[@name="metrics"]/failure)')
  has "$body" "bisection -50%: 1920 -> 960 GB/s (tolerance 5%)" "JUnit metrics body"
  has "$body" "compute plane spine switches 4 -> 2" "JUnit metrics body"
  [ "$(x 'count(//testcase[@name="load"]/*)')" = 0 ] || note "JUnit: load should pass"
else
  echo "note: xmllint missing, JUnit schema check skipped"
fi

# 4. JSON: same moves as numbers; two runs byte-identical.
"$bin" check "$tmp/b.yaml" --json >"$tmp/a.json"
"$bin" check "$tmp/b.yaml" --json >"$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || note "--json differs between runs"
if command -v jq >/dev/null; then
  v=$(jq -r '.suites[0].cases[] | select(.name=="metrics") | .moves[] |
        select(.metric=="bisection") | "\(.baseline_value) \(.current_value) \(.unit)"' "$tmp/a.json")
  [ "$v" = "1920000000000 960000000000 B/s" ] || note "JSON bisection move: '$v'"
  v=$(jq -r '.status, .failed, (.suites[0].cases[2].moves[0].rule)' "$tmp/a.json" | tr '\n' ' ')
  [ "$v" = "fail 3 <= 1:1 " ] || note "JSON status/rule: '$v'"
fi

# 5. --update keeps rules and tolerances and records 2:1; the leaf rule
# still fails, the metrics case passes; a second update is byte-identical.
"$bin" check "$tmp/b.yaml" --update >/dev/null 2>&1 || note "--update after the edit"
grep -q '"bisection >= 1920GB/s"' "$tmp/b.yaml" || note "--update lost the entry rule"
grep -q '"oversubscription <= 1:1"' "$tmp/b.yaml" || note "--update lost the top rule"
grep -q 'bisection: 5%' "$tmp/b.yaml" || note "--update lost the tolerance"
grep -q 'compute.leaf.oversubscription: "2:1"' "$tmp/b.yaml" || note "--update did not record 2:1"
cp "$tmp/b.yaml" "$tmp/b1.yaml"
"$bin" check "$tmp/b.yaml" --update >/dev/null 2>&1
cmp -s "$tmp/b.yaml" "$tmp/b1.yaml" || note "--update is not idempotent"
out=$("$bin" check -v "$tmp/b.yaml" 2>&1)
[ $? -eq 1 ] || note "rules should still fail after --update"
has "$out" "PASS metrics" "after update"
has "$out" "compute plane leaf oversubscription 2:1 (rule: <= 1:1)" "after update"

# 6a. malformed baselines: 65 and the positioned message.
while IFS=$'\t' read -r file want msg; do
  [ -n "$file" ] || continue
  out=$(cd "$src/tests/data/check" && "$bin" check "$file" 2>&1)
  st=$?
  [ $st -eq "$want" ] || note "$file exited $st (want $want): $out"
  has "$out" "$msg" "$file"
done <"$src/tests/data/check/EXPECT"

# 6b. a missing and an invalid topology: error cases, exit 65, and
# --update refuses to record.
cat >"$tmp/e.yaml" <<EOF
topsim_check: 1
topologies:
  - file: missing.yaml
  - file: $src/tests/data/bad/disconnected_plane.yaml
  - file: $src/topologies/dgx-a100.yaml
EOF
out=$("$bin" check "$tmp/e.yaml" --junit "$tmp/e.xml" 2>&1)
[ $? -eq 65 ] || note "broken topologies should exit 65: $out"
has "$out" "ERROR $tmp/missing.yaml" "missing topology"
has "$out" "disconnected_plane.yaml:15:5: error: plane 'p' falls into 2 disconnected parts" "invalid topology"
has "$out" "3 topologies, 4 checks: 2 passed, 0 failed, 2 errors" "error totals"
if command -v xmllint >/dev/null; then
  xmllint --noout --schema "$src/tests/data/junit.xsd" "$tmp/e.xml" 2>/dev/null || note "error JUnit invalid"
  [ "$(xmllint --xpath 'count(//testcase[error])' "$tmp/e.xml")" = 2 ] || note "JUnit: 2 errors expected"
fi
cp "$tmp/e.yaml" "$tmp/e0.yaml"
"$bin" check "$tmp/e.yaml" --update >/dev/null 2>&1
[ $? -eq 65 ] || note "--update of broken topologies should exit 65"
cmp -s "$tmp/e.yaml" "$tmp/e0.yaml" || note "--update changed a baseline it refused"

# 6c. usage and help.
"$bin" check >/dev/null 2>&1
[ $? -eq 64 ] || note "no BASELINE should exit 64"
"$bin" check --help | grep -q -- "--junit FILE" || note "--help lacks --junit"
"$bin" check "$tmp/nope.yaml" >/dev/null 2>&1
[ $? -eq 66 ] || note "missing baseline should exit 66"
"$bin" check "$src/topologies/dgx-a100.yaml" 2>&1 | grep -q "this is a topology or workload file" ||
  note "a topology given as baseline should say so"

# 7. a large move reads as a plain percentage: busbw recorded as 1 GB/s
# against DGX A100's tens of GB/s moves by thousands of percent.
cat > "$tmp/far.yaml" <<EOF
topsim_check: 1
topologies:
  - file: $src/topologies/dgx-a100.yaml
    bench:
      - {op: all_reduce, size: 1MiB, busbw: 1GB/s, tolerance: 1%}
EOF
out=$("$bin" check "$tmp/far.yaml" 2>&1)
grep -qE 'busbw \+[0-9]{4,}%: 1 -> ' <<<"$out" && ! grep -q 'e+0' <<<"$out" \
  || note "large move not a plain percentage: $out"

[ $fail -eq 0 ] && echo "cli_check: all passed"
exit $((fail > 0))
