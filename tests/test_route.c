/* test_route.c - routes on the shipped topologies: exact node sequences
 * inside hosts, rail-aligned and cross-rail fabric paths, ECMP spread,
 * spray, failures and determinism. Every path any test gets goes through
 * check_path: it starts at the source, each direction's head is the next
 * one's tail, it ends at the destination, and it never revisits a node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "topsim/ts_route.h"

#define MAXN 2048

static uint32_t id_of(const ts_topo *t, const char *name) {
  uint32_t id;
  if (ts_topo_find_node(t, name, &id)) print_error("no node '%s'\n", name);
  assert_int_equal(ts_topo_find_node(t, name, &id), 0);
  return id;
}

static void print_path(const ts_topo *t, uint32_t src, const ts_path *p) {
  print_message("  %s", ts_topo_node_name(t, src));
  for (uint32_t i = 0; i < p->len; i++)
    print_message(" > %s", ts_topo_node_name(t, ts_topo_dir_head(t, p->dir[i])));
  print_message("\n");
}

/* The checker every test uses. */
static void check_path(const ts_topo *t, uint32_t src, uint32_t dst,
                       const ts_path *p) {
  uint32_t cur = src, links = ts_topo_link_count(t);
  assert_true(p->len <= TS_ROUTE_MAX_HOPS);
  assert_true(src == dst || p->len > 0);
  for (uint32_t i = 0; i < p->len; i++) {
    assert_true(p->dir[i] >> 1 < links);
    if (ts_route_dir_tail(t, p->dir[i]) != cur) print_path(t, src, p);
    assert_int_equal(ts_route_dir_tail(t, p->dir[i]), cur);
    cur = ts_topo_dir_head(t, p->dir[i]);
    for (uint32_t j = 0; j < i; j++)  /* loop-free */
      assert_int_not_equal(ts_topo_dir_head(t, p->dir[j]), cur);
    assert_int_not_equal(cur, src);
  }
  assert_int_equal(cur, dst);
}

/* Routing: 0 = each plane's own (the topology's `routing`), else 1 +
 * ts_routing for every plane. */
static ts_route *router_with(const ts_topo *t, int no_pxn,
                             const ts_route_state *s, int routing) {
  ts_route_opts o = {.no_pxn = no_pxn, .routing = routing};
  ts_route *r = NULL;
  ts_diag d;
  assert_int_equal(ts_route_new(t, &o, s, &r, &d), 0);
  return r;
}

/* Hashed ECMP whatever the topology says: the tests of the hash. */
static ts_route *router_hash(const ts_topo *t, int no_pxn,
                             const ts_route_state *s) {
  return router_with(t, no_pxn, s, 1 + TS_ROUTING_ECMP_HASH);
}

static ts_route *router(const ts_topo *t, int no_pxn,
                        const ts_route_state *s) {
  ts_route_opts o = {.no_pxn = no_pxn};
  ts_route *r = NULL;
  ts_diag d;
  assert_int_equal(ts_route_new(t, &o, s, &r, &d), 0);
  return r;
}

/* Routes src -> dst by name with flow 0, checks it, returns its length. */
static uint32_t route(ts_route *r, const ts_topo *t, const char *a,
                      const char *b, ts_path *p) {
  ts_diag d;
  ts_diag_clear(&d);
  uint32_t s = id_of(t, a), e = id_of(t, b);
  int rc = ts_route_path(r, s, e, 0, p, &d);
  if (rc) print_error("%s\n", d.msg);
  assert_int_equal(rc, 0);
  check_path(t, s, e, p);
  return p->len;
}

/* Asserts the node sequence after the source (n names). */
static void expect_nodes(const ts_topo *t, const ts_path *p,
                         const char *const *names, uint32_t n) {
  assert_int_equal(p->len, n);
  for (uint32_t i = 0; i < n; i++)
    assert_string_equal(ts_topo_node_name(t, ts_topo_dir_head(t, p->dir[i])),
                        names[i]);
}

static const ts_node *hop(const ts_topo *t, const ts_path *p, uint32_t i) {
  return ts_topo_node(t, ts_topo_dir_head(t, p->dir[i]));
}

/* Number of path nodes at tier `tier` of a network switch. */
static uint32_t tier_hops(const ts_topo *t, const ts_path *p, int tier) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < p->len; i++)
    n += hop(t, p, i)->kind == TS_NODE_SWITCH && hop(t, p, i)->tier == tier;
  return n;
}

/* DGX A100: every GPU pair is NV12 through 6 NVSwitch chips, so GPU0 ->
 * GPU5 is gpu0 -> nvswK -> gpu5: 2 directions. Spray: one path per chip,
 * 6 paths of 1/6 each (6 x 50 GB/s = the 300 GB/s a GPU drives). */
static void test_dgx_nvswitch(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/dgx-a100.yaml");
  ts_route *r = router(t, 0, NULL);
  ts_path p, many[8];
  assert_int_equal(route(r, t, "dgx0/gpu0", "dgx0/gpu5", &p), 2);
  assert_int_equal(hop(t, &p, 0)->kind, TS_NODE_NVSWITCH);
  uint32_t n, s = id_of(t, "dgx0/gpu0"), e = id_of(t, "dgx0/gpu5");
  assert_int_equal(ts_route_paths(r, s, e, 0, 8, many, &n, NULL), 0);
  assert_int_equal(n, 6);
  for (uint32_t i = 0; i < n; i++) {
    check_path(t, s, e, &many[i]);
    for (uint32_t j = 0; j < i; j++)
      assert_int_not_equal(many[i].dir[0], many[j].dir[0]);
  }
  ts_route_free(r);
  ts_topo_free(t);
}

/* 8x A100 PCIe with NVLink bridges (nvidia-smi: GPU0-GPU1 NV3, GPU0-GPU2
 * PIX, GPU0-GPU4 SYS): 0->1 one NVLink hop; 0->2 up to the shared PCIe
 * switch and down (2 hops); 0->4 up to cpu0, across xGMI, down (5 hops). */
static void test_pcie_bridge(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/a100-pcie-nvlink-bridge.yaml");
  ts_route *r = router(t, 0, NULL);
  ts_path p;
  assert_int_equal(route(r, t, "srv0/gpu0", "srv0/gpu1", &p), 1);
  assert_int_equal(ts_topo_link(t, p.dir[0] >> 1)->kind, TS_LINK_NVLINK);
  static const char *const to2[] = {"srv0/pcie0", "srv0/gpu2"};
  route(r, t, "srv0/gpu0", "srv0/gpu2", &p);
  expect_nodes(t, &p, to2, 2);
  static const char *const to4[] = {"srv0/pcie0", "srv0/cpu0", "srv0/cpu1",
                                    "srv0/pcie1", "srv0/gpu4"};
  route(r, t, "srv0/gpu0", "srv0/gpu4", &p);
  expect_nodes(t, &p, to4, 5);
  /* The reverse walks the same links the other way. */
  ts_path q;
  route(r, t, "srv0/gpu4", "srv0/gpu0", &q);
  assert_int_equal(q.len, 5);
  for (uint32_t i = 0; i < 5; i++) assert_int_equal(q.dir[i], p.dir[4 - i] ^ 1u);
  ts_route_free(r);
  ts_topo_free(t);
}

/* DGX A100 SuperPOD, 1 SU (8 rail leaves, 4 spines). Same rail, other
 * node: gpu0 > pcie0 > compute0 > leaf-su0-r0 > compute0 > pcie0 > gpu0,
 * 6 hops turning at the leaf. */
static void test_su_same_rail(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route *r = router(t, 0, NULL);
  ts_path p;
  static const char *const want[] = {"dgx0/pcie0", "dgx0/compute0",
                                     "compute/leaf-su0-r0", "dgx5/compute0",
                                     "dgx5/pcie0", "dgx5/gpu0"};
  route(r, t, "dgx0/gpu0", "dgx5/gpu0", &p);
  expect_nodes(t, &p, want, 6);
  ts_route_free(r);
  ts_topo_free(t);
}

/* Cross rail, dgx0/gpu0 -> dgx5/gpu3 (GPU3 <-> NIC3 on pcie1, rail 3).
 * PXN: NVLink to dgx0/gpu3 (2 hops via an NVSwitch), then its own rail-3
 * path turning at leaf-su0-r3 (6 hops): 8, no spine. Without PXN: own NIC
 * on rail 0, leaf r0 > spine > leaf r3: 8 hops with exactly one spine. */
static void test_su_cross_rail(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route *r = router(t, 0, NULL);
  ts_path p;
  static const char *const pxn[] = {"dgx0/gpu3", "dgx0/pcie1",
                                    "dgx0/compute3", "compute/leaf-su0-r3",
                                    "dgx5/compute3", "dgx5/pcie1", "dgx5/gpu3"};
  assert_int_equal(route(r, t, "dgx0/gpu0", "dgx5/gpu3", &p), 8);
  assert_int_equal(hop(t, &p, 0)->kind, TS_NODE_NVSWITCH);
  for (uint32_t i = 0; i < 7; i++)
    assert_string_equal(
        ts_topo_node_name(t, ts_topo_dir_head(t, p.dir[i + 1])), pxn[i]);
  assert_int_equal(tier_hops(t, &p, TS_TIER_SPINE), 0);
  ts_route_free(r);

  r = router(t, 1, NULL);
  assert_int_equal(route(r, t, "dgx0/gpu0", "dgx5/gpu3", &p), 8);
  assert_string_equal(ts_topo_node_name(t, ts_topo_dir_head(t, p.dir[2])),
                      "compute/leaf-su0-r0");
  assert_int_equal(hop(t, &p, 3)->tier, TS_TIER_SPINE);
  assert_string_equal(ts_topo_node_name(t, ts_topo_dir_head(t, p.dir[4])),
                      "compute/leaf-su0-r3");
  assert_int_equal(tier_hops(t, &p, TS_TIER_SPINE), 1);
  ts_route_free(r);
  ts_topo_free(t);
}

/* 7 SUs, three tiers, one spine group of 10 per rail. Without PXN,
 * dgx0/gpu0 (SU 0, rail 0) -> dgx139/gpu5 (SU 6, rail 5): no spine holds
 * both rails, so gpu > pcie > nic > leaf > spine > core > spine > leaf >
 * nic > pcie > gpu, 10 hops with one core. With PXN the same pair stays on
 * rail 5 and turns at a rail-5 spine: NVLink 2 + 8, no core. */
static void test_7su_core(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-7su.yaml");
  ts_route *r = router(t, 1, NULL);
  ts_path p;
  assert_int_equal(route(r, t, "dgx0/gpu0", "dgx139/gpu5", &p), 10);
  assert_int_equal(tier_hops(t, &p, TS_TIER_CORE), 1);
  assert_int_equal(tier_hops(t, &p, TS_TIER_SPINE), 2);
  assert_int_equal(hop(t, &p, 4)->tier, TS_TIER_CORE);
  assert_int_equal(hop(t, &p, 3)->group, 0);   /* rail 0's spine group */
  assert_int_equal(hop(t, &p, 5)->group, 5);   /* rail 5's spine group */
  ts_route_free(r);
  r = router(t, 0, NULL);
  assert_int_equal(route(r, t, "dgx0/gpu0", "dgx139/gpu5", &p), 10);
  assert_int_equal(tier_hops(t, &p, TS_TIER_CORE), 0);
  assert_int_equal(tier_hops(t, &p, TS_TIER_SPINE), 1);
  ts_route_free(r);
  ts_topo_free(t);
}

/* Fixed-seed Fisher-Yates permutation of n (xorshift64). */
static void permute(uint32_t *perm, uint32_t n, uint64_t seed) {
  for (uint32_t i = 0; i < n; i++) perm[i] = i;
  for (uint32_t i = n - 1; i > 0; i--) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    uint32_t j = (uint32_t)(seed % (i + 1));
    uint32_t x = perm[i];
    perm[i] = perm[j];
    perm[j] = x;
  }
}

#define FLOWS 8

/* Routes FLOWS flows for every pair (i, perm[i]) of the 160 GPUs without
 * PXN; counts cross-leaf flows per spine (index = spine's local order).
 * Returns the number of cross-leaf flows; fails on any dead link used. */
static uint32_t spine_load(ts_route *r, const ts_topo *t,
                           const ts_route_state *s, uint32_t *per_spine,
                           uint32_t spines) {
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus), perm[MAXN], cross = 0;
  assert_true(n <= MAXN);
  permute(perm, n, 0x5eed);
  memset(per_spine, 0, spines * sizeof *per_spine);
  uint32_t spine0 = id_of(t, "compute/spine-g0-0");
  for (uint32_t i = 0; i < n; i++)
    for (uint64_t f = 0; f < FLOWS; f++) {
      ts_path p;
      assert_int_equal(ts_route_path(r, gpus[i], gpus[perm[i]], f, &p, NULL), 0);
      check_path(t, gpus[i], gpus[perm[i]], &p);
      for (uint32_t k = 0; k < p.len; k++) {
        assert_true(ts_route_link_up(s, p.dir[k] >> 1));
        uint32_t h = ts_topo_dir_head(t, p.dir[k]);
        if (ts_topo_node(t, h)->tier != TS_TIER_SPINE) continue;
        per_spine[h - spine0]++;
        cross++;
      }
    }
  return cross;
}

/* Hashed ECMP (forced: the file routes D-mod-k) on 1 SU without PXN: a random permutation of the 160 GPUs, 8 flows
 * per pair. Pairs on different rails (expected 7/8 of them) cross a spine,
 * each flow hashing uniformly onto 1 of 4: per spine ~ Binomial(X, 1/4),
 * sd = sqrt(X * 3/16); X ~ 1120 gives mean 280, sd ~ 14.5. Tolerance:
 * |count - X/4| <= 4 sd (flakiness is impossible anyway: deterministic). */
static void test_ecmp_spread(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route *r = router_hash(t, 1, NULL);
  uint32_t c[4];
  uint32_t x = spine_load(r, t, NULL, c, 4);
  assert_true(x > 900);
  double mean = x / 4.0, tol = 4.0 * sqrt(x * 3.0 / 16.0);
  for (int s = 0; s < 4; s++) {
    print_message("  spine %d: %u (mean %.1f, tol %.1f)\n", s, c[s], mean, tol);
    assert_true(c[s] >= mean - tol && c[s] <= mean + tol);
  }
  ts_route_free(r);
  ts_topo_free(t);
}

/* Spray, 1 SU without PXN, dgx0/gpu0 -> dgx5/gpu3: the only choice is the
 * spine (4 equal uplinks from leaf r0, each reaching leaf r3), so 4 paths
 * of 1/4 each, one per spine. A cap of 2 gives 2 distinct spines. */
static void test_spray(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route *r = router_hash(t, 1, NULL);
  uint32_t s = id_of(t, "dgx0/gpu0"), e = id_of(t, "dgx5/gpu3"), n;
  ts_path p[16];
  assert_int_equal(ts_route_paths(r, s, e, 7, 16, p, &n, NULL), 0);
  assert_int_equal(n, 4);
  uint32_t mask = 0, spine0 = id_of(t, "compute/spine-g0-0");
  for (uint32_t i = 0; i < n; i++) {
    check_path(t, s, e, &p[i]);
    mask |= 1u << (ts_topo_dir_head(t, p[i].dir[3]) - spine0);
  }
  assert_int_equal(mask, 0xF);
  assert_int_equal(ts_route_paths(r, s, e, 7, 2, p, &n, NULL), 0);
  assert_int_equal(n, 2);
  assert_int_not_equal(p[0].dir[3], p[1].dir[3]);
  ts_route_free(r);
  ts_topo_free(t);
}

/* Spine g0-1 fails: no path uses it, and the flows that crossed spines
 * spread over the other 3: per spine ~ Binomial(X, 1/3), sd = sqrt(2X/9),
 * tolerance 4 sd around X/3. Spray now finds 3 paths. */
static void test_failed_spine(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route_state *st;
  ts_diag d;
  assert_int_equal(ts_route_state_new(t, &st), 0);
  assert_int_equal(ts_route_fail_by_name(st, t, "compute/spine-g0-1", &d), 0);
  ts_route *r = router_hash(t, 1, st);
  uint32_t c[4];
  uint32_t x = spine_load(r, t, st, c, 4);
  assert_int_equal(c[1], 0);
  double mean = x / 3.0, tol = 4.0 * sqrt(x * 2.0 / 9.0);
  for (int s = 0; s < 4; s++) {
    print_message("  spine %d: %u (mean %.1f, tol %.1f)\n", s, c[s], mean, tol);
    if (s != 1) assert_true(c[s] >= mean - tol && c[s] <= mean + tol);
  }
  uint32_t n, s = id_of(t, "dgx0/gpu0"), e = id_of(t, "dgx5/gpu3");
  ts_path p[8];
  assert_int_equal(ts_route_paths(r, s, e, 0, 8, p, &n, NULL), 0);
  assert_int_equal(n, 3);
  ts_route_free(r);
  ts_route_state_free(st);
  ts_topo_free(t);
}

/* Every spine down: cross-leaf pairs (other rail, no PXN) are unreachable,
 * TS_EINVALID with a message; same-leaf pairs still route; with PXN the
 * cross-rail pair turns at one leaf and still routes. */
static void test_all_spines_down(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route_state *st;
  assert_int_equal(ts_route_state_new(t, &st), 0);
  char name[64];
  for (int s = 0; s < 4; s++) {
    snprintf(name, sizeof name, "compute/spine-g0-%d", s);
    assert_int_equal(ts_route_fail_by_name(st, t, name, NULL), 0);
  }
  ts_route *r = router(t, 1, st);
  ts_path p;
  ts_diag d;
  ts_diag_clear(&d);
  uint32_t s = id_of(t, "dgx0/gpu0"), e = id_of(t, "dgx5/gpu3");
  assert_int_equal(ts_route_path(r, s, e, 0, &p, &d), TS_EINVALID);
  print_message("  %s\n", d.msg);
  assert_non_null(strstr(d.msg, "no route from 'dgx0/gpu0' to 'dgx5/gpu3'"));
  assert_int_equal(p.len, 0);
  uint32_t n;
  ts_path many[4];
  assert_int_equal(ts_route_paths(r, s, e, 0, 4, many, &n, NULL), TS_EINVALID);
  assert_int_equal(n, 0);
  assert_int_equal(route(r, t, "dgx0/gpu0", "dgx5/gpu0", &p), 6);
  ts_route_free(r);
  r = router(t, 0, st);
  assert_int_equal(route(r, t, "dgx0/gpu0", "dgx5/gpu3", &p), 8);
  ts_route_free(r);
  ts_route_state_free(st);
  ts_topo_free(t);
}

/* Names: a link "A--B" fails just that link (the 1-SU NIC dgx0/compute0
 * then has no way out: TS_EINVALID); unknown names and bad factors are
 * TS_ESCHEMA and change nothing; degrade keeps the link up at the factor. */
static void test_names(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route_state *st;
  ts_diag d;
  assert_int_equal(ts_route_state_new(t, &st), 0);
  assert_int_equal(ts_route_fail_by_name(st, t, "compute/spine-g9-9", &d),
                   TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "compute/spine-g9-9"));
  assert_int_equal(ts_route_fail_by_name(st, t,
                   "dgx0/compute0--compute/leaf-su0-r1", &d), TS_ESCHEMA);
  assert_int_equal(ts_route_degrade_by_name(st, t, "dgx0/compute0", 1.5, &d),
                   TS_ESCHEMA);
  assert_int_equal(ts_route_degrade_by_name(st, t,
                   "compute/leaf-su0-r2--compute/spine-g0-3", 0.5, &d), 0);
  for (uint32_t l = 0; l < ts_topo_link_count(t); l++) {
    const ts_link *k = ts_topo_link(t, l);
    const char *a = ts_topo_node_name(t, k->a), *b = ts_topo_node_name(t, k->b);
    int hit = !strcmp(a, "compute/leaf-su0-r2") && !strcmp(b, "compute/spine-g0-3");
    assert_true(ts_route_link_up(st, l));
    assert_true(ts_route_link_factor(st, l) == (hit ? 0.5 : 1.0));
  }
  ts_route_state_free(st);
  ts_topo_free(t);
}

/* 1 if path p visits the node named `name`. */
static int visits(const ts_topo *t, const ts_path *p, const char *name) {
  uint32_t id = id_of(t, name);
  for (uint32_t i = 0; i < p->len; i++)
    if (ts_topo_dir_head(t, p->dir[i]) == id) return 1;
  return 0;
}

/* No direction of p is on a dead link. */
static void assert_live(const ts_route_state *st, const ts_path *p) {
  for (uint32_t i = 0; i < p->len; i++)
    assert_true(ts_route_link_up(st, p->dir[i] >> 1));
}

/* Failover: with rail 0's leaf down (or just dgx0's rail-0 cable) the GPUs
 * of rail 0 send and receive through their host's nearest live NIC (rail 1,
 * compute1: same NUMA domain, rail distance 1) and stay rail-aligned on
 * rail 1; every other GPU's route is the healthy one, hop for hop. */
static void test_nic_failover(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  const char *fails[] = {"compute/leaf-su0-r0",
                         "dgx0/compute0--compute/leaf-su0-r0", "dgx0/compute0"};
  ts_route *healthy = router(t, 0, NULL);
  for (int f = 0; f < 3; f++) {
    ts_route_state *st;
    assert_int_equal(ts_route_state_new(t, &st), 0);
    assert_int_equal(ts_route_fail_by_name(st, t, fails[f], NULL), 0);
    for (int pxn = 0; pxn < 2; pxn++) {
      ts_route *r = router(t, !pxn, st);
      ts_path p, q;
      route(r, t, "dgx0/gpu0", "dgx5/gpu0", &p);
      assert_live(st, &p);
      assert_true(visits(t, &p, "dgx0/compute1"));
      assert_int_equal(visits(t, &p, "dgx0/compute0"), 0);
      /* the receive side moves only when dgx5's own rail-0 NIC is dead */
      assert_int_equal(visits(t, &p, "dgx5/compute1"), f == 0);
      if (f == 0) assert_true(visits(t, &p, "compute/leaf-su0-r1"));
      route(r, t, "dgx5/gpu0", "dgx0/gpu0", &p);
      assert_live(st, &p);
      assert_true(visits(t, &p, "dgx0/compute1"));
      route(r, t, "dgx0/gpu1", "dgx5/gpu1", &p);
      route(healthy, t, "dgx0/gpu1", "dgx5/gpu1", &q);
      assert_int_equal(p.len, q.len);
      assert_memory_equal(p.dir, q.dir, p.len * sizeof p.dir[0]);
      ts_route_free(r);
    }
    ts_route_state_free(st);
  }
  ts_route_free(healthy);
  ts_topo_free(t);
}

/* Every compute NIC of dgx0 down: its GPUs are cut off, named as such;
 * GPUs of other hosts still route. */
static void test_host_cut_off(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route_state *st;
  assert_int_equal(ts_route_state_new(t, &st), 0);
  char name[64];
  for (int n = 0; n < 8; n++) {
    snprintf(name, sizeof name, "dgx0/compute%d", n);
    assert_int_equal(ts_route_fail_by_name(st, t, name, NULL), 0);
  }
  ts_route *r = router(t, 0, st);
  ts_path p;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_route_path(r, id_of(t, "dgx3/gpu2"),
                                 id_of(t, "dgx0/gpu2"), 0, &p, &d), TS_EINVALID);
  print_message("  %s\n", d.msg);
  assert_non_null(strstr(d.msg, "'dgx0/gpu2' is cut off from the fabric"));
  route(r, t, "dgx3/gpu2", "dgx1/gpu2", &p);
  ts_route_free(r);
  ts_route_state_free(st);
  ts_topo_free(t);
}

/* Same topology, options and flow ids: two routers give identical paths. */
static void test_deterministic(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-7su.yaml");
  ts_route *a = router(t, 1, NULL), *b = router(t, 1, NULL);
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus), perm[MAXN];
  permute(perm, n, 42);
  for (uint32_t i = 0; i < n; i++) {
    ts_path p, q;
    assert_int_equal(ts_route_path(a, gpus[i], gpus[perm[i]], i, &p, NULL), 0);
    assert_int_equal(ts_route_path(b, gpus[i], gpus[perm[i]], i, &q, NULL), 0);
    check_path(t, gpus[i], gpus[perm[i]], &p);
    assert_int_equal(p.len, q.len);
    assert_memory_equal(p.dir, q.dir, p.len * sizeof *p.dir);
  }
  ts_route_free(a);
  ts_route_free(b);
  ts_topo_free(t);
}

/* Checkpoint traffic, 1 SU: dgx0/gpu0 -> store0/storage0 (a storage
 * server NIC). gpu0 > pcie0 > cpu0 > storage0 (DGX NIC, socket 0) > storage
 * leaf0 > spine > leaf1 > store0/storage0: every network link is on the
 * storage plane, none on compute. dgx12 shares leaf1 with the servers
 * (24 NICs per leaf), so dgx12/gpu7 (socket 1, NIC storage1) turns at it:
 * gpu7 > pcie3 > cpu1 > storage1 > leaf1 > store0/storage1, 5 hops. */
static void test_storage_plane(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route *r = router(t, 0, NULL);
  int storage = ts_topo_plane_find(t, "storage");
  ts_path p;
  static const char *const want[] = {
      "dgx0/pcie0", "dgx0/cpu0", "dgx0/storage0", "storage/leaf0",
      "storage/spine", "storage/leaf1", "store0/storage0"};
  route(r, t, "dgx0/gpu0", "store0/storage0", &p);
  expect_nodes(t, &p, want, 7);
  for (uint32_t i = 0; i < p.len; i++) {
    const ts_link *l = ts_topo_link(t, p.dir[i] >> 1);
    if (l->kind == TS_LINK_NET) assert_int_equal(l->plane, storage);
  }
  assert_int_equal(route(r, t, "dgx12/gpu7", "store0/storage1", &p), 5);
  assert_string_equal(ts_topo_node_name(t, ts_topo_dir_head(t, p.dir[2])),
                      "dgx12/storage1");
  assert_int_equal(tier_hops(t, &p, TS_TIER_SPINE), 0);
  /* And back, NIC to GPU. */
  route(r, t, "store0/storage0", "dgx0/gpu0", &p);
  assert_int_equal(p.len, 7);
  ts_route_free(r);
  ts_topo_free(t);
}

/* GB200 NVL72: 36 superchip hosts share 18 NVSwitch chips, so sc0/gpu0 ->
 * sc35/gpu1 crosses hosts over NVLink: gpu > nvsw > gpu, 2 hops, never the
 * compute fabric. Two GPUs of one superchip also meet at an NVSwitch. */
static void test_nvl72(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/gb200-nvl72.yaml");
  ts_route *r = router(t, 0, NULL);
  ts_path p;
  assert_int_equal(route(r, t, "sc0/gpu0", "sc35/gpu1", &p), 2);
  assert_int_equal(hop(t, &p, 0)->kind, TS_NODE_NVSWITCH);
  assert_int_equal(route(r, t, "sc0/gpu0", "sc0/gpu1", &p), 2);
  ts_route_free(r);
  ts_topo_free(t);
}

/* Dual-plane backend: the plane is a decision point. Without PXN, node0
 * gpu0 -> node40/gpu3 (other SU, other rail) has 2 planes x 8 spines = 16
 * spray paths, half on each plane. */
static void test_multi_plane(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/multi-plane-h100.yaml");
  ts_route *r = router(t, 1, NULL);
  uint32_t s = id_of(t, "node0/gpu0"), e = id_of(t, "node40/gpu3"), n;
  ts_path p[32];
  assert_int_equal(ts_route_paths(r, s, e, 0, 32, p, &n, NULL), 0);
  assert_int_equal(n, 16);
  uint32_t on_a = 0;
  int pa = ts_topo_plane_find(t, "plane-a");
  for (uint32_t i = 0; i < n; i++) {
    check_path(t, s, e, &p[i]);
    on_a += ts_topo_link(t, p[i].dir[2] >> 1)->plane == pa;
  }
  assert_int_equal(on_a, 8);
  ts_route_free(r);
  ts_topo_free(t);
}

/* Bad endpoints: a switch is not an endpoint; src == dst is empty. */
static void test_endpoints(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route *r = router(t, 0, NULL);
  ts_path p;
  ts_diag d;
  uint32_t g = id_of(t, "dgx0/gpu0");
  assert_int_equal(ts_route_path(r, g, id_of(t, "compute/leaf-su0-r0"), 0, &p,
                                 &d), TS_EINVALID);
  assert_non_null(strstr(d.msg, "endpoints must be GPUs or NICs"));
  assert_int_equal(ts_route_path(r, g, g, 0, &p, &d), 0);
  assert_int_equal(p.len, 0);
  ts_route_free(r);
  ts_topo_free(t);
}


/* ---- D-mod-k (route_dmodk.c) ---- */

static ts_route *router_dmodk(const ts_topo *t, int no_pxn,
                              const ts_route_state *s) {
  return router_with(t, no_pxn, s, 1 + TS_ROUTING_DMODK);
}

/* The spine node of a path (exactly one on a 2-tier plane). */
static uint32_t spine_of(const ts_topo *t, const ts_path *p) {
  uint32_t sp = UINT32_MAX;
  for (uint32_t i = 0; i < p->len; i++)
    if (hop(t, p, i)->kind == TS_NODE_SWITCH && hop(t, p, i)->tier == TS_TIER_SPINE) {
      assert_int_equal(sp, UINT32_MAX);
      sp = ts_topo_dir_head(t, p->dir[i]);
    }
  assert_int_not_equal(sp, UINT32_MAX);
  return sp;
}

/* Closed form, 1 SU (20 DGX, rail leaves, 4 spines each cabled to every
 * leaf), no PXN: dgx i / gpu a -> dgx j / gpu b, i != j, a != b, crosses a
 * spine.
 * The destination NIC is number j in rail b's tree (leaf su0-r<b> holds
 * the rail-b NICs of dgx0..19 in port order), the leaf has 4 live uplinks,
 * so D-mod-k takes uplink j mod 4: spine g0-<j mod 4>, whatever i, a, b and
 * the flow. With spine g0-1 failed the survivors are g0-0, g0-2, g0-3 and
 * the choice is j mod 3 over them, deterministically. */
static void test_dmodk_closed_form(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_route_state *st;
  assert_int_equal(ts_route_state_new(t, &st), 0);
  assert_int_equal(ts_route_fail_by_name(st, t, "compute/spine-g0-1", NULL), 0);
  ts_route *r = router_dmodk(t, 1, NULL), *rf = router_dmodk(t, 1, st);
  uint32_t spine0 = id_of(t, "compute/spine-g0-0");
  static const uint32_t live[3] = {0, 2, 3};
  char a[32], b[32];
  for (uint32_t i = 0; i < 20; i += 3)
    for (uint32_t j = 0; j < 20; j++)
      for (uint32_t ga = 0; ga < 8; ga += 3) {
        uint32_t gb = (ga + 1 + j) % 8;
        if (gb == ga || i == j) continue;   /* same host: NVLink */
        snprintf(a, sizeof a, "dgx%u/gpu%u", i, ga);
        snprintf(b, sizeof b, "dgx%u/gpu%u", j, gb);
        ts_path p;
        for (uint64_t f = 0; f < 3; f++) {
          uint32_t s = id_of(t, a), e = id_of(t, b);
          assert_int_equal(ts_route_path(r, s, e, f, &p, NULL), 0);
          check_path(t, s, e, &p);
          assert_int_equal(spine_of(t, &p) - spine0, j % 4);
          assert_int_equal(ts_route_path(rf, s, e, f, &p, NULL), 0);
          check_path(t, s, e, &p);
          assert_live(st, &p);
          assert_int_equal(spine_of(t, &p) - spine0, live[j % 3]);
        }
      }
  ts_route_free(r);
  ts_route_free(rf);
  ts_route_state_free(st);
  ts_topo_free(t);
}

/* Shift permutation on the k = 8 fat tree (128 NICs, 4 per edge switch, 4
 * aggregation switches per pod, 4 cores per aggregation switch), NIC n ->
 * NIC (n + s) mod 128, NIC-to-NIC routes. The NICs carry no rail, so a
 * NIC's position is its number n (edge switches in order, 4 ports each).
 * D-mod-k: edge uplink n' mod 4 and aggregation uplink floor(n'/4) mod 4
 * for destination n'. A source edge's 4 destinations n'..n'+3 are
 * consecutive, so its 4 flows take its 4 uplinks once each; a pod's 4
 * flows through one aggregation switch have destinations n' = c, c+4, c+8,
 * c+12, so floor(n'/4) mod 4 differs too; every down hop is fixed by the
 * destination, one flow each. So no directed switch link carries two
 * flows (Zahavi et al. 2010: D-mod-k is non-blocking for shifts), and for
 * s = 16 (every flow leaves its pod) each of the 128 edge uplinks carries
 * exactly one flow. Hashed ECMP on the same shifts does collide. */
static uint32_t shift_max(ts_route *r, const ts_topo *t, const uint32_t *nic,
                          uint32_t s, uint32_t *edge_up_used) {
  uint32_t nd = 2 * ts_topo_link_count(t), max = 0;
  uint32_t *load = calloc(nd, sizeof *load);
  assert_non_null(load);
  *edge_up_used = 0;
  for (uint32_t n = 0; n < 128; n++) {
    ts_path p;
    uint32_t e = nic[(n + s) % 128];
    assert_int_equal(ts_route_path(r, nic[n], e, 0, &p, NULL), 0);
    check_path(t, nic[n], e, &p);
    for (uint32_t i = 0; i < p.len; i++) {
      const ts_node *a = ts_topo_node(t, ts_route_dir_tail(t, p.dir[i]));
      if (a->kind != TS_NODE_SWITCH || hop(t, &p, i)->kind != TS_NODE_SWITCH)
        continue;
      if (++load[p.dir[i]] > max) max = load[p.dir[i]];
      if (a->tier == TS_TIER_LEAF && load[p.dir[i]] == 1) ++*edge_up_used;
    }
  }
  free(load);
  return max;
}

static void test_dmodk_shift(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/fat-tree-k8.yaml");
  uint32_t nic[128], n = 0;
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++)
    if (ts_topo_node(t, i)->kind == TS_NODE_NIC) {
      assert_true(n < 128);
      nic[n++] = i;
    }
  assert_int_equal(n, 128);
  ts_route *r = router_dmodk(t, 0, NULL), *h = router_hash(t, 0, NULL);
  static const uint32_t shifts[] = {1, 3, 4, 5, 16, 17, 64, 100};
  uint32_t used, hash_max = 0;
  for (uint32_t k = 0; k < sizeof shifts / sizeof *shifts; k++) {
    assert_int_equal(shift_max(r, t, nic, shifts[k], &used), 1);
    if (shifts[k] == 16) assert_int_equal(used, 128);
    uint32_t m = shift_max(h, t, nic, shifts[k], &used);
    if (m > hash_max) hash_max = m;
  }
  print_message("  hashed ECMP: up to %u flows on one link\n", hash_max);
  assert_true(hash_max > 1);
  ts_route_free(r);
  ts_route_free(h);
  ts_topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dgx_nvswitch),
      cmocka_unit_test(test_pcie_bridge),
      cmocka_unit_test(test_su_same_rail),
      cmocka_unit_test(test_su_cross_rail),
      cmocka_unit_test(test_7su_core),
      cmocka_unit_test(test_ecmp_spread),
      cmocka_unit_test(test_spray),
      cmocka_unit_test(test_failed_spine),
      cmocka_unit_test(test_nic_failover),
      cmocka_unit_test(test_host_cut_off),
      cmocka_unit_test(test_all_spines_down),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_storage_plane),
      cmocka_unit_test(test_nvl72),
      cmocka_unit_test(test_multi_plane),
      cmocka_unit_test(test_endpoints),
      cmocka_unit_test(test_dmodk_closed_form),
      cmocka_unit_test(test_dmodk_shift),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
