/* test_coll.c - collective lowerings: DAG shape, bytes per rank, closed-form
 * times under a reference executor, compact vs step ring, auto choice and
 * the nccl-tests conventions.
 *
 * Reference executor (written here, independent of the net module): every
 * directed endpoint pair (src, dst) is a dedicated link of bandwidth B
 * (optionally one slower link); a link serialises its transfers; a transfer
 * starts when its dependencies are done and its link is free (earliest
 * possible start first, ties by index) and lasts alpha + wire_bytes / B
 * (+ reduce_bytes / hbm when hbm > 0). Join transfers take no time and no
 * link. The makespan is the critical path through this schedule. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_coll.h"

#define EP_MAX 1024

typedef struct link_spec {
  double bw;              /* every link */
  int slow_src, slow_dst; /* one link at slow_bw (-1: none) */
  double slow_bw;
  double hbm;
} link_spec;

/* Makespan in seconds of several plans run together. */
static double exec_plans(const ts_coll_plan *const *pls, int np,
                         const link_spec *ls) {
  uint32_t n = 0, *off = calloc((size_t)np + 1, sizeof *off);
  for (int i = 0; i < np; i++) off[i + 1] = n += ts_coll_plan_count(pls[i]);
  double *fin = malloc(sizeof *fin * (n ? n : 1));
  char *done = calloc(n ? n : 1, 1);
  double *free_at = calloc((size_t)EP_MAX * EP_MAX, sizeof *free_at);
  assert_non_null(free_at);
  double end = 0;
  for (uint32_t left = n; left > 0; left--) {
    double best = INFINITY;
    int bp = -1;
    uint32_t bi = 0;
    for (int p = 0; p < np; p++) {
      const ts_coll_xfer *x = ts_coll_plan_xfers(pls[p]);
      const uint32_t *dep = ts_coll_plan_deps(pls[p]);
      for (uint32_t i = 0; i < ts_coll_plan_count(pls[p]); i++) {
        if (done[off[p] + i]) continue;
        double ready = 0;
        int ok = 1;
        for (uint32_t d = 0; d < x[i].ndeps && ok; d++) {
          uint32_t g = off[p] + dep[x[i].dep_first + d];
          if (!done[g]) ok = 0;
          else if (fin[g] > ready) ready = fin[g];
        }
        if (!ok) continue;
        double st = ready;
        if (!(x[i].flags & TS_COLL_XFER_JOIN)) {
          double f = free_at[x[i].src * EP_MAX + x[i].dst];
          if (f > st) st = f;
        }
        if (st < best) best = st, bp = p, bi = i;
      }
    }
    assert_true(bp >= 0);
    const ts_coll_xfer *x = &ts_coll_plan_xfers(pls[bp])[bi];
    double dur = 0;
    if (!(x->flags & TS_COLL_XFER_JOIN)) {
      int slow = x->src == ls->slow_src && x->dst == ls->slow_dst;
      dur = ts_ps_to_s(x->alpha) +
            (double)x->wire_bytes / (slow ? ls->slow_bw : ls->bw);
      if (ls->hbm > 0) dur += (double)x->reduce_bytes / ls->hbm;
      free_at[x->src * EP_MAX + x->dst] = best + dur;
    }
    fin[off[bp] + bi] = best + dur;
    done[off[bp] + bi] = 1;
    if (best + dur > end) end = best + dur;
  }
  free(off), free(fin), free(done), free(free_at);
  return end;
}

static double exec1(const ts_coll_plan *pl, double bw) {
  link_spec ls = {bw, -1, -1, 0, 0};
  return exec_plans(&pl, 1, &ls);
}

static ts_coll_comm *comm_seq(int p, int base) {
  int g[EP_MAX];
  for (int i = 0; i < p; i++) g[i] = base + i;
  g[0] = 0; /* rank 0 is always GPU 0 so two comms can share links */
  if (p > 1) g[1] = 1;
  ts_coll_comm *c = NULL;
  assert_int_equal(ts_coll_comm_new(g, p, &c), 0);
  return c;
}

/* Simple protocol, fixed algorithm, alpha 2 us everywhere. */
static ts_coll_params prm_fixed(ts_coll_algo a) {
  ts_coll_params p;
  ts_coll_params_default(&p);
  p.algo = a;
  p.proto = TS_COLL_SIMPLE;
  p.alpha_intra[TS_COLL_SIMPLE] = 2 * TS_PS_PER_US;
  p.alpha_inter[TS_COLL_SIMPLE] = 5 * TS_PS_PER_US;
  return p;
}

static ts_coll_plan *lower(const ts_coll_comm *c, ts_coll_op op, uint64_t S,
                           const ts_coll_params *p, unsigned flags) {
  ts_coll_plan *pl = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_coll_lower(c, op, S, p, flags, &pl, &d);
  if (rc) fail_msg("lower failed: %s", d.msg);
  return pl;
}

/* Every dependency points to an earlier transfer: acyclic, topological. */
static void check_dag(const ts_coll_plan *pl) {
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  const uint32_t *d = ts_coll_plan_deps(pl);
  for (uint32_t i = 0; i < ts_coll_plan_count(pl); i++)
    for (uint32_t j = 0; j < x[i].ndeps; j++)
      assert_true(d[x[i].dep_first + j] < i);
}

static uint64_t sent_by(const ts_coll_plan *pl, int rank) {
  uint64_t s = 0;
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  for (uint32_t i = 0; i < ts_coll_plan_count(pl); i++)
    if (x[i].src_rank == rank) s += x[i].bytes;
  return s;
}

static int near(double a, double b, double rel) {
  return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

/* Ring all-reduce on p = 2..16 ranks, one channel, k = 1: 2(p-1) steps of p
 * transfers; each rank sends exactly 2(p-1)/p * S; all-gather and
 * reduce-scatter (p-1) steps, (p-1)/p * S per rank. */
static void ring_counts_and_bytes(void **state) {
  (void)state;
  for (int p = 2; p <= 16; p++) {
    ts_coll_comm *c = comm_seq(p, 0);
    ts_coll_params prm = prm_fixed(TS_COLL_RING);
    uint64_t S = (uint64_t)p * 4096;
    ts_coll_plan *ar = lower(c, TS_COLL_ALL_REDUCE, S, &prm, 0);
    assert_int_equal(ts_coll_plan_count(ar), 2 * (p - 1) * p);
    check_dag(ar);
    for (int r = 0; r < p; r++)
      assert_int_equal(sent_by(ar, r), 2 * (uint64_t)(p - 1) * S / p);
    ts_coll_op ops[2] = {TS_COLL_ALL_GATHER, TS_COLL_REDUCE_SCATTER};
    for (int o = 0; o < 2; o++) {
      ts_coll_plan *pl = lower(c, ops[o], S, &prm, 0);
      assert_int_equal(ts_coll_plan_count(pl), (p - 1) * p);
      check_dag(pl);
      for (int r = 0; r < p; r++)
        assert_int_equal(sent_by(pl, r), (uint64_t)(p - 1) * S / p);
      ts_coll_plan_free(pl);
    }
    ts_coll_plan_free(ar);
    ts_coll_comm_free(c);
  }
}

/* Uniform dedicated links of B = 100 GB/s, alpha = 2 us, k = 1:
 * ring all-reduce takes exactly 2(p-1)(alpha + S/(pB)); all-gather and
 * reduce-scatter (p-1)(alpha + S/(pB)). With k = 4 chunks per step the link
 * still runs back to back: 2(p-1)(4 alpha + S/(pB)). */
static void ring_closed_forms(void **state) {
  (void)state;
  const double B = 100e9, a = 2e-6;
  for (int p = 2; p <= 16; p++) {
    ts_coll_comm *c = comm_seq(p, 0);
    ts_coll_params prm = prm_fixed(TS_COLL_RING);
    uint64_t S = (uint64_t)p << 20;
    ts_coll_plan *ar = lower(c, TS_COLL_ALL_REDUCE, S, &prm, 0);
    double want = 2 * (p - 1) * (a + (double)S / (p * B));
    assert_true(near(exec1(ar, B), want, 1e-9));
    ts_coll_plan *ag = lower(c, TS_COLL_ALL_GATHER, S, &prm, 0);
    assert_true(near(exec1(ag, B), (p - 1) * (a + (double)S / (p * B)), 1e-9));
    prm.chunk_bytes = S / p / 4;
    ts_coll_plan *ck = lower(c, TS_COLL_ALL_REDUCE, S, &prm, 0);
    assert_int_equal(ts_coll_plan_chunks(ck), 4);
    assert_true(
        near(exec1(ck, B), 2 * (p - 1) * (4 * a + (double)S / (p * B)), 1e-9));
    ts_coll_plan_free(ar), ts_coll_plan_free(ag), ts_coll_plan_free(ck);
    ts_coll_comm_free(c);
  }
}

/* A large ring all-reduce (p = 8, S = 4 GiB, alpha = 2 us, B = 100 GB/s):
 * t = 14 (alpha + S/(8B)) so busbw = S/t * 2(p-1)/p = B / (1 + 8 alpha B / S)
 * = B within 0.04%. */
static void ring_busbw_equals_link(void **state) {
  (void)state;
  const double B = 100e9;
  ts_coll_comm *c = comm_seq(8, 0);
  ts_coll_params prm = prm_fixed(TS_COLL_RING);
  uint64_t S = 4ull << 30;
  ts_coll_plan *pl = lower(c, TS_COLL_ALL_REDUCE, S, &prm, TS_COLL_COMPACT);
  double t = exec1(pl, B);
  double busbw = ts_coll_busbw(TS_COLL_ALL_REDUCE, 8, S, t);
  assert_true(near(busbw, B, 5e-4));
  assert_true(near(ts_coll_algbw(S, t) * 14.0 / 8.0, busbw, 1e-12));
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* Compact vs step ring, p = 2..16, uniform links B: both take
 * 2(p-1)(k alpha + S/(pB)) (all-reduce), so they agree within 1%; also for
 * 2 channels in alternating directions and for k = 3 chunks. */
static void compact_matches_step(void **state) {
  (void)state;
  const double B = 50e9;
  for (int p = 2; p <= 16; p++) {
    ts_coll_comm *c = comm_seq(p, 0);
    for (int v = 0; v < 3; v++) {
      ts_coll_params prm = prm_fixed(TS_COLL_RING);
      uint64_t S = (uint64_t)p * 3000017;
      if (v == 1) prm.channels = 2, prm.ring_order = TS_COLL_RING_ALTERNATE;
      if (v == 2) prm.chunk_bytes = S / p / 3 + 1;
      for (int o = 0; o < 3; o++) {
        ts_coll_op op = o == 0 ? TS_COLL_ALL_REDUCE
                        : o == 1 ? TS_COLL_ALL_GATHER : TS_COLL_REDUCE_SCATTER;
        ts_coll_plan *st = lower(c, op, S, &prm, 0);
        ts_coll_plan *cp = lower(c, op, S, &prm, TS_COLL_COMPACT);
        assert_int_equal(ts_coll_plan_count(cp), p * prm.channels);
        for (int r = 0; r < p; r++)
          assert_int_equal(sent_by(st, r), sent_by(cp, r));
        assert_true(near(exec1(st, B), exec1(cp, B), 0.01));
        ts_coll_plan_free(st), ts_coll_plan_free(cp);
      }
    }
    ts_coll_comm_free(c);
  }
}

/* Congested: rings A = (0,1,2..p-1) and B = (0,1,100..) both use link 0->1,
 * which runs at B/2. The slow link is busy back to back in both lowerings:
 * makespan = 2 * 2(p-1)(alpha + S/(p B/2)) for step and compact alike
 * (within 1%). */
static void compact_matches_step_congested(void **state) {
  (void)state;
  for (int p = 3; p <= 12; p++) {
    ts_coll_comm *ca = comm_seq(p, 0), *cb = comm_seq(p, 100);
    ts_coll_params prm = prm_fixed(TS_COLL_RING);
    uint64_t S = (uint64_t)p << 22;
    link_spec ls = {100e9, 0, 1, 50e9, 0};
    const ts_coll_plan *st[2] = {lower(ca, TS_COLL_ALL_REDUCE, S, &prm, 0),
                                 lower(cb, TS_COLL_ALL_REDUCE, S, &prm, 0)};
    const ts_coll_plan *cp[2] = {
        lower(ca, TS_COLL_ALL_REDUCE, S, &prm, TS_COLL_COMPACT),
        lower(cb, TS_COLL_ALL_REDUCE, S, &prm, TS_COLL_COMPACT)};
    double ts = exec_plans(st, 2, &ls), tc = exec_plans(cp, 2, &ls);
    double want = 2 * 2 * (p - 1) * (2e-6 + (double)S / (p * 50e9));
    assert_true(near(ts, tc, 0.01));
    assert_true(near(tc, want, 1e-9));
    for (int i = 0; i < 2; i++)
      ts_coll_plan_free((ts_coll_plan *)st[i]),
          ts_coll_plan_free((ts_coll_plan *)cp[i]);
    ts_coll_comm_free(ca), ts_coll_comm_free(cb);
  }
}

/* Double binary tree all-reduce, p = 4, 8, 16 (D = log2 p), k = 1: two
 * trees x (p-1 up + p-1 down) transfers of S/2; every rank sends its half
 * up once per tree where it is not the root; time on uniform links
 * 2 D (alpha + S/(2B)) (coll_tree.c). */
static void tree_shape_and_time(void **state) {
  (void)state;
  const double B = 100e9, a = 2e-6;
  for (int p = 4; p <= 16; p *= 2) {
    ts_coll_comm *c = comm_seq(p, 0);
    ts_coll_params prm = prm_fixed(TS_COLL_TREE);
    uint64_t S = 1ull << 24;
    ts_coll_plan *pl = lower(c, TS_COLL_ALL_REDUCE, S, &prm, 0);
    check_dag(pl);
    assert_int_equal(ts_coll_plan_count(pl), 2 * 2 * (p - 1));
    uint64_t tot = 0;
    for (int r = 0; r < p; r++) tot += sent_by(pl, r);
    assert_int_equal(tot, 2 * 2 * (uint64_t)(p - 1) * (S / 2));
    int D = 0;
    while ((1 << D) < p) D++;
    assert_true(near(exec1(pl, B), 2 * D * (a + (double)S / (2 * B)), 1e-9));
    ts_coll_plan_free(pl);
    ts_coll_comm_free(c);
  }
}

/* Halving-doubling all-reduce on p = 2^L: 2 L steps of p transfers, each
 * rank sends 2(p-1)/p * S, time 2 L alpha + 2 (p-1)/p * S/B. p = 6 (q = 4,
 * r = 2): 2*2*4 + 2*2 transfers, time 2(alpha + S/B) + 4 alpha +
 * 2 (3/4) S/B. All-gather on 6 ranks is refused. */
static void hd_shape_and_time(void **state) {
  (void)state;
  const double B = 100e9, a = 2e-6;
  ts_coll_params prm = prm_fixed(TS_COLL_HD);
  uint64_t S = 3ull << 20;
  for (int L = 1; L <= 4; L++) {
    int p = 1 << L;
    ts_coll_comm *c = comm_seq(p, 0);
    ts_coll_plan *pl = lower(c, TS_COLL_ALL_REDUCE, S * p, &prm, 0);
    check_dag(pl);
    assert_int_equal(ts_coll_plan_count(pl), 2 * L * p);
    for (int r = 0; r < p; r++)
      assert_int_equal(sent_by(pl, r), 2 * (uint64_t)(p - 1) * S);
    double want = 2 * L * a + 2.0 * (p - 1) / p * (double)(S * p) / B;
    assert_true(near(exec1(pl, B), want, 1e-9));
    ts_coll_plan_free(pl);
    ts_coll_comm_free(c);
  }
  ts_coll_comm *c6 = comm_seq(6, 0);
  ts_coll_plan *pl = lower(c6, TS_COLL_ALL_REDUCE, S * 4, &prm, 0);
  check_dag(pl);
  assert_int_equal(ts_coll_plan_count(pl), 20);
  double S4 = (double)(S * 4);
  double want = 2 * (a + S4 / B) + 4 * a + 2 * 0.75 * S4 / B;
  assert_true(near(exec1(pl, B), want, 1e-9));
  ts_coll_plan_free(pl);
  ts_coll_plan *bad = (ts_coll_plan *)1;
  assert_int_equal(ts_coll_lower(c6, TS_COLL_ALL_GATHER, S, &prm, 0, &bad,
                                 NULL), TS_EUSAGE);
  assert_null(bad);
  ts_coll_comm_free(c6);
}

/* Direct all-to-all on p = 8: p(p-1) independent transfers, each rank
 * sends (p-1)/p * S, time alpha + S/(pB) on dedicated links. */
static void direct_alltoall(void **state) {
  (void)state;
  const double B = 100e9;
  ts_coll_comm *c = comm_seq(8, 0);
  ts_coll_params prm = prm_fixed(TS_COLL_AUTO);
  uint64_t S = 8 << 20;
  ts_coll_plan *pl = lower(c, TS_COLL_ALL_TO_ALL, S, &prm, 0);
  assert_int_equal(ts_coll_plan_algo(pl), TS_COLL_DIRECT);
  assert_int_equal(ts_coll_plan_count(pl), 56);
  for (int r = 0; r < 8; r++) assert_int_equal(sent_by(pl, r), 7 * S / 8);
  assert_true(near(exec1(pl, B), 2e-6 + (double)S / (8 * B), 1e-9));
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* all_to_allv on p = 5 with an irregular matrix: the bytes from i to j
 * summed over the plan equal matrix[i][j] for i != j (diagonal: local). */
static void alltoallv_conserves(void **state) {
  (void)state;
  enum { P = 5 };
  uint64_t m[P * P], got[P * P] = {0};
  for (int i = 0; i < P * P; i++) m[i] = (uint64_t)(i * 7919 % 1000) * 13;
  ts_coll_comm *c = comm_seq(P, 0);
  ts_coll_params prm = prm_fixed(TS_COLL_DIRECT);
  prm.matrix = m;
  prm.chunk_bytes = 1000;
  ts_coll_plan *pl = lower(c, TS_COLL_ALL_TO_ALLV, 0, &prm, 0);
  check_dag(pl);
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  for (uint32_t i = 0; i < ts_coll_plan_count(pl); i++)
    got[x[i].src_rank * P + x[i].dst_rank] += x[i].bytes;
  for (int i = 0; i < P; i++)
    for (int j = 0; j < P; j++)
      assert_int_equal(got[i * P + j], i == j ? 0 : m[i * P + j]);
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* Hierarchical all-reduce, H = 3 hosts x L = 4 GPUs, uniform B, alpha 2 us
 * inside a host and 5 us across: 2(L-1)(a_i + S/(LB)) +
 * 2(H-1)(a_n + S/(LHB)), which is also the cost model's figure when
 * bw_intra = bw_inter = B. */
static void hier_closed_form(void **state) {
  (void)state;
  enum { H = 3, L = 4 };
  int gpus[H * L], hosts[H * L];
  for (int i = 0; i < H * L; i++) gpus[i] = i, hosts[i] = 10 + i / L;
  ts_coll_comm *c = NULL;
  assert_int_equal(ts_coll_comm_new(gpus, H * L, &c), 0);
  assert_int_equal(ts_coll_comm_set_hosts(c, hosts), 0);
  assert_int_equal(ts_coll_comm_nhosts(c), H);
  ts_coll_params prm = prm_fixed(TS_COLL_HIER);
  const double B = 100e9;
  prm.bw_intra = prm.bw_inter = B;
  uint64_t S = 12ull << 20;
  ts_coll_plan *pl = lower(c, TS_COLL_ALL_REDUCE, S, &prm, 0);
  check_dag(pl);
  double want = 2 * (L - 1) * (2e-6 + (double)S / (L * B)) +
                2 * (H - 1) * (5e-6 + (double)S / (L * H * B));
  assert_true(near(exec1(pl, B), want, 1e-9));
  assert_true(near(ts_coll_plan_predicted_s(pl), want, 1e-9));
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* NVLS on 8 GPUs and switch endpoint 900: 8 up + 1 join + 8 down per chunk;
 * every GPU sends S once and receives S once; k = 1 time 2 (alpha + S/B).
 * Without a declared switch NVLS is refused. */
static void nvls_shape(void **state) {
  (void)state;
  ts_coll_comm *c = comm_seq(8, 0);
  ts_coll_params prm = prm_fixed(TS_COLL_NVLS);
  ts_coll_plan *pl = (ts_coll_plan *)1;
  assert_int_equal(
      ts_coll_lower(c, TS_COLL_ALL_REDUCE, 1 << 20, &prm, 0, &pl, NULL),
      TS_EUSAGE);
  assert_null(pl);
  assert_int_equal(ts_coll_comm_set_nvls(c, 0, 900), 0);
  uint64_t S = 1 << 24;
  pl = lower(c, TS_COLL_ALL_REDUCE, S, &prm, 0);
  check_dag(pl);
  assert_int_equal(ts_coll_plan_count(pl), 17);
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  for (uint32_t i = 0; i < 17; i++) {
    if (x[i].flags & TS_COLL_XFER_JOIN) continue;
    assert_true(x[i].src == 900 || x[i].dst == 900);
    assert_int_equal(x[i].bytes, S);
  }
  assert_true(near(exec1(pl, 100e9), 2 * (2e-6 + (double)S / 100e9), 1e-9));
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* NVLS all-reduce under NCCL's structure (Hopper) on 8 GPUs, switch 900,
 * S = 64 MiB: every GPU moves S' = S + S/8 up and down, split into a lead
 * of L = 2 MiB and the body; the 8 leads join, then every down transfer
 * may start: 4p + 1 = 33 transfers. Only the up leads carry the startup
 * (launch 4 us + NVLS latency 25 us). With the reference executor (pair
 * links of B, wire = bytes / 0.85): up lead ends at t0 + L/Be, the down
 * lead at t0 + 2L/Be and the down body at t0 + (S' + L)/Be, after the up
 * body (t0 + S'/Be): the halves overlap. */
static void nvls_overlap(void **state) {
  (void)state;
  ts_coll_comm *c = comm_seq(8, 0);
  assert_int_equal(ts_coll_comm_set_nvls(c, 0, 900), 0);
  ts_coll_params prm;
  ts_coll_params_default(&prm);
  ts_coll_params_nccl(&prm, TS_COLL_GEN_HOPPER);
  prm.algo = TS_COLL_NVLS;
  prm.nvls_chunk_cost = 0; /* the chunk ramp: test_coll_nccl.c */
  const double B = 100e9, Be = B * 0.85;
  uint64_t S = 64ull << 20, Sp = S + S / 8, L = 2ull << 20;
  ts_coll_plan *pl = lower(c, TS_COLL_ALL_REDUCE, S, &prm, 0);
  check_dag(pl);
  assert_int_equal(ts_coll_plan_count(pl), 33);
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  uint64_t up = 0, down = 0;
  for (uint32_t i = 0; i < 33; i++) {
    if (x[i].flags & TS_COLL_XFER_JOIN) continue;
    if (x[i].dst == 900 && x[i].src_rank == 3) up += x[i].bytes;
    if (x[i].src == 900 && x[i].dst_rank == 3) down += x[i].bytes;
    assert_int_equal(x[i].alpha, x[i].ndeps ? 0 : 29 * TS_PS_PER_US);
  }
  assert_int_equal(up, Sp);
  assert_int_equal(down, Sp);
  double want = 29e-6 + (double)(Sp + L) / Be;
  assert_true(near(exec1(pl, B), want, 1e-6));
  /* the cost model charges the overlapped halves without the lead */
  double pred = ts_coll_predict(c, TS_COLL_ALL_REDUCE, S, &prm, TS_COLL_NVLS,
                                TS_COLL_SIMPLE);
  assert_true(near(pred, 29e-6 + (double)S * 9 / 8 / (prm.bw_nvls * 0.85), 1e-9));
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* NCCL's structure keeps 8 steps in flight per ring channel: member i's
 * step s waits for the step it received (member i-1's step s-1) and its
 * own step s-8, not s-1. 8 ranks, one channel, k = 1: transfer (s, i) is
 * index 8 s + i. */
static void ring_steps_in_flight(void **state) {
  (void)state;
  ts_coll_comm *c = comm_seq(8, 0);
  ts_coll_params prm = prm_fixed(TS_COLL_RING);
  ts_coll_params_nccl(&prm, TS_COLL_GEN_AMPERE);
  ts_coll_plan *pl = lower(c, TS_COLL_ALL_REDUCE, 1 << 20, &prm, 0);
  assert_int_equal(ts_coll_plan_count(pl), 14 * 8);
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  const uint32_t *d = ts_coll_plan_deps(pl);
  for (uint32_t s = 1; s < 14; s++)
    for (uint32_t i = 0; i < 8; i++) {
      const ts_coll_xfer *t = &x[8 * s + i];
      assert_int_equal(t->ndeps, s >= 8 ? 2 : 1);
      assert_int_equal(d[t->dep_first], 8 * (s - 1) + (i + 7) % 8);
      if (s >= 8) assert_int_equal(d[t->dep_first + 1], 8 * (s - 8) + i);
    }
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* ts_coll_ring_describe + ts_coll_ring_xfer give, field for field, the
 * transfers ts_coll_lower builds for a step ring (executors compute rings
 * from the description without building them): transfer (ch, s, i, j) is
 * plan index ((ch * steps + s) * n + i) * k + j, and its dependencies are
 * (i-1, s-1, j), (i, s-W, j) and (i, s, j-1) when they exist. Checked on
 * every op, with NCCL's 8 steps in flight and without, 1 and 3 channels
 * in the three ring orders, with and without chunks, and two hosts of
 * unequal size (intra and inter latencies, LL wire bytes rounded up). */
static void ring_described_equals_lowered(void **state) {
  (void)state;
  int g[11], h[11];
  for (int i = 0; i < 11; i++) g[i] = i, h[i] = i < 4 ? 0 : 1;
  ts_coll_comm *c = NULL;
  assert_int_equal(ts_coll_comm_new(g, 11, &c), 0);
  assert_int_equal(ts_coll_comm_set_hosts(c, h), 0);
  const ts_coll_op ops[] = {TS_COLL_ALL_REDUCE, TS_COLL_ALL_GATHER,
                            TS_COLL_REDUCE_SCATTER};
  uint32_t checked = 0;
  for (int v = 0; v < 24; v++) {
    ts_coll_params p = prm_fixed(TS_COLL_RING);
    if (v & 1) ts_coll_params_nccl(&p, TS_COLL_GEN_HOPPER);
    p.channels = v & 2 ? 3 : 1;
    p.ring_order = (v >> 2) % 3;
    p.chunk_bytes = v >= 12 ? 5000 : 0;
    p.proto = v % 5 == 0 ? TS_COLL_LL : TS_COLL_SIMPLE;
    ts_coll_op op = ops[v % 3];
    uint64_t S = 1000003;
    ts_coll_ring r;
    ts_diag d;
    assert_int_equal(ts_coll_ring_describe(c, op, S, &p, 0, &r, &d), 0);
    ts_coll_plan *pl = lower(c, op, S, &p, 0);
    const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
    const uint32_t *dp = ts_coll_plan_deps(pl);
    uint32_t n = 11, k = r.chunks, W = r.window;
    assert_int_equal(W, v & 1 ? 8 : 1);
    assert_int_equal(k, ts_coll_plan_chunks(pl));
    assert_int_equal(ts_coll_plan_count(pl), r.channels * r.steps * n * k);
    assert_int_equal(r.proto, ts_coll_plan_proto(pl));
    int m[11];
    for (uint32_t ch = 0; ch < r.channels; ch++) {
      ts_coll_ring_members(&r, ch, m);
      for (uint32_t s = 0; s < r.steps; s++)
        for (uint32_t i = 0; i < n; i++)
          for (uint32_t j = 0; j < k; j++) {
            uint32_t at = ((ch * r.steps + s) * n + i) * k + j;
            ts_coll_xfer y;
            ts_coll_ring_xfer(&r, m, ch, s, i, j, &y);
            const ts_coll_xfer *w = &x[at];
            assert_int_equal(y.src, w->src);
            assert_int_equal(y.dst, w->dst);
            assert_int_equal(y.bytes, w->bytes);
            assert_int_equal(y.wire_bytes, w->wire_bytes);
            assert_int_equal(y.reduce_bytes, w->reduce_bytes);
            assert_int_equal(y.alpha, w->alpha);
            assert_int_equal(y.channel, w->channel);
            assert_int_equal(y.ndeps, w->ndeps);
            uint32_t q = 0, base = (ch * r.steps) * n * k;
            if (s > 0)
              assert_int_equal(dp[w->dep_first + q++],
                               base + ((s - 1) * n + (i + n - 1) % n) * k + j);
            if (s >= W)
              assert_int_equal(dp[w->dep_first + q++],
                               base + ((s - W) * n + i) * k + j);
            if (j > 0) assert_int_equal(dp[w->dep_first + q++], at - 1);
            checked++;
          }
    }
    ts_coll_plan_free(pl);
  }
  assert_true(checked > 20000);
  /* Anything but a step ring is lowered instead. */
  ts_coll_params p = prm_fixed(TS_COLL_TREE);
  ts_coll_ring r;
  ts_diag d;
  assert_int_equal(ts_coll_ring_describe(c, TS_COLL_ALL_REDUCE, 1 << 20, &p, 0, &r, &d), 1);
  p = prm_fixed(TS_COLL_RING);
  assert_int_equal(ts_coll_ring_describe(c, TS_COLL_ALL_REDUCE, 1 << 20, &p,
                                         TS_COLL_COMPACT, &r, &d), 1);
  assert_int_equal(ts_coll_ring_describe(c, TS_COLL_BROADCAST, 1 << 20, &p, 0, &r, &d), 1);
  ts_coll_comm_free(c);
}

/* Auto with default parameters on 8 GPUs of one host (no NVLS): small
 * messages go to the tree (2 log2 p steps instead of 2(p-1)), large ones to
 * the ring (bandwidth term 1.75 S/B vs 2 S/(0.92 B)). The switch happens
 * exactly where the cost model's best tree and best ring times cross. */
static void auto_crossover(void **state) {
  (void)state;
  ts_coll_comm *c = comm_seq(8, 0);
  ts_coll_params prm;
  ts_coll_params_default(&prm);
  ts_coll_algo a;
  ts_coll_proto q;
  double t;
  assert_int_equal(ts_coll_choose(c, TS_COLL_ALL_REDUCE, 1024, &prm, &a, &q,
                                  &t), 0);
  assert_int_equal(a, TS_COLL_TREE);
  assert_int_equal(q, TS_COLL_LL);
  assert_int_equal(ts_coll_choose(c, TS_COLL_ALL_REDUCE, 1ull << 30, &prm, &a,
                                  &q, &t), 0);
  assert_int_equal(a, TS_COLL_RING);
  assert_int_equal(q, TS_COLL_SIMPLE);
  /* best(algo) = min over protocols; bisect best(tree) = best(ring). */
  double lo = 1024, hi = 1ull << 30;
  for (int it = 0; it < 200; it++) {
    double mid = sqrt(lo * hi), bt = INFINITY, br = INFINITY;
    for (int p = 0; p < TS_COLL_PROTO_COUNT; p++) {
      bt = fmin(bt, ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)mid, &prm,
                                    TS_COLL_TREE, (ts_coll_proto)p));
      br = fmin(br, ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)mid, &prm,
                                    TS_COLL_RING, (ts_coll_proto)p));
    }
    if (bt <= br) lo = mid; else hi = mid;
  }
  ts_coll_choose(c, TS_COLL_ALL_REDUCE, (uint64_t)(lo * 0.99), &prm, &a, &q,
                 &t);
  assert_int_equal(a, TS_COLL_TREE);
  ts_coll_choose(c, TS_COLL_ALL_REDUCE, (uint64_t)(hi * 1.01), &prm, &a, &q,
                 &t);
  assert_int_equal(a, TS_COLL_RING);
  /* the plan reports the choice */
  ts_coll_plan *pl = lower(c, TS_COLL_ALL_REDUCE, 1024, &prm, 0);
  assert_int_equal(ts_coll_plan_algo(pl), TS_COLL_TREE);
  assert_int_equal(ts_coll_plan_proto(pl), TS_COLL_LL);
  /* LL transfers carry twice their payload on the wire */
  assert_int_equal(ts_coll_plan_xfers(pl)[0].wire_bytes,
                   2 * ts_coll_plan_xfers(pl)[0].bytes);
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* Lowering is a pure function of its inputs: two lowerings are identical
 * byte for byte. */
static void deterministic(void **state) {
  (void)state;
  ts_coll_comm *c = comm_seq(7, 0);
  ts_coll_algo algos[] = {TS_COLL_RING, TS_COLL_TREE, TS_COLL_HD,
                          TS_COLL_DIRECT};
  for (int i = 0; i < 4; i++) {
    ts_coll_params prm = prm_fixed(algos[i]);
    prm.chunk_bytes = 10000;
    prm.channels = 2;
    ts_coll_plan *a = lower(c, TS_COLL_ALL_REDUCE, 123457, &prm, 0);
    ts_coll_plan *b = lower(c, TS_COLL_ALL_REDUCE, 123457, &prm, 0);
    check_dag(a);
    assert_int_equal(ts_coll_plan_count(a), ts_coll_plan_count(b));
    assert_memory_equal(ts_coll_plan_xfers(a), ts_coll_plan_xfers(b),
                        sizeof(ts_coll_xfer) * ts_coll_plan_count(a));
    uint32_t n = ts_coll_plan_count(a);
    const ts_coll_xfer *l = &ts_coll_plan_xfers(a)[n - 1];
    assert_memory_equal(ts_coll_plan_deps(a), ts_coll_plan_deps(b),
                        sizeof(uint32_t) * (l->dep_first + l->ndeps));
    ts_coll_plan_free(a), ts_coll_plan_free(b);
  }
  ts_coll_comm_free(c);
}

/* Broadcast from root 2 over 5 ranks as a chain of 4 hops, S bytes each;
 * with k chunks on uniform links: (4 + k - 1)(alpha + S/(kB)). Reduce: the
 * chain ends at the root. send_recv: S bytes root -> peer. */
static void chain_and_p2p(void **state) {
  (void)state;
  const double B = 100e9, a = 2e-6;
  ts_coll_comm *c = comm_seq(5, 0);
  ts_coll_params prm = prm_fixed(TS_COLL_RING);
  prm.root = 2;
  prm.chunk_bytes = 1 << 20;
  uint64_t S = 8 << 20;
  ts_coll_plan *pl = lower(c, TS_COLL_BROADCAST, S, &prm, 0);
  assert_int_equal(ts_coll_plan_count(pl), 4 * 8);
  assert_int_equal(ts_coll_plan_xfers(pl)[0].src_rank, 2);
  assert_true(near(exec1(pl, B), 11 * (a + (double)(S / 8) / B), 1e-9));
  ts_coll_plan_free(pl);
  pl = lower(c, TS_COLL_REDUCE, S, &prm, 0);
  assert_int_equal(ts_coll_plan_xfers(pl)[ts_coll_plan_count(pl) - 1].dst_rank,
                   2);
  ts_coll_plan_free(pl);
  prm.algo = TS_COLL_AUTO;
  prm.peer = 4;
  pl = lower(c, TS_COLL_SEND_RECV, S, &prm, 0);
  assert_int_equal(sent_by(pl, 2), S);
  assert_int_equal(ts_coll_plan_xfers(pl)[0].dst_rank, 4);
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* nccl-tests' column formatting: 2 decimals if the value fits the width,
 * then 1, then 0, then %.1e (%.0e under 7 columns). 1234.567 in 7
 * columns: "1234.57" is 7 wide -> fits. 12345.678: "12345.68" is 8 -> 1
 * decimal "12345.7". 1234567.8 in 7: "1234568" (0 decimals). 123456789 in
 * 7: 9 digits never fit -> "1.2e+08". In 6 columns 1e9 -> "%.0e" = " 1e+09". */
static void nccltests_number_widths(void **state) {
  (void)state;
  char b[32];
  ts_coll_nccltests_num(1.5, 7, b, sizeof b);
  assert_string_equal(b, "   1.50");
  ts_coll_nccltests_num(1234.567, 7, b, sizeof b);
  assert_string_equal(b, "1234.57");
  ts_coll_nccltests_num(12345.678, 7, b, sizeof b);
  assert_string_equal(b, "12345.7");
  ts_coll_nccltests_num(1234567.8, 7, b, sizeof b);
  assert_string_equal(b, "1234568");
  ts_coll_nccltests_num(123456789.0, 7, b, sizeof b);
  assert_string_equal(b, "1.2e+08");
  ts_coll_nccltests_num(1e9, 6, b, sizeof b);
  assert_string_equal(b, " 1e+09");
  ts_coll_nccltests_num(227.634, 6, b, sizeof b);
  assert_string_equal(b, "227.63");
  /* -d names and sizes (nccl-tests' test_typenames). */
  uint32_t sz = 0;
  assert_int_equal(ts_coll_nccltests_type("bfloat16", &sz), 0);
  assert_int_equal(sz, 2);
  assert_int_equal(ts_coll_nccltests_type("f8e5m2", &sz), 0);
  assert_int_equal(sz, 1);
  assert_int_equal(ts_coll_nccltests_type("double", &sz), 0);
  assert_int_equal(sz, 8);
  assert_int_equal(ts_coll_nccltests_type("fp32", &sz), -1);
}

/* nccl-tests conventions for -b 1000003 bytes of float (4 B) on 8 ranks:
 * count = 250000; all_gather prints size (250000/8)*8*4 = 1000000 and count
 * 31250; all_reduce size 1000000 and count 250000; busbw factors 2(p-1)/p,
 * (p-1)/p and 1. */
static void nccltests_conventions(void **state) {
  (void)state;
  assert_int_equal(ts_coll_nccltests_size(TS_COLL_ALL_REDUCE, 8, 1000003, 4),
                   1000000);
  assert_int_equal(ts_coll_nccltests_count(TS_COLL_ALL_REDUCE, 8, 1000003, 4),
                   250000);
  assert_int_equal(ts_coll_nccltests_size(TS_COLL_ALL_GATHER, 8, 1000003, 4),
                   1000000);
  assert_int_equal(ts_coll_nccltests_count(TS_COLL_ALL_GATHER, 8, 1000003, 4),
                   31250);
  assert_int_equal(ts_coll_nccltests_size(TS_COLL_ALL_TO_ALL, 3, 1000, 4), 996);
  assert_int_equal(ts_coll_nccltests_count(TS_COLL_REDUCE_SCATTER, 3, 1000, 4),
                   83);
  assert_true(ts_coll_busbw_factor(TS_COLL_ALL_REDUCE, 8) == 14.0 / 8.0);
  assert_true(ts_coll_busbw_factor(TS_COLL_ALL_GATHER, 8) == 7.0 / 8.0);
  assert_true(ts_coll_busbw_factor(TS_COLL_REDUCE_SCATTER, 8) == 7.0 / 8.0);
  assert_true(ts_coll_busbw_factor(TS_COLL_ALL_TO_ALL, 8) == 7.0 / 8.0);
  assert_true(ts_coll_busbw_factor(TS_COLL_BROADCAST, 8) == 1.0);
  assert_true(ts_coll_busbw_factor(TS_COLL_REDUCE, 8) == 1.0);
  assert_true(ts_coll_busbw_factor(TS_COLL_SEND_RECV, 2) == 1.0);
  assert_true(ts_coll_algbw(1000, 1e-6) == 1e9);
}

/* Every algorithm on ops it supports, odd sizes and p = 1..9, chunked:
 * the DAG only points backwards and the payload is never lost (ring
 * all-reduce moves 2 S (p-1)/p in total per channel and so on). */
static void dags_acyclic_everywhere(void **state) {
  (void)state;
  for (int p = 1; p <= 9; p++) {
    ts_coll_comm *c = comm_seq(p, 0);
    ts_coll_comm_set_nvls(c, 0, 999);
    for (int a = TS_COLL_RING; a < TS_COLL_ALGO_COUNT; a++)
      for (int o = 0; o < TS_COLL_SEND_RECV; o++) {
        ts_coll_params prm = prm_fixed((ts_coll_algo)a);
        uint64_t m[81] = {0};
        prm.matrix = m;
        prm.chunk_bytes = 777;
        ts_coll_plan *pl = NULL;
        int rc = ts_coll_lower(c, (ts_coll_op)o, 10007, &prm, 0, &pl, NULL);
        if (rc) {
          assert_int_equal(rc, TS_EUSAGE);
          continue;
        }
        check_dag(pl);
        ts_coll_plan_free(pl);
      }
    ts_coll_comm_free(c);
  }
}

/* ts_coll_plan_subset on a ring all-reduce of 4: every member sends the
 * same number of transfers (2 (p-1) steps per channel), and member 0's
 * share, with each dependency renamed to member 0's transfer at the same
 * position, keeps every field but dep_first, stays a DAG and keeps the
 * algorithm; a renaming that points forward is refused (TS_EINVALID). */
static void plan_subset(void **state) {
  (void)state;
  ts_coll_comm *c = comm_seq(4, 0);
  ts_coll_params prm = prm_fixed(TS_COLL_RING);
  ts_coll_plan *pl = lower(c, TS_COLL_ALL_REDUCE, 1 << 20, &prm, 0);
  uint32_t n = ts_coll_plan_count(pl), cnt[4] = {0};
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  const uint32_t *dp = ts_coll_plan_deps(pl);
  uint32_t *pos = test_malloc(n * sizeof *pos), *keep = test_malloc(n * sizeof *keep);
  for (uint32_t i = 0; i < n; i++) {
    assert_true(x[i].src_rank >= 0 && x[i].src_rank < 4);
    pos[i] = cnt[x[i].src_rank]++;
    if (x[i].src_rank == 0) keep[pos[i]] = i;
  }
  for (int r = 1; r < 4; r++) assert_int_equal(cnt[r], cnt[0]);
  assert_int_equal(cnt[0] * 4, n);
  assert_int_equal(cnt[0] % 6, 0); /* 2 (p - 1) = 6 steps per channel */
  ts_coll_plan *q = NULL;
  assert_int_equal(ts_coll_plan_subset(pl, keep, cnt[0], pos, &q), 0);
  assert_int_equal(ts_coll_plan_count(q), cnt[0]);
  assert_int_equal(ts_coll_plan_algo(q), ts_coll_plan_algo(pl));
  assert_int_equal(ts_coll_plan_proto(q), ts_coll_plan_proto(pl));
  check_dag(q);
  const ts_coll_xfer *y = ts_coll_plan_xfers(q);
  const uint32_t *dq = ts_coll_plan_deps(q);
  for (uint32_t i = 0; i < cnt[0]; i++) {
    ts_coll_xfer a = x[keep[i]], b = y[i];
    for (uint32_t j = 0; j < a.ndeps; j++)
      assert_int_equal(dq[b.dep_first + j], pos[dp[a.dep_first + j]]);
    a.dep_first = b.dep_first = 0;
    assert_memory_equal(&a, &b, sizeof a);
  }
  ts_coll_plan_free(q);
  /* renaming every dependency to the last position points forward */
  for (uint32_t i = 0; i < n; i++) pos[i] = cnt[0] - 1;
  q = pl;
  assert_int_equal(ts_coll_plan_subset(pl, keep, cnt[0], pos, &q), TS_EINVALID);
  assert_null(q);
  test_free(pos);
  test_free(keep);
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ring_counts_and_bytes),
      cmocka_unit_test(ring_closed_forms),
      cmocka_unit_test(ring_busbw_equals_link),
      cmocka_unit_test(compact_matches_step),
      cmocka_unit_test(compact_matches_step_congested),
      cmocka_unit_test(tree_shape_and_time),
      cmocka_unit_test(hd_shape_and_time),
      cmocka_unit_test(direct_alltoall),
      cmocka_unit_test(alltoallv_conserves),
      cmocka_unit_test(hier_closed_form),
      cmocka_unit_test(nvls_shape),
      cmocka_unit_test(nvls_overlap),
      cmocka_unit_test(ring_steps_in_flight),
      cmocka_unit_test(ring_described_equals_lowered),
      cmocka_unit_test(auto_crossover),
      cmocka_unit_test(deterministic),
      cmocka_unit_test(chain_and_p2p),
      cmocka_unit_test(nccltests_conventions),
      cmocka_unit_test(nccltests_number_widths),
      cmocka_unit_test(dags_acyclic_everywhere),
      cmocka_unit_test(plan_subset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
