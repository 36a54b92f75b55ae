/* test_gen.c - Clos sizing rules and the fabric generators.
 *
 * Sizing is checked against NVIDIA's DGX A100 SuperPOD table (40-port HDR
 * QM8700 switches split 20 down / 20 up, 20 nodes per SU, 8 rails) and the
 * 4:1 build of domain.md, pods (folded Clos) against a hand-worked 131,072-
 * GPU fabric and a small two-pod one; the generators are checked on real
 * graphs built with the topo_graph builder: exact switch and link counts per
 * tier, ports per switch within the radix, NICs on the leaf of their rail
 * and SU, and leaf uplinks split evenly. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "topo/topo_gen.h"

/* ---- fixtures ---- */

static const topo_switch_spec QM8700_SPLIT = {40, 20, 20};
static const topo_switch_spec QM8700_TOP = {40, 0, 0};

/* The SuperPOD design: fixed 20:20 leaves and spines, 20-node SUs. */
static topo_clos_in superpod(uint32_t hosts, uint32_t tiers) {
  topo_clos_in in = {.hosts = hosts, .rails = 8, .hosts_per_su = 20,
                     .tiers = tiers, .leaf = QM8700_SPLIT,
                     .spine = QM8700_SPLIT, .core = QM8700_TOP};
  return in;
}

/* Sizes with the fewest tiers (2 or 3) the rules accept: the table's tier
 * column is derived too, not passed in. Returns the tier count. */
static uint32_t size_fewest(uint32_t hosts, topo_clos_shape *out) {
  ts_diag d;
  for (uint32_t tiers = 2; tiers <= 3; tiers++) {
    topo_clos_in in = superpod(hosts, tiers);
    ts_diag_clear(&d);
    if (topo_clos_size(&in, out, &d) == 0) return tiers;
  }
  print_error("%u hosts: %s\n", hosts, d.msg);
  fail();
  return 0;
}

static void expect_row(uint32_t hosts, uint32_t sus, uint32_t leaves,
                       uint32_t spines, uint32_t cores, uint32_t tiers) {
  topo_clos_shape s;
  assert_int_equal(size_fewest(hosts, &s), tiers);
  assert_int_equal(s.sus, sus);
  assert_int_equal(s.leaves, leaves);
  assert_int_equal(s.spines, spines);
  assert_int_equal(s.cores, cores);
}

/* A topology with one backend plane "compute" (generator at 7:3). */
static ts_topo *new_plane(uint16_t *plane) {
  ts_topo *t = topo_new("gen.yaml");
  assert_non_null(t);
  ts_plane p;
  memset(&p, 0, sizeof p);
  p.name = topo_strdup(t, "compute");
  p.kind = TS_PLANE_BACKEND;
  p.link_preset = "";
  p.generator = "test";
  *plane = topo_add_plane(t, &p, (topo_mark){7, 3});
  assert_int_not_equal(*plane, TS_NO_PLANE);
  return t;
}

/* hosts x rails NICs at 25 GB/s with host/su/rail labels set. */
static void add_nics(ts_topo *t, uint16_t plane, uint32_t hosts,
                     uint32_t rails, uint32_t per_su) {
  for (uint32_t h = 0; h < hosts; h++)
    for (uint32_t r = 0; r < rails; r++) {
      ts_node n = topo_node_proto(TS_NODE_NIC);
      n.host = (int32_t)h;
      n.su = (int32_t)(h / per_su);
      n.rail = n.local = (int16_t)r;
      n.plane = plane;
      uint32_t id = topo_add_node(t, &n, "node%u/nic%u", h, r);
      assert_int_not_equal(id, TOPO_BAD_ID);
      t->port_bw[id] = 25e9;
    }
}

static ts_topo *build_rail(uint32_t hosts, topo_clos_in clos) {
  uint16_t plane;
  ts_topo *t = new_plane(&plane);
  add_nics(t, plane, hosts, clos.rails, clos.hosts_per_su);
  topo_rail_spec spec = {.clos = clos, .link_bw = 25e9,
                         .link_latency = 100 * TS_PS_PER_NS};
  ts_diag d;
  ts_diag_clear(&d);
  int rc = topo_gen_rail_optimized(t, plane, &spec, &d);
  if (!rc) rc = topo_finalize(t, &d);
  if (rc) print_error("%s:%d:%d: %s\n", d.file, d.line, d.col, d.msg);
  assert_int_equal(rc, 0);
  return t;
}

static uint32_t count_kind(const ts_topo *t, ts_node_kind k, int tier) {
  return tu_count(t, k, tier);
}

/* Every switch and NVSwitch: ports used (sum of widths) <= radix. Returns
 * the largest port count seen. */
static uint32_t check_radix(const ts_topo *t) {
  uint32_t most = 0;
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *n = ts_topo_node(t, i);
    if (n->kind != TS_NODE_SWITCH && n->kind != TS_NODE_NVSWITCH) continue;
    uint32_t used = topo_ports_used(t, i);
    assert_true(n->radix == 0 || used <= n->radix);
    if (used > most) most = used;
  }
  return most;
}

/* Asserts every switch of a tier uses exactly `ports` ports. */
static void check_ports(const ts_topo *t, ts_tier tier, uint32_t ports) {
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++)
    if (ts_topo_node(t, i)->kind == TS_NODE_SWITCH &&
        ts_topo_node(t, i)->tier == tier)
      assert_int_equal(topo_ports_used(t, i), ports);
}

/* Each NIC has one cable, to a leaf of its own rail and SU. */
static void check_nics(const ts_topo *t) {
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *n = ts_topo_node(t, i);
    if (n->kind != TS_NODE_NIC) continue;
    assert_int_equal(ts_topo_degree(t, i), 1);
    uint32_t head = ts_topo_dir_head(t, ts_topo_adj(t, i)[0]);
    const ts_node *leaf = ts_topo_node(t, head);
    assert_int_equal(leaf->tier, TS_TIER_LEAF);
    assert_int_equal(leaf->rail, n->rail);
    assert_int_equal(leaf->su, n->su);
    assert_int_equal(leaf->plane, n->plane);
  }
}

/* Each leaf reaches `spines` spines with `width` cables each, and a spine
 * in three tiers belongs to the leaf's rail group. */
static void check_uplinks(const ts_topo *t, uint32_t spines, uint32_t width,
                          int per_rail) {
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *n = ts_topo_node(t, i);
    if (n->kind != TS_NODE_SWITCH || n->tier != TS_TIER_LEAF) continue;
    uint32_t seen = 0;
    for (uint32_t k = 0; k < ts_topo_degree(t, i); k++) {
      uint32_t dir = ts_topo_adj(t, i)[k];
      const ts_node *up = ts_topo_node(t, ts_topo_dir_head(t, dir));
      if (up->tier != TS_TIER_SPINE) continue;
      seen++;
      assert_int_equal(ts_topo_link(t, dir >> 1)->width, width);
      assert_true(ts_topo_link(t, dir >> 1)->bandwidth == width * 25e9);
      if (per_rail) assert_int_equal(up->group, n->rail);
    }
    assert_int_equal(seen, spines);
  }
}

/* ---- topo_clos_size: the SuperPOD table ---- */

/* 10 nodes, half an SU: still 8 leaves; each holds 10 NICs and keeps the
 * 1:1 ratio with 10 uplinks. 8*10 = 80 uplinks over 40-port spines need 2;
 * 10 % 2 == 0 -> 2 spines, 5 cables per pair. Two tiers, no core. */
static void test_superpod_10(void **state) {
  (void)state;
  expect_row(10, 1, 8, 2, 0, 2);
}

/* 20 nodes = 1 SU: 8 leaves x 20 uplinks = 160 / 40 = 4 spines; 20 % 4 ==
 * 0 -> 4 spines, 5 cables per pair. */
static void test_superpod_20(void **state) {
  (void)state;
  expect_row(20, 1, 8, 4, 0, 2);
}

/* 40 nodes = 2 SUs: 16 leaves x 20 = 320 / 40 = 8 spines at least; 20 is
 * not divisible by 8 or 9 -> 10 spines, 2 cables per pair. */
static void test_superpod_40(void **state) {
  (void)state;
  expect_row(40, 2, 16, 10, 0, 2);
}

/* 80 nodes = 4 SUs: 32 leaves x 20 = 640 / 40 = 16 at least; 16..19 do not
 * divide 20 -> 20 spines, 1 cable per pair (each spine full: 32 ports). */
static void test_superpod_80(void **state) {
  (void)state;
  expect_row(80, 4, 32, 20, 0, 2);
}

/* 100 nodes = 5 SUs: 40 leaves x 20 = 800 / 40 = 20 spines exactly, 1 cable
 * per pair: the largest two-tier build. */
static void test_superpod_100(void **state) {
  (void)state;
  expect_row(100, 5, 40, 20, 0, 2);
}

/* 120 nodes = 6 SUs: two tiers would need 960 / 40 = 24 spines > 20
 * uplinks, so three tiers. Per rail group: 6 leaves x 20 = 120 / 20 down
 * ports = 6 spines at least, 20 % 6,7,8,9 != 0 -> 10 per group, 80 in all,
 * each using 12 down + 12 up. Cores: K = ceil(80/40) = 2 groups of 12 = 24. */
static void test_superpod_120(void **state) {
  (void)state;
  expect_row(120, 6, 48, 80, 24, 3);
  topo_clos_shape s;
  size_fewest(120, &s);
  assert_int_equal(s.spines_per_group, 10);
  assert_int_equal(s.spine_down_used, 12);
  assert_int_equal(s.spine_up, 12);
  assert_int_equal(s.core_groups, 2);
  assert_int_equal(s.spine_core_links, 1);
  assert_int_equal(s.pods, 1);
  assert_int_equal(s.sus_per_pod, 6);
  assert_int_equal(s.spine_groups, 8);
}

/* 140 nodes = 7 SUs: per rail group 7 x 20 = 140 / 20 = 7 spines at least
 * -> 10 per group (80 in all), 2 cables per leaf-spine pair, 14 down + 14
 * up per spine; K = 2 groups of 14 cores = 28. */
static void test_superpod_140(void **state) {
  (void)state;
  expect_row(140, 7, 56, 80, 28, 3);
  topo_clos_shape s;
  size_fewest(140, &s);
  assert_int_equal(s.leaf_spine_links, 2);
  assert_int_equal(s.cores_per_group, 14);
  assert_int_equal(s.pods, 1);
  assert_int_equal(s.sus_per_pod, 7);
}

/* ---- topo_clos_size: pods (folded Clos, rule 6b) ---- */

/* 16,384 8-GPU nodes (131,072 GPUs), 8 rails, 64 nodes per SU, 128-port
 * switches split 64/64, 128-port cores. sus = 16384 / 64 = 256, leaves =
 * 256 x 8 = 2048, leaf_up = 64. One rail group serves at most spine_down =
 * 64 SUs (64 spines, one cable per leaf), so pods = 256 / 64 = 4 and
 * spine groups = 4 x 8 = 32 of 64: 2048 spines, each 64 down + 64 up. K =
 * 2048 / 128 = 16 core groups; a core group holds 64 / 16 = 4 spines of
 * each of 32 groups = 128 ports; 16 x 64 = 1024 cores. 2048 + 2048 + 1024
 * = 5120 switches; cables 16384 x 8 = 2048 x 64 = 2048 x 64 = 131,072 per
 * layer. */
static void test_pods_131k(void **state) {
  (void)state;
  topo_clos_in in = {.hosts = 16384, .rails = 8, .hosts_per_su = 64,
                     .tiers = 3, .leaf = {128, 64, 64},
                     .spine = {128, 64, 64}, .core = {128, 0, 0}};
  topo_clos_shape s;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(topo_clos_size(&in, &s, &d), 0);
  assert_int_equal(s.sus, 256);
  assert_int_equal(s.leaves, 2048);
  assert_int_equal(s.leaf_down_used, 64);
  assert_int_equal(s.leaf_up, 64);
  assert_int_equal(s.pods, 4);
  assert_int_equal(s.sus_per_pod, 64);
  assert_int_equal(s.spine_groups, 32);
  assert_int_equal(s.spines_per_group, 64);
  assert_int_equal(s.spines, 2048);
  assert_int_equal(s.leaf_spine_links, 1);
  assert_int_equal(s.spine_down_used, 64);
  assert_int_equal(s.spine_up, 64);
  assert_int_equal(s.core_groups, 16);
  assert_int_equal(s.cores_per_group, 64);
  assert_int_equal(s.cores, 1024);
  assert_int_equal(s.spine_core_links, 1);
  assert_int_equal(s.leaves + s.spines + s.cores, 5120);
  assert_int_equal((uint64_t)s.leaves * s.leaf_up, 131072);
  assert_int_equal((uint64_t)s.spines * s.spine_up * s.spine_core_links,
                   131072);
}

/* The small pod fabric of test_rail_pods: leaf 8 = 4/4, spine 8 = 4/4, core
 * 8, 2 rails, 4 nodes per SU, 24 nodes -> 6 SUs > spine_down 4, so pods of
 * 4 SUs: 2 pods (4 + 2 SUs), 2 x 2 = 4 spine groups of 4 = 16 spines, each
 * 4 down + 4 up; K = 16 / 8 = 2 (2 spines x 4 groups = 8 ports per core),
 * 2 x 4 = 8 cores. */
static topo_clos_in small_pods(void) {
  topo_clos_in in = {.hosts = 24, .rails = 2, .hosts_per_su = 4,
                     .tiers = 3, .leaf = {8, 4, 4}, .spine = {8, 4, 4},
                     .core = {8, 0, 0}};
  return in;
}

static void test_pods_small_size(void **state) {
  (void)state;
  topo_clos_in in = small_pods();
  topo_clos_shape s;
  ts_diag d;
  assert_int_equal(topo_clos_size(&in, &s, &d), 0);
  assert_int_equal(s.sus, 6);
  assert_int_equal(s.leaves, 12);
  assert_int_equal(s.pods, 2);
  assert_int_equal(s.sus_per_pod, 4);
  assert_int_equal(s.spine_groups, 4);
  assert_int_equal(s.spines, 16);
  assert_int_equal(s.spine_down_used, 4);
  assert_int_equal(s.spine_up, 4);
  assert_int_equal(s.core_groups, 2);
  assert_int_equal(s.cores, 8);
}

/* Pod errors: 4 spine groups cannot all reach a 3-port core (1 short);
 * forced spines must be pods x rails x leaf_up = 16. */
static void test_pods_errors(void **state) {
  (void)state;
  topo_clos_in in = small_pods();
  topo_clos_shape s;
  ts_diag d;
  in.core.radix = 3;
  assert_int_equal(topo_clos_size(&in, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "each of the 4 spine groups (2 pods x 2 "
                                "rails; 1 ports short)"));
  in = small_pods();
  in.spines = 8;
  assert_int_equal(topo_clos_size(&in, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "= 16 are needed"));
  in.spines = 16;
  assert_int_equal(topo_clos_size(&in, &s, &d), 0);
  assert_int_equal(s.spines, 16);
}

/* domain.md's 4:1 build: 40-port leaves split 32 down / 8 up, 4 SUs of 32
 * nodes, 8 rails -> 32 leaves with 8 uplinks each; 256 / 40 = 7 spines at
 * least, 8 % 7 != 0 -> 8 spines, 1 cable per pair, 32 ports used each. */
static void test_oversubscribed_4to1(void **state) {
  (void)state;
  topo_clos_in in = {.hosts = 128, .rails = 8, .hosts_per_su = 32,
                     .tiers = 2, .leaf = {40, 32, 8}, .spine = QM8700_TOP};
  topo_clos_shape s;
  ts_diag d;
  assert_int_equal(topo_clos_size(&in, &s, &d), 0);
  assert_int_equal(s.leaves, 32);
  assert_int_equal(s.leaf_up, 8);
  assert_int_equal(s.spines, 8);
  assert_int_equal(s.leaf_spine_links, 1);
  assert_int_equal(s.spine_down_used, 32);
}

/* Forced spines: 20 nodes on 10 spines -> 20 uplinks / 10 = 2 cables per
 * pair; 7 spines do not divide 20 and are refused. */
static void test_forced_spines(void **state) {
  (void)state;
  topo_clos_in in = superpod(20, 2);
  topo_clos_shape s;
  ts_diag d;
  in.spines = 10;
  assert_int_equal(topo_clos_size(&in, &s, &d), 0);
  assert_int_equal(s.leaf_spine_links, 2);
  in.spines = 7;
  assert_int_equal(topo_clos_size(&in, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "6 left over"));
}

/* Three tiers, forced and grown counts (rules 7-8), 140 nodes:
 * - 160 spines forced: 20 per rail group, 1 cable per leaf, 7 down + 7 up;
 *   K = ceil(160/40) = 4 groups of 5 spines x 8 rails = 40 ports; 4 x 7 =
 *   28 cores.
 * - 30-port cores: K = ceil(80/30) = 3 leaves a group of ceil(10/3) = 4
 *   spines x 8 rails = 32 > 30, so K grows to 4 (3 x 8 = 24 ports): 56.
 * - 14 cores forced: 7 per group, 2 cables per spine-core pair, a core
 *   would take 5 x 8 x 2 = 80 cables > 40: refused (40 over). */
static void test_three_tier_variants(void **state) {
  (void)state;
  topo_clos_shape s;
  ts_diag d;
  topo_clos_in in = superpod(140, 3);
  in.spines = 160;
  assert_int_equal(topo_clos_size(&in, &s, &d), 0);
  assert_int_equal(s.spines_per_group, 20);
  assert_int_equal(s.spine_down_used, 7);
  assert_int_equal(s.core_groups, 4);
  assert_int_equal(s.cores, 28);
  in = superpod(140, 3);
  in.core.radix = 30;
  assert_int_equal(topo_clos_size(&in, &s, &d), 0);
  assert_int_equal(s.core_groups, 4);
  assert_int_equal(s.cores, 56);
  in = superpod(140, 3);
  in.cores = 14;
  assert_int_equal(topo_clos_size(&in, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "80 spine cables (40 over)"));
  in.spines = 24; /* 3 per group does not divide 20 uplinks */
  in.cores = 0;
  assert_int_equal(topo_clos_size(&in, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "24 spines do not split"));
}

/* Errors say what failed and by how much. */
static void test_size_errors(void **state) {
  (void)state;
  topo_clos_shape s;
  ts_diag d;
  /* 32-node SU on 20-down leaves: 12 ports short. */
  topo_clos_in in = superpod(64, 2);
  in.hosts_per_su = 32;
  assert_int_equal(topo_clos_size(&in, &s, &d), TS_ESCHEMA);
  assert_string_equal(d.msg, "leaf radix 40 with 20 down ports cannot hold "
                             "a 32-node SU (12 ports short)");
  /* 6 SUs on two tiers: 960 uplinks need 24 spines > 20 uplinks per leaf. */
  in = superpod(120, 2);
  assert_int_equal(topo_clos_size(&in, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "48 leaves need a third tier"));
  assert_non_null(strstr(d.msg, "24 spines"));
  /* No hosts. */
  in = superpod(0, 2);
  assert_int_equal(topo_clos_size(&in, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "no hosts"));
  /* One tier, two SUs. */
  in = superpod(40, 1);
  assert_int_equal(topo_clos_size(&in, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "one tier holds one SU"));
  /* Spec over its radix. */
  in = superpod(20, 2);
  in.leaf.up = 24;
  assert_int_equal(topo_clos_size(&in, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "exceed it by 4"));
}

/* ---- rail_optimized on real graphs ---- */

/* 1 SU, two tiers: 8 leaves, 4 spines, 5 cables per pair. Links: 160 NIC
 * cables + 8 x 4 bundles = 192. Leaf 20 + 20 = 40 ports, spine 8 x 5 = 40. */
static void test_rail_one_su(void **state) {
  (void)state;
  ts_topo *t = build_rail(20, superpod(20, 2));
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_LEAF), 8);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_SPINE), 4);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_CORE), 0);
  assert_int_equal(ts_topo_link_count(t), 160 + 32);
  assert_int_equal(check_radix(t), 40);
  check_ports(t, TS_TIER_LEAF, 40);
  check_ports(t, TS_TIER_SPINE, 40);
  check_nics(t);
  check_uplinks(t, 4, 5, 0);
  uint32_t id;
  assert_int_equal(ts_topo_find_node(t, "compute/leaf-su0-r7", &id), 0);
  assert_int_equal(ts_topo_node(t, id)->rail, 7);
  assert_int_equal(ts_topo_find_node(t, "compute/spine-g0-3", &id), 0);
  assert_int_equal(ts_topo_plane(t, 0)->tiers, 2);
  ts_topo_free(t);
}

/* 7 SUs, three tiers: 56 leaves, 80 spines (8 rail groups of 10), 28 cores
 * (2 core groups of 14). Links: 1120 NIC + 56 x 10 leaf-spine + 80 x 14
 * spine-core = 2800. Ports: leaf 40, spine 7 x 2 + 14 = 28, core 40 (5
 * spines of each of 8 rails). */
static void test_rail_seven_su(void **state) {
  (void)state;
  ts_topo *t = build_rail(140, superpod(140, 3));
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_LEAF), 56);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_SPINE), 80);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_CORE), 28);
  assert_int_equal(ts_topo_link_count(t), 1120 + 560 + 1120);
  assert_int_equal(check_radix(t), 40);
  check_ports(t, TS_TIER_LEAF, 40);
  check_ports(t, TS_TIER_SPINE, 28);
  check_ports(t, TS_TIER_CORE, 40);
  check_nics(t);
  check_uplinks(t, 10, 2, 1);
  /* Spine 4 of rail group 3 is in core group 0, spine 5 in core group 1. */
  uint32_t sp, core;
  assert_int_equal(ts_topo_find_node(t, "compute/spine-g3-5", &sp), 0);
  assert_int_equal(ts_topo_find_node(t, "compute/core-g1-13", &core), 0);
  uint32_t last = ts_topo_adj(t, sp)[ts_topo_degree(t, sp) - 1];
  const ts_link *l = ts_topo_link(t, last >> 1);
  assert_int_equal(l->b, core);
  assert_int_equal(ts_topo_node(t, core)->group, 1);
  ts_topo_free(t);
}

/* Leaves reachable from leaf `from` through switches only (NICs are never
 * crossed): a BFS over switch nodes. Returns the count of leaves seen. */
static uint32_t leaves_reached(const ts_topo *t, uint32_t from) {
  uint32_t n = ts_topo_node_count(t), head = 0, tail = 0, leaves = 0;
  uint32_t *queue = malloc(n * sizeof *queue);
  char *seen = calloc(n, 1);
  assert_true(queue && seen);
  queue[tail++] = from;
  seen[from] = 1;
  while (head < tail) {
    uint32_t v = queue[head++];
    leaves += ts_topo_node(t, v)->tier == TS_TIER_LEAF;
    for (uint32_t k = 0; k < ts_topo_degree(t, v); k++) {
      uint32_t w = ts_topo_dir_head(t, ts_topo_adj(t, v)[k]);
      if (seen[w] || ts_topo_node(t, w)->kind != TS_NODE_SWITCH) continue;
      seen[w] = 1;
      queue[tail++] = w;
    }
  }
  free(queue);
  free(seen);
  return leaves;
}

/* The small pod fabric (see small_pods) as a graph. Switches 12 leaves +
 * 16 spines + 8 cores = 36. Links: 48 NIC + 12 x 4 leaf-spine + 16 x 4
 * spine-core = 160. Ports: leaf 4 + 4 = 8; pod-0 spines 4 leaves + 4 up =
 * 8, pod-1 spines (2 SUs) 2 + 4 = 6; cores 2 spines x 4 groups = 8. Each
 * leaf (su, r) sends 1 cable to each of the 4 spines of group (su / 4) * 2
 * + r; each core sees all 4 (pod, rail) groups; every leaf reaches all 12
 * leaves through switches alone. */
static void test_rail_pods(void **state) {
  (void)state;
  ts_topo *t = build_rail(24, small_pods());
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_LEAF), 12);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_SPINE), 16);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_CORE), 8);
  assert_int_equal(ts_topo_link_count(t), 48 + 48 + 64);
  assert_int_equal(check_radix(t), 8);
  check_ports(t, TS_TIER_LEAF, 8);
  check_ports(t, TS_TIER_CORE, 8);
  check_nics(t);
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *n = ts_topo_node(t, i);
    if (n->kind != TS_NODE_SWITCH) continue;
    uint32_t groups = 0, spines = 0; /* bit g: a neighbour in group g */
    for (uint32_t k = 0; k < ts_topo_degree(t, i); k++) {
      uint32_t dir = ts_topo_adj(t, i)[k];
      const ts_node *m = ts_topo_node(t, ts_topo_dir_head(t, dir));
      if (m->tier != TS_TIER_SPINE) continue;
      spines++;
      groups |= 1u << m->group;
      assert_int_equal(ts_topo_link(t, dir >> 1)->width, 1);
    }
    if (n->tier == TS_TIER_LEAF) {
      assert_int_equal(spines, 4);
      assert_int_equal(groups, 1u << (n->su / 4 * 2 + n->rail));
    } else if (n->tier == TS_TIER_CORE) {
      assert_int_equal(spines, 8);
      assert_int_equal(groups, 0xfu);
    } else {
      uint32_t pod = (uint32_t)n->group / 2;
      assert_int_equal(topo_ports_used(t, i), pod == 0 ? 8 : 6);
    }
    if (n->tier == TS_TIER_LEAF) assert_int_equal(leaves_reached(t, i), 12);
  }
  uint32_t id;
  assert_int_equal(ts_topo_find_node(t, "compute/spine-p1-r0-3", &id), 0);
  assert_int_equal(ts_topo_node(t, id)->group, 2);
  assert_int_equal(ts_topo_find_node(t, "compute/leaf-su5-r1", &id), 0);
  assert_int_equal(ts_topo_plane(t, 0)->tiers, 3);
  ts_topo_free(t);
}

/* One tier, 40 nodes: 8 leaves x 40 NICs, no spines; 320 links. */
static void test_rail_one_tier(void **state) {
  (void)state;
  topo_clos_in in = {.rails = 8, .hosts_per_su = 40, .tiers = 1,
                     .leaf = QM8700_TOP};
  ts_topo *t = build_rail(40, in);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, -1), 8);
  assert_int_equal(ts_topo_link_count(t), 320);
  check_ports(t, TS_TIER_LEAF, 40);
  check_nics(t);
  ts_topo_free(t);
}

/* NIC cables use the NIC's port speed, switch cables width * link_bw. */
static void test_rail_bandwidths(void **state) {
  (void)state;
  uint16_t plane;
  ts_topo *t = new_plane(&plane);
  add_nics(t, plane, 10, 8, 20);
  t->port_bw[0] = 0.0; /* falls back to link_bw */
  topo_rail_spec spec = {.clos = superpod(0, 2), .link_bw = 20e9};
  ts_diag d;
  assert_int_equal(topo_gen_rail_optimized(t, plane, &spec, &d), 0);
  assert_int_equal(topo_finalize(t, &d), 0);
  assert_true(ts_topo_link(t, 0)->bandwidth == 20e9);
  assert_true(ts_topo_link(t, 1)->bandwidth == 25e9);
  /* 10 nodes: 2 spines, 10 uplinks -> 5 cables = 100 GB/s bundles. */
  assert_true(ts_topo_link(t, 80)->bandwidth == 5 * 20e9);
  assert_int_equal(ts_topo_link(t, 80)->width, 5);
  ts_topo_free(t);
}

/* Generator errors carry the plane's position and name. */
static void test_rail_errors(void **state) {
  (void)state;
  uint16_t plane;
  ts_topo *t = new_plane(&plane);
  add_nics(t, plane, 120, 8, 20);
  topo_rail_spec spec = {.clos = superpod(0, 2), .link_bw = 25e9};
  ts_diag d;
  assert_int_equal(topo_gen_rail_optimized(t, plane, &spec, &d), TS_ESCHEMA);
  assert_string_equal(d.file, "gen.yaml");
  assert_int_equal(d.line, 7);
  assert_int_equal(d.col, 3);
  assert_non_null(strstr(d.msg, "plane 'compute': 48 leaves need a third"));
  ts_topo_free(t);
  /* A NIC labelled with an SU the plane does not have. */
  t = new_plane(&plane);
  add_nics(t, plane, 20, 8, 20);
  t->nodes[5].su = 3;
  assert_int_equal(topo_gen_rail_optimized(t, plane, &spec, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "labelled SU 3"));
  ts_topo_free(t);
  /* A plane with no NICs. */
  t = new_plane(&plane);
  assert_int_equal(topo_gen_rail_optimized(t, plane, &spec, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "no NICs"));
  ts_topo_free(t);
}

/* Missing su/rail labels are derived from host order and NIC order. */
static void test_rail_derives_labels(void **state) {
  (void)state;
  uint16_t plane;
  ts_topo *t = new_plane(&plane);
  add_nics(t, plane, 40, 8, 20);
  for (uint32_t i = 0; i < t->node_count; i++)
    t->nodes[i].su = t->nodes[i].rail = TS_NONE;
  topo_rail_spec spec = {.clos = superpod(0, 2), .link_bw = 25e9};
  ts_diag d;
  assert_int_equal(topo_gen_rail_optimized(t, plane, &spec, &d), 0);
  assert_int_equal(topo_finalize(t, &d), 0);
  assert_int_equal(ts_topo_node(t, 8 * 25 + 3)->su, 1);
  assert_int_equal(ts_topo_node(t, 8 * 25 + 3)->rail, 3);
  check_nics(t);
  ts_topo_free(t);
}

/* ---- fat_tree ---- */

static ts_topo *build_fat_tree(uint32_t k, uint32_t nics) {
  uint16_t plane;
  ts_topo *t = new_plane(&plane);
  add_nics(t, plane, nics, 1, nics);
  topo_fat_tree_spec s = {.k = k, .link_bw = 50e9};
  ts_diag d;
  int rc = topo_gen_fat_tree(t, plane, &s, &d);
  if (!rc) rc = topo_finalize(t, &d);
  if (rc) print_error("%s\n", d.msg);
  assert_int_equal(rc, 0);
  return t;
}

/* k=4: 16 hosts; 4 pods x (2 edge + 2 agg) + 4 cores = 20 = 5k^2/4
 * switches; links 16 host + 4 x 2 x 2 edge-agg + 4 x 2 x 2 agg-core = 48.
 * Full tree: every switch uses exactly k = 4 ports. */
static void test_fat_tree_k4(void **state) {
  (void)state;
  ts_topo *t = build_fat_tree(4, 16);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_LEAF), 8);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_SPINE), 8);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_CORE), 4);
  assert_int_equal(ts_topo_link_count(t), 48);
  check_ports(t, TS_TIER_LEAF, 4);
  check_ports(t, TS_TIER_SPINE, 4);
  check_ports(t, TS_TIER_CORE, 4);
  /* agg 1 of pod 3 reaches cores 2 and 3; NIC 5 sits on edge 0 of pod 1. */
  uint32_t agg, core, edge;
  assert_int_equal(ts_topo_find_node(t, "compute/agg-p3-1", &agg), 0);
  assert_int_equal(ts_topo_find_node(t, "compute/core-3", &core), 0);
  assert_int_equal(ts_topo_find_node(t, "compute/edge-p1-0", &edge), 0);
  uint32_t last = ts_topo_adj(t, agg)[ts_topo_degree(t, agg) - 1];
  assert_int_equal(ts_topo_dir_head(t, last), core);
  assert_int_equal(ts_topo_dir_head(t, ts_topo_adj(t, 5)[0]), edge);
  assert_int_equal(ts_topo_node(t, agg)->group, 3);
  ts_topo_free(t);
}

/* k=8: 128 hosts, 8 pods x (4 + 4) + 16 cores = 80 switches; links 128 +
 * 8 x 16 + 8 x 16 = 384. */
static void test_fat_tree_k8(void **state) {
  (void)state;
  ts_topo *t = build_fat_tree(8, 128);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, -1), 80);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, TS_TIER_CORE), 16);
  assert_int_equal(ts_topo_link_count(t), 384);
  assert_int_equal(check_radix(t), 8);
  check_ports(t, TS_TIER_CORE, 8);
  ts_topo_free(t);
  /* A partly filled tree keeps all 80 switches: 100 + 256 links. */
  t = build_fat_tree(8, 100);
  assert_int_equal(count_kind(t, TS_NODE_SWITCH, -1), 80);
  assert_int_equal(ts_topo_link_count(t), 356);
  ts_topo_free(t);
}

/* Odd k and too many NICs are refused. */
static void test_fat_tree_errors(void **state) {
  (void)state;
  uint16_t plane;
  ts_topo *t = new_plane(&plane);
  add_nics(t, plane, 17, 1, 17);
  topo_fat_tree_spec s = {.k = 4, .link_bw = 50e9};
  ts_diag d;
  assert_int_equal(topo_gen_fat_tree(t, plane, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "17 NICs exceed the 16 host ports"));
  s.k = 5;
  assert_int_equal(topo_gen_fat_tree(t, plane, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "even"));
  ts_topo_free(t);
}

/* ---- nvlink_domain ---- */

static ts_topo *gpus_topo(uint32_t gpus, uint16_t *plane) {
  ts_topo *t = new_plane(plane);
  for (uint32_t g = 0; g < gpus; g++) {
    ts_node n = topo_node_proto(TS_NODE_GPU);
    n.host = (int32_t)(g / 4);
    n.rack = (int32_t)(g / 72) + 5; /* racks need not start at 0 */
    n.local = (int16_t)(g % 4);
    topo_add_node(t, &n, "tray%u/gpu%u", g / 4, g % 4);
  }
  return t;
}

/* GB200 NVL72: 72 GPUs x 18 NVSwitch chips, one NVLink from every GPU to
 * every chip: 1296 links, 72 ports used per chip, 18 per GPU. 144 GPUs
 * make two domains of their own chips. */
static void test_nvlink_domain(void **state) {
  (void)state;
  uint16_t plane;
  ts_topo *t = gpus_topo(144, &plane);
  topo_nvl_spec s = {.gpus_per_domain = 72, .switches = 18,
                     .links_per_switch = 1, .switch_radix = 72,
                     .link_bw = 50e9};
  ts_diag d;
  assert_int_equal(topo_gen_nvlink_domain(t, plane, &s, &d), 0);
  assert_int_equal(topo_finalize(t, &d), 0);
  assert_int_equal(count_kind(t, TS_NODE_NVSWITCH, -1), 36);
  assert_int_equal(ts_topo_link_count(t), 2 * 72 * 18);
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *n = ts_topo_node(t, i);
    if (n->kind == TS_NODE_NVSWITCH)
      assert_int_equal(topo_ports_used(t, i), 72);
    if (n->kind == TS_NODE_GPU) assert_int_equal(ts_topo_degree(t, i), 18);
  }
  uint32_t sw;
  assert_int_equal(ts_topo_find_node(t, "compute/nvsw-d1-17", &sw), 0);
  /* Chips carry the rack of the GPUs they join and the domain as group. */
  assert_int_equal(ts_topo_node(t, sw)->rack, 6);
  assert_int_equal(ts_topo_node(t, sw)->group, 1);
  /* GPU 72 (first of domain 1) links to domain 1's chips only. */
  uint32_t head = ts_topo_dir_head(t, ts_topo_adj(t, 72)[0]);
  assert_int_equal(ts_topo_node(t, head)->group, 1);
  ts_topo_free(t);
}

static void test_nvlink_errors(void **state) {
  (void)state;
  uint16_t plane;
  ts_topo *t = gpus_topo(100, &plane);
  topo_nvl_spec s = {.gpus_per_domain = 72, .switches = 18,
                     .links_per_switch = 1, .switch_radix = 72};
  ts_diag d;
  assert_int_equal(topo_gen_nvlink_domain(t, plane, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "28 left over"));
  s.gpus_per_domain = 50;
  s.links_per_switch = 2;
  assert_int_equal(topo_gen_nvlink_domain(t, plane, &s, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "need 100 ports"));
  ts_topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_superpod_10),
      cmocka_unit_test(test_superpod_20),
      cmocka_unit_test(test_superpod_40),
      cmocka_unit_test(test_superpod_80),
      cmocka_unit_test(test_superpod_100),
      cmocka_unit_test(test_superpod_120),
      cmocka_unit_test(test_superpod_140),
      cmocka_unit_test(test_pods_131k),
      cmocka_unit_test(test_pods_small_size),
      cmocka_unit_test(test_pods_errors),
      cmocka_unit_test(test_oversubscribed_4to1),
      cmocka_unit_test(test_forced_spines),
      cmocka_unit_test(test_three_tier_variants),
      cmocka_unit_test(test_size_errors),
      cmocka_unit_test(test_rail_one_su),
      cmocka_unit_test(test_rail_seven_su),
      cmocka_unit_test(test_rail_pods),
      cmocka_unit_test(test_rail_one_tier),
      cmocka_unit_test(test_rail_bandwidths),
      cmocka_unit_test(test_rail_errors),
      cmocka_unit_test(test_rail_derives_labels),
      cmocka_unit_test(test_fat_tree_k4),
      cmocka_unit_test(test_fat_tree_k8),
      cmocka_unit_test(test_fat_tree_errors),
      cmocka_unit_test(test_nvlink_domain),
      cmocka_unit_test(test_nvlink_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
