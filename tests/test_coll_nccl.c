/* test_coll_nccl.c - NCCL's per-operation cost structure (coll_nccl.c):
 * generations by GPU name, the constants of each, the cost model's closed
 * forms under it, and the choice by size having no step (the chosen
 * time never falls, and never more than doubles, when the size doubles). */
#include "testutil.h"

#include <math.h>

#include "coll/coll.h"
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

/* hosts x per ranks, rank i on host i / per */
static ts_coll_comm *hosts_comm(int hosts, int per) {
  int g[64], h[64];
  for (int i = 0; i < hosts * per; i++) g[i] = i, h[i] = i / per;
  ts_coll_comm *c = NULL;
  assert_int_equal(ts_coll_comm_new(g, hosts * per, &c), 0);
  assert_int_equal(ts_coll_comm_set_hosts(c, h), 0);
  return c;
}

/* NCCL's A100 figures over NVLink at 240 GB/s and one 24 GB/s NIC */
static void ampere_params(ts_coll_params *p) {
  ts_coll_params_default(p);
  ts_coll_params_nccl(p, TS_COLL_GEN_AMPERE);
  p->bw_intra = 240e9, p->bw_inter = 24e9;
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

/* Two hosts of 8 DGX A100 (NVLink 240 GB/s, one 24 GB/s NIC per GPU, 8
 * channels rotated over the NICs): NCCL's tree is a chain inside each host
 * and a tree across, 2 (7 a_i + 1 a_n) step latencies at the tree's hwLat
 * (NVLink 0.6 / 1.25 / 4.0, network 5.0 / 8.5 / 14 us), then S / algbw,
 * algbw A = busBw / 2 (tuning.cc):
 *   Simple: busBw = min(8 x 24 x 0.92, 8 x 23.6) = 176.64 GB/s
 *   LL128:  min(176.64 x 120/128, 8 x 20) = 160      (algbw 80)
 *   LL:     min(176.64 / 3.8, llMaxBw 22.5) = 22.5   (algbw 11.25)
 * plus the pipeline fill: the first chunk c (tree_chunks: Simple 512 KiB
 * = S/8 here, LL128 72,000, LL 32 KiB) crosses 14 NVLink and 2 network
 * hops at the link rates on the wire (payload / e, e = A / 137.14 GB/s,
 * the lowering's NVLink: 240 / (2 x 7/8)), after which the channels
 * stream: S / A + (fill - 8 c / A) x 2 / (k + 1) for k > 1 chunks per
 * channel (LL128 k = 8, LL 16; Simple k = 1: the whole fill, no streaming).
 * On one channel (the step model's unrotated ring) Simple is
 * min(24 x 0.92, 23.6) = 22.08. */
static void tree_two_hosts(void **state) {
  (void)state;
  ts_coll_comm *c = hosts_comm(2, 8);
  ts_coll_params p;
  ampere_params(&p);
  p.channels = 8, p.ring_order = TS_COLL_RING_ROTATE;
  const double S = 4 << 20;
  assert_int_equal(coll_ntree_channels(c, &p), 8);
  const double nv = 240.0 / 1.75, hop = 14 / 240e9 + 2 / 24e9;
  double t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_TREE, TS_COLL_SIMPLE);
  assert_true(near(t, 12.4e-6 + 2 * (7 * 4.0e-6 + 14e-6) +
                          524288 / (88.32 / nv) * hop, 1e-6));
  t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_TREE, TS_COLL_LL128);
  assert_true(near(t, 18e-6 + 2 * (7 * 1.25e-6 + 8.5e-6) + S / 80e9 +
                          (72000 / (80 / nv) * hop - 8 * 72000 / 80e9) * 2 / 9, 1e-6));
  t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_TREE, TS_COLL_LL);
  assert_true(near(t, 10.8e-6 + 2 * (7 * 0.6e-6 + 5.0e-6) + S / 11.25e9 +
                          (32768 / (11.25 / nv) * hop - 8 * 32768 / 11.25e9) * 2 / 17,
                   1e-6));
  /* the lowering's efficiency: algbw over what its busiest link allows,
   * NVLink 240 / (2 x 7/8) = 137.1 GB/s (head and tail send one way) */
  double e = coll_eff(c, &p, TS_COLL_ALL_REDUCE, TS_COLL_TREE, TS_COLL_LL128, (uint64_t)S);
  assert_true(near(e, 80.0 / (240.0 / 1.75), 1e-9));
  p.channels = 1, p.ring_order = TS_COLL_RING_SAME;
  assert_true(near(coll_ntree_algbw(c, &p, TS_COLL_SIMPLE), 22.08e9 / 2, 1e-9));
  ts_coll_comm_free(c);
}

/* One DGX A100 host: NCCL's tree runs its 24 coll channels (chains
 * rotated, 3 per GPU as head), busBw = min(240 x 0.92, 24 x 24) = 220.8
 * GB/s (algbw 110.4), LL128 x 7/9 = 171.73 (under 24 x 20; algbw 85.87),
 * and the lowering's NVLink reference is 240 / (2 x 7/8) as on two hosts. */
static void tree_one_host(void **state) {
  (void)state;
  ts_coll_comm *c = one_host(8);
  ts_coll_params p;
  ampere_params(&p);
  assert_int_equal(coll_ntree_channels(c, &p), 24);
  assert_true(near(coll_ntree_algbw(c, &p, TS_COLL_SIMPLE), 110.4e9, 1e-9));
  assert_true(near(coll_ntree_algbw(c, &p, TS_COLL_LL128), 220.8e9 * 7 / 9 / 2, 1e-9));
  double e = coll_eff(c, &p, TS_COLL_ALL_REDUCE, TS_COLL_TREE, TS_COLL_SIMPLE, 1u << 30);
  assert_true(near(e, 110.4 / (240 / 1.75), 1e-9));
  ts_coll_comm_free(c);
}

/* NCCL's tree chunk (enqueue.cc) on 2 x 8 ranks, 8 channels: Simple one
 * 512 KiB step, LL 32 KiB; LL128 576,000 halved while a channel gets fewer
 * than 2.8 x 64 / 8 = 22.4 chunks (not below 131,072: 8 MiB stops at
 * 72,000, 1 MiB/576,000 = 1 chunk), then fewer than 5.6 (not below 32,768:
 * 1 MiB -> 36,000 -> 18,000; 8 MiB has 14 of 72,000: kept); 1 GiB keeps
 * 576,000 (233 chunks per channel). */
static void tree_chunks(void **state) {
  (void)state;
  ts_coll_comm *c = hosts_comm(2, 8);
  ts_coll_params p;
  ampere_params(&p);
  p.channels = 8, p.ring_order = TS_COLL_RING_ROTATE;
  assert_int_equal(coll_ntree_chunk(c, &p, TS_COLL_SIMPLE, 1 << 20), 524288);
  assert_int_equal(coll_ntree_chunk(c, &p, TS_COLL_LL, 1 << 20), 32768);
  assert_int_equal(coll_ntree_chunk(c, &p, TS_COLL_LL128, 8 << 20), 72000);
  assert_int_equal(coll_ntree_chunk(c, &p, TS_COLL_LL128, 1 << 20), 18000);
  assert_int_equal(coll_ntree_chunk(c, &p, TS_COLL_LL128, 1u << 30), 576000);
  ts_coll_comm_free(c);
}

/* The tree lowering on 2 hosts of 4, 4 channels, LL128, S = 4 x 3 x 18,000
 * B (each channel 54,000 B: chunk 18,000 by the rule above with ppn 4:
 * 2.4 x 16 / 4 = 9.6 chunks wanted, so k = 3). Per channel 2 (n - 1) = 14
 * edges of 3 chunks: 168 transfers, 2 x 7 x 54,000 payload bytes per
 * channel; per channel 2 edges cross hosts (the heads, up and down), so 24
 * inter-host transfers; only an edge's first chunk carries the hop latency
 * (tree hwLat LL128: 1.25 us NVLink, 8.5 us network; the 18 us startup on
 * the transfers without dependencies: the 2 chain tails per channel). */
static void tree_lowering(void **state) {
  (void)state;
  ts_coll_comm *c = hosts_comm(2, 4);
  ts_coll_params p;
  ampere_params(&p);
  p.channels = 4, p.ring_order = TS_COLL_RING_ROTATE;
  p.algo = TS_COLL_TREE, p.proto = TS_COLL_LL128;
  const uint64_t S = 4 * 3 * 18000;
  assert_int_equal(coll_ntree_chunk(c, &p, TS_COLL_LL128, S), 18000);
  ts_coll_plan *pl = NULL;
  assert_int_equal(ts_coll_lower(c, TS_COLL_ALL_REDUCE, S, &p, 0, &pl, NULL), 0);
  assert_int_equal(ts_coll_plan_count(pl), 4 * 14 * 3);
  assert_int_equal(ts_coll_plan_chunks(pl), 3);
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  uint64_t bytes = 0;
  int inter = 0, first_intra = 0, first_inter = 0, zero = 0, start = 0;
  const ts_time_ps ai = 1250000, an = 8500000, t0 = 18000000;
  for (uint32_t i = 0; i < ts_coll_plan_count(pl); i++) {
    bytes += x[i].bytes;
    int cross = x[i].src_rank / 4 != x[i].dst_rank / 4;
    inter += cross;
    ts_time_ps a = x[i].alpha - (x[i].ndeps == 0 ? t0 : 0);
    start += x[i].ndeps == 0;
    first_intra += !cross && a == ai;
    first_inter += cross && a == an;
    zero += a == 0;
  }
  assert_true(bytes == 4 * 14 * 54000);
  assert_int_equal(inter, 4 * 2 * 3);
  assert_int_equal(first_inter, 4 * 2);
  assert_int_equal(first_intra, 4 * 12);
  assert_int_equal(zero, 4 * 14 * 2);
  assert_int_equal(start, 4 * 2);
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* Forks (nodes with two children) on the path from the deepest leaf,
 * rank 1, to the root of NCCL's binary tree (btree_parent: parent of r is
 * (r ^ b) | 2b, b = r & -r, or r ^ b when that is >= n): n = 2, 3 a chain
 * (0); 4: 0 <- 2 <- {1, 3} (1); 5: 0 <- 4 <- 2 <- {1, 3}, 4 has one child
 * (1); 6: 4's children 2 and 5 (5 folds back: 4 | 2 = 6 >= 6) (2); 8:
 * 0 <- 4 <- {2, 6}, 2 <- {1, 3} (2); 16: 8, 4, 2 (3). */
static void btree_forks(void **state) {
  (void)state;
  const int n[] = {2, 3, 4, 5, 6, 8, 16}, want[] = {0, 0, 1, 1, 2, 2, 3};
  for (int i = 0; i < 7; i++) assert_int_equal(coll_btree_forks(n[i]), want[i]);
}

/* Beyond two hosts auto ranks NCCL's tree (as NCCL's tuner does; the
 * hierarchical algorithm no longer stands in for it): for 1 KiB on 4 hosts
 * of 8 (one channel, these params' default) tree/LL wins. Its cost:
 * launch 4 + baseLat 6.8 + 2 (7 x 0.6 + log2(4) x 5.0) = 39.2 us, plus
 * S / A and the pipeline fill's excess over it (k = 1 chunk: all of it),
 * i.e. plus the fill: the 1 KiB chunk over 2 x 7 NVLink hops and 2 x (2
 * levels + 1 fork) network hops at efficiency e = A / ref, where A = 1 x
 * min(24 x 0.92, 17.8) / 3.8 / 2 GB/s (LL algbw, under the 19 GB/s LL
 * cap) and ref = min(240 / 2, 24 / 3) = 8 GB/s (an interior head moves
 * 3 S each way on its NIC). On 2 hosts auto keeps to the ring; on 16
 * hosts of 4 (beyond COLL_TREE_AUTO_MAX_HOSTS) to the hierarchical
 * stand-in. */
static void tree_beyond_two_hosts(void **state) {
  (void)state;
  ts_coll_params p;
  ampere_params(&p);
  ts_coll_algo a;
  ts_coll_proto q;
  double t;
  for (int hosts = 2; hosts <= 16; hosts *= 2) {
    if (hosts == 8) continue;
    ts_coll_comm *c = hosts_comm(hosts, hosts == 16 ? 4 : 8); /* <= 64 ranks */
    assert_int_equal(ts_coll_choose(c, TS_COLL_ALL_REDUCE, 1024, &p, &a, &q, &t), 0);
    /* beyond COLL_TREE_AUTO_MAX_HOSTS (8) the hierarchical stand-in */
    assert_int_equal(a, hosts == 2 ? TS_COLL_RING : hosts == 4 ? TS_COLL_TREE : TS_COLL_HIER);
    if (hosts == 4) {
      assert_int_equal(q, TS_COLL_LL);
      double A = 17.8e9 / 3.8 / 2, e = A / 8e9, chunk = 1024;
      double fill = 14 * chunk / (e * 240e9) + 6 * chunk / (e * 24e9);
      assert_true(fill > chunk / A);
      assert_true(near(t, 39.2e-6 + fill, 1e-9));
    }
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

/* Channels by size (enqueue.cc): Ampere runs 24 channels and drops one
 * while bytes < nc x threads x per-thread bytes: ring LL on 8 ranks
 * 512 x 8 x 8 = 32 KiB per channel, LL128 640 x 8 = 5 KiB, Simple
 * 512 x 64 = 32 KiB. */
static void channels_by_size(void **state) {
  (void)state;
  ts_coll_comm *c = one_host(8);
  ts_coll_params p;
  ts_coll_params_default(&p);
  ts_coll_params_nccl(&p, TS_COLL_GEN_AMPERE);
  assert_int_equal(p.max_channels, 24);
  const ts_coll_algo R = TS_COLL_RING;
  assert_int_equal(coll_channels(c, &p, R, TS_COLL_LL, 1024), 1);
  assert_int_equal(coll_channels(c, &p, R, TS_COLL_LL, 64 << 10), 2);
  assert_int_equal(coll_channels(c, &p, R, TS_COLL_LL, (64 << 10) - 1), 1);
  assert_int_equal(coll_channels(c, &p, R, TS_COLL_LL, 256 << 10), 8);
  assert_int_equal(coll_channels(c, &p, R, TS_COLL_LL, 24 * 32768), 24);
  assert_int_equal(coll_channels(c, &p, R, TS_COLL_LL, 1ull << 30), 24);
  assert_int_equal(coll_channels(c, &p, R, TS_COLL_LL128, 51200), 10);
  assert_int_equal(coll_channels(c, &p, R, TS_COLL_LL128, 51199), 9);
  assert_int_equal(coll_channels(c, &p, R, TS_COLL_SIMPLE, 320 << 10), 10);
  /* the tree's LL threshold has no nRanks factor: 512 x 8 = 4 KiB */
  assert_int_equal(coll_channels(c, &p, TS_COLL_TREE, TS_COLL_LL, 40960), 10);
  ts_coll_comm_free(c);
}

/* The ramp below full channels, ring LL on the DGX A100 (B = 240 GB/s):
 * at 64 KiB NCCL runs 2 channels of max(6.2 GB/s, B x 0.5 / 24 = 5 GB/s)
 * = 6.2 GB/s each: e = 2 x 6.2 / 240 (below the LL cap 87.7 / 240), so
 * T = 10.6 us + 14 (0.6 us + S / (8 B e)). At 1 MiB all 24 run and only
 * the cap binds (ring_closed_forms). */
static void ring_channel_ramp(void **state) {
  (void)state;
  ts_coll_comm *c = one_host(8);
  ts_coll_params p;
  ts_coll_params_default(&p);
  ts_coll_params_nccl(&p, TS_COLL_GEN_AMPERE);
  const double B = 240e9, S = 64 << 10, e = 2 * 6.2e9 / B;
  p.bw_intra = B;
  double ll = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_RING, TS_COLL_LL);
  assert_true(near(ll, 10.6e-6 + 14 * (0.6e-6 + S / (8 * B * e)), 1e-9));
  /* the lowering carries the same efficiency: wire = bytes / e */
  p.algo = TS_COLL_RING, p.proto = TS_COLL_LL;
  ts_coll_plan *pl = NULL;
  assert_int_equal(ts_coll_lower(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, 0, &pl, NULL), 0);
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  assert_int_equal(x[0].wire_bytes, (uint64_t)((double)x[0].bytes / e + 0.999999));
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

/* NVLS chunks (enqueue.cc): 16 channels x 8 heads = 128 chunks in flight;
 * 128 KiB from 1 GiB, 64 KiB from 64 MiB, 32 KiB from 8 MiB, else 16 KiB.
 * Each chunk costs o = 0.65 us on its channel of rate r = B 0.85 / 16:
 * rate factor f(c) = c / (c + r o) x (128 KiB + r o) / 128 KiB, and
 * T = 29 us + S (9/8) / (B 0.85 f). */
static void nvls_chunks(void **state) {
  (void)state;
  ts_coll_comm *c = one_host(8);
  assert_int_equal(ts_coll_comm_set_nvls(c, 0, 900), 0);
  ts_coll_params p;
  ts_coll_params_default(&p);
  ts_coll_params_nccl(&p, TS_COLL_GEN_HOPPER);
  p.bw_intra = p.bw_nvls = 360e9;
  const uint64_t sz[6] = {1ull << 30, (1ull << 30) - 1, 64ull << 20,
                          (64ull << 20) - 1, 8ull << 20, (8ull << 20) - 1};
  const double ck[6] = {131072, 65536, 65536, 32768, 32768, 16384};
  const double x = 360e9 * 0.85 / 16 * 0.65e-6, full = 131072;
  for (int i = 0; i < 6; i++) {
    assert_int_equal(coll_nvls_chunk(c, &p, sz[i]), (uint64_t)ck[i]);
    double f = ck[i] / (ck[i] + x) * (full + x) / full;
    double t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, sz[i], &p, TS_COLL_NVLS,
                               TS_COLL_SIMPLE);
    assert_true(near(t, 29e-6 + (double)sz[i] * 1.125 / (360e9 * 0.85 * f), 1e-9));
  }
  ts_coll_comm_free(c);
}

/* A ring over 4 hosts of 8 whose 8 channels are rotated over the local
 * ranks crosses hosts on 8 NICs: it is costed at min(B_i, 8 B_n) =
 * 192 GB/s, not one NIC's 24 GB/s, so auto takes it over the
 * hierarchical algorithm for 1 GiB, as the simulated ring is faster:
 * T = 12.4 us + 2 x 31 (a + S / (32 x 192 GB/s)) with Simple, where the
 * per-step latency a = (4 x 14 + 28 x 3.4) / 32 us averages the ring's 4
 * network hops and 28 NVLink hops.
 * With one channel (the step model's order) it stays at one NIC. */
static void multi_host_ring_cost(void **state) {
  (void)state;
  ts_coll_comm *c = hosts_comm(4, 8);
  ts_coll_params p;
  ampere_params(&p);
  p.channels = 8, p.ring_order = TS_COLL_RING_ROTATE;
  const double S = 1ull << 30;
  double t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_RING, TS_COLL_SIMPLE);
  const double a_step = (4 * 14e-6 + 28 * 3.4e-6) / 32;
  assert_true(near(t, 12.4e-6 + 62 * (a_step + S / (32 * 192e9)), 1e-9));
  ts_coll_algo a;
  ts_coll_proto q;
  assert_int_equal(ts_coll_choose(c, TS_COLL_ALL_REDUCE, 1ull << 30, &p, &a, &q, &t), 0);
  assert_int_equal(a, TS_COLL_RING);
  p.channels = 1, p.ring_order = TS_COLL_RING_SAME;
  t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_RING, TS_COLL_SIMPLE);
  assert_true(near(t, 12.4e-6 + 62 * (a_step + S / (32 * 24e9)), 1e-9));
  ts_coll_comm_free(c);
}

/* NCCL's network overhead (tuning.cc getNetOverhead: 1 us Intel, 2 us AMD,
 * x 3 for Simple) is the least an in-host step of a multi-host ring
 * takes. Two hosts of 8, 8 rotated channels (192 GB/s over 8 NICs), AMD:
 * Simple 1 GiB: a = (2 x 14 + 14 x max(3.4, 6)) / 16 us,
 *   T = 12.4 us + 30 (a + S / (16 x 192 GB/s));
 * Intel: max(3.4, 3) = 3.4, the step latency without the overhead.
 * LL128 across hosts is capped at graph channels (one per NIC, 8) x
 * perChMaxRingLL128Bw 20 GB/s = 160 GB/s < 0.92 x 192: e = 160 / 192,
 *   64 MiB: T = 18 us + 30 ((2 x 4 + 14 x 2) / 16 us + S / (16 x 160 GB/s)).
 * One host keeps alpha_intra (no network proxy in the ring). */
static void net_overhead_rings(void **state) {
  (void)state;
  ts_coll_comm *c = hosts_comm(2, 8);
  ts_coll_params p;
  ampere_params(&p);
  p.channels = 8, p.ring_order = TS_COLL_RING_ROTATE;
  ts_coll_params_net_overhead(&p, 1);
  assert_int_equal(p.net_overhead[TS_COLL_LL], 2 * TS_PS_PER_US);
  assert_int_equal(p.net_overhead[TS_COLL_SIMPLE], 6 * TS_PS_PER_US);
  const double S = 1ull << 30, M = 64ull << 20;
  double t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p,
                             TS_COLL_RING, TS_COLL_SIMPLE);
  double a = (2 * 14e-6 + 14 * 6e-6) / 16;
  assert_true(near(t, 12.4e-6 + 30 * (a + S / (16 * 192e9)), 1e-9));
  t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)M, &p, TS_COLL_RING,
                      TS_COLL_LL128);
  a = (2 * 4e-6 + 14 * 2e-6) / 16;
  assert_true(near(t, 18e-6 + 30 * (a + M / (16 * 160e9)), 1e-9));
  ts_coll_params_net_overhead(&p, 0);
  t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_RING,
                      TS_COLL_SIMPLE);
  a = (2 * 14e-6 + 14 * 3.4e-6) / 16;
  assert_true(near(t, 12.4e-6 + 30 * (a + S / (16 * 192e9)), 1e-9));
  ts_coll_comm_free(c);
  c = hosts_comm(1, 8);
  ts_coll_params_net_overhead(&p, 1);
  t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_RING,
                      TS_COLL_SIMPLE);
  assert_true(near(t, 12.4e-6 + 14 * (3.4e-6 + S / (8 * 240e9)), 1e-9));
  ts_coll_comm_free(c);
}

/* NCCL's p2p schedule (2.18 enqueue.cc) on DGX A100 (32 p2p channels):
 * with 8 ranks a send starts on 32/8 = 4 channels and may use up to
 * 4 x 32/8 = 16; parts are 64 KiB to 16 MiB, doubling channels while
 * parts are too big: 64 KiB -> 1, 1 MiB -> 4, 128 MiB -> 8, 256 MiB and
 * 1 GiB -> 16. With 2 ranks: 16 to 32, so 64 MiB -> 16 and 1 GiB -> 32.
 * Across hosts a peer gets max(1, ceil(24 / 14)) = 2 channels (28 GB/s,
 * above the 24 GB/s NIC). A send_recv between two ranks of one host at
 * 64 MiB runs 16 x 14 = 224 GB/s after the pipeline's fill (4 MiB per
 * channel, so one whole 512 KiB step at 14 GB/s, test p2p_fill):
 * T = (4 + 8.4 + 3.4) us + 524288 / 14 GB/s + S / 224 GB/s. */
static void p2p_channels(void **state) {
  (void)state;
  ts_coll_params p;
  ampere_params(&p);
  assert_int_equal(p.p2p_channels, 32);
  assert_int_equal(ts_coll_p2p_channels(&p, 8, 1, 64 << 10), 1);
  assert_int_equal(ts_coll_p2p_channels(&p, 8, 1, 1 << 20), 4);
  assert_int_equal(ts_coll_p2p_channels(&p, 8, 1, 128ull << 20), 8);
  assert_int_equal(ts_coll_p2p_channels(&p, 8, 1, 256ull << 20), 16);
  assert_int_equal(ts_coll_p2p_channels(&p, 8, 1, 1ull << 30), 16);
  assert_int_equal(ts_coll_p2p_channels(&p, 2, 1, 64ull << 20), 16);
  assert_int_equal(ts_coll_p2p_channels(&p, 2, 1, 1ull << 30), 32);
  assert_int_equal(ts_coll_p2p_channels(&p, 8, 0, 1 << 20), 2);
  assert_true(ts_coll_p2p_cap(&p, 8, 1, 1ull << 30) == 16 * 14e9);
  ts_coll_params ab;
  ts_coll_params_default(&ab);
  assert_int_equal(ts_coll_p2p_channels(&ab, 8, 1, 1ull << 30), 0);
  ts_coll_comm *c = one_host(2);
  p.root = 0, p.peer = 1;
  const double S = 64ull << 20;
  double t = ts_coll_predict(c, TS_COLL_SEND_RECV, (uint64_t)S, &p, TS_COLL_DIRECT, TS_COLL_SIMPLE);
  assert_true(near(t, 15.8e-6 + 524288 / 14e9 + S / 224e9, 1e-9));
  ts_coll_comm_free(c);
}

/* The p2p pipeline's fill: one step (512 KiB, or the channel's part when
 * smaller) at 14 GB/s before the receiver reads. 8 ranks of DGX A100:
 * 64 KiB -> 1 channel of 64 KiB; 1 MiB -> 4 channels of 256 KiB; 128 MiB
 * -> 8 channels of 16 MiB, a whole step. None across hosts, for 0 bytes or
 * without the NCCL structure. An all_to_all of 64 MiB on one host of 8 is
 * 8 sends of 8 MiB (4 channels of 2 MiB): its direct cost and every
 * transfer of its lowering start 524288 / 14 GB/s (37449143 ps) later
 * than with the p2p model off; on 2 hosts of 4 (NIC peers) nothing moves. */
static void p2p_fill(void **state) {
  (void)state;
  ts_coll_params p, off;
  ampere_params(&p);
  assert_true(ts_coll_p2p_fill(&p, 8, 1, 64 << 10) == 65536 / 14e9);
  assert_true(ts_coll_p2p_fill(&p, 8, 1, 1 << 20) == 262144 / 14e9);
  assert_true(ts_coll_p2p_fill(&p, 8, 1, 128ull << 20) == 524288 / 14e9);
  assert_true(ts_coll_p2p_fill(&p, 8, 0, 128ull << 20) == 0);
  assert_true(ts_coll_p2p_fill(&p, 8, 1, 0) == 0);
  off = p, off.p2p_channels = 0;
  assert_true(ts_coll_p2p_fill(&off, 8, 1, 1 << 20) == 0);
  const uint64_t S = 64ull << 20;
  ts_coll_comm *c = one_host(8), *h2 = hosts_comm(2, 4);
  double on = ts_coll_predict(c, TS_COLL_ALL_TO_ALL, S, &p, TS_COLL_DIRECT, TS_COLL_SIMPLE);
  double no = ts_coll_predict(c, TS_COLL_ALL_TO_ALL, S, &off, TS_COLL_DIRECT, TS_COLL_SIMPLE);
  assert_true(near(on - no, 37449143e-12, 1e-6)); /* the fill in whole ps */
  assert_true(ts_coll_predict(h2, TS_COLL_ALL_TO_ALL, S, &p, TS_COLL_DIRECT, TS_COLL_SIMPLE) ==
              ts_coll_predict(h2, TS_COLL_ALL_TO_ALL, S, &off, TS_COLL_DIRECT, TS_COLL_SIMPLE));
  ts_coll_plan *a = NULL, *b = NULL;
  assert_int_equal(ts_coll_lower(c, TS_COLL_ALL_TO_ALL, S, &p, 0, &a, NULL), 0);
  assert_int_equal(ts_coll_lower(c, TS_COLL_ALL_TO_ALL, S, &off, 0, &b, NULL), 0);
  assert_int_equal(ts_coll_plan_count(a), 8 * 7);
  assert_int_equal(ts_coll_plan_count(b), 8 * 7);
  const ts_coll_xfer *xa = ts_coll_plan_xfers(a), *xb = ts_coll_plan_xfers(b);
  for (uint32_t i = 0; i < 8 * 7; i++) {
    assert_int_equal(xa[i].ndeps, 0);
    assert_true(xa[i].alpha == xb[i].alpha + 37449143);
  }
  ts_coll_plan_free(a), ts_coll_plan_free(b);
  ts_coll_comm_free(c), ts_coll_comm_free(h2);
}

static ts_coll_comm *hosts_nvls(int hosts, int per) {
  ts_coll_comm *c = hosts_comm(hosts, per);
  for (int i = 0; i < hosts; i++)
    assert_int_equal(ts_coll_comm_set_nvls(c, i, 900 + i), 0);
  return c;
}

/* NVLS-tree over hosts of 8 H100 (B_nvls 360 GB/s, NIC 48 GB/s per GPU),
 * 1 GiB (128 KiB NVLS chunks, rate factor 1): NVLink carries S (1 + 1/8)
 * at 0.85 B_nvls and each NIC f S / 8 (f = 1 on 2 hosts, 2 (H-1)/H
 * beyond), at once: T = (4 + 25) us + 2 ceil(log2 H) 20.9 us + max(both).
 * Two hosts: NVLink-bound; four: NIC-bound. Auto takes it over the ring
 * for 1 GiB on two hosts. Only all-reduce runs across hosts. */
static void nvls_tree_cost(void **state) {
  (void)state;
  ts_coll_params p;
  ts_coll_params_default(&p);
  ts_coll_params_nccl(&p, TS_COLL_GEN_HOPPER);
  p.bw_intra = p.bw_nvls = 360e9, p.bw_inter = 48e9;
  /* At 1 GiB (128 KiB NVLS chunks, factor 1) the NVLink side alone would
   * take S (1 + 1/8) / (360 GB/s x 0.85) (algbw 272 GB/s); NCCL's
   * per-channel NVLS-tree cap, 8 heads x perChMaxNVLSTreeBw (57.7 GB/s on
   * two hosts, 45.5 beyond) as busBw, is an algbw of 8 x 57.7 x 16/30 =
   * 246.2 GB/s on 2 x 8 ranks and 8 x 45.5 x 32/62 = 187.9 GB/s on 4 x 8:
   * it binds on both. The NIC side runs at the NVLS efficiency 0.85: 8 NICs
   * carry S/8 each (2 hosts, algbw 326 GB/s) or 1.5 S/8 (4 hosts, 218). */
  const double S = 1ull << 30, nv_links = S * 1.125 / (360e9 * 0.85);
  for (int hosts = 2; hosts <= 4; hosts += 2) {
    ts_coll_comm *c = hosts_nvls(hosts, 8);
    double n = 8.0 * hosts, ch = hosts == 2 ? 57.7e9 : 45.5e9;
    double nv = S * 2 * (n - 1) / n / (8 * ch);
    double f = hosts == 2 ? 1 : 2.0 * (hosts - 1) / hosts, nic = f * S / 8 / (48e9 * 0.85);
    double t = ts_coll_predict(c, TS_COLL_ALL_REDUCE, (uint64_t)S, &p, TS_COLL_NVLS, TS_COLL_SIMPLE);
    double lv = hosts == 2 ? 1 : 2;
    assert_true(near(t, 29e-6 + 2 * lv * 20.9e-6 + fmax(nv, nic), 1e-9));
    assert_true(nv > nic && nv > nv_links);
    const char *why;
    assert_int_equal(coll_supported(c, TS_COLL_REDUCE_SCATTER, TS_COLL_NVLS, &p, &why), TS_EUSAGE);
    ts_coll_comm_free(c);
  }
  ts_coll_comm *c = hosts_nvls(2, 8);
  ts_coll_algo a;
  ts_coll_proto q;
  double t;
  assert_int_equal(ts_coll_choose(c, TS_COLL_ALL_REDUCE, 1ull << 30, &p, &a, &q, &t), 0);
  assert_int_equal(a, TS_COLL_NVLS);
  ts_coll_comm_free(c);
}

/* The NVLS-tree lowering on 2 hosts of 4, S = 64 MiB: every rank sends
 * S (1 + 1/4) up (lead + body) and gets as much down (lead + body), sends
 * its quarter S/4 to the same local rank of the other host (lead + body,
 * the lead carrying 2 x 20.9 us), and each host joins its 4 leads:
 * 6 x 8 + 2 = 50 transfers. The up leads carry the startup (launch 4 us
 * + NVLS 25 us), nothing else a latency of its own. */
static void nvls_tree_lowering(void **state) {
  (void)state;
  ts_coll_comm *c = hosts_nvls(2, 4);
  ts_coll_params p;
  ts_coll_params_default(&p);
  ts_coll_params_nccl(&p, TS_COLL_GEN_HOPPER);
  p.bw_intra = p.bw_nvls = 360e9, p.bw_inter = 48e9;
  p.algo = TS_COLL_NVLS;
  const uint64_t S = 64ull << 20;
  ts_coll_plan *pl = NULL;
  assert_int_equal(ts_coll_lower(c, TS_COLL_ALL_REDUCE, S, &p, 0, &pl, NULL), 0);
  assert_int_equal(ts_coll_plan_count(pl), 50);
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  uint64_t up[8] = {0}, down[8] = {0}, net[8] = {0};
  int joins = 0, tree = 0;
  for (uint32_t i = 0; i < 50; i++) {
    if (x[i].flags & TS_COLL_XFER_JOIN) { joins++; continue; }
    if (x[i].src_rank >= 0 && x[i].dst_rank >= 0) {
      net[x[i].src_rank] += x[i].bytes;
      assert_int_equal(x[i].dst_rank, (x[i].src_rank + 4) % 8);
      tree += x[i].alpha == 2 * p.nvls_tree_latency;
      if (x[i].alpha) continue;
    } else if (x[i].src_rank >= 0) {
      up[x[i].src_rank] += x[i].bytes;
      if (x[i].ndeps == 0) {
        assert_int_equal(x[i].alpha, 29 * TS_PS_PER_US);
        continue;
      }
    } else {
      down[x[i].dst_rank] += x[i].bytes;
    }
    assert_int_equal(x[i].alpha, 0);
  }
  assert_int_equal(joins, 2);
  assert_int_equal(tree, 8);
  for (int r = 0; r < 8; r++) {
    assert_int_equal(up[r], S + S / 4);
    assert_int_equal(down[r], S + S / 4);
    assert_int_equal(net[r], S / 4);
  }
  ts_coll_plan_free(pl);
  ts_coll_comm_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(generations),
      cmocka_unit_test(ring_closed_forms),
      cmocka_unit_test(tree_two_hosts),
      cmocka_unit_test(tree_one_host),
      cmocka_unit_test(tree_chunks),
      cmocka_unit_test(tree_lowering),
      cmocka_unit_test(tree_beyond_two_hosts),
      cmocka_unit_test(btree_forks),
      cmocka_unit_test(choice_without_steps),
      cmocka_unit_test(channels_by_size),
      cmocka_unit_test(ring_channel_ramp),
      cmocka_unit_test(nvls_chunks),
      cmocka_unit_test(multi_host_ring_cost),
      cmocka_unit_test(net_overhead_rings),
      cmocka_unit_test(p2p_channels),
      cmocka_unit_test(p2p_fill),
      cmocka_unit_test(nvls_tree_cost),
      cmocka_unit_test(nvls_tree_lowering),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
