#!/usr/bin/env bash
# cli_readme.sh BIN SRCDIR [SANITIZED] - every `build/topsim` example of the
# README's shell blocks runs as written on a fresh clone: exit 0, no
# tool outside topsim needed (pipes into other programs would fail here
# when that program is not installed). Runs in a scratch directory that
# sees the repository's topologies/, examples/ and tests/ (test data).
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
lib_tmp
# A copy, not a link: README examples write files (check --update rewrites
# its baseline, plan --emit-yaml) and must never touch the repository.
cp -r "$src/topologies" "$tmp/topologies"
ln -s "$src/examples" "$tmp/examples"
ln -s "$src/tests" "$tmp/tests"
mkdir -p "$tmp/build"
ln -s "$bin" "$tmp/build/topsim"
cd "$tmp" || exit 1
while IFS= read -r line; do
  cmd=${line%%  #*}
  if bash -c "$cmd" >/dev/null 2>"$tmp/err"; then pass=$((pass + 1))
  else echo "FAIL: $cmd: $(head -c 300 "$tmp/err")"; fail=$((fail + 1)); fi
done < <(awk '/^```sh/{f=1; next} /^```/{f=0} f && /^build\/topsim /' \
           "$src/README.md")
[ $pass -gt 5 ] || { echo "FAIL: found only $pass README examples"; fail=$((fail + 1)); }
lib_summary
