#!/usr/bin/env bash
# bench_mappings.sh BUILD N [RUN-OPTION...] - issue 9's "< 2 s for any
# mapping" over a sample instead of a few hand-picked mappings: enumerates
# every valid mapping of the GPT-3 175B example (`sweep --dry-run`), runs
# `topsim run` on every (valid / N)-th one (a fixed stride, so the sample is
# the same on every machine) and prints each run's user CPU time, then how
# many are under 2 s, the median, the 90th percentile and the slowest.
# Extra arguments go to every `run` (e.g. --bounded, --exact). A run is
# stopped after CAP seconds of CPU (default 60; `ulimit -t`) and counted
# as taking at least that.
#   CAP=120 tests/bench/bench_mappings.sh build-rel 40
set -eu
build=$1
n=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=$build/topsim
ex=$src/examples/gpt3-175b-1024-a100.yaml
cap=${CAP:-60}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" sweep "$ex" --dry-run --quiet --csv "$tmp/all.csv" >/dev/null
total=$(($(wc -l <"$tmp/all.csv") - 1))
stride=$(((total + n - 1) / n))
echo "valid mappings: $total; every ${stride}th, $n at most; run options: $*"
# columns: 3 tp 4 cp 5 pp 6 vp 7 dp 8 ep 9 mb 10 schedule 11 recompute
# 12 zero 13 order
tail -n +2 "$tmp/all.csv" | awk -F, -v s="$stride" '(NR - 1) % s == 0' |
  while IFS=, read -r _ _ tp cp pp vp dp ep mb sch rc z order _; do
    args=(--tp "$tp" --cp "$cp" --pp "$pp" --virtual-stages "$vp" --dp "$dp"
          --ep "$ep" --micro-batch "$mb" --schedule "$sch" --recompute "$rc"
          --zero "$z" --set "order=$order")
    if (ulimit -t "$cap"; exec /usr/bin/time -f '%U' -o "$tmp/t" "$bin" run \
          "$ex" "${args[@]}" --quiet "$@" >/dev/null 2>"$tmp/err"); then
      printf '%s %s\n' "$(cat "$tmp/t")" "${args[*]}"
    elif grep -q -i "killed\|signal" "$tmp/t"; then
      printf '%s %s (stopped at the cap)\n' "$cap" "${args[*]}"
    else
      echo "failed: ${args[*]}" >&2
      cat "$tmp/err" >&2
    fi
  done | tee "$tmp/times"
sort -n "$tmp/times" | awk -v cap="$cap" '{ t[NR] = $1; if ($1 < 2) u++; if (/cap\)$/) c++ }
  END { if (!NR) exit 1
        m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
        p = t[int(0.9 * NR + 0.999)]
        printf "%d runs: %d under 2 s, %d stopped at %d s; median %.2f s, 90th percentile %.2f s, slowest %.2f s (user CPU)\n",
               NR, u, c, cap, m, p, t[NR] }'
