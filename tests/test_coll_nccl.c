/* test_coll_nccl.c - NCCL's per-operation cost structure (coll_nccl.c):
 * generations by GPU name, the constants of each, the cost model's closed
 * forms under it, and the choice by size having no step (the chosen
 * time never falls, and never more than doubles, when the size doubles). */
#include "testutil.h"

#include <math.h>

#include "topsim/ts_coll.h"

static int near(double a, double b, double rel) {
  return fabs(a - b) <= rel * fabs(b);
}

static ts_coll_comm *one_host(int p) {
  int g[64];
  for (int i = 0; i < p; i++) g[i] = i;
  ts_coll_comm *c = NULL;
  assert_int_equal(ts_coll_comm_new(g, p, &c), 0);
  return c;
}

static void generations(void **state) {
  (void)state;
  assert_int_equal(ts_coll_gpu_gen_from_name("A100-SXM4-80GB"), TS_COLL_GEN_AMPERE);
  assert_int_equal(ts_coll_gpu_gen_from_name("A800"), TS_COLL_GEN_AMPERE);
  assert_int_equal(ts_coll_gpu_gen_from_name("H100-SXM5-80GB"), TS_COLL_GEN_HOPPER);
  assert_int_equal(ts_coll_gpu_gen_from_name("H800"), TS_COLL_GEN_HOPPER);
  assert_int_equal(ts_coll_gpu_gen_from_name("GH200"), TS_COLL_GEN_HOPPER);
  assert_int_equal(ts_coll_gpu_gen_from_name("B200-GB200"), TS_COLL_GEN_BLACKWELL);
  assert_int_equal(ts_coll_gpu_gen_from_name("GB200"), TS_COLL_GEN_BLACKWELL);
  assert_int_equal(ts_coll_gpu_gen_from_name("RTX-3090"), TS_COLL_GEN_OTHER);
  assert_int_equal(ts_coll_gpu_gen_from_name(NULL), TS_COLL_GEN_OTHER);
  ts_coll_params p;
  ts_coll_params_default(&p);
  assert_int_equal(p.cost_model, TS_COLL_COST_DEFAULT);
  ts_coll_params_nccl(&p, TS_COLL_GEN_HOPPER);
  assert_int_equal(p.cost_model, TS_COLL_COST_NCCL);
  assert_int_equal(p.launch, 4 * TS_PS_PER_US);
  assert_int_equal(p.base_latency[TS_COLL_RING][TS_COLL_LL], 6600000);
  assert_int_equal(p.base_latency[TS_COLL_TREE][TS_COLL_LL], 6800000);
  assert_int_equal(p.base_latency[TS_COLL_NVLS][TS_COLL_SIMPLE], 0);
  assert_int_equal(p.nvls_latency, 25 * TS_PS_PER_US);
  assert_true(p.efficiency[TS_COLL_LL128] == 0.92);
  assert_true(p.ll_max_bw[0] == 141e9 && p.ll_max_bw[2] == 35e9);
  assert_true(p.nvls_efficiency == 0.85);
  /* auto ranks ring and NVLS only */
  assert_int_equal(p.auto_mask, (1u << TS_COLL_RING) | (1u << TS_COLL_NVLS));
}

/* Ring on 8 ranks of one host, B = 240 GB/s (DGX A100), Ampere:
 *   Simple: (4 + 8.4) us + 14 (3.4 us + S / (8 B))
 *   LL:     (4 + 6.6) us + 14 (0.6 us + S / (8 B e)), e = min(0.5, 87.7/240)
 *   LL128:  (4 + 14) us + 14 (1.9 us + S / (8 B 0.92)). */
static void ring_closed_forms(void **state) {
  (void)state;
  ts_coll_comm *c = one_host(8);
  ts_coll_params p;
  ts_coll_params_default(&p);
  ts_coll_params_nccl(&p, TS_COLL_GEN_AMPERE);
  const double B = 240e9, S = 1 << 20;
  p.bw_intra = B;
  double s = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_RING, TS_COLL_SIMPLE);
  double ll = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_RING, TS_COLL_LL);
  double l128 = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_RING, TS_COLL_LL128);
  assert_true(near(s, 12.4e-6 + 14 * (3.4e-6 + S / (8 * B)), 1e-9));
  assert_true(near(ll, 10.6e-6 + 14 * (0.6e-6 + S / (8 * 87.7e9)), 1e-9));
  assert_true(near(l128, 18e-6 + 14 * (1.9e-6 + S / (8 * B * 0.92)), 1e-9));
  /* the alpha-beta model (no startup, LL at 0.5, LL128 at 120/128) */
  ts_coll_params ab;
  ts_coll_params_default(&ab);
  ab.bw_intra = B;
  ll = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &ab, TS_COLL_RING, TS_COLL_LL);
  assert_true(near(ll, 14 * (0.6e-6 + S / (8 * B * 0.5)), 1e-9));
  ts_coll_comm_free(c);
}

/* Two hosts of 8: NCCL's tree is a chain inside each host and a tree
 * across: 2 (7 a_i + 1 a_n) step latencies, then 2 S / (bn e 0.92);
 * LL: e = min(1/3.8, 22.5 GB/s / bn) on two nodes. */
static void tree_two_hosts(void **state) {
  (void)state;
  int g[16], h[16];
  for (int i = 0; i < 16; i++) g[i] = i, h[i] = i / 8;
  ts_coll_comm *c = NULL;
  assert_int_equal(ts_coll_comm_new(g, 16, &c), 0);
  assert_int_equal(ts_coll_comm_set_hosts(c, h), 0);
  ts_coll_params p;
  ts_coll_params_default(&p);
  ts_coll_params_nccl(&p, TS_COLL_GEN_AMPERE);
  p.bw_intra = 240e9, p.bw_inter = 24e9;
  const double S = 4 << 20;
  double t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_TREE, TS_COLL_SIMPLE);
  assert_true(near(t, 12.4e-6 + 2 * (7 * 3.4e-6 + 14e-6) + 2 * S / (24e9 * 0.92), 1e-9));
  t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_TREE, TS_COLL_LL);
  double e = fmin(1 / 3.8, 22.5 / 24);
  assert_true(near(t, 10.8e-6 + 2 * (7 * 0.6e-6 + 2.7e-6) + 2 * S / (24e9 * e * 0.92), 1e-9));
  ts_coll_comm_free(c);
}

/* Beyond two hosts the hierarchical algorithm stands in for NCCL's tree:
 * for 1 KiB on 4 hosts of 8 it beats the flat ring (2 x 3 network steps
 * instead of the ring's 2 x 31 steps at the network latency); on 2 hosts
 * auto keeps to the ring. */
static void hier_beyond_two_hosts(void **state) {
  (void)state;
  int g[32], h[32];
  for (int i = 0; i < 32; i++) g[i] = i, h[i] = i / 8;
  ts_coll_params p;
  ts_coll_params_default(&p);
  ts_coll_params_nccl(&p, TS_COLL_GEN_AMPERE);
  p.bw_intra = 240e9, p.bw_inter = 24e9;
  ts_coll_algo a;
  ts_coll_proto q;
  double t;
  for (int hosts = 2; hosts <= 4; hosts += 2) {
    ts_coll_comm *c = NULL;
    assert_int_equal(ts_coll_comm_new(g, 8 * hosts, &c), 0);
    assert_int_equal(ts_coll_comm_set_hosts(c, h), 0);
    assert_int_equal(ts_coll_choose(c, TS_COLL_ALL_REDUCE, 1024, &p, &a, &q, &t), 0);
    assert_int_equal(a, hosts == 2 ? TS_COLL_RING : TS_COLL_HIER);
    ts_coll_comm_free(c);
  }
}

/* The choice on 8 H100 with NVLS (B = 360 GB/s): ring LL for small sizes,
 * NVLS for large ones; as the size doubles from 1 KiB to 8 GiB the chosen
 * time rises by a factor in [2/2.05, 2/0.9] (busbw within 0.9x-2.05x:
 * no step). */
static void choice_without_steps(void **state) {
  (void)state;
  ts_coll_comm *c = one_host(8);
  assert_int_equal(ts_coll_comm_set_nvls(c, 0, 900), 0);
  ts_coll_params p;
  ts_coll_params_default(&p);
  ts_coll_params_nccl(&p, TS_COLL_GEN_HOPPER);
  p.bw_intra = p.bw_nvls = 360e9;
  ts_coll_algo a;
  ts_coll_proto q;
  double t, prev = 0;
  assert_int_equal(ts_coll_choose(c, TS_COLL_ALL_REDUCE, 1024, &p, &a, &q, &t), 0);
  assert_int_equal(a, TS_COLL_RING);
  assert_int_equal(q, TS_COLL_LL);
  assert_int_equal(ts_coll_choose(c, TS_COLL_ALL_REDUCE, 1ull << 33, &p, &a, &q, &t), 0);
  assert_int_equal(a, TS_COLL_NVLS);
  for (uint64_t S = 1024; S <= (1ull << 33); S *= 2) {
    assert_int_equal(ts_coll_choose(c, TS_COLL_ALL_REDUCE, S, &p, &a, &q, &t), 0);
    if (prev > 0) assert_true(t / prev >= 2 / 2.05 && t / prev <= 2 / 0.9);
    prev = t;
  }
  ts_coll_comm_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(generations),
      cmocka_unit_test(ring_closed_forms),
      cmocka_unit_test(tree_two_hosts),
      cmocka_unit_test(hier_beyond_two_hosts),
      cmocka_unit_test(choice_without_steps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
