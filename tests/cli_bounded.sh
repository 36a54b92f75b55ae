#!/usr/bin/env bash
# cli_bounded.sh BIN SRCDIR [SANITIZED] - the shortcuts that are not exact
# (docs/model.md "Bounded shortcuts"): batches of back-to-back gradient
# buckets and crossed replays that stand are on by default; TP / CP
# replays beside active flows and compact rings of 2-7 ranks on one host
# only with --bounded (all of them) or --bounded=LIST. On the bundled 4:1 fabric (1,024 A100, DP x CP rings
# over the oversubscribed leaves; TP and CP instances replayed beside the
# flows on their NVLinks) the default and --bounded steps stay within 1%
# of --exact, bytes per GPU are equal, fewer collectives and events run;
# --bounded=none keeps only the exact shortcuts (the JSON bar counters
# equals --exact's); --exact wins over --bounded (byte-identical to
# --exact alone); an unknown shortcut name is a usage error.
# --bounded=steady: a pipeline of 48 micro-batches at pp 4 with nothing
# contended runs at 8 and 16 and gives --exact's step (affine in M there),
# says so in the text report and in counters.steady_from; fewer
# micro-batches than 12 x pp run whole.
# cross (default): CP 4 across two hosts with a pipeline of 2 stages, whose
# sends cross the CP replays' NIC windows: they stand, the step runs once
# (counters.crossed_kept > 0, attempts 1), within 1% of --exact; with
# --bounded=batch alone a crossing voids the attempt (2 runs, none kept).
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
"${run[@]}" --bounded=none >"$tmp/n.json" || note "run --bounded=none"
"${run[@]}" --bounded=batch >"$tmp/bb.json" || note "run --bounded=batch"
"${run[@]}" --exact --bounded >"$tmp/eb.json" || note "run --exact --bounded"
"${run[@]}" --bounded=batch,cross >"$tmp/bx.json" || note "run --bounded=batch,cross"
python3 - "$tmp/b.json" "$tmp/e.json" "$tmp/d.json" "$tmp/eb.json" "$tmp/n.json" "$tmp/bb.json" "$tmp/bx.json" <<'PY' && ok || note "bounded against --exact"
import json, sys
b, e, d, eb, n, bb, bx = (json.load(open(p)) for p in sys.argv[1:8])
cb, ce, cd, ceb, cn, cbb, cbx = (y.pop("counters") for y in (b, e, d, eb, n, bb, bx))
for name, x in (("--bounded", b), ("default", d)):
    err = abs(x["step_time_s"] - e["step_time_s"]) / e["step_time_s"]
    assert err <= 0.01, (name, err)
    assert x["bytes_sent_mean"] == e["bytes_sent_mean"], name
assert e["breakdown"]["exposed_s"]["dp"] > 0  # the gradients contend
# the default batches the buckets: fewer collectives and events
assert cb["collectives"] < ce["collectives"], (cb["collectives"], ce["collectives"])
assert cd["collectives"] < cn["collectives"] == ce["collectives"]
assert cb["events"] <= cd["events"] < cn["events"] < ce["events"], (cb["events"], cd["events"])
assert d == bx and cd == cbx, "the default is not batch,cross"
assert n == e, "--bounded=none is not the exact run"
assert eb == e and ceb == ce, "--exact --bounded differs from --exact"
# TP / CP instances replayed beside the gradient rings' NVLink hops: only
# with --bounded, counted among the replays
assert 0 < cb["replayed_beside"] <= cb["replayed"], cb
assert cd["replayed_beside"] == cn["replayed_beside"] == ce["replayed_beside"] == 0
PY
cat >"$tmp/cp.yaml" <<'YAML'
topsim: 1
name: cpx
model: {layers: 4, hidden: 2048, heads: 16, seq_len: 8192, vocab: 128}
training: {global_batch: 64, micro_batch: 1, schedule: 1f1b, zero_stage: 1, dp_bucket_size: 8MB}
parallelism: {tp: 4, cp: 4, pp: 2, dp: 8, order: tp-cp-dp-pp, gpus: 256}
YAML
cp=("$bin" run "$tmp/cp.yaml" --topology "$src/topologies/cluster-2tier-4to1.yaml" --quiet --json)
"${cp[@]}" >"$tmp/cd.json" || note "run (default, cp)"
"${cp[@]}" --bounded=batch >"$tmp/cb.json" || note "run --bounded=batch (cp)"
"${cp[@]}" --exact >"$tmp/ce.json" || note "run --exact (cp)"
python3 - "$tmp/cd.json" "$tmp/cb.json" "$tmp/ce.json" <<'PY' && ok || note "crossed replays stand"
import json, sys
d, b, e = (json.load(open(p)) for p in sys.argv[1:4])
cd, cb, ce = (y.pop("counters") for y in (d, b, e))
assert cd["crossed_kept"] > 0 and cd["attempts"] == 1, cd
assert cb["crossed_kept"] == ce["crossed_kept"] == 0 and cb["attempts"] == 2, cb
err = abs(d["step_time_s"] - e["step_time_s"]) / e["step_time_s"]
assert err <= 0.01, err
assert d["bytes_sent_mean"] == e["bytes_sent_mean"]
PY
"$bin" run --help | grep -q -- '--bounded' && ok || note "--bounded in --help"
"${run[@]}" --bounded=batch,foo >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 64 ] && grep -q "batch, compact, beside, steady, cross" "$tmp/err" && ok || note "--bounded=foo: exit $rc"
cat >"$tmp/pipe.yaml" <<'YAML'
topsim: 1
name: pipe
model: {layers: 8, hidden: 2048, heads: 16, seq_len: 2048, vocab: 128}
training: {global_batch: 48, micro_batch: 1, schedule: 1f1b}
parallelism: {tp: 8, pp: 4, dp: 1, gpus: 32}
YAML
pipe=("$bin" run "$tmp/pipe.yaml" --topology "$src/topologies/superpod-a100-1su.yaml" --quiet)
"${pipe[@]}" --json --bounded=steady >"$tmp/s.json" || note "run --bounded=steady"
"${pipe[@]}" --json --exact >"$tmp/se.json" || note "run --exact (pipe)"
"${pipe[@]}" --json --bounded=steady --global-batch 44 >"$tmp/s44.json" || note "run 44"
python3 - "$tmp/s.json" "$tmp/se.json" "$tmp/s44.json" <<'PY' && ok || note "steady against --exact"
import json, sys
s, e, s44 = (json.load(open(p)) for p in sys.argv[1:4])
cs, ce, c44 = (x.pop("counters") for x in (s, e, s44))
assert cs["steady_from"] == [8, 16], cs["steady_from"]
assert ce["steady_from"] is None and c44["steady_from"] is None
assert s == e, "steady differs from --exact where nothing contends"
assert cs["events"] < ce["events"], (cs["events"], ce["events"])
assert s44["microbatches"] == 44
PY
"${pipe[@]}" --bounded=steady | grep -q "extrapolated from runs of 8 and 16 micro-batches" \
  && ok || note "steady in the text report"
lib_summary
