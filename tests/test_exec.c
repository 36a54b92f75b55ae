/* test_exec.c - the engine-side runtime (ts_exec.h) and the step's exact
 * shortcut: groups that own their links replay one isolated run per
 * distinct collective, and ranks run ahead of the engine through them
 * (exec_step_fast.c, exec_step_run.c). Every equivalence case has
 * contention the shortcut must not disturb (DP rings over 4:1 leaves, a
 * failed spine, shared spines, skewed all-to-all), and asserts the fast
 * step equals the exact one (--exact): the same step time to the
 * picosecond, breakdowns, bytes and the busiest links' counters, while
 * the shortcut actually replayed collectives and saved events. */
#include "testutil.h"

#include <string.h>

#include "topsim/ts_exec.h"
#include "topsim/ts_step.h"

static ts_workload *load_work(const char *yaml) {
  ts_workload *w = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_workload_load_buffer(yaml, strlen(yaml), "<test>", &w, &d))
    fail_msg("%s", d.msg);
  return w;
}

static void step(const ts_workload *w, const ts_topo *t, const ts_mapping *m,
                 const ts_route_state *st, int exact, ts_step_result *r) {
  ts_step_opts o;
  ts_step_opts_default(&o);
  o.exact = exact;
  o.state = st;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_step_run(w, t, m, &o, r, &d)) fail_msg("step: %s", d.msg);
}

/* Fast and exact agree on everything the model computes. */
static void same_step(const ts_step_result *a, const ts_step_result *b) {
  assert_true(a->step_time > 0);
  assert_int_equal(a->step_time, b->step_time);
  assert_int_equal(a->critical_rank, b->critical_rank);
  assert_memory_equal(&a->critical, &b->critical, sizeof a->critical);
  assert_int_equal(a->collectives, b->collectives);
  assert_int_equal(a->transfers, b->transfers);
  assert_int_equal(a->wire_bytes, b->wire_bytes);
  assert_int_equal(a->ntop, b->ntop);
  for (uint32_t i = 0; i < a->ntop; i++) {
    assert_int_equal(a->top[i].dir, b->top[i].dir);
    assert_int_equal(a->top[i].bytes, b->top[i].bytes);
    assert_int_equal(a->top[i].busy, b->top[i].busy);
  }
  for (uint32_t r = 0; r < a->ranks; r++) {
    assert_int_equal(a->rank_finish[r], b->rank_finish[r]);
    assert_memory_equal(&a->rank_breakdown[r], &b->rank_breakdown[r],
                        sizeof a->rank_breakdown[r]);
  }
}

/* Runs w fast and exact on t (with failures st); returns the replays. */
static uint64_t equivalent(const char *yaml, const char *topo,
                           const char *fail_name, ts_time_ps *dp_exposed) {
  ts_topo *t = tu_load(topo);
  ts_workload *w = load_work(yaml);
  ts_mapping *m = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_work_map(w, t, &m, &d)) fail_msg("map: %s", d.msg);
  ts_route_state *st = NULL;
  if (fail_name) {
    assert_int_equal(ts_route_state_new(t, &st), 0);
    assert_int_equal(ts_route_fail_by_name(st, t, fail_name, &d), 0);
  }
  ts_step_result fast, exact;
  step(w, t, m, st, 0, &fast);
  step(w, t, m, st, 1, &exact);
  same_step(&fast, &exact);
  assert_int_equal(exact.replayed, 0);
  assert_true(fast.sim.events_processed < exact.sim.events_processed);
  uint64_t replayed = fast.replayed;
  *dp_exposed = exact.critical.exposed[TS_DIM_DP];
  ts_step_result_free(&fast);
  ts_step_result_free(&exact);
  ts_route_state_free(st);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
  return replayed;
}

/* TP 8 x PP 2 x DP 64 on 1,024 A100 behind 4:1 oversubscribed leaves: the
 * DP rings span all four SUs, so gradients crowd the 8 uplinks per leaf;
 * TP groups fill a host and own its NVLinks. */
static const char *dense_4to1 =
    "topsim: 1\nname: dense\n"
    "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 1024, vocab: 128}\n"
    "training: {global_batch: 128, micro_batch: 1, schedule: 1f1b}\n"
    "parallelism: {tp: 8, pp: 2, dp: 64, order: tp-cp-pp-dp}\n";

static void oversubscribed(void **state) {
  (void)state;
  ts_time_ps dp;
  uint64_t n = equivalent(dense_4to1, "topologies/cluster-2tier-4to1.yaml",
                          NULL, &dp);
  assert_true(n > 0);
  assert_true(dp > 0);
}

/* The same with spine 0 of group 0 down: fewer uplinks, ECMP around it. */
static void failed_spine(void **state) {
  (void)state;
  ts_time_ps dp_fail, dp;
  uint64_t n = equivalent(dense_4to1, "topologies/cluster-2tier-4to1.yaml",
                          "compute/spine-g0-0", &dp_fail);
  equivalent(dense_4to1, "topologies/cluster-2tier-4to1.yaml", NULL, &dp);
  assert_true(n > 0);
  assert_true(dp_fail >= dp);
}

/* One SuperPOD SU (20 DGX A100, leaves under shared spines): TP 8 x PP 2 x
 * DP 10 with DP outermost, so the DP rings cross leaves and spines while
 * pipeline sends cross them too. */
static void shared_spines(void **state) {
  (void)state;
  static const char *y =
      "topsim: 1\nname: spines\n"
      "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 1024, vocab: 128}\n"
      "training: {global_batch: 40, micro_batch: 1, schedule: 1f1b}\n"
      "parallelism: {tp: 8, pp: 2, dp: 10, order: tp-cp-pp-dp}\n";
  ts_time_ps dp;
  assert_true(equivalent(y, "topologies/superpod-a100-1su.yaml", NULL, &dp) > 0);
  assert_true(dp > 0);
}

/* MoE with Zipf routing skew 1.0: EP 4 all-to-alls across hosts carry
 * uneven matrices (hot experts), TP 8 fills each host. */
static void skewed_moe(void **state) {
  (void)state;
  static const char *y =
      "topsim: 1\nname: moe\n"
      "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 1024, vocab: 128,\n"
      "        experts: 8, top_k: 2, expert_ffn_hidden: 1024,\n"
      "        routing_skew: 1.0}\n"
      "training: {global_batch: 16, micro_batch: 1, schedule: 1f1b}\n"
      "parallelism: {tp: 8, pp: 1, dp: 4, ep: 4, gpus: 32}\n";
  ts_time_ps dp;
  assert_true(equivalent(y, "topologies/superpod-a100-1su.yaml", NULL, &dp) > 0);
}

/* Pipeline-heavy with contention: TP 8 x PP 8 interleaved (v 2) x DP 16 on
 * 1,024 A100 behind 4:1 leaves, PP outermost so every stage boundary
 * crosses leaves and spines where DP rings also run. Each pipeline send is
 * posted at once (no start event, exec_coll_send1) on the fast side and
 * through a one-transfer run on the exact side: the steps must not differ.
 * The event bound only says the fast side is no busier than the sends it
 * saves (the replays save far more; `topsim run` on this case shows
 * exactly 61,440 fewer events than before exec_coll_send1). Sends: per
 * micro-batch, forward and backward each cross pp*v - 1 chunk boundaries,
 * so a stage-0 replica sends 2(pp*v - 1)*m over the pipeline; with m = 16
 * micro-batches (global 256 / (micro 1 x DP 16)) that is 2*15*16 = 480 per
 * pipeline times 8 TP lanes times 16 DP replicas = 61,440 sends. */
static void pipeline_sends(void **state) {
  (void)state;
  static const char *y =
      "topsim: 1\nname: pipe\n"
      "model: {layers: 16, hidden: 2048, heads: 16, seq_len: 1024, vocab: 128}\n"
      "training: {global_batch: 256, micro_batch: 1, schedule: interleaved,\n"
      "           virtual_stages: 2}\n"
      "parallelism: {tp: 8, pp: 8, dp: 16, order: tp-cp-dp-pp}\n";
  ts_topo *t = tu_load("topologies/cluster-2tier-4to1.yaml");
  ts_workload *w = load_work(y);
  ts_mapping *m = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_work_map(w, t, &m, &d)) fail_msg("map: %s", d.msg);
  ts_step_result fast, exact;
  step(w, t, m, NULL, 0, &fast);
  step(w, t, m, NULL, 1, &exact);
  same_step(&fast, &exact);
  assert_true(exact.critical.exposed[TS_DIM_PP] + exact.critical.bubble > 0);
  assert_true(fast.sim.events_processed + 61440 <= exact.sim.events_processed);
  ts_step_result_free(&fast);
  ts_step_result_free(&exact);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
}

/* A group sharing its GPUs' NVLinks is never replayed: TP 4 x DP 2 inside
 * one DGX with DP innermost puts both groups on the same NVSwitch links. */
static void shared_nvlink_not_replayed(void **state) {
  (void)state;
  static const char *y =
      "topsim: 1\nname: shared\n"
      "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 1024, vocab: 128}\n"
      "training: {global_batch: 8, micro_batch: 1, schedule: 1f1b}\n"
      "parallelism: {tp: 4, pp: 1, dp: 2}\n";
  ts_topo *t = tu_load("topologies/dgx-a100.yaml");
  ts_workload *w = load_work(y);
  ts_mapping *m = NULL;
  ts_diag d;
  assert_int_equal(ts_work_map(w, t, &m, &d), 0);
  ts_step_result r;
  step(w, t, m, NULL, 0, &r);
  assert_int_equal(r.replayed, 0);
  ts_step_result_free(&r);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(oversubscribed),
      cmocka_unit_test(failed_spine),
      cmocka_unit_test(shared_spines),
      cmocka_unit_test(skewed_moe),
      cmocka_unit_test(pipeline_sends),
      cmocka_unit_test(shared_nvlink_not_replayed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
