#!/usr/bin/env bash
# cli_topo.sh BIN SRCDIR [SANITIZED] - drives the real `topsim topo` binary:
#  1. every bundled topology loads, validates (exit 0) and prints a summary;
#  2. every file of the malformed corpus (tests/data/bad/EXPECT*: file, exit
#     status, expected message) fails with that status and exactly one
#     "error:" line naming file:line:column (empty files have no position),
#     never a crash (a signal gives status >= 128);
#  3. when not built with sanitizers and valgrind is present, a summary and
#     a few failures run leak-free under valgrind.
set -u
bin=$1
src=$2
sanitized=${3:-OFF}
. "$(dirname "$0")/lib.sh"

for f in "$src"/topologies/*.yaml; do
  out=$("$bin" topo "$f" 2>&1)
  st=$?
  if [ $st -ne 0 ]; then note "$f exited $st: $out"; continue; fi
  grep -q "^GPUs: " <<<"$out" || { note "$f: no GPU line"; continue; }
  "$bin" topo --validate "$f" >/dev/null 2>&1 || { note "$f --validate"; continue; }
  ok
done

while IFS=$'\t' read -r file want msg; do
  [ -n "$file" ] || continue
  path="$src/tests/data/bad/$file"
  err=$("$bin" topo "$path" 2>&1 >/dev/null)
  st=$?
  if [ $st -ne "$want" ]; then note "$file: exit $st, want $want ($err)"; continue; fi
  lines=$(grep -c "error:" <<<"$err")
  if [ "$lines" -ne 1 ]; then note "$file: $lines error lines: $err"; continue; fi
  if ! grep -qF -- "$msg" <<<"$err"; then note "$file: want '$msg', got: $err"; continue; fi
  if [ "$want" -eq 65 ] && ! grep -qE "$file:[0-9]+:[0-9]+: error:" <<<"$err"; then
    note "$file: no file:line:column in: $err"; continue
  fi
  ok
done < <(cat "$src"/tests/data/bad/EXPECT*)

# Golden outputs (regenerate only on purpose, see tests/golden/README) and
# determinism: a second run must be byte-identical.
golden() { # golden FILE ARGS...
  local want=$1
  shift
  local got
  got=$("$bin" "$@" 2>&1) || { note "topsim $* failed"; return; }
  if ! diff -u "$want" <(printf '%s\n' "$got") >/dev/null; then
    note "topsim $* differs from $(basename "$want"):"
    diff -u "$want" <(printf '%s\n' "$got") | head -20
    return
  fi
  [ "$got" = "$("$bin" "$@" 2>&1)" ] && ok || note "topsim $* is not deterministic"
}
g=$src/tests/golden
for n in superpod-a100-1su cluster-2tier-4to1 gb200-nvl72 dgx-h100; do
  golden "$g/topo_$n.txt" topo "$src/topologies/$n.yaml"
done
for n in a100-pcie-nvlink-bridge server-8gpu-pcie-switch; do
  golden "$g/matrix_$n.txt" topo --matrix "$src/topologies/$n.yaml"
done
golden "$g/json_superpod-a100-1su.json" topo --json "$src/topologies/superpod-a100-1su.yaml"
golden "$g/dot_cluster-1tier-dgx-a100.dot" topo --dot --level rack "$src/topologies/cluster-1tier-dgx-a100.yaml"

# Usage errors: EX_USAGE (64) and EX_NOINPUT (66).
"$bin" topo >/dev/null 2>&1; [ $? -eq 64 ] && ok || note "no FILE should exit 64"
"$bin" topo --bogus x >/dev/null 2>&1; [ $? -eq 64 ] && ok || note "bad option should exit 64"
"$bin" topo "$src/no/such/file.yaml" >/dev/null 2>&1; [ $? -eq 66 ] && ok || note "missing file should exit 66"
"$bin" topo --help | grep -q "usage: topsim topo" && ok || note "topo --help"

if [ "$sanitized" != "ON" ] && command -v valgrind >/dev/null; then
  vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99)
  for args in "topo $src/topologies/superpod-a100-1su.yaml" \
              "topo --dot --level node $src/topologies/superpod-a100-1su.yaml" \
              "topo --json $src/topologies/gb200-nvl72.yaml" \
              "topo $src/tests/data/bad/alias_bomb.yaml" \
              "topo $src/tests/data/bad/dangling_link.yaml" \
              "topo $src/tests/data/bad/port_overflow.yaml"; do
    # shellcheck disable=SC2086
    "${vg[@]}" "$bin" $args >/dev/null 2>&1
    [ $? -ne 99 ] && ok || note "valgrind reports errors for: topsim $args"
  done
fi

lib_summary
