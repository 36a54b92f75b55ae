/* test_net.c - the link model (ts_net.h), both fidelities.
 *
 * Each test states the system and its closed-form answer (SimGrid
 * maxmin_test style). Times are integer picoseconds; S bytes over B bytes/s
 * take S * 1e12 / B ps. Graphs are built with the topology builder: nodes
 * n0, n1, ... and links whose direction 2*l goes a->b. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_graph.h"
#include "topsim/ts_net.h"
#include "topsim/ts_sim.h"

#define GBs 1e9
#define US TS_PS_PER_US
#define MiB (1024ull * 1024ull)

/* ---- helpers -------------------------------------------------------- */

typedef struct world {
  ts_topo *t;
  ts_sim *sim;
  ts_net *net;
  ts_time_ps done[512];
  int ndone;
} world;

static ts_topo *tg_new(uint32_t nodes) {
  ts_topo *t = topo_new("net-test");
  ts_node proto = topo_node_proto(TS_NODE_SWITCH);
  for (uint32_t i = 0; i < nodes; i++) topo_add_node(t, &proto, "n%u", i);
  return t;
}

/* Adds link a-b; returns its id (direction 2*id is a->b). */
static uint32_t tg_link(ts_topo *t, uint32_t a, uint32_t b, double bw,
                        ts_time_ps lat) {
  return topo_add_link(t, a, b, TS_LINK_NET, 1, bw, lat, TS_NO_PLANE);
}

/* Finalizes t and builds the engine and a network of configuration c. */
static void tg_done_cfg(world *w, ts_topo *t, const ts_net_config *c) {
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(topo_finalize(t, &d), 0);
  w->t = t;
  assert_int_equal(ts_sim_new(&w->sim), 0);
  assert_int_equal(ts_net_new(t, w->sim, c, &w->net), 0);
  for (int i = 0; i < 512; i++) w->done[i] = UINT64_MAX;
  w->ndone = 0;
}

static void tg_done(world *w, ts_topo *t, ts_net_fidelity fid) {
  ts_net_config c;
  ts_net_config_default(&c);
  c.fidelity = fid;
  tg_done_cfg(w, t, &c);
}

static void w_free(world *w) {
  ts_net_stats s;
  ts_net_stats_get(w->net, &s);
  /* Byte conservation: everything sent was delivered. */
  assert_int_equal(s.bytes_sent, s.bytes_delivered);
  assert_int_equal(s.flows_started, s.flows_finished);
  ts_net_free(w->net);
  ts_sim_free(w->sim);
  ts_topo_free(w->t);
}

static void on_done(ts_net *net, void *ctx, uint64_t tag) {
  world *w = ctx;
  assert_ptr_equal(net, w->net);
  w->done[tag] = ts_sim_now(w->sim);
  w->ndone++;
}

static void send1(world *w, const uint32_t *path, uint32_t hops,
                  uint64_t bytes, ts_time_ps alpha, uint64_t tag) {
  assert_int_equal(ts_net_send(w->net, path, hops, bytes, alpha, on_done, w,
                               tag), 0);
}

static void run(world *w) { assert_int_equal(ts_sim_run(w->sim), 0); }

/* ---- alone on a path ------------------------------------------------ */

/* One link, 25 GB/s, 1 us latency; 1 MiB with alpha_sw = 2 us:
 * T = 2 us + 1 us + 1,048,576 B / 25e9 B/s = 3,000,000 + 41,943,040 ps
 *   = 44,943,040 ps exactly, in both fidelities (chunk: 16 chunks of
 * 64 KiB back to back on one port, then the last one's 1 us latency). */
static void test_single_link_exact(void **state) {
  for (int fid = 0; fid < 2; fid++) {
    world w;
    ts_topo *t = tg_new(2);
    tg_link(t, 0, 1, 25 * GBs, 1 * US);
    tg_done(&w, t, (ts_net_fidelity)fid);
    uint32_t p[] = {0};
    send1(&w, p, 1, MiB, 2 * US, 0);
    run(&w);
    assert_int_equal(w.done[0], 44943040ull);
    ts_net_dir_stats ds;
    assert_int_equal(ts_net_dir_stats_get(w.net, 0, &ds), 0);
    assert_int_equal(ds.bytes, MiB);
    assert_int_equal(ds.busy_ps, 41943040ull); /* S / B */
    w_free(&w);
  }
}

/* Three hops n0->n1->n2->n3 at 100, 25, 50 GB/s with latencies 100, 200,
 * 300 ns; 1e6 bytes, no alpha: T = 600 ns + 1e6 / 25e9 s = 600,000 +
 * 40,000,000 = 40,600,000 ps (cut-through: only the bottleneck counts). */
static void test_multi_hop(void **state) {
  world w;
  ts_topo *t = tg_new(4);
  tg_link(t, 0, 1, 100 * GBs, 100000);
  tg_link(t, 1, 2, 25 * GBs, 200000);
  tg_link(t, 2, 3, 50 * GBs, 300000);
  tg_done(&w, t, TS_NET_FLOW);
  uint32_t p[] = {0, 2, 4};
  send1(&w, p, 3, 1000000, 0, 0);
  run(&w);
  assert_int_equal(w.done[0], 40600000ull);
  w_free(&w);
}

/* ---- sharing -------------------------------------------------------- */

/* Two flows of S = 1e6 B on one 10 GB/s link, no latency: each gets B/2,
 * both finish at 2S/B = 200 us = 200,000,000 ps. */
static void test_two_share(void **state) {
  world w;
  ts_topo *t = tg_new(2);
  tg_link(t, 0, 1, 10 * GBs, 0);
  tg_done(&w, t, TS_NET_FLOW);
  uint32_t p[] = {0};
  send1(&w, p, 1, 1000000, 0, 0);
  send1(&w, p, 1, 1000000, 0, 1);
  run(&w);
  assert_int_equal(w.done[0], 200000000ull);
  assert_int_equal(w.done[1], 200000000ull);
  ts_net_dir_stats ds;
  ts_net_dir_stats_get(w.net, 0, &ds);
  assert_int_equal(ds.peak_flows, 2);
  ts_net_stats s;
  ts_net_stats_get(w.net, &s);
  /* One batched solve for both arrivals; the joint departure leaves no
   * flow to re-rate, so it costs no solve. */
  assert_int_equal(s.solves, 1);
  w_free(&w);
}

/* N:1 incast, N = 4: sources n1..n4 each reach the switch n0 over
 * 100 GB/s links, n0 -> n5 is 25 GB/s. Each flow of S = 1e6 gets B/N =
 * 6.25 GB/s: all finish at N*S/B = 160 us. */
static void test_incast(void **state) {
  world w;
  ts_topo *t = tg_new(6);
  uint32_t up[4];
  for (uint32_t i = 0; i < 4; i++) up[i] = tg_link(t, 1 + i, 0, 100 * GBs, 0);
  uint32_t down = tg_link(t, 0, 5, 25 * GBs, 0);
  tg_done(&w, t, TS_NET_FLOW);
  for (uint32_t i = 0; i < 4; i++) {
    uint32_t p[] = {2 * up[i], 2 * down};
    send1(&w, p, 2, 1000000, 0, i);
  }
  run(&w);
  for (int i = 0; i < 4; i++) assert_int_equal(w.done[i], 160000000ull);
  w_free(&w);
}

/* Max-min: n0 -L1(10 GB/s)-> n1 -L2(6 GB/s)-> n2. Flow A crosses L1 and
 * L2, B only L2, C only L1, each S = 21e6 B, all sent at time 0. */
static void maxmin_three_start(world *w) {
  ts_topo *t = tg_new(3);
  tg_link(t, 0, 1, 10 * GBs, 0);
  tg_link(t, 1, 2, 6 * GBs, 0);
  tg_done(w, t, TS_NET_FLOW);
  uint32_t pa[] = {0, 2}, pb[] = {2}, pc[] = {0};
  send1(w, pa, 2, 21000000, 0, 0);
  send1(w, pb, 1, 21000000, 0, 1);
  send1(w, pc, 1, 21000000, 0, 2);
}

/* maxmin_three_start's flows. Progressive filling: L2's
 * share 6/2 = 3 < L1's 10/2 = 5, so A = B = 3 GB/s; C gets L1's rest,
 * 10 - 3 = 7 GB/s. C finishes at 21e6/7e9 = 3 ms; then L1 is A's alone
 * but A stays at L2's 3 GB/s: A and B finish at 21e6/3e9 = 7 ms. */
static void test_maxmin_three(void **state) {
  world w;
  maxmin_three_start(&w);
  run(&w);
  assert_int_equal(w.done[2], 3 * TS_PS_PER_MS);
  assert_int_equal(w.done[0], 7 * TS_PS_PER_MS);
  assert_int_equal(w.done[1], 7 * TS_PS_PER_MS);
  w_free(&w);
}

/* ts_net_dir_rates on test_maxmin_three's flows at 1 ms (all three still
 * active): L1 carries A at 3 and C at 7 GB/s (sum 10, max 7), L2 A and B
 * at 3 GB/s each (sum 6, max 3); L2's reverse direction nothing. Chunk
 * fidelity and a direction out of range: TS_EUSAGE with zeros. */
static void test_dir_rates(void **state) {
  world w;
  maxmin_three_start(&w);
  assert_int_equal(ts_sim_run_until(w.sim, TS_PS_PER_MS), 0);
  double sum = -1, max = -1;
  assert_int_equal(ts_net_dir_rates(w.net, 0, &sum, &max), 0);
  assert_true(sum == 10 * GBs && max == 7 * GBs);
  assert_int_equal(ts_net_dir_rates(w.net, 2, &sum, &max), 0);
  assert_true(sum == 6 * GBs && max == 3 * GBs);
  assert_int_equal(ts_net_dir_rates(w.net, 3, &sum, &max), 0);
  assert_true(sum == 0 && max == 0);
  assert_int_equal(ts_net_dir_rates(w.net, 4, &sum, &max), TS_EUSAGE);
  run(&w);
  w_free(&w);
  ts_topo *t2 = tg_new(2);
  tg_link(t2, 0, 1, 10 * GBs, 0);
  tg_done(&w, t2, TS_NET_CHUNK);
  sum = max = -1;
  assert_int_equal(ts_net_dir_rates(w.net, 0, &sum, &max), TS_EUSAGE);
  assert_true(sum == 0 && max == 0);
  w_free(&w);
}

/* The filling's heap on a staircase: a chain of 12 links, flow j crossing
 * links j..11, so link i carries flows 0..i; capacities chosen so that the
 * fair shares c_i / (i + 1) are not monotone in i and tie (links 1, 3 and
 * 5 offer 2 GB/s). Under full_solve all 12 directions enter the 4-ary
 * heap (a full group of four under the root, a partial group below) and
 * keys go stale as flows freeze (re-keys). Max-min fair rates are unique,
 * so the rates at 1 us must equal a reference progressive filling done
 * here by a linear scan (no heap): repeatedly the link with the least
 * rem / nun freezes its unfrozen flows at that share. Checked per link
 * through ts_net_dir_rates (sum and fastest) within 1e-9, with and
 * without full_solve. A heap whose sift ignores the second round of its
 * tournament fails it. */
static void staircase(int full) {
  enum { N = 12 };
  static const double cap[N] = {9, 4, 15, 8, 30, 12, 40, 21, 33, 50, 26, 60};
  double rate[N], rem[N];
  int frozen[N] = {0};
  for (int i = 0; i < N; i++) rem[i] = cap[i] * GBs;
  for (int done = 0; done < N;) {
    int best = -1;
    double bshare = 0;
    for (int i = 0; i < N; i++) {
      int nun = 0;
      for (int j = 0; j <= i; j++) nun += !frozen[j];
      if (!nun) continue;
      double sh = rem[i] / nun;
      if (best < 0 || sh < bshare) best = i, bshare = sh;
    }
    for (int j = 0; j <= best; j++) {
      if (frozen[j]) continue;
      frozen[j] = 1;
      rate[j] = bshare;
      done++;
      for (int i = j; i < N; i++) rem[i] -= bshare;
    }
  }
  world w;
  ts_topo *t = tg_new(N + 1);
  for (uint32_t i = 0; i < N; i++) tg_link(t, i, i + 1, cap[i] * GBs, 0);
  ts_net_config c;
  ts_net_config_default(&c);
  c.full_solve = full;
  tg_done_cfg(&w, t, &c);
  for (uint32_t j = 0; j < N; j++) {
    uint32_t p[N];
    for (uint32_t h = 0; h < N - j; h++) p[h] = 2 * (j + h);
    send1(&w, p, N - j, 1000000000, 0, j);
  }
  assert_int_equal(ts_sim_run_until(w.sim, 1000000), 0);
  for (uint32_t i = 0; i < N; i++) {
    double sum = 0, max = 0, esum = 0, emax = 0;
    for (uint32_t j = 0; j <= i; j++) {
      esum += rate[j];
      if (rate[j] > emax) emax = rate[j];
    }
    assert_int_equal(ts_net_dir_rates(w.net, 2 * i, &sum, &max), 0);
    assert_true(fabs(sum - esum) <= 1e-9 * esum);
    assert_true(fabs(max - emax) <= 1e-9 * emax);
  }
  /* the tie at 2 GB/s: flows 0..5 all get it (links 1, 3, 5 saturate) */
  for (int j = 0; j < 6; j++) assert_true(fabs(rate[j] - 2 * GBs) <= 1e-3);
  run(&w);
  assert_int_equal(w.ndone, N);
  w_free(&w);
}

static void test_fill_staircase(void **state) {
  (void)state;
  staircase(0);
  staircase(1);
}

/* Late arrival on one 10 GB/s link: A = 10 MB at t = 0; B = 2.5 MB sent
 * at 0 with alpha_sw = 250 us. Until 250 us A runs alone (2.5 MB done);
 * then both at 5 GB/s: B needs 500 us and finishes at 750 us, when A has
 * 10 - 2.5 - 2.5 = 5 MB left; alone again at 10 GB/s A finishes at
 * 750 + 500 = 1,250 us. */
static void test_late_arrival(void **state) {
  world w;
  ts_topo *t = tg_new(2);
  tg_link(t, 0, 1, 10 * GBs, 0);
  tg_done(&w, t, TS_NET_FLOW);
  uint32_t p[] = {0};
  send1(&w, p, 1, 10000000, 0, 0);
  send1(&w, p, 1, 2500000, 250 * US, 1);
  run(&w);
  assert_int_equal(w.done[1], 750 * US);
  assert_int_equal(w.done[0], 1250 * US);
  ts_net_dir_stats ds;
  ts_net_dir_stats_get(w.net, 0, &ds);
  assert_int_equal(ds.busy_ps, 1250 * US);
  assert_int_equal(ds.bytes, 12500000);
  w_free(&w);
}

/* ---- factors ---------------------------------------------------------- */

/* One 25 GB/s link at factor 0.5: 1e6 B take 1e6 / 12.5e9 = 80 us. */
static void test_degraded(void **state) {
  for (int fid = 0; fid < 2; fid++) {
    world w;
    ts_topo *t = tg_new(2);
    tg_link(t, 0, 1, 25 * GBs, 0);
    tg_done(&w, t, (ts_net_fidelity)fid);
    assert_int_equal(ts_net_set_link_factor(w.net, 0, 0.5), 0);
    assert_true(ts_net_dir_bandwidth(w.net, 1) == 12.5 * GBs);
    uint32_t p[] = {0};
    send1(&w, p, 1, 1000000, 0, 0);
    run(&w);
    assert_int_equal(w.done[0], 80 * US);
    w_free(&w);
  }
}

/* A down link (factor 0) refuses new sends; bad paths are refused too. */
static void test_down_and_bad_paths(void **state) {
  world w;
  ts_topo *t = tg_new(3);
  tg_link(t, 0, 1, 25 * GBs, 0);
  tg_link(t, 1, 2, 25 * GBs, 0);
  tg_done(&w, t, TS_NET_FLOW);
  uint32_t p[] = {0, 2};
  assert_int_equal(ts_net_set_link_factor(w.net, 1, 0.0), 0);
  assert_int_equal(ts_net_send(w.net, p, 2, 100, 0, on_done, &w, 0),
                   TS_EINVALID);
  uint32_t gap[] = {0, 3};  /* n0->n1 then n2->n1: not contiguous */
  assert_int_equal(ts_net_send(w.net, gap, 2, 100, 0, on_done, &w, 0),
                   TS_EINVALID);
  uint32_t out[] = {99};
  assert_int_equal(ts_net_send(w.net, out, 1, 100, 0, on_done, &w, 0),
                   TS_EINVALID);
  assert_int_equal(ts_net_send(w.net, p, 0, 100, 0, on_done, &w, 0),
                   TS_EUSAGE);
  assert_int_equal(ts_net_send(w.net, p, 1, 100, 0, NULL, &w, 0), TS_EUSAGE);
  assert_int_equal(ts_net_set_link_factor(w.net, 0, 1.5), TS_EINVALID);
  assert_int_equal(ts_net_set_link_factor(w.net, 7, 1.0), TS_EINVALID);
  ts_net_stats s;
  ts_net_stats_get(w.net, &s);
  assert_int_equal(s.flows_started, 0);
  w_free(&w);
}

typedef struct flap {
  world *w;
  uint32_t link;
  double factor;
} flap;

static void flap_ev(ts_sim *sim, void *ctx, uint64_t arg) {
  flap *f = ctx;
  assert_int_equal(ts_net_set_link_factor(f->w->net, f->link, f->factor), 0);
}

/* A link going down mid-flight stalls its flow: 10 MB over 10 GB/s
 * (1 ms alone), down from 500 us to 700 us: finishes at 1.2 ms. */
static void test_link_flap(void **state) {
  world w;
  ts_topo *t = tg_new(2);
  tg_link(t, 0, 1, 10 * GBs, 0);
  tg_done(&w, t, TS_NET_FLOW);
  uint32_t p[] = {0};
  send1(&w, p, 1, 10000000, 0, 0);
  flap down = {&w, 0, 0.0}, up = {&w, 0, 1.0};
  ts_sim_schedule(w.sim, 500 * US, flap_ev, &down, 0, NULL);
  ts_sim_schedule(w.sim, 700 * US, flap_ev, &up, 0, NULL);
  run(&w);
  assert_int_equal(w.done[0], 1200 * US);
  w_free(&w);
}

/* Reroute hook of the diamond below: n0 -> n3 over n2 (links 2, 3). */
static uint32_t diamond_reroute(void *ctx, uint32_t src, uint32_t dst,
                                uint64_t salt, uint32_t *path) {
  (void)ctx, (void)salt;
  if (src != 0 || dst != 3) return 0;
  path[0] = 2 * 2;
  path[1] = 2 * 3;
  return 2;
}

/* Diamond n0-n1-n3 (links 0, 1: 10 GB/s) and n0-n2-n3 (links 2, 3:
 * 5 GB/s). Flow A: 10 MB over n1; flow B: 5 MB over n2, both at t = 0.
 * Link 1 dies at 500 us with a reroute hook:
 *   A has carried 5 MB; it joins B on n2, each gets 2.5 GB/s;
 *   B had 2.5 MB left at 500 us: done at 500 + 1000 = 1,500 us;
 *   A then has 5 - 2.5 = 2.5 MB left alone at 5 GB/s: done at 2,000 us.
 * Link bytes: links 0 and 1 carried A's first 5 MB (nothing after the
 * move), links 2 and 3 carried B's 5 MB plus A's other 5 MB. Without a hook A
 * stalls forever on the dead link (ts_sim_run ends with A undelivered).
 * Chunk fidelity refuses the hook. */
static void test_reroute(void **state) {
  (void)state;
  world w;
  ts_topo *t = tg_new(4);
  tg_link(t, 0, 1, 10 * GBs, 0);
  tg_link(t, 1, 3, 10 * GBs, 0);
  tg_link(t, 0, 2, 5 * GBs, 0);
  tg_link(t, 2, 3, 5 * GBs, 0);
  tg_done(&w, t, TS_NET_FLOW);
  assert_int_equal(ts_net_set_reroute(w.net, diamond_reroute, NULL), 0);
  uint32_t pa[] = {0, 2}, pb[] = {4, 6};
  send1(&w, pa, 2, 10000000, 0, 0);
  send1(&w, pb, 2, 5000000, 0, 1);
  flap down = {&w, 1, 0.0};
  ts_sim_schedule(w.sim, 500 * US, flap_ev, &down, 0, NULL);
  run(&w);
  assert_int_equal(w.done[1], 1500 * US);
  assert_int_equal(w.done[0], 2000 * US);
  ts_net_dir_stats ds;
  assert_int_equal(ts_net_dir_stats_get(w.net, 0, &ds), 0);
  assert_int_equal(ds.bytes, 5000000);
  assert_int_equal(ts_net_dir_stats_get(w.net, 2, &ds), 0);
  assert_int_equal(ds.bytes, 5000000);
  for (uint32_t dir = 4; dir <= 6; dir += 2) {
    assert_int_equal(ts_net_dir_stats_get(w.net, dir, &ds), 0);
    assert_int_equal(ds.bytes, 10000000);
  }
  ts_net_stats ns;
  ts_net_stats_get(w.net, &ns);
  assert_int_equal(ns.reroutes, 1);
  w_free(&w);

  ts_topo *c = tg_new(2);
  tg_link(c, 0, 1, 10 * GBs, 0);
  tg_done(&w, c, TS_NET_CHUNK);
  assert_int_equal(ts_net_set_reroute(w.net, diamond_reroute, NULL), TS_EUSAGE);
  w_free(&w);
}

/* ---- split transfers ---------------------------------------------------- */

/* n0 reaches n5 over 4 disjoint 2-hop paths via n1..n4, every link
 * 25 GB/s with 500 ns latency. 4 MiB sprayed over the 4 paths: 4 flows of
 * 1 MiB in parallel, done at 1 us + 1 MiB / 25 GB/s = 1,000,000 +
 * 41,943,040 = 42,943,040 ps: a quarter of the serialisation of 4 MiB on
 * one path (1 us + 167,772,160 ps). */
static void test_split(void **state) {
  for (int fid = 0; fid < 2; fid++) {
    world w;
    ts_topo *t = tg_new(6);
    uint32_t paths[4][2];
    for (uint32_t i = 0; i < 4; i++) {
      paths[i][0] = 2 * tg_link(t, 0, 1 + i, 25 * GBs, 500000);
      paths[i][1] = 2 * tg_link(t, 1 + i, 5, 25 * GBs, 500000);
    }
    tg_done(&w, t, (ts_net_fidelity)fid);
    const uint32_t *pp[4] = {paths[0], paths[1], paths[2], paths[3]};
    uint32_t hops[4] = {2, 2, 2, 2};
    assert_int_equal(ts_net_send_split(w.net, pp, hops, 4, 4 * MiB, 0,
                                       on_done, &w, 7), 0);
    run(&w);
    assert_int_equal(w.ndone, 1);
    if (fid == TS_NET_FLOW) {
      assert_int_equal(w.done[7], 42943040ull);
    } else { /* store-and-forward adds one chunk time on the second hop */
      double want = 42943040.0 + 65536 / 25e9 * 1e12;
      assert_true(fabs((double)w.done[7] - want) <= 1.0);
    }
    ts_net_stats s;
    ts_net_stats_get(w.net, &s);
    assert_int_equal(s.flows_finished, 4);
    assert_int_equal(s.transfers_finished, 1);
    w_free(&w);
  }
}

/* ---- flow vs chunk ---------------------------------------------------- */

/* Uncongested 3-hop path (50, 25, 50 GB/s; 1 us each), 64 MiB:
 * flow T = 3 us + 64 MiB / 25 GB/s = 2,687.4 us; chunk adds the store-
 * and-forward of one 64 KiB chunk on the other hops (~2.6 us): < 1%. */
static void test_flow_chunk_uncongested(void **state) {
  ts_time_ps r[2];
  for (int fid = 0; fid < 2; fid++) {
    world w;
    ts_topo *t = tg_new(4);
    tg_link(t, 0, 1, 50 * GBs, US);
    tg_link(t, 1, 2, 25 * GBs, US);
    tg_link(t, 2, 3, 50 * GBs, US);
    tg_done(&w, t, (ts_net_fidelity)fid);
    uint32_t p[] = {0, 2, 4};
    send1(&w, p, 3, 64 * MiB, 0, 0);
    run(&w);
    r[fid] = w.done[0];
    w_free(&w);
  }
  assert_int_equal(r[0], 3 * US + 2684354560ull);
  assert_true(fabs((double)r[1] - (double)r[0]) / (double)r[0] < 0.01);
}

/* Incast N:1 (N = 2, 4) of 8 MiB each through a 25 GB/s bottleneck, with
 * 100 GB/s, 1 us access links: flow finish = 1 us... + N * 8 MiB / 25 GB/s
 * for every flow; chunk fidelity interleaves chunks FIFO at the bottleneck
 * port and must agree within 5%, with unlimited and with 1 MiB buffers
 * (backpressure; the bottleneck queue never exceeds the buffer). */
static void test_flow_chunk_incast(void **state) {
  for (uint32_t n = 2; n <= 4; n += 2) {
    for (int buffered = 0; buffered < 2; buffered++) {
      ts_time_ps last[2];
      for (int fid = 0; fid < 2; fid++) {
        world w;
        ts_topo *t = tg_new(6);
        uint32_t up[4];
        for (uint32_t i = 0; i < n; i++)
          up[i] = tg_link(t, 1 + i, 0, 100 * GBs, US);
        uint32_t down = tg_link(t, 0, 5, 25 * GBs, US);
        ts_diag d;
        assert_int_equal(topo_finalize(t, &d), 0);
        w.t = t;
        ts_sim_new(&w.sim);
        ts_net_config c;
        ts_net_config_default(&c);
        c.fidelity = (ts_net_fidelity)fid;
        if (buffered) c.port_buffer_bytes = MiB;
        assert_int_equal(ts_net_new(t, w.sim, &c, &w.net), 0);
        w.ndone = 0;
        for (uint32_t i = 0; i < n; i++) {
          uint32_t p[] = {2 * up[i], 2 * down};
          send1(&w, p, 2, 8 * MiB, 0, i);
        }
        run(&w);
        last[fid] = 0;
        for (uint32_t i = 0; i < n; i++)
          if (w.done[i] > last[fid]) last[fid] = w.done[i];
        if (fid == TS_NET_CHUNK) {
          ts_net_dir_stats ds;
          ts_net_dir_stats_get(w.net, 2 * down, &ds);
          assert_true(ds.peak_queue_bytes > 0);
          if (buffered) assert_true(ds.peak_queue_bytes <= MiB);
        }
        w_free(&w);
      }
      double want = 2e6 + (double)(n * 8 * MiB) / 25e9 * 1e12;
      assert_true(fabs((double)last[0] - want) <= 1.0);
      assert_true(fabs((double)last[1] - (double)last[0]) / (double)last[0] <
                  0.05);
    }
  }
}

/* ---- random scenarios: determinism and incremental == full ---------- */

/* 200 flows on a bidirectional ring of 8 nodes (links of 10..40 GB/s,
 * 0..2 us latency): each flow walks 1..4 hops clockwise or counter-
 * clockwise from a random node, carries 1 KB..8 MB and starts at a random
 * alpha_sw in [0, 200 us) (xorshift, fixed seed). */
static uint64_t rnd(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

static void random_run(int full, ts_time_ps *out) {
  ts_topo *t = tg_new(8);
  uint64_t x = 0x9e3779b97f4a7c15ull;
#define RND() rnd(&x)
  for (uint32_t i = 0; i < 8; i++)
    tg_link(t, i, (i + 1) % 8, (double)(10 + RND() % 31) * GBs,
            RND() % 2000000);
  world *w = calloc(1, sizeof *w);
  ts_net_config c;
  ts_net_config_default(&c);
  c.full_solve = full;
  tg_done_cfg(w, t, &c);
  for (uint32_t f = 0; f < 200; f++) {
    uint32_t start = (uint32_t)(RND() % 8), hops = 1 + (uint32_t)(RND() % 4);
    int cw = (int)(RND() % 2);
    uint32_t p[4];
    for (uint32_t h = 0; h < hops; h++) {
      uint32_t node = cw ? (start + h) % 8 : (start + 8 - h) % 8;
      p[h] = cw ? 2 * node : 2 * ((node + 7) % 8) + 1;
    }
    uint64_t bytes = 1000 + RND() % 8000000;
    send1(w, p, hops, bytes, RND() % (200 * US), f);
  }
  run(w);
  ts_net_stats s;
  ts_net_stats_get(w->net, &s);
  assert_int_equal(s.flows_finished, 200);
  if (!full) assert_true(s.flows_touched <= 200 * s.solves);
  memcpy(out, w->done, 200 * sizeof *out);
  w_free(w);
  free(w);
#undef RND
}

/* Same scenario twice: bit-identical finish times. */
static void test_determinism(void **state) {
  ts_time_ps a[200], b[200];
  random_run(0, a);
  random_run(0, b);
  assert_memory_equal(a, b, sizeof a);
}

/* Incremental (component-only, batched) solves against a full re-solve
 * of every flow on every change: max-min rates are unique, so finish
 * times agree within 1 ps. */
static void test_incremental_vs_full(void **state) {
  ts_time_ps a[200], b[200];
  random_run(0, a);
  random_run(1, b);
  for (int i = 0; i < 200; i++) {
    assert_true(a[i] != UINT64_MAX);
    assert_true(a[i] + 1 >= b[i] && b[i] + 1 >= a[i]);
  }
}

/* Unrelated flows are never re-solved: 50 disjoint links, one flow each
 * started at once (one solve of 50), then a late flow on link 0 touches
 * only link 0's component (2 flows), and its departure re-rates 1. */
static void test_component_locality(void **state) {
  world w;
  ts_topo *t = tg_new(100);
  for (uint32_t i = 0; i < 50; i++) tg_link(t, 2 * i, 2 * i + 1, 10 * GBs, 0);
  tg_done(&w, t, TS_NET_FLOW);
  for (uint32_t i = 0; i < 50; i++) {
    uint32_t p[] = {2 * i};
    send1(&w, p, 1, 10000000, 0, i);
  }
  uint32_t p0[] = {0};
  send1(&w, p0, 1, 1000000, 100 * US, 50);
  run(&w);
  ts_net_stats s;
  ts_net_stats_get(w.net, &s);
  /* solves: t=0 (50 flows), 100 us (2), 300 us late flow leaves (1),
   * 1 ms 49 flows leave (nothing left to rate), 1.2 ms flow 0 leaves. */
  assert_int_equal(s.max_flows_touched, 50);
  assert_int_equal(s.flows_touched, 50 + 2 + 1);
  assert_int_equal(w.done[50], 300 * US);
  assert_int_equal(w.done[0], 1100 * US);
  w_free(&w);
}

/* The level floor (docs/model.md, "Departures re-rate only faster
 * flows"). Link 0 (10 GB/s) carries a, b, c and d; d goes on over link 1
 * (100 GB/s), which also carries e and f. Max-min: a-d get 10 / 4 =
 * 2.5 GB/s (link 0 is their bottleneck), e and f split the 97.5 GB/s left
 * on link 1: 48.75 GB/s each. e (48.75 MB) drains at 1 ms; that batch's
 * least rate is L = 48.75 GB/s, so d (2.5 GB/s < L) keeps its rate and
 * only f is re-rated: it gets 97.5 GB/s, and its 97.5 MB left drain at
 * 2 ms. a-d (10 MB at 2.5 GB/s) end at 4 ms. f's departure frees no
 * bottleneck (d's is link 0) and the last one leaves nothing to rate:
 * both skipped. Solves: t = 0 (all 6 flows) and
 * 1 ms (f alone): 7 flows touched, where a solve of the whole component
 * at 1 ms would have touched d, f, a, b, c (11 in all). */
static void test_level_floor(void **state) {
  world w;
  ts_topo *t = tg_new(5);
  tg_link(t, 0, 1, 10 * GBs, 0);
  tg_link(t, 1, 2, 100 * GBs, 0);
  tg_done(&w, t, TS_NET_FLOW);
  uint32_t l0[] = {0}, l1[] = {2}, d[] = {0, 2};
  for (uint64_t i = 0; i < 3; i++) send1(&w, l0, 1, 10000000, 0, i);
  send1(&w, d, 2, 10000000, 0, 3);
  send1(&w, l1, 1, 48750000, 0, 4);
  send1(&w, l1, 1, 146250000, 0, 5);
  run(&w);
  for (int i = 0; i < 4; i++) assert_int_equal(w.done[i], 4000 * US);
  assert_int_equal(w.done[4], 1000 * US);
  assert_int_equal(w.done[5], 2000 * US);
  ts_net_stats s;
  ts_net_stats_get(w.net, &s);
  assert_int_equal(s.solves, 2);
  assert_int_equal(s.solves_skipped, 2);
  assert_int_equal(s.flows_touched, 7);
  w_free(&w);
}

/* Ties at the departure level (docs/model.md, "Departures re-rate only
 * faster flows"). X -A-> Y and W -B-> Y (10 GB/s each), Y -C-> Z
 * (100 GB/s). a1 crosses A then C, a2 only A, b1 B then C, b2 only B: all
 * four get 5 GB/s, A and B are the bottlenecks, C (10 of 100 GB/s used)
 * only links a1 to b1. a2 (5 MB) drains at 1 ms at level 5 GB/s; b1 is
 * rated exactly that level too, but its bottleneck B is clean, so it keeps
 * its rate and the solve re-rates a1 alone: 10 GB/s (A's whole capacity,
 * C has 95 left), its 10 MB left end at 2 ms. b1 and b2 (20 MB at 5 GB/s)
 * end at 4 ms. a1's departure frees no bottleneck (b1's is B) and the
 * last batch leaves nothing to rate: both skipped. Flows touched: 4 at
 * t = 0, 1 at 1 ms, where the floor alone would also re-rate b1 and
 * b2 (7). */
static void test_tie_level(void **state) {
  world w;
  ts_topo *t = tg_new(4);
  tg_link(t, 0, 2, 10 * GBs, 0);
  tg_link(t, 1, 2, 10 * GBs, 0);
  tg_link(t, 2, 3, 100 * GBs, 0);
  tg_done(&w, t, TS_NET_FLOW);
  uint32_t a1[] = {0, 4}, a2[] = {0}, b1[] = {2, 4}, b2[] = {2};
  send1(&w, a1, 2, 15000000, 0, 0);
  send1(&w, a2, 1, 5000000, 0, 1);
  send1(&w, b1, 2, 20000000, 0, 2);
  send1(&w, b2, 1, 20000000, 0, 3);
  run(&w);
  assert_int_equal(w.done[0], 2000 * US);
  assert_int_equal(w.done[1], 1000 * US);
  assert_int_equal(w.done[2], 4000 * US);
  assert_int_equal(w.done[3], 4000 * US);
  ts_net_stats s;
  ts_net_stats_get(w.net, &s);
  assert_int_equal(s.solves, 2);
  assert_int_equal(s.solves_skipped, 2);
  assert_int_equal(s.flows_touched, 5);
  w_free(&w);
}

/* Eight hosts under two leaves of one spine, 4:1 oversubscribed (host
 * links and leaf uplinks all 10 GB/s, 0.5 us per hop): an all-to-all
 * whose sizes follow a Zipf law over the destination (skew 1: host j
 * receives 8 MB / (j + 1) from each peer, plus a random 0..64 KiB when
 * `jitter`) and whose flows start at random times in [0, 50 us) (at 0
 * without jitter), twice over. Departures come at many rates and levels,
 * through shared uplinks; without jitter many destinations' flows sit at
 * the same level (ties), with `degrade` leaf 1's uplink runs at 0.3 of
 * its bandwidth. The incremental solver (level floor, ties at the
 * departure level, components, skipped solves) against a full re-solve of
 * every flow on every change, all through the heap (no floor, no fast
 * path for flows alone): max-min rates are unique, so every finish agrees
 * within 1 ps, and the floor really cut work. */
static void skew_run(int full, int nolocal, int degrade, int jitter,
                     ts_time_ps *out, ts_net_stats *st) {
  ts_topo *t = tg_new(11);
  for (uint32_t i = 0; i < 8; i++) tg_link(t, i, 8 + i / 4, 10 * GBs, US / 2);
  tg_link(t, 8, 10, 10 * GBs, US / 2);
  tg_link(t, 9, 10, 10 * GBs, US / 2);
  world *w = calloc(1, sizeof *w);
  ts_net_config c;
  ts_net_config_default(&c);
  c.full_solve = full;
  c.no_local = nolocal;
  tg_done_cfg(w, t, &c);
  if (degrade) assert_int_equal(ts_net_set_link_factor(w->net, 9, 0.3), 0);
  uint64_t x = 0x2545f4914f6cdd1dull;
  uint32_t n = 0;
  for (int wave = 0; wave < 2; wave++)
    for (uint32_t i = 0; i < 8; i++)
      for (uint32_t j = 0; j < 8; j++) {
        if (i == j) continue;
        uint32_t li = i / 4, lj = j / 4, p[4], h = 0;
        p[h++] = 2 * i;
        if (li != lj) {
          p[h++] = 16 + 2 * li;
          p[h++] = 16 + 2 * lj + 1;
        }
        p[h++] = 2 * j + 1;
        uint64_t bytes = 8000000 / (j + 1) + (jitter ? rnd(&x) % 65536 : 0);
        ts_time_ps at = (ts_time_ps)wave * 2000 * US +
                        (jitter ? rnd(&x) % (50 * US) : 0);
        send1(w, p, h, bytes, at, n++);
      }
  run(w);
  ts_net_stats_get(w->net, st);
  assert_int_equal(st->flows_finished, n);
  memcpy(out, w->done, n * sizeof *out);
  w_free(w);
  free(w);
}

/* Three solvers on each case: the default (localized re-rating after
 * departures), the component walk (no_local) and the full re-solve. All
 * agree within 1 ps; the floor cut work against the full re-solve and the
 * localized filling re-rated fewer flows than the component walk. */
static void test_skewed_alltoall_vs_full(void **state) {
  enum { N = 2 * 8 * 7 };
  static const int cases[][2] = {{0, 1}, {1, 1}, {0, 0}, {1, 0}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    ts_time_ps a[N], b[N], c[N];
    ts_net_stats sa, sb, sc;
    skew_run(0, 0, cases[k][0], cases[k][1], a, &sa);
    skew_run(1, 0, cases[k][0], cases[k][1], b, &sb);
    skew_run(0, 1, cases[k][0], cases[k][1], c, &sc);
    for (int i = 0; i < N; i++) {
      assert_true(a[i] != UINT64_MAX);
      assert_true(a[i] + 1 >= b[i] && b[i] + 1 >= a[i]);
      assert_true(c[i] + 1 >= b[i] && b[i] + 1 >= c[i]);
    }
    assert_true(sc.flows_touched < sb.flows_touched);
    assert_true(sa.flows_touched < sc.flows_touched);
    assert_true(sa.local_solves > 0);
    assert_int_equal(sc.local_solves, 0);
  }
}

/* Localized re-rating (net_flow.c, flow_local): only flows whose
 * bottleneck a departure touched. Links S1 (10 GB/s), S2 (20), X and Y
 * (100 each). a1 crosses S1 then X, a2 S1 then Y, b1 S2 then X. S1 gives
 * a1 and a2 5 GB/s each, b1 gets S2's 20 GB/s (X carries 25 of 100).
 * a1 (5 MB) drains at 1 ms, level 5 GB/s: b1 (20 GB/s, above the floor,
 * its bottleneck S2 clean) shares X with a1, so the component walk
 * re-rates it with a2; the localized filling re-rates a2 alone: 10 GB/s,
 * its 10 MB left end at 2 ms. b1 (80 MB) ends at 4 ms. Both later
 * departures free no bottleneck (skipped). Flows touched: 3 at t = 0,
 * then 1 (2 with the component walk). */
static void local_seed_run(int nolocal, ts_net_stats *st) {
  world w;
  ts_topo *t = tg_new(5);
  tg_link(t, 0, 1, 10 * GBs, 0);
  tg_link(t, 2, 1, 20 * GBs, 0);
  tg_link(t, 1, 3, 100 * GBs, 0);
  tg_link(t, 1, 4, 100 * GBs, 0);
  ts_net_config c;
  ts_net_config_default(&c);
  c.no_local = nolocal;
  tg_done_cfg(&w, t, &c);
  uint32_t a1[] = {0, 4}, a2[] = {0, 6}, b1[] = {2, 4};
  send1(&w, a1, 2, 5000000, 0, 0);
  send1(&w, a2, 2, 15000000, 0, 1);
  send1(&w, b1, 2, 80000000, 0, 2);
  run(&w);
  assert_int_equal(w.done[0], 1000 * US);
  assert_int_equal(w.done[1], 2000 * US);
  assert_int_equal(w.done[2], 4000 * US);
  ts_net_stats_get(w.net, st);
  assert_int_equal(st->solves, 2);
  assert_int_equal(st->solves_skipped, 2);
  w_free(&w);
}

static void test_local_seed(void **state) {
  ts_net_stats a, b;
  local_seed_run(0, &a);
  local_seed_run(1, &b);
  assert_int_equal(a.flows_touched, 3 + 1);
  assert_int_equal(a.local_solves, 1);
  assert_int_equal(b.flows_touched, 3 + 2);
  assert_int_equal(b.local_solves, 0);
}

/* The localized filling's check adds a held flow. S1 (10 GB/s) carries
 * a1 and a2; a2 goes on over Z (12 GB/s), which also carries c. Max-min:
 * a1 = a2 = 5 (S1), c = 7 (Z's rest). a1 (5 MB) drains at 1 ms: the
 * first round re-rates a2 alone and Z gives it 12 - 7 = 5, but c (7) is
 * faster than that share on Z, so c joins; the second round splits Z:
 * 6 and 6 (S1 has 10 for a2). a2's 15 MB left end at 3.5 ms; c had
 * 25 - 7 = 18 MB left at 1 ms, 3 MB at 3.5 ms, then 12 GB/s alone: ends
 * at 3.75 ms. Flows touched: 3, 2 (a2 and c) and 1 (c at 3.5 ms). */
static void local_expand_run(int rounds, ts_net_stats *s) {
  world w;
  ts_topo *t = tg_new(3);
  tg_link(t, 0, 1, 10 * GBs, 0);
  tg_link(t, 1, 2, 12 * GBs, 0);
  ts_net_config cfg;
  ts_net_config_default(&cfg);
  cfg.local_rounds = rounds;
  tg_done_cfg(&w, t, &cfg);
  uint32_t a1[] = {0}, a2[] = {0, 2}, c[] = {2};
  send1(&w, a1, 1, 5000000, 0, 0);
  send1(&w, a2, 2, 20000000, 0, 1);
  send1(&w, c, 1, 25000000, 0, 2);
  run(&w);
  assert_int_equal(w.done[0], 1000 * US);
  assert_int_equal(w.done[1], 3500 * US);
  assert_int_equal(w.done[2], 3750 * US);
  ts_net_stats_get(w.net, s);
  w_free(&w);
}

static void test_local_expand(void **state) {
  (void)state;
  ts_net_stats s;
  local_expand_run(0, &s);
  assert_int_equal(s.solves, 3);
  assert_int_equal(s.local_solves, 2);
  assert_int_equal(s.flows_touched, 3 + 2 + 1);
}

/* The same case with the localized filling held to one round: at 1 ms
 * the round that would add c gives up, and the component walk re-rates
 * from scratch (the same finish times, asserted in local_expand_run);
 * only the 3.5 ms solve (c alone) stays local. */
static void test_local_fallback(void **state) {
  (void)state;
  ts_net_stats s;
  local_expand_run(1, &s);
  assert_int_equal(s.solves, 3);
  assert_int_equal(s.local_solves, 1);
}

/* Flows alone on their directions are rated without the heap (the least
 * capacity on the path), in the same solve as shared ones. A crosses
 * 50 then 20 GB/s alone: 20 GB/s, 20 MB in 1 ms. B crosses link 2
 * (30 GB/s) then link 3 (10 GB/s); C only link 2: B gets 10, C the 20
 * left. B (5 MB) ends at 0.5 ms; that batch's floor is 10 GB/s, so C
 * (20 GB/s) is re-rated, now alone: 30 GB/s, its 25 - 10 = 15 MB left
 * drain in 0.5 ms, at 1 ms. Solves: t = 0 (3 flows), 0.5 ms (C). */
static void test_alone_closed_form(void **state) {
  world w;
  ts_topo *t = tg_new(6);
  tg_link(t, 0, 1, 50 * GBs, 0);
  tg_link(t, 1, 2, 20 * GBs, 0);
  tg_link(t, 3, 4, 30 * GBs, 0);
  tg_link(t, 4, 5, 10 * GBs, 0);
  tg_done(&w, t, TS_NET_FLOW);
  uint32_t a[] = {0, 2}, b[] = {4, 6}, c[] = {4};
  send1(&w, a, 2, 20000000, 0, 0);
  send1(&w, b, 2, 5000000, 0, 1);
  send1(&w, c, 1, 25000000, 0, 2);
  run(&w);
  assert_int_equal(w.done[0], 1000 * US);
  assert_int_equal(w.done[1], 500 * US);
  assert_int_equal(w.done[2], 1000 * US);
  ts_net_stats s;
  ts_net_stats_get(w.net, &s);
  assert_int_equal(s.solves, 2);
  assert_int_equal(s.flows_touched, 4);
  w_free(&w);
}

/* Directions one flow alone crosses (net_flow.c, fill_push): only the
 * least of them enters the filling's heap. A crosses P2 (12 GB/s), P1
 * (10) and L (30); B crosses Q (40) and L. P1, P2 and Q carry one flow
 * each: A is frozen at P1's 10 GB/s (P2 never pops), B gets L's 30 - 10
 * = 20 GB/s (Q's 40 is not its bottleneck). A (10 MB) ends at 1 ms; B
 * has 50 - 20 = 30 MB left, now 30 GB/s alone on L: ends at 2 ms.
 * Solves: t = 0 (2 flows), 1 ms (B, its bottleneck L dirty): 3 flows
 * touched. The full re-solve (every direction on the heap) agrees within
 * 1 ps. */
static void private_run(int full, ts_time_ps *out, ts_net_stats *st) {
  world w;
  ts_topo *t = tg_new(5);
  tg_link(t, 0, 1, 12 * GBs, 0);
  tg_link(t, 1, 2, 10 * GBs, 0);
  tg_link(t, 2, 3, 30 * GBs, 0);
  tg_link(t, 4, 2, 40 * GBs, 0);
  ts_net_config c;
  ts_net_config_default(&c);
  c.full_solve = full;
  tg_done_cfg(&w, t, &c);
  uint32_t a[] = {0, 2, 4}, b[] = {6, 4};
  send1(&w, a, 3, 10000000, 0, 0);
  send1(&w, b, 2, 50000000, 0, 1);
  run(&w);
  ts_net_stats_get(w.net, st);
  memcpy(out, w.done, 2 * sizeof *out);
  w_free(&w);
}

static void test_private_dirs(void **state) {
  ts_time_ps a[2], b[2];
  ts_net_stats sa, sb;
  private_run(0, a, &sa);
  private_run(1, b, &sb);
  assert_int_equal(a[0], 1000 * US);
  assert_int_equal(a[1], 2000 * US);
  assert_int_equal(sa.solves, 2);
  assert_int_equal(sa.flows_touched, 3);
  for (int i = 0; i < 2; i++) assert_true(a[i] + 1 >= b[i] && b[i] + 1 >= a[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_single_link_exact),
      cmocka_unit_test(test_multi_hop),
      cmocka_unit_test(test_two_share),
      cmocka_unit_test(test_incast),
      cmocka_unit_test(test_maxmin_three),
      cmocka_unit_test(test_dir_rates),
      cmocka_unit_test(test_fill_staircase),
      cmocka_unit_test(test_late_arrival),
      cmocka_unit_test(test_degraded),
      cmocka_unit_test(test_down_and_bad_paths),
      cmocka_unit_test(test_link_flap),
      cmocka_unit_test(test_reroute),
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_flow_chunk_uncongested),
      cmocka_unit_test(test_flow_chunk_incast),
      cmocka_unit_test(test_determinism),
      cmocka_unit_test(test_incremental_vs_full),
      cmocka_unit_test(test_component_locality),
      cmocka_unit_test(test_level_floor),
      cmocka_unit_test(test_alone_closed_form),
      cmocka_unit_test(test_skewed_alltoall_vs_full),
      cmocka_unit_test(test_local_seed),
      cmocka_unit_test(test_local_expand),
      cmocka_unit_test(test_local_fallback),
      cmocka_unit_test(test_tie_level),
      cmocka_unit_test(test_private_dirs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
