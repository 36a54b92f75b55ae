#!/usr/bin/env bash
# cli_bounded.sh BIN SRCDIR [SANITIZED] - `topsim run --bounded` turns on
# the shortcuts that are not exact (docs/model.md "Bounded shortcuts"):
# ZeRO 2's back-to-back gradient buckets run as one batch, TP 4 and CP 2
# rings compact. On the bundled 4:1 fabric (1,024 A100, DP x CP rings over
# the oversubscribed leaves; TP and CP instances also replayed beside the
# flows on their NVLinks) the step stays within 1% of --exact, bytes per
# GPU are equal, fewer collectives and events run; --exact wins over
# --bounded (byte-identical to --exact alone), and the default run is the
# exact one (the JSON bar counters equals --exact's).
set -u
bin=$1
src=${2:-.}
. "$(dirname "$0")/lib.sh"
lib_tmp

cat >"$tmp/work.yaml" <<'YAML'
topsim: 1
name: zero2
model: {layers: 4, hidden: 2048, heads: 16, seq_len: 4096, vocab: 128}
training: {global_batch: 512, micro_batch: 4, schedule: 1f1b, zero_stage: 2, dp_bucket_size: 8MB}
parallelism: {tp: 4, cp: 2, pp: 2, dp: 64, order: tp-cp-dp-pp}
YAML
run=("$bin" run "$tmp/work.yaml" --topology "$src/topologies/cluster-2tier-4to1.yaml" --quiet --json)
"${run[@]}" --bounded >"$tmp/b.json" || note "run --bounded"
"${run[@]}" --exact >"$tmp/e.json" || note "run --exact"
"${run[@]}" >"$tmp/d.json" || note "run (default)"
"${run[@]}" --exact --bounded >"$tmp/eb.json" || note "run --exact --bounded"
python3 - "$tmp/b.json" "$tmp/e.json" "$tmp/d.json" "$tmp/eb.json" <<'PY' && ok || note "bounded against --exact"
import json, sys
b, e, d, eb = (json.load(open(p)) for p in sys.argv[1:5])
cb, ce, cd, ceb = (x.pop("counters") for x in (b, e, d, eb))
err = abs(b["step_time_s"] - e["step_time_s"]) / e["step_time_s"]
assert err <= 0.01, err
assert b["bytes_sent_mean"] == e["bytes_sent_mean"]
assert e["breakdown"]["exposed_s"]["dp"] > 0  # the gradients contend
assert cb["collectives"] < ce["collectives"], (cb["collectives"], ce["collectives"])
assert cb["events"] < cd["events"] < ce["events"]
assert d == e, "the default run is not the exact one"
assert eb == e and ceb == ce, "--exact --bounded differs from --exact"
# TP / CP instances replayed beside the gradient rings' NVLink hops: only
# with --bounded, and counted among the replays
assert 0 < cb["replayed_beside"] <= cb["replayed"], cb
assert cd["replayed_beside"] == 0 and ce["replayed_beside"] == 0
PY
"$bin" run --help | grep -q -- '--bounded' && ok || note "--bounded in --help"
lib_summary
