/* test_step.c - the step model (ts_step.h): pipeline bubbles under free
 * communication, topology sensitivity of TP and EP, byte accounting,
 * conservation, determinism, and the CLI's refusal of layouts that do not
 * fit in memory. System everywhere: the first GPUs of
 * topologies/cluster-1tier-dgx-a100.yaml (40 DGX A100 nodes, 8 GPUs on
 * NVSwitch each, 8 HDR rails on one leaf tier). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_report_step.h"
#include "topsim/ts_step.h"
#include "topsim/ts_work.h"

#define TOPO "topologies/cluster-1tier-dgx-a100.yaml"

/* Dense model with uniform layers and a tiny vocabulary. Uniform stages:
 * the last stage's logits GEMM (vocab 128: 16 x 1 tiles of 256 x 128, one
 * wave of few SMs, work_eff.c) and the first stage's
 * embedding stay around 1% of a layer (the interleaved case has one layer
 * per chunk). Full recompute keeps the activations within an A100's HBM. */
static const char *dense =
    "topsim: 1\nname: uniform\n"
    "model: {layers: 8, hidden: 8192, heads: 64, seq_len: 4096, vocab: 128}\n"
    "training: {global_batch: 8, micro_batch: 1, schedule: 1f1b, recompute: full}\n"
    "parallelism: {tp: 1, pp: 4, dp: 1, gpus: 4}\n";

static ts_workload *load_work(const char *yaml, const char *const *kv,
                              size_t n) {
  ts_workload *w = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_workload_load_buffer(yaml, strlen(yaml), "<test>", &w, &d);
  if (!rc) rc = ts_workload_override_list(w, kv, n, &d);
  if (rc) fail_msg("%s", d.msg);
  return w;
}

static void run(const ts_workload *w, const ts_topo *t, int free_comm,
                ts_mapping **m, ts_step_result *r) {
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_work_map(w, t, m, &d);
  if (rc) fail_msg("map: %s", d.msg);
  ts_step_opts o;
  ts_step_opts_default(&o);
  o.free_comm = free_comm;
  rc = ts_step_run(w, t, *m, &o, r, &d);
  if (rc) fail_msg("step: %s", d.msg);
}

/* Optimizer time of stage 0 (charged after the pipeline drains). */
static ts_time_ps optimizer_ps(const ts_workload *w, const ts_topo *t) {
  ts_op *ops;
  size_t n;
  const ts_gpu_model *g = ts_topo_gpu_model(t, 0);
  assert_int_equal(ts_work_ops(w, g, 0, 0, &ops, &n), 0);
  ts_time_ps opt = 0;
  for (size_t i = 0; i < n; i++)
    if (ops[i].phase == TS_PHASE_STEP) opt += ops[i].time;
  free(ops);
  return opt;
}

/* p = 4 stages, m = 8 micro-batches, uniform stages, free communication:
 * every stage computes m (F + B) and the pipeline spans (m + p - 1)(F + B),
 * so stage 0 (the last to finish) waits (p - 1)(F + B) on receives:
 * bubble / (step - optimizer) = (p - 1) / (m + p - 1) = 3/11 = 0.2727. */
static void check_bubble(const char *schedule) {
  ts_topo *t = tu_load(TOPO);
  char kv[64];
  snprintf(kv, sizeof kv, "schedule=%s", schedule);
  const char *sets[] = {kv};
  ts_workload *w = load_work(dense, sets, 1);
  ts_mapping *m = NULL;
  ts_step_result r;
  run(w, t, 1, &m, &r);
  const ts_rank_label *lb = ts_mapping_rank(m, r.critical_rank);
  assert_int_equal(lb->index[TS_GROUP_PP], 0);
  double span = (double)(r.step_time - optimizer_ps(w, t));
  double frac = (double)r.critical.bubble / span, want = 3.0 / 11.0;
  assert_true(frac > want * 0.99 && frac < want * 1.01);
  for (int d = 0; d < TS_DIM_COUNT; d++) assert_int_equal(r.critical.exposed[d], 0);
  ts_step_result_free(&r);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
}

static void test_bubble_1f1b(void **state) {
  (void)state;
  check_bubble("1f1b");
}

static void test_bubble_gpipe(void **state) {
  (void)state;
  check_bubble("gpipe");
}

/* Interleaved with v = 2 virtual stages: the bubble shrinks to
 * (p - 1) / (v m + p - 1) of the span = 3/19 (Narayanan et al. 2021). */
static void test_bubble_interleaved(void **state) {
  (void)state;
  ts_topo *t = tu_load(TOPO);
  const char *sets[] = {"schedule=interleaved", "virtual_stages=2"};
  ts_workload *w = load_work(dense, sets, 2);
  ts_mapping *m = NULL;
  ts_step_result r;
  run(w, t, 1, &m, &r);
  double span = (double)(r.step_time - optimizer_ps(w, t));
  double frac = (double)r.critical.bubble / span, want = 3.0 / 19.0;
  assert_true(frac > want * 0.98 && frac < want * 1.02);
  ts_step_result_free(&r);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
}

/* DualPipe, in deepseek-ai/DualPipe's step order (the report's table 2
 * gives its bubble as (PP/2 - 1)(F&B + B - 3W), against 1F1B's
 * (PP - 1)(F + B)). Dense model, p = 4, m = 8 (4 per direction), B = 2F,
 * free communication, no weight-gradient split (W inside B). Replaying the
 * order by hand (each op starts when its rank is free and its input is
 * there), rank 0 runs
 *   F0.0 F0.1 F0.2 F1.0 B1.0 F1.1 F0.3 B1.1 F1.2 B0.0 B1.2 F1.3 B0.1 B1.3
 *   B0.2 B0.3
 * and waits 3F in all, ending last at 24F + 3F: bubble / span = 3/27 = 0.111, against 3/11 for 1F1B. */
static void test_bubble_dualpipe(void **state) {
  (void)state;
  ts_topo *t = tu_load(TOPO);
  /* no recompute, so B = 2F; a shorter sequence keeps it within HBM */
  const char *sets[] = {"schedule=dualpipe", "recompute=none", "seq_len=2048"};
  ts_workload *w = load_work(dense, sets, 3);
  ts_mapping *m = NULL;
  ts_step_result r;
  run(w, t, 1, &m, &r);
  double span = (double)(r.step_time - optimizer_ps(w, t));
  double frac = (double)r.critical.bubble / span, want = 3.0 / 27.0;
  assert_true(frac > want * 0.97 && frac < want * 1.03);
  for (int d = 0; d < TS_DIM_COUNT; d++)
    assert_int_equal(r.critical.exposed[d], 0);
  ts_step_result_free(&r);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
}

static const char *tp8 =
    "topsim: 1\nname: tp8\n"
    "model: {layers: 4, hidden: 4096, heads: 32, seq_len: 2048, vocab: 32000}\n"
    "training: {global_batch: 8, micro_batch: 1}\n"
    "parallelism: {tp: 8, pp: 1, dp: 2, gpus: 16}\n";

/* TP 8 x DP 2 on two DGX nodes. Default order (tp innermost): each TP
 * group is one node, its all-reduces ride NVLink (~235 GB/s per GPU).
 * Order dp-tp-...: each TP group takes 4 GPUs of each node, so its
 * all-reduces cross the 25 GB/s HDR NICs (the chooser takes the
 * hierarchical algorithm there): TP waits longer. The step as a whole is
 * not slower any more: the DP pairs then sit inside a node, and a
 * hierarchical TP all-reduce costs less than the cross-node DP ring of the
 * default order saves. */
static void test_tp_inside_node_faster(void **state) {
  (void)state;
  ts_topo *t = tu_load(TOPO);
  ts_workload *a = load_work(tp8, NULL, 0);
  const char *split[] = {"order=dp-tp-cp-ep-pp"};
  ts_workload *b = load_work(tp8, split, 1);
  ts_mapping *ma = NULL, *mb = NULL;
  ts_step_result ra, rb;
  run(a, t, 0, &ma, &ra);
  run(b, t, 0, &mb, &rb);
  assert_true(ra.critical.exposed[TS_DIM_TP] * 1.5 < rb.critical.exposed[TS_DIM_TP]);
  assert_true(ra.critical.exposed[TS_DIM_DP] > rb.critical.exposed[TS_DIM_DP]);
  ts_step_result_free(&ra);
  ts_step_result_free(&rb);
  ts_mapping_free(ma);
  ts_mapping_free(mb);
  ts_workload_free(a);
  ts_workload_free(b);
  ts_topo_free(t);
}

static const char *moe =
    "topsim: 1\nname: moe\n"
    "model: {layers: 2, hidden: 2048, heads: 16, seq_len: 1024, vocab: 32000,\n"
    "        experts: 32, top_k: 4, expert_ffn_hidden: 1024}\n"
    "training: {global_batch: 16, micro_batch: 1}\n"
    "parallelism: {tp: 1, pp: 1, dp: 16, ep: 16, gpus: 16}\n";

/* EP 16 over two nodes, 32 experts, top-4 routing. Unlimited, a token's
 * 4 experts are spread over both nodes; node-limited to M = 1 node, the
 * dispatch sends one copy per destination node, so cross-node EP bytes
 * drop (ts_work_comm's dedup model), and the simulated step moves them. */
static void test_ep_node_limited(void **state) {
  (void)state;
  ts_topo *t = tu_load(TOPO);
  ts_workload *a = load_work(moe, NULL, 0);
  const char *lim[] = {"node_limited_routing=1"};
  ts_workload *b = load_work(moe, lim, 1);
  ts_mapping *ma = NULL, *mb = NULL;
  ts_step_result ra, rb;
  run(a, t, 0, &ma, &ra);
  run(b, t, 0, &mb, &rb);
  assert_true(ra.cross_node_mean[TS_DIM_EP] > 0);
  assert_true(rb.cross_node_mean[TS_DIM_EP] < ra.cross_node_mean[TS_DIM_EP]);
  assert_true(rb.net.bytes_sent < ra.net.bytes_sent);
  ts_step_result_free(&ra);
  ts_step_result_free(&rb);
  ts_mapping_free(ma);
  ts_mapping_free(mb);
  ts_workload_free(a);
  ts_workload_free(b);
  ts_topo_free(t);
}

static const char *mixed =
    "topsim: 1\nname: mixed\n"
    "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 2048, vocab: 1024,\n"
    "        experts: 8, top_k: 2, expert_ffn_hidden: 512}\n"
    "training: {global_batch: 8, micro_batch: 1, zero_stage: 1,\n"
    "           dp_bucket_size: 4MB}\n"
    "parallelism: {tp: 2, cp: 2, pp: 2, dp: 4, ep: 2, gpus: 32}\n";

/* The bytes per step rank k sends per group, as ts_work_comm describes
 * them: what a run's per-rank counters must add up to. */
static ts_comm_volume rank_volume(const ts_workload *w, const ts_mapping *m,
                                  uint32_t k) {
  ts_comm_desc *c;
  size_t n;
  ts_comm_volume v;
  assert_int_equal(ts_work_comm(w, m, k, &c, &n), 0);
  ts_work_comm_volume(c, n, &v);
  free(c);
  return v;
}

/* Every rank's bytes per dimension equal ts_work_comm_volume's per-step
 * sums (DP = dp + grad + expert_grad groups): each descriptor runs exactly
 * `repeat` times. The network also delivers every byte it was given. */
static void test_bytes_match_volume(void **state) {
  (void)state;
  ts_topo *t = tu_load(TOPO);
  ts_workload *w = load_work(mixed, NULL, 0);
  ts_mapping *m = NULL;
  ts_step_result r;
  run(w, t, 0, &m, &r);
  for (uint32_t k = 0; k < ts_mapping_ranks(m); k++) {
    ts_comm_volume v = rank_volume(w, m, k);
    const uint64_t *b = &r.rank_bytes[(size_t)k * TS_DIM_COUNT];
    assert_int_equal(b[TS_DIM_TP], v.per_step[TS_GROUP_TP]);
    assert_int_equal(b[TS_DIM_CP], v.per_step[TS_GROUP_CP]);
    assert_int_equal(b[TS_DIM_EP], v.per_step[TS_GROUP_EP]);
    assert_int_equal(b[TS_DIM_PP], v.per_step[TS_GROUP_PP]);
    assert_int_equal(b[TS_DIM_DP], v.per_step[TS_GROUP_DP] +
                                       v.per_step[TS_GROUP_GRAD] +
                                       v.per_step[TS_GROUP_EXPERT_GRAD]);
  }
  assert_true(r.net.bytes_sent > 0);
  assert_int_equal(r.net.bytes_sent, r.net.bytes_delivered);
  assert_int_equal(r.net.transfers_started, r.net.transfers_finished);
  ts_step_result_free(&r);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
}

/* MoE, PP 2 x EP 8 x DP 8 on 16 GPUs (two nodes), m = 8: overlapping one
 * micro-batch's expert all-to-all with another's compute (ep_comm_overlap
 * on the interleaved schedule; DualPipe always) reorders the program but
 * moves exactly the bytes ts_work_comm describes, and with interleaving it
 * exposes less EP time than the same schedule without overlap. */
static const char *moe_pp =
    "topsim: 1\nname: moe-pp\n"
    "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 1024, vocab: 1024,\n"
    "        experts: 32, top_k: 4, expert_ffn_hidden: 1024}\n"
    "training: {global_batch: 64, micro_batch: 1, schedule: interleaved,\n"
    "           virtual_stages: 2}\n"
    "parallelism: {tp: 1, pp: 2, dp: 8, ep: 8, gpus: 16}\n";

static void check_bytes(const ts_workload *w, const ts_mapping *m,
                        const ts_step_result *r) {
  for (uint32_t k = 0; k < ts_mapping_ranks(m); k++) {
    ts_comm_volume v = rank_volume(w, m, k);
    const uint64_t *b = &r->rank_bytes[(size_t)k * TS_DIM_COUNT];
    assert_int_equal(b[TS_DIM_EP], v.per_step[TS_GROUP_EP]);
    assert_int_equal(b[TS_DIM_PP], v.per_step[TS_GROUP_PP]);
  }
  assert_int_equal(r->net.bytes_sent, r->net.bytes_delivered);
}

static void test_ep_overlap(void **state) {
  (void)state;
  ts_topo *t = tu_load(TOPO);
  const char *on[] = {"ep_comm_overlap=true"};
  const char *dual[] = {"schedule=dualpipe"};
  ts_workload *a = load_work(moe_pp, NULL, 0), *b = load_work(moe_pp, on, 1);
  ts_workload *c = load_work(moe_pp, dual, 1);
  ts_mapping *ma = NULL, *mb = NULL, *mc = NULL;
  ts_step_result ra, rb, rc;
  run(a, t, 0, &ma, &ra);
  run(b, t, 0, &mb, &rb);
  run(c, t, 0, &mc, &rc);
  check_bytes(b, mb, &rb);
  check_bytes(c, mc, &rc);
  assert_true(ra.critical.exposed[TS_DIM_EP] > 0);
  assert_true(rb.critical.exposed[TS_DIM_EP] < ra.critical.exposed[TS_DIM_EP]);
  ts_step_result_free(&ra);
  ts_step_result_free(&rb);
  ts_step_result_free(&rc);
  ts_mapping_free(ma);
  ts_mapping_free(mb);
  ts_mapping_free(mc);
  ts_workload_free(a);
  ts_workload_free(b);
  ts_workload_free(c);
  ts_topo_free(t);
}

static char *json_of(const ts_workload *w, const ts_topo *t, size_t *len) {
  ts_mapping *m = NULL;
  ts_step_result r;
  run(w, t, 0, &m, &r);
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  assert_non_null(f);
  assert_int_equal(ts_report_step_json(&r, w, m, t, f), 0);
  fclose(f);
  ts_step_result_free(&r);
  ts_mapping_free(m);
  return buf;
}

/* Per-rank DP bytes of a run equal what ts_work_comm describes. */
static void check_dp_bytes(const ts_workload *w, const ts_mapping *m,
                           const ts_step_result *r) {
  for (uint32_t k = 0; k < ts_mapping_ranks(m); k++) {
    ts_comm_volume v = rank_volume(w, m, k);
    const uint64_t *b = &r->rank_bytes[(size_t)k * TS_DIM_COUNT];
    assert_int_equal(b[TS_DIM_DP], v.per_step[TS_GROUP_DP] +
                                       v.per_step[TS_GROUP_GRAD] +
                                       v.per_step[TS_GROUP_EXPERT_GRAD]);
  }
}
/* Gradient buckets, DP 2 on one DGX A100 node (NVLink), pp 1, one
 * micro-batch, ZeRO 0 (bucketed all-reduces). 4 layers of h = 4096 carry
 * almost all S gradient bytes (vocab 128). Without overlap the whole
 * all-reduce T(S) waits after the backward. With buckets of S/4 issued as
 * each layer's gradients become final, a bucket's all-reduce (~4 ms at
 * NVLink rates) finishes inside the next layer's backward (~15 ms), so
 * only the last one is exposed: T(S/4) + T(remainder) ~= T(S)/4 when the
 * bandwidth term dominates (it does: S/4 ~ 0.8 GB against us-scale
 * latencies). One bucket of S exposes T(S) whether overlapped or not. */
static const char *buck =
    "topsim: 1\nname: buckets\n"
    "model: {layers: 4, hidden: 4096, heads: 32, seq_len: 4096, vocab: 128}\n"
    "training: {global_batch: 2, micro_batch: 1, dp_bucket_size: 1TB}\n"
    "parallelism: {tp: 1, pp: 1, dp: 2, gpus: 2}\n";

static double exposed_dp(const ts_topo *t, const char *const *kv, size_t n,
                         uint64_t *grad_bytes) {
  ts_workload *w = load_work(buck, kv, n);
  ts_mapping *m = NULL;
  ts_step_result r;
  run(w, t, 0, &m, &r);
  if (grad_bytes) {
    ts_comm_desc *c;
    size_t nd;
    assert_int_equal(ts_work_comm(w, m, 0, &c, &nd), 0);
    *grad_bytes = 0;
    for (size_t i = 0; i < nd; i++)
      if (c[i].group_kind == TS_GROUP_GRAD) *grad_bytes += c[i].bytes;
    free(c);
  }
  double e = (double)r.critical.exposed[TS_DIM_DP];
  ts_step_result_free(&r);
  ts_mapping_free(m);
  ts_workload_free(w);
  return e;
}

static void test_last_bucket_exposure(void **state) {
  (void)state;
  ts_topo *t = tu_load(TOPO);
  uint64_t S = 0;
  const char *off[] = {"dp_overlap=false"};
  double full = exposed_dp(t, off, 1, &S);
  assert_true(S > 3200000000ull); /* 4 layers x 12 h^2 x 4 bytes = 3.22 GB */
  double one = exposed_dp(t, NULL, 0, NULL);
  assert_true(full > 0);
  assert_true(one > full * 0.99 && one < full * 1.01);
  char kv[64];
  snprintf(kv, sizeof kv, "dp_bucket_size=%lluB", (unsigned long long)(S / 4));
  const char *quarter[] = {kv};
  double last = exposed_dp(t, quarter, 1, NULL);
  assert_true(last > full * 0.22 && last < full * 0.30);
  ts_topo_free(t);
}

/* Distributed optimizer on the same layout: the bf16 weight all-gather
 * follows the optimizer (exposed) unless dp_param_overlap moves it ahead
 * of the next forward, where it hides behind the layers (each layer waits
 * for its quarter only). Same bytes either way. */
static void test_param_gather_overlap(void **state) {
  (void)state;
  ts_topo *t = tu_load(TOPO);
  const char *a[] = {"distributed_optimizer=true", "dp_bucket_size=200MB"};
  const char *b[] = {"distributed_optimizer=true", "dp_bucket_size=200MB",
                     "dp_param_overlap=true"};
  double ea = exposed_dp(t, a, 2, NULL), eb = exposed_dp(t, b, 3, NULL);
  assert_true(ea > 0);
  assert_true(eb < ea * 0.6);
  ts_workload *w = load_work(buck, b, 3);
  ts_mapping *m = NULL;
  ts_step_result r;
  run(w, t, 0, &m, &r);
  check_dp_bytes(w, m, &r);
  ts_step_result_free(&r);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
}

/* Same inputs, two runs: byte-identical JSON (integer time, ties broken by
 * insertion order, ranks started in order). */
static void test_deterministic(void **state) {
  (void)state;
  ts_topo *t = tu_load(TOPO);
  ts_workload *w = load_work(mixed, NULL, 0);
  size_t la, lb;
  char *a = json_of(w, t, &la), *b = json_of(w, t, &lb);
  assert_int_equal(la, lb);
  assert_memory_equal(a, b, la);
  free(a);
  free(b);
  ts_workload_free(w);
  ts_topo_free(t);
}

/* Llama 70B with no model parallelism on 8 A100-80GB: ~1.1 TB of weights
 * and optimizer state per GPU cannot fit; `topsim run` exits 65. */
static void test_cli_memory_refusal(void **state) {
  (void)state;
  const char *bin = getenv("TOPSIM_BIN");
  if (!bin) skip();
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' run '%s' --topology '%s' --tp 1 --pp 1 "
           "--dp 8 --set gpus=8 --set distributed_optimizer=false "
           ">/dev/null 2>&1", bin, tu_path("examples/llama-70b-64-h100.yaml"),
           tu_path(TOPO));
  int st = system(cmd);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 65);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bubble_1f1b),
      cmocka_unit_test(test_bubble_gpipe),
      cmocka_unit_test(test_bubble_interleaved),
      cmocka_unit_test(test_bubble_dualpipe),
      cmocka_unit_test(test_ep_overlap),
      cmocka_unit_test(test_tp_inside_node_faster),
      cmocka_unit_test(test_ep_node_limited),
      cmocka_unit_test(test_bytes_match_volume),
      cmocka_unit_test(test_last_bucket_exposure),
      cmocka_unit_test(test_param_gather_overlap),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_cli_memory_refusal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
