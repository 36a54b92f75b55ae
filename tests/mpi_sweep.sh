#!/usr/bin/env bash
# mpi_sweep.sh BIN SRCDIR - `mpirun -n 3 topsim sweep` (rank 0 hands out
# mappings one at a time to ranks 1 and 2 and gathers the rows) prints the
# same bytes as one process, for the table and for --json. Registered only
# in TOPSIM_MPI builds. --oversubscribe: the CI machine has 2 cores.
set -u
bin=$1
src=$2
fail=0
pass=0
note() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { pass=$((pass + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=("$src/tests/data/workloads/tiny-dense.yaml" --topology
      "$src/topologies/superpod-a100-1su.yaml" --gpus 16 --vary tp,pp,schedule)
mpi=(mpirun --allow-run-as-root --oversubscribe -n 3)

"$bin" sweep "${args[@]}" --jobs 1 --quiet >"$tmp/1.txt" || note "single process failed"
"$bin" sweep "${args[@]}" --jobs 1 --quiet --json >"$tmp/1.json" || note "single json failed"
"${mpi[@]}" "$bin" sweep "${args[@]}" >"$tmp/3.txt" 2>"$tmp/3.err" || note "mpirun failed: $(cat "$tmp/3.err")"
"${mpi[@]}" "$bin" sweep "${args[@]}" --quiet --json >"$tmp/3.json" || note "mpirun json failed"
[ -s "$tmp/1.txt" ] && cmp "$tmp/1.txt" "$tmp/3.txt" && cmp "$tmp/1.json" "$tmp/3.json" \
  && ok || note "3 MPI ranks print other bytes than one process"
# the wall-time line says MPI ran (rank 0 dispatching, 2 workers)
grep -q "mappings simulated in .* (MPI)" "$tmp/3.err" && ok \
  || note "no MPI run reported: $(cat "$tmp/3.err")"

# plan --sus --workload uses the same runner
plan=(plan --preset a100-superpod --sus 1..3 --quiet --workload
      "$src/tests/data/workloads/tiny-dense.yaml")
"$bin" "${plan[@]}" --jobs 1 >"$tmp/p1.txt" || note "plan single failed"
"${mpi[@]}" "$bin" "${plan[@]}" >"$tmp/p3.txt" || note "plan mpirun failed"
[ -s "$tmp/p1.txt" ] && cmp "$tmp/p1.txt" "$tmp/p3.txt" && ok \
  || note "plan over 3 MPI ranks differs from one process"

echo "mpi_sweep: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
