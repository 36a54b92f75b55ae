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

#include <math.h>
#include <stdlib.h>
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

/* w mapped onto t; fails the test with the mapper's message otherwise. */
static ts_mapping *map_work(const ts_workload *w, const ts_topo *t) {
  ts_mapping *m = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_work_map(w, t, &m, &d)) fail_msg("map: %s", d.msg);
  return m;
}

/* Route state of t with link `fail` down and `degrade` at half speed
 * (either may be NULL); NULL when neither is given. */
static ts_route_state *faulted_state(const ts_topo *t, const char *fail,
                                     const char *degrade) {
  if (!fail && !degrade) return NULL;
  ts_route_state *st = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_route_state_new(t, &st), 0);
  if (fail) assert_int_equal(ts_route_fail_by_name(st, t, fail, &d), 0);
  if (degrade)
    assert_int_equal(ts_route_degrade_by_name(st, t, degrade, 0.5, &d), 0);
  return st;
}

/* ts_route_opts.routing for the next steps: 0 = the topology's. */
static int route_override;
/* ts_step_opts.bounded for the fast side: the exact shortcuts alone (0)
 * unless a bounded test asks for them too. */
static unsigned bounded_fast;

static void step_f(const ts_workload *w, const ts_topo *t, const ts_mapping *m,
                   const ts_route_state *st, const ts_faults *f, int exact,
                   ts_step_result *r) {
  ts_step_opts o;
  ts_step_opts_default(&o);
  o.exact = exact;
  o.bounded = bounded_fast;
  o.route.routing = route_override;
  o.state = st;
  o.faults = f;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_step_run(w, t, m, &o, r, &d)) fail_msg("step: %s", d.msg);
}

static void step(const ts_workload *w, const ts_topo *t, const ts_mapping *m,
                 const ts_route_state *st, int exact, ts_step_result *r) {
  step_f(w, t, m, st, NULL, exact, r);
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
  assert_int_equal(a->ranks, b->ranks);
  assert_memory_equal(a->rank_bytes, b->rank_bytes,
                      (size_t)a->ranks * TS_DIM_COUNT * sizeof *a->rank_bytes);
  assert_memory_equal(a->bytes_mean, b->bytes_mean, sizeof a->bytes_mean);
  assert_memory_equal(a->cross_node_mean, b->cross_node_mean,
                      sizeof a->cross_node_mean);
  assert_int_equal(b->ranks_simulated, b->ranks); /* --exact never folds */
}

/* What run_both compares, and what it reports. */
typedef struct {
  const char *fail, *degrade, *straggler; /* link failed, link at 0.5, GPU=F */
} eq_faults;
typedef struct {
  uint64_t replayed;
  uint32_t ranks_simulated, rails;
  ts_time_ps dp_exposed; /* exact side's exposed DP on the critical rank */
  uint64_t replayed_dp;  /* fast side: data-parallel quiet replays */
  uint32_t attempts;     /* fast side's attempts */
} eq_result;

static uint32_t top_rails(const ts_topo *t, const ts_step_result *r);

/* Runs yaml fast and exact on t (taking ownership of it) under faults fl,
 * asserts the two steps equal and the fast side saved events. */
static eq_result run_both(const char *yaml, ts_topo *t, eq_faults fl) {
  ts_workload *w = load_work(yaml);
  ts_mapping *m = map_work(w, t);
  ts_route_state *st = faulted_state(t, fl.fail, fl.degrade);
  ts_diag d;
  ts_diag_clear(&d);
  ts_faults f;
  ts_faults_init(&f);
  if (fl.straggler) {
    assert_int_equal(ts_faults_add(&f, TS_FAULT_STRAGGLER, fl.straggler, "--straggler", &d), 0);
    assert_int_equal(ts_faults_resolve(&f, t, &d), 0);
  }
  ts_step_result fast, exact;
  const ts_faults *fp = fl.straggler ? &f : NULL;
  step_f(w, t, m, st, fp, 0, &fast);
  step_f(w, t, m, st, fp, 1, &exact);
  same_step(&fast, &exact);
  assert_int_equal(exact.replayed, 0);
  assert_true(fast.sim.events_processed < exact.sim.events_processed);
  eq_result r = {fast.replayed, fast.ranks_simulated, top_rails(t, &exact),
                 exact.critical.exposed[TS_DIM_DP], fast.replayed_dp,
                 fast.attempts};
  assert_int_equal(exact.replayed_dp, 0);
  ts_step_result_free(&fast);
  ts_step_result_free(&exact);
  ts_faults_free(&f);
  ts_route_state_free(st);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
  return r;
}

/* Ranks the fast side of the last equivalent() simulated, its
 * data-parallel quiet replays and attempts. */
static uint32_t fold_sim;
static uint64_t dp_replays;
static uint32_t eq_attempts;

/* Fast against exact on a bundled topology with link fail_name down;
 * returns the replays. */
static uint64_t equivalent(const char *yaml, const char *topo,
                           const char *fail_name, ts_time_ps *dp_exposed) {
  eq_result r = run_both(yaml, tu_load(topo), (eq_faults){.fail = fail_name});
  fold_sim = r.ranks_simulated;
  dp_replays = r.replayed_dp;
  eq_attempts = r.attempts;
  *dp_exposed = r.dp_exposed;
  return r.replayed;
}

/* The small dense model every fold case below runs (4 layers, hidden
 * 2,048, 1F1B, micro-batch 1): name, global batch and parallelism vary. */
#define SMALL_DENSE(name, global_batch, parallelism)                          \
  "topsim: 1\nname: " name "\n"                                                \
  "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 1024, vocab: 128}\n"  \
  "training: {global_batch: " global_batch                                     \
  ", micro_batch: 1, schedule: 1f1b}\n"                                        \
  "parallelism: {" parallelism "}\n"

/* TP 8 x PP 2 x DP 64 on 1,024 A100 behind 4:1 oversubscribed leaves: the
 * DP rings span all four SUs, so gradients crowd the 8 uplinks per leaf;
 * TP groups fill a host and own its NVLinks. */
static const char *dense_4to1 =
    SMALL_DENSE("dense", "128", "tp: 8, pp: 2, dp: 64, order: tp-cp-pp-dp");

static void oversubscribed(void **state) {
  (void)state;
  ts_time_ps dp;
  uint64_t n = equivalent(dense_4to1, "topologies/cluster-2tier-4to1.yaml",
                          NULL, &dp);
  assert_true(n > 0);
  assert_true(dp > 0);
  /* The file routes D-mod-k: a DP ring's uplink is a digit of the
   * destination NIC's position in its rail, the same for every rail, so
   * class k's flows are an image of class 0's on the 8 shared spines and
   * the fold holds: 1,024 ranks / TP 8 = 128 simulated. */
  assert_int_equal(fold_sim, 128);
  /* Hashed ECMP hashes GPU ids: TP members' DP rings take different
   * spines, so their contention differs and folding must refuse. */
  route_override = 1 + TS_ROUTING_ECMP_HASH;
  n = equivalent(dense_4to1, "topologies/cluster-2tier-4to1.yaml", NULL, &dp);
  route_override = 0;
  assert_true(n > 0);
  assert_int_equal(fold_sim, 1024);
}

/* The same with spine 0 of group 0 down: fewer uplinks, ECMP around it. */
static void failed_spine(void **state) {
  (void)state;
  ts_time_ps dp_fail, dp;
  uint64_t n = equivalent(dense_4to1, "topologies/cluster-2tier-4to1.yaml",
                          "compute/spine-g0-0", &dp_fail);
  /* Every rail's leaf loses its uplink to the same shared spine, and
   * D-mod-k takes the same digit over the 7 survivors on every rail: the
   * classes stay images of class 0, 1,024 / 8 = 128 simulated. */
  assert_int_equal(fold_sim, 128);
  ts_time_ps dp_hash;
  route_override = 1 + TS_ROUTING_ECMP_HASH;
  equivalent(dense_4to1, "topologies/cluster-2tier-4to1.yaml",
             "compute/spine-g0-0", &dp_hash);
  route_override = 0;
  assert_int_equal(fold_sim, 1024);
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
      SMALL_DENSE("spines", "40", "tp: 8, pp: 2, dp: 10, order: tp-cp-pp-dp");
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
  ts_mapping *m = map_work(w, t);
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

/* A group sharing its GPUs' NVLinks is not replayed outright: TP 4 x DP 2
 * inside one DGX with DP innermost puts both groups on the same NVSwitch
 * links. Its instances are replayed only in quiet windows (no DP flow
 * active or due on their links, no DP instance of a member gathering or
 * running), and the step equals --exact. */
static void shared_nvlink_quiet(void **state) {
  (void)state;
  static const char *y =
      "topsim: 1\nname: shared\n"
      "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 1024, vocab: 128}\n"
      "training: {global_batch: 8, micro_batch: 1, schedule: 1f1b}\n"
      "parallelism: {tp: 4, pp: 1, dp: 2}\n";
  eq_result r = run_both(y, tu_load("topologies/dgx-a100.yaml"), (eq_faults){0});
  /* 4 layers x 4 micro-batches x (2 forward + 4 backward) all-reduces per
   * TP group = 96 instances per group, 192 in all: some, not all, are
   * quiet (the gradient all-reduces overlap the last backward) */
  assert_true(r.replayed > 0);
  assert_true(r.replayed < 192);
  assert_true(r.dp_exposed > 0 || r.replayed > 0);
}

/* ---- symmetric-rank folding (exec_step_fold.c) ----
 * Eight DGX A100 in two SUs on rail leaves of 4 down + 1 up (4:1): with
 * two tiers every leaf's single uplink goes to one shared spine; with
 * three, to its rail group's spine (cores above). No ECMP choice on either,
 * so TP member k's traffic is member 0's on rail k: folding must happen,
 * and the contention (the DP rings of both pipeline stages and the
 * pipeline sends crowd each leaf's one uplink) must come out the same. */
#define FOLD_FABRIC(TIERS, SPINE)                                              \
  "topsim: 1\nname: fold\n"                                                    \
  "gpu_models:\n  A100: {bf16: 312TFLOP/s, hbm: 80GB, hbm_bandwidth: 2039GB/s}\n" \
  "planes:\n  - name: compute\n    kind: backend\n    technology: ib_hdr\n"    \
  "    generator:\n      type: rail_optimized\n      tiers: " TIERS "\n"       \
  "      leaf: {radix: 5, down: 4, up: 1}\n" SPINE                             \
  "templates:\n  dgx:\n    gpu_model: A100\n    cpus: 2\n"                      \
  "    cpu_link: {type: xgmi, bandwidth: 64GB/s, latency: 200ns}\n"            \
  "    pcie_switches: {count: 4, attach: [cpu0, cpu1], gen: 4, width: 16}\n"   \
  "    gpus: {count: 8, attach: [pcie0, pcie1, pcie2, pcie3], gen: 4, width: 16}\n" \
  "    nvlink: {link_bandwidth: 25GB/s, efficiency: 0.8, switches: 6,"         \
  " links_per_switch: 2, switch_radix: 36}\n"                                  \
  "    nics:\n      - {plane: compute, count: 8, attach: [pcie0, pcie1, pcie2,"  \
  " pcie3], speed: 200Gb/s}\n"                                                 \
  "nodes:\n  - {name: dgx, template: dgx, count: 8, per_rack: 4, per_su: 4}\n"

static const char *fold_2tier =
    FOLD_FABRIC("2", "      spine: {radix: 40}\n");
static const char *fold_3tier =
    FOLD_FABRIC("3", "      spine: {radix: 8, down: 4, up: 4}\n"
                     "      core: {radix: 40}\n");

/* TP 8 x PP 2 x DP 4, PP inside the SU, DP rings across both SUs. */
static const char *fold_dense =
    SMALL_DENSE("dense", "32", "tp: 8, pp: 2, dp: 4, order: tp-cp-pp-dp");

/* Rails whose leaf links are among the busiest: the images must carry
 * their representative's counters for several rails to show up. */
static uint32_t top_rails(const ts_topo *t, const ts_step_result *r) {
  uint32_t seen = 0;
  for (uint32_t i = 0; i < r->ntop; i++) {
    const ts_link *l = ts_topo_link(t, r->top[i].dir >> 1);
    for (int e = 0; e < 2; e++) {
      const char *n = ts_topo_node_name(t, e ? l->b : l->a), *p = strstr(n, "-r");
      if (strstr(n, "leaf") && p && p[2] >= '0' && p[2] <= '7') seen |= 1u << (p[2] - '0');
    }
  }
  return (uint32_t)__builtin_popcount(seen);
}

/* Folded (or refused) step against --exact; returns ranks simulated. */
static uint32_t fold_case(const char *yaml, const char *topo,
                          const char *degrade, const char *straggler,
                          ts_time_ps *dp_exposed, uint32_t *rails) {
  ts_topo *t = NULL;
  ts_diag d;
  if (tu_load_text(topo, &t, &d)) fail_msg("topology: %s", d.msg);
  eq_result r = run_both(yaml, t,
                         (eq_faults){.degrade = degrade, .straggler = straggler});
  assert_true(r.replayed > 0);
  *dp_exposed = r.dp_exposed;
  *rails = r.rails;
  return r.ranks_simulated;
}

/* 64 ranks, TP 8: one simulated rank per TP group = 8. */
static void fold_one_spine(void **state) {
  (void)state;
  ts_time_ps dp;
  uint32_t rails;
  assert_int_equal(fold_case(fold_dense, fold_2tier, NULL, NULL, &dp, &rails), 8);
  assert_true(dp > 0);
  assert_true(rails >= 2);
}

static void fold_rail_spines(void **state) {
  (void)state;
  ts_time_ps dp;
  uint32_t rails;
  assert_int_equal(fold_case(fold_dense, fold_3tier, NULL, NULL, &dp, &rails), 8);
  assert_true(dp > 0);
  assert_true(rails >= 2);
}

/* Skewed MoE (Zipf 1.0) with EP 4 across hosts and PP 2: the all-to-all
 * matrices are uneven, the same in every class. */
static void fold_skewed_moe(void **state) {
  (void)state;
  static const char *y =
      "topsim: 1\nname: moe\n"
      "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 1024, vocab: 128,\n"
      "        experts: 8, top_k: 2, expert_ffn_hidden: 1024,\n"
      "        routing_skew: 1.0}\n"
      "training: {global_batch: 16, micro_batch: 1, schedule: 1f1b}\n"
      "parallelism: {tp: 8, pp: 2, dp: 4, ep: 4}\n";
  ts_time_ps dp;
  uint32_t rails;
  assert_int_equal(fold_case(y, fold_3tier, NULL, NULL, &dp, &rails), 8);
}

/* Symmetry broken: rail 3's spine at half bandwidth (its class is no image
 * of class 0: the proof refuses on the bandwidth), or one straggler GPU
 * (refused before the run). Both steps still equal --exact. */
static void fold_refuses_asymmetry(void **state) {
  (void)state;
  ts_time_ps dp, dp_sym;
  uint32_t rails;
  fold_case(fold_dense, fold_3tier, NULL, NULL, &dp_sym, &rails);
  assert_int_equal(fold_case(fold_dense, fold_3tier, "compute/spine-g3-0", NULL,
                             &dp, &rails), 64);
  assert_true(dp > dp_sym); /* the slow rail holds every DP ring up */
  assert_int_equal(fold_case(fold_dense, fold_3tier, NULL, "3=1.5", &dp, &rails), 64);
}

/* ---- folding with live TP groups (two or four TP groups per DGX) ----
 * TP 4 x PP 2 x DP 128 on 1,024 A100 behind 4:1 leaves (D-mod-k), DP next
 * to TP as in the GPT-3 example: a host holds two TP groups of adjacent DP
 * replicas, so each DP ring's intra-host hop (GPU k -> GPU k+4) crosses
 * both TP groups' NVLinks and no TP group is replayed outright. Class k
 * (TP index k) is the image of class 0 under rotating the TP index, with
 * GPU k's and k+4's NVLinks and rail k: member 0 runs its share of each
 * TP plan on one representative per orbit of directions, 1,024 / 4 = 256
 * ranks simulated, and every rank and link equals --exact. */
static const char *tp4_dp_inner =
    SMALL_DENSE("tp4", "256", "tp: 4, pp: 2, dp: 128, order: tp-cp-dp-pp");

static void fold_tp4_oversubscribed(void **state) {
  (void)state;
  ts_time_ps dp;
  uint64_t n = equivalent(tp4_dp_inner, "topologies/cluster-2tier-4to1.yaml",
                          NULL, &dp);
  assert_int_equal(fold_sim, 256);
  assert_true(n > 0); /* quiet windows: most TP instances are timers */
  assert_true(dp > 0);
  /* Hashed ECMP sends TP index 1's DP rings over other spines than index
   * 0's: the proof refuses, nothing folds, still equal (quiet replays on
   * the real links). */
  route_override = 1 + TS_ROUTING_ECMP_HASH;
  n = equivalent(tp4_dp_inner, "topologies/cluster-2tier-4to1.yaml", NULL, &dp);
  route_override = 0;
  assert_int_equal(fold_sim, 1024);
  assert_true(n > 0);
}

/* Spine 0 of group 0 down: every rail's leaf loses the same uplink and
 * D-mod-k takes the same digit over the survivors, so the fold holds. */
static void fold_tp4_failed_spine(void **state) {
  (void)state;
  ts_time_ps dp_fail, dp;
  equivalent(tp4_dp_inner, "topologies/cluster-2tier-4to1.yaml",
             "compute/spine-g0-0", &dp_fail);
  assert_int_equal(fold_sim, 256);
  equivalent(tp4_dp_inner, "topologies/cluster-2tier-4to1.yaml", NULL, &dp);
  assert_true(dp_fail >= dp);
}

/* PP inside the host instead: stage 0 on GPUs 0-3, stage 1 on 4-7, so the
 * pipeline sends cross the TP groups' NVLinks at times no stream predicts
 * (a quiet window may be crossed: the run is voided and redone without
 * quiet windows), and the DP rings (one GPU per host) cross the spines. */
static void fold_tp4_pp_nvlink(void **state) {
  (void)state;
  static const char *y =
      SMALL_DENSE("tp4pp", "256", "tp: 4, pp: 2, dp: 128, order: tp-cp-pp-dp");
  ts_time_ps dp;
  equivalent(y, "topologies/cluster-2tier-4to1.yaml", NULL, &dp);
  assert_int_equal(fold_sim, 256);
  assert_true(dp > 0);
}

/* TP 2: four TP groups per host, 1,024 / 2 = 512 simulated. */
static void fold_tp2(void **state) {
  (void)state;
  static const char *y =
      SMALL_DENSE("tp2", "512", "tp: 2, pp: 2, dp: 256, order: tp-cp-dp-pp");
  ts_time_ps dp;
  equivalent(y, "topologies/cluster-2tier-4to1.yaml", NULL, &dp);
  assert_int_equal(fold_sim, 512);
  assert_true(dp > 0);
}

/* On the small fold fabric (GPT-3's shape: two TP groups of adjacent DP
 * replicas per host, the pipeline sends between the SUs over the 4:1
 * uplinks): the live fold, then a straggler on TP member 1 (refused before
 * the run) and a half-speed rail 3 spine (refused by the proof): all three
 * equal --exact and replay TP instances in quiet windows. */
static void fold_tp4_refusals(void **state) {
  (void)state;
  static const char *y =
      SMALL_DENSE("tp4", "32", "tp: 4, pp: 2, dp: 8, order: tp-cp-dp-pp");
  ts_time_ps dp;
  uint32_t rails;
  assert_int_equal(fold_case(y, fold_2tier, NULL, NULL, &dp, &rails), 16);
  assert_int_equal(fold_case(y, fold_2tier, NULL, "1=1.5", &dp, &rails), 64);
  assert_int_equal(fold_case(y, fold_3tier, "compute/spine-g3-0", NULL, &dp,
                             &rails), 64);
}


/* ---- the flow solver inside a step ----
 * The localized re-rating after departures (net_flow.c flow_local)
 * against the component walk (no_local) and the full re-solve of every
 * flow on every change (full_solve), over a whole step with contention: a
 * skewed MoE (Zipf 1.0, TP 1, EP 16) on two DGX A100 in different SUs of
 * the 4:1 fold fabric, so every cross-host all-to-all flow goes up a
 * rail leaf's single uplink to the shared spine, and once more with rail
 * 0's uplink of SU 1 at half bandwidth. Max-min rates are unique, so the
 * three agree: every rank's finish within 1 ps (plus 1 ps per 10^4
 * flows: each flow's finish is within 1 ps, as tests/test_net.c asserts,
 * and a rank's finish is a chain of them) of the full re-solve; the
 * localized solve and the walk give the same step, breakdowns and link
 * counters; and the localized solve re-rates fewer flows than the walk
 * (12,896 against 18,320 and 17,016 today). Run with opts.exact: every
 * all-to-all here starts quiet and would be replayed (quiet_ep_moe). */
static void solver_step(int full, int nolocal, const ts_route_state *st,
                        const ts_workload *w, const ts_topo *t,
                        const ts_mapping *m, ts_step_result *r) {
  ts_step_opts o;
  ts_step_opts_default(&o);
  o.exact = 1;
  o.net.full_solve = full;
  o.net.no_local = nolocal;
  o.state = st;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_step_run(w, t, m, &o, r, &d)) fail_msg("step: %s", d.msg);
}

/* A skewed-MoE case: fabric text with its compute-node line replaced by
 * `nodes` (same length), the workload, its mapping, and with `degrade`
 * leaf su1-r0 at half bandwidth. */
typedef struct {
  ts_topo *t;
  ts_workload *w;
  ts_mapping *m;
  ts_route_state *st;
} moe_case;

static moe_case moe_case_load(const char *fabric, const char *nodes,
                              const char *workload, int degrade) {
  moe_case k = {0};
  char *fab = strdup(fabric);
  char *c = strstr(fab, "count: 8, per_rack: 4, per_su: 4");
  assert_non_null(c);
  assert_int_equal(strlen(nodes), 32);
  memcpy(c, nodes, 32);
  ts_diag d;
  ts_diag_clear(&d);
  if (tu_load_text(fab, &k.t, &d)) fail_msg("topology: %s", d.msg);
  free(fab);
  k.w = load_work(workload);
  k.m = map_work(k.w, k.t);
  k.st = faulted_state(k.t, NULL, degrade ? "compute/leaf-su1-r0" : NULL);
  return k;
}

static void moe_case_free(moe_case *k) {
  ts_route_state_free(k->st);
  ts_mapping_free(k->m);
  ts_workload_free(k->w);
  ts_topo_free(k->t);
}

static void localized_solver_moe(void **state) {
  (void)state;
  static const char *y =
      "topsim: 1\nname: moe\n"
      "model: {layers: 2, hidden: 1024, heads: 8, seq_len: 1024, vocab: 128,\n"
      "        experts: 16, top_k: 2, expert_ffn_hidden: 1024,\n"
      "        routing_skew: 1.0}\n"
      "training: {global_batch: 32, micro_batch: 1, schedule: 1f1b}\n"
      "parallelism: {tp: 1, pp: 1, dp: 16, ep: 16, gpus: 16}\n";
  for (int degrade = 0; degrade < 2; degrade++) {
    moe_case k = moe_case_load(FOLD_FABRIC("2", "      spine: {radix: 40}\n"),
                               "count: 2, per_rack: 1, per_su: 1", y, degrade);
    ts_step_result loc, walk, full;
    solver_step(0, 0, k.st, k.w, k.t, k.m, &loc);
    solver_step(0, 1, k.st, k.w, k.t, k.m, &walk);
    solver_step(1, 0, k.st, k.w, k.t, k.m, &full);
    same_step(&loc, &walk);
    ts_time_ps tol = 1 + loc.net.flows_started / 10000;
    for (uint32_t r = 0; r < loc.ranks; r++) {
      ts_time_ps a = loc.rank_finish[r], b = full.rank_finish[r];
      assert_true(a <= b + tol && b <= a + tol);
    }
    assert_true(loc.net.local_solves > 0);
    assert_int_equal(walk.net.local_solves, 0);
    assert_true(loc.net.flows_touched < walk.net.flows_touched);
    ts_step_result_free(&loc);
    ts_step_result_free(&walk);
    ts_step_result_free(&full);
    moe_case_free(&k);
  }
}

/* Quiet-window replays of EP all-to-alls (exec_step_run.c): a skewed MoE
 * (Zipf 1.0) of EP 16 over two DGX A100 per stage, PP 2 with the stages
 * in different SUs of the 4:1 fabric, so every pipeline send climbs a
 * leaf's single uplink to the shared spine and lands on the leaf-to-NIC
 * links the next stage's all-to-alls use. An all-to-all starting with its
 * links quiet is replayed from its isolated run, each link reserved only
 * until its own last flow leaves; a pipeline send landing inside such a
 * reservation voids the attempt, and the next one runs the crossed
 * instances live. The step must equal --exact, with and without one leaf
 * at half bandwidth, with replays made and (skew 1.0 keeps the hot
 * experts' links busy) at least one crossing handled that way. Stage 1's
 * all-to-alls take stage 0's isolated runs renamed (exec_step_fast.c,
 * "memos shared between images") except under the degraded leaf. */
static void quiet_ep_moe(void **state) {
  (void)state;
  static const char *y =
      "topsim: 1\nname: moe\n"
      "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 1024, vocab: 128,\n"
      "        experts: 16, top_k: 2, expert_ffn_hidden: 1024,\n"
      "        routing_skew: 1.0}\n"
      "training: {global_batch: 64, micro_batch: 1, schedule: 1f1b}\n"
      "parallelism: {tp: 1, pp: 2, dp: 16, ep: 16, gpus: 32}\n";
  for (int degrade = 0; degrade < 2; degrade++) {
    moe_case k = moe_case_load(fold_2tier, "count: 4, per_rack: 2, per_su: 2",
                               y, degrade);
    ts_step_result fast, exact;
    step(k.w, k.t, k.m, k.st, 0, &fast);
    step(k.w, k.t, k.m, k.st, 1, &exact);
    same_step(&fast, &exact);
    assert_true(fast.replayed > 0);
    assert_true(fast.net.flows_started < exact.net.flows_started);
    assert_true(fast.attempts > 1); /* a crossing was rerun live */
    assert_int_equal(exact.attempts, 1);
    /* the stage-1 group's all-to-alls are images of stage 0's (renamed
     * memos), unless its SU's leaf runs at half bandwidth */
    if (degrade) {
      assert_int_equal(fast.memo_shared, 0);
    } else {
      assert_true(fast.memo_shared > 0);
    }
    assert_true(fast.memo_runs > 0);
    ts_step_result_free(&fast);
    ts_step_result_free(&exact);
    moe_case_free(&k);
  }
}

/* ---- bounded shortcuts (exec_step_batch.c, beside replays, compact
 * rings of 2-7 on one host, crossed replays that stand) ----
 * Not exact: the step with the default set (batches, crossed replays
 * standing), each alone and all of them is asserted within 1% of --exact's, with contention (a
 * default that stops doing that, or a shortcut that breaks, fails here: a
 * batch that lost its members' gaps ran 10% short on the first case, a
 * beside replay a quarter as long broke the breakdown bound). The case:
 * ZeRO 2 with 8 MB buckets, so every micro-batch's
 * gradients are 13 reduce-scatters issued back to back (a batch), TP 4
 * and CP 2 below compact_min (their rings compact only here), on 1,024
 * A100 behind 4:1 leaves, DP x CP rings over the spines. Sequence 4,096 at
 * micro-batch 4 keeps the gradient stream below the compute (the batches'
 * guard, docs/model.md). */
static const char *zero2_cp =
    "topsim: 1\nname: zero2\n"
    "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 4096, vocab: 128}\n"
    "training: {global_batch: 1024, micro_batch: 4, schedule: 1f1b,\n"
    "           zero_stage: 2, dp_bucket_size: 8MB}\n"
    "parallelism: {tp: 4, cp: 2, pp: 2, dp: 64, order: tp-cp-dp-pp}\n";

/* The bounded side's replays beside active flows in the last
 * bounded_case (exec_step_run.c quiet_stretch). */
static uint64_t beside_last;
/* With TS_STEP_CROSS alone in the last bounded_case: the crossings that
 * left their replay standing, and the attempts. */
static uint64_t cross_kept_last;
static uint32_t cross_attempts_last;

/* The bounded shortcuts on the fast side of bounded_case: the default set
 * (TS_STEP_BOUNDED_DEFAULT, batches and crossed replays: within 1% on
 * every case in these tests, docs/performance.md), each one alone and all of them
 * (--bounded); a set equal to an earlier one is not run twice. */
static const unsigned bounded_sets[] = {TS_STEP_BOUNDED_DEFAULT, TS_STEP_BATCH,
                                        TS_STEP_BESIDE, TS_STEP_COMPACT_SMALL,
                                        TS_STEP_CROSS, TS_STEP_BOUNDED_ALL};
#define NBOUNDED_SETS (sizeof bounded_sets / sizeof *bounded_sets)

/* Asserts the step b (bounded set bits) against the exact step e: within
 * 1%, the critical breakdown within 1% of the step, bytes per rank and
 * dimension equal, batches merging collectives and saving events, beside
 * replays only with TS_STEP_BESIDE. Returns the relative step error. */
static double bounded_check(const ts_step_result *b, const ts_step_result *e,
                            unsigned bits) {
  double T = (double)e->step_time;
  double err = ((double)b->step_time - T) / T;
  if (fabs(err) > 0.01)
    fail_msg("bounded set %#x: step %.9f s, exact %.9f s (%+.3f%%)", bits,
             ts_ps_to_s(b->step_time), ts_ps_to_s(e->step_time), 100 * err);
  for (int j = 0; j < TS_DIM_COUNT; j++)
    assert_true(fabs((double)b->critical.exposed[j] -
                     (double)e->critical.exposed[j]) <= 0.01 * T);
  assert_true(fabs((double)b->critical.compute - (double)e->critical.compute) <= 0.01 * T);
  /* the work itself is the same: bytes per rank and dimension, exactly */
  assert_memory_equal(b->rank_bytes, e->rank_bytes,
                      (size_t)e->ranks * TS_DIM_COUNT * sizeof *e->rank_bytes);
  if (bits & TS_STEP_BATCH) {
    assert_true(b->collectives < e->collectives); /* batches ran */
    assert_true(b->sim.events_processed < e->sim.events_processed);
  }
  assert_true(b->replayed_beside <= b->replayed);
  if (!(bits & TS_STEP_BESIDE)) assert_int_equal(b->replayed_beside, 0);
  if (bits == TS_STEP_BOUNDED_ALL) beside_last = b->replayed_beside;
  if (!(bits & TS_STEP_CROSS)) assert_int_equal(b->crossed_kept, 0);
  if (bits == TS_STEP_CROSS) {
    cross_kept_last = b->crossed_kept;
    cross_attempts_last = b->attempts;
  }
  if (getenv("TOPSIM_TEST_VERBOSE"))
    print_message("set %#x: %.9f s, exact %.9f s (%+.4f%%), events %llu / "
                  "%llu, replayed %llu (beside %llu, dp %llu), crossed kept "
                  "%llu, attempts %u\n", bits,
                  ts_ps_to_s(b->step_time), ts_ps_to_s(e->step_time), 100 * err,
                  (unsigned long long)b->sim.events_processed,
                  (unsigned long long)e->sim.events_processed,
                  (unsigned long long)b->replayed,
                  (unsigned long long)b->replayed_beside,
                  (unsigned long long)b->replayed_dp,
                  (unsigned long long)b->crossed_kept, b->attempts);
  return err;
}

/* Steps of yaml on topo (link fail_name down) with each set of bounded
 * shortcuts (bounded_sets) against --exact; asserts each within 1% of the
 * exact step, its critical rank's breakdown within 1% of the step and its
 * bytes per rank and dimension equal; with batches on that it merged
 * collectives (fewer counted) and saved events, and that replays beside
 * active flows happen only with TS_STEP_BESIDE. beside_last is the
 * count of those with all three. Returns the largest relative error in
 * parts per million. */
static double bounded_case(const char *yaml, const char *topo,
                           const char *fail_name) {
  ts_topo *t = tu_load(topo);
  ts_workload *w = load_work(yaml);
  ts_mapping *m = map_work(w, t);
  ts_route_state *st = faulted_state(t, fail_name, NULL);
  ts_step_result e;
  step(w, t, m, st, 1, &e);
  assert_true(e.critical.exposed[TS_DIM_DP] > 0); /* DP is contended */
  assert_int_equal(e.replayed_beside, 0);
  double worst = 0;
  for (size_t k = 0; k < NBOUNDED_SETS; k++) {
    unsigned bits = bounded_sets[k];
    size_t first = 0;
    while (first < k && bounded_sets[first] != bits) first++;
    if (first < k) continue; /* the default is one of the others */
    ts_step_result b;
    bounded_fast = bits;
    step(w, t, m, st, 0, &b);
    bounded_fast = 0;
    double err = bounded_check(&b, &e, bits);
    if (fabs(err) > worst) worst = fabs(err);
    ts_step_result_free(&b);
  }
  ts_step_result_free(&e);
  ts_route_state_free(st);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
  return worst * 1e6;
}

/* Exact shortcuts only on the same case: TP and CP instances (CP pairs
 * GPU k and k + 4 of a host, over the NVLinks the TP groups and the DP x
 * CP rings' hops also cross) replayed in quiet windows, folded with live
 * TP groups; everything equals --exact. */
static void quiet_cp_exact(void **state) {
  (void)state;
  ts_time_ps dp;
  uint64_t n = equivalent(zero2_cp, "topologies/cluster-2tier-4to1.yaml",
                          NULL, &dp);
  assert_int_equal(fold_sim, 256);
  assert_true(n > 0);
  assert_true(dp > 0);
  assert_int_equal(dp_replays, 0); /* PP 2: none tried (dp_early) */
}

/* Quiet-window replays of data-parallel instances (exec_step_run.c
 * dp_kind), exact shortcuts only (the default's batches are not exact).
 * (a) ZeRO 3 with CP 4, TP 1, PP 1 on 256 A100 behind the 4:1 leaves:
 * each layer's weight all-gathers and gradient reduce-scatters run over
 * DP x CP = 256 ranks, their rings crowding the 8 uplinks per leaf, with
 * and without a failed spine. (b) A skewed MoE (Zipf 1.0) with ZeRO 3,
 * TP 4 and EP 4 across hosts: the weight rings of the DP and expert
 * groups run between the TP all-reduces and all-to-alls that share their
 * NVLinks and NICs (and run live). (c) With PP 2, the pipeline's sends
 * cross the rings' NICs all step long: no data-parallel replay is tried
 * (dp_early). Every step must equal --exact; a replay of the wrong length
 * (its isolated run's duration x 0.99) fails (a), to the picosecond. */
static const char *zero3_cp =
    "topsim: 1\nname: zero3\n"
    "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 4096, vocab: 128}\n"
    "training: {global_batch: 256, micro_batch: 4, schedule: 1f1b,\n"
    "           zero_stage: 3, dp_bucket_size: 8MB}\n"
    "parallelism: {tp: 1, cp: 4, pp: 1, dp: 64, order: tp-dp-cp-pp,\n"
    "              gpus: 256}\n";

static void quiet_dp_exact(void **state) {
  (void)state;
  static const char *fails[] = {NULL, "compute/spine-g0-0"};
  ts_time_ps dp;
  for (int i = 0; i < 2; i++) {
    uint64_t n = equivalent(zero3_cp, "topologies/cluster-2tier-4to1.yaml",
                            fails[i], &dp);
    assert_true(dp_replays > 0);
    assert_true(dp_replays < n); /* CP instances replay too */
    assert_int_equal(eq_attempts, 1);
  }
  static const char *moe =
      "topsim: 1\nname: moe\n"
      "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 4096, vocab: 128,\n"
      "        experts: 8, top_k: 2, expert_ffn_hidden: 1024,\n"
      "        routing_skew: 1.0}\n"
      "training: {global_batch: 64, micro_batch: 4, schedule: 1f1b,\n"
      "           zero_stage: 3, dp_bucket_size: 2MB}\n"
      "parallelism: {tp: 4, pp: 1, dp: 8, ep: 4, gpus: 32}\n";
  uint64_t n = equivalent(moe, "topologies/superpod-a100-1su.yaml", NULL, &dp);
  assert_true(dp_replays > 0 && dp_replays < n);
  assert_true(dp > 0); /* the exact step waits on DP */
  static const char *pp2 =
      "topsim: 1\nname: zero3pp\n"
      "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 4096, vocab: 128}\n"
      "training: {global_batch: 256, micro_batch: 4, schedule: 1f1b,\n"
      "           zero_stage: 3, dp_bucket_size: 8MB}\n"
      "parallelism: {tp: 1, cp: 4, pp: 2, dp: 32, order: tp-cp-dp-pp,\n"
      "              gpus: 256}\n";
  n = equivalent(pp2, "topologies/cluster-2tier-4to1.yaml", NULL, &dp);
  assert_true(n > 0);
  assert_int_equal(dp_replays, 0);
  assert_int_equal(eq_attempts, 1);
}

/* Here TP and CP instances also run beside the gradient rings' NVLink
 * hops (bounded quiet replays, quiet_stretch): some must. */
static void bounded_oversubscribed(void **state) {
  (void)state;
  bounded_case(zero2_cp, "topologies/cluster-2tier-4to1.yaml", NULL);
  assert_true(beside_last > 0);
}

static void bounded_failed_spine(void **state) {
  (void)state;
  bounded_case(zero2_cp, "topologies/cluster-2tier-4to1.yaml",
               "compute/spine-g0-0");
  assert_true(beside_last > 0);
}

/* One SuperPOD SU (20 DGX A100 under shared spines), DP outermost. */
static const char *zero2_su =
    "topsim: 1\nname: zero2su\n"
      "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 4096, vocab: 128}\n"
      "training: {global_batch: 160, micro_batch: 4, schedule: 1f1b,\n"
      "           zero_stage: 2, dp_bucket_size: 8MB}\n"
      "parallelism: {tp: 4, cp: 2, pp: 2, dp: 10, order: tp-cp-pp-dp}\n";

static void bounded_shared_spines(void **state) {
  (void)state;
  bounded_case(zero2_su, "topologies/superpod-a100-1su.yaml", NULL);
  assert_true(beside_last > 0);
}

/* Skewed MoE (Zipf 1.0), EP 4 across hosts, ZeRO 2 gradients in buckets
 * over DP and the experts' own groups. */
static const char *moe_skewed =
    "topsim: 1\nname: moe\n"
      "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 4096, vocab: 128,\n"
      "        experts: 8, top_k: 2, expert_ffn_hidden: 1024,\n"
      "        routing_skew: 1.0}\n"
      "training: {global_batch: 64, micro_batch: 4, schedule: 1f1b,\n"
      "           zero_stage: 2, dp_bucket_size: 2MB}\n"
      "parallelism: {tp: 4, pp: 1, dp: 8, ep: 4, gpus: 32}\n";

static void bounded_skewed_moe(void **state) {
  (void)state;
  bounded_case(moe_skewed, "topologies/superpod-a100-1su.yaml", NULL);
}

/* CP 4 across two hosts (TP 4 fills half of each) and a pipeline of 2
 * stages, 32 DGX under the rail leaves of the 4:1 fabric: the CP
 * instances' rings reach the NICs, which the pipeline's sends and the
 * ZeRO 1 gradient rings also cross. Without TS_STEP_CROSS a crossed CP
 * replay voids the attempt and the step runs again; with it (alone, in
 * bounded_case) the pipeline's sends cross CP windows, the replays stand
 * and the step runs once, within 1% of --exact like every other set. */
static const char *cp_pipe =
    "topsim: 1\nname: cpx\n"
    "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 8192, vocab: 128}\n"
    "training: {global_batch: 64, micro_batch: 1, schedule: 1f1b,\n"
    "           zero_stage: 1, dp_bucket_size: 8MB}\n"
    "parallelism: {tp: 4, cp: 4, pp: 2, dp: 8, order: tp-cp-dp-pp,\n"
    "              gpus: 256}\n";

static void bounded_cp_pipeline(void **state) {
  (void)state;
  bounded_case(cp_pipe, "topologies/cluster-2tier-4to1.yaml", NULL);
  assert_true(cross_kept_last > 0);
  assert_int_equal(cross_attempts_last, 1);
}

/* ---- steady phase extrapolated (exec_step_steady.c) ----
 * A step of M >= 12 pp micro-batches is run at 2 pp and 4 pp and
 * extrapolated on the line through them. */

/* The steady step (the default set plus TS_STEP_STEADY) of yaml at
 * global batch gb (32 micro-batches for zero2_cp and zero2_su at pp 2, 24
 * for moe_skewed at pp 1) on topo (link fail_name down) against --exact:
 * the shortcut ran at 4 and 8 micro-batches, within 1% (bounded_check:
 * the critical breakdown too, and bytes per rank equal: they are affine
 * in M, so the line gives them exactly), the rates at the full batch.
 * Returns the relative error in parts per million. */
static double steady_case(const char *yaml, const char *gb, const char *topo,
                          const char *fail_name) {
  ts_topo *t = tu_load(topo);
  ts_workload *w = load_work(yaml);
  assert_int_equal(ts_workload_override(w, "global_batch", gb, NULL), 0);
  ts_mapping *m = map_work(w, t);
  ts_route_state *st = faulted_state(t, fail_name, NULL);
  ts_step_result e, b;
  step(w, t, m, st, 1, &e);
  assert_int_equal(e.steady_from[0], 0);
  bounded_fast = TS_STEP_BOUNDED_DEFAULT | TS_STEP_STEADY;
  step(w, t, m, st, 0, &b);
  bounded_fast = 0;
  assert_int_equal(b.steady_from[0], 4);
  assert_int_equal(b.steady_from[1], 8);
  assert_int_equal(b.microbatches, e.microbatches);
  assert_true(b.tokens_per_step == e.tokens_per_step);
  assert_true(b.model_flops == e.model_flops);
  double err = bounded_check(&b, &e, TS_STEP_BOUNDED_DEFAULT | TS_STEP_STEADY);
  /* two runs of 4 and 8 micro-batches cost less than one of e's */
  assert_true(b.sim.events_processed < e.sim.events_processed);
  ts_step_result_free(&b);
  ts_step_result_free(&e);
  ts_route_state_free(st);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
  return fabs(err) * 1e6;
}

static void steady_oversubscribed(void **state) {
  (void)state;
  steady_case(zero2_cp, "8192", "topologies/cluster-2tier-4to1.yaml", NULL);
}

static void steady_failed_spine(void **state) {
  (void)state;
  steady_case(zero2_cp, "8192", "topologies/cluster-2tier-4to1.yaml",
              "compute/spine-g0-0");
}

static void steady_shared_spines(void **state) {
  (void)state;
  steady_case(zero2_su, "1280", "topologies/superpod-a100-1su.yaml", NULL);
}

/* pp 1: runs of 4 and 8 micro-batches, 24 in the step. */
static void steady_skewed_moe(void **state) {
  (void)state;
  steady_case(moe_skewed, "768", "topologies/superpod-a100-1su.yaml", NULL);
}

/* Where nothing contends (TP in the host, PP across hosts, no DP) the
 * step is exactly affine in M, and the shortcut gives --exact's step and
 * every rank's finish to the picosecond, at a fraction of the events; a
 * step of fewer than 12 pp micro-batches runs whole. */
static void steady_exact_uncontended(void **state) {
  (void)state;
  static const char *y =
      "topsim: 1\nname: pipe\n"
      "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 2048, vocab: 128}\n"
      "training: {global_batch: 48, micro_batch: 1, schedule: 1f1b}\n"
      "parallelism: {tp: 8, pp: 4, dp: 1, gpus: 32}\n";
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_workload *w = load_work(y);
  ts_mapping *m = map_work(w, t);
  ts_step_result e, b;
  step(w, t, m, NULL, 1, &e);
  bounded_fast = TS_STEP_STEADY;
  step(w, t, m, NULL, 0, &b);
  assert_int_equal(b.steady_from[0], 8);
  assert_int_equal(b.steady_from[1], 16);
  assert_int_equal(b.step_time, e.step_time);
  for (uint32_t r = 0; r < e.ranks; r++)
    assert_int_equal(b.rank_finish[r], e.rank_finish[r]);
  assert_memory_equal(&b.critical, &e.critical, sizeof e.critical);
  assert_true(b.sim.events_processed < e.sim.events_processed);
  ts_step_result_free(&b);
  ts_workload_override(w, "global_batch", "44", NULL); /* 11 pp: whole */
  step(w, t, m, NULL, 0, &b);
  bounded_fast = 0;
  assert_int_equal(b.steady_from[0], 0);
  assert_int_equal(b.microbatches, 44);
  ts_step_result_free(&b);
  ts_step_result_free(&e);
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
      cmocka_unit_test(localized_solver_moe),
      cmocka_unit_test(quiet_ep_moe),
      cmocka_unit_test(pipeline_sends),
      cmocka_unit_test(shared_nvlink_quiet),
      cmocka_unit_test(fold_one_spine),
      cmocka_unit_test(fold_rail_spines),
      cmocka_unit_test(fold_skewed_moe),
      cmocka_unit_test(fold_refuses_asymmetry),
      cmocka_unit_test(fold_tp4_oversubscribed),
      cmocka_unit_test(fold_tp4_failed_spine),
      cmocka_unit_test(fold_tp4_pp_nvlink),
      cmocka_unit_test(fold_tp2),
      cmocka_unit_test(fold_tp4_refusals),
      cmocka_unit_test(quiet_cp_exact),
      cmocka_unit_test(quiet_dp_exact),
      cmocka_unit_test(bounded_oversubscribed),
      cmocka_unit_test(bounded_failed_spine),
      cmocka_unit_test(bounded_shared_spines),
      cmocka_unit_test(bounded_skewed_moe),
      cmocka_unit_test(bounded_cp_pipeline),
      cmocka_unit_test(steady_oversubscribed),
      cmocka_unit_test(steady_failed_spine),
      cmocka_unit_test(steady_shared_spines),
      cmocka_unit_test(steady_skewed_moe),
      cmocka_unit_test(steady_exact_uncontended),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
