/* test_check.c - validation, statistics and GPU pair classes on small
 * topologies built with the graph builder (tests/topo_fixtures.h). */
#include <string.h>

#include "topo_fixtures.h"
#include "topsim/ts_topo_check.h"

#define GB 1e9

static const fx_clos_cfg superpod_su = {
    .hosts = 20, .rails = 8, .spines = 4, .cables = 5, .leaf_radix = 40,
    .nic_bw = 25e9, .nvswitch = 1, .miswire_host = -1};

static int validate(const ts_topo *t, ts_problems *p) {
  memset(p, 0, sizeof *p);
  int n = ts_topo_validate(t, p);
  for (uint32_t i = 0; i < p->count; i++) print_message("  %s\n", p->items[i].msg);
  return n;
}

/* DGX A100 SuperPOD, one SU: 20 nodes x 8 HDR NICs at 25 GB/s, 8 rail
 * leaves with 20 ports down and 20 up (5 cables to each of 4 spines).
 * Closed form: leaf down = 20 x 25 = 500 GB/s = up, so oversub 1.0;
 * NIC bw = 160 x 25 = 4000 GB/s; the NIC->leaf cut and the leaf->spine cut
 * are both 4000 GB/s, so bisection = 4000 / 2 = 2000 GB/s. Spines have no
 * uplinks: a top-tier crossbar, oversub 0. */
static void test_superpod_su_stats(void **state) {
  (void)state;
  ts_topo *t = fx_clos(&superpod_su);
  ts_problems p;
  assert_int_equal(validate(t, &p), 0);
  ts_problems_free(&p);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  assert_int_equal(s.gpus, 160);
  assert_int_equal(s.hosts, 20);
  assert_int_equal(s.racks, 5);
  assert_int_equal(s.sus, 1);
  assert_int_equal(s.nodes_by_kind[TS_NODE_SWITCH], 12);
  assert_int_equal(s.nodes_by_kind[TS_NODE_NVSWITCH], 120);
  assert_int_equal(s.links_by_kind[TS_LINK_NET], 160 + 8 * 4);
  const ts_plane_stats *ps = &s.planes[0];
  assert_int_equal(ps->nics, 160);
  assert_int_equal(ps->switches, 12);
  assert_int_equal(ps->tiers, 2);
  assert_int_equal(ps->tier[1].switches, 8);
  assert_int_equal(ps->tier[1].ports_total, 320);
  assert_int_equal(ps->tier[1].ports_down, 160);
  assert_int_equal(ps->tier[1].ports_up, 160);
  assert_int_equal(ps->tier[1].ports_free, 0);
  assert_int_equal(ps->tier[2].ports_down, 160);
  assert_int_equal(ps->tier[2].ports_free, 0);
  assert_true(ps->tier[1].oversub == 1.0);
  assert_true(ps->tier[2].oversub == 0.0);
  assert_true(ps->nic_bw == 4000 * GB);
  assert_true(ps->bisection_bw == 2000 * GB);
  assert_true(s.bisection_bw == 2000 * GB);
  assert_int_equal(s.scale_up_domain, 8);
  /* From dgx0/gpu0: NVSwitch 1, local GPUs 2, rail-0 GPUs of the other
   * 19 hosts 4 (nic, leaf, nic, gpu), the other 133 GPUs 6 (via a spine). */
  assert_int_equal(s.hop_hist[0], 1);
  assert_int_equal(s.hop_hist[2], 7);
  assert_int_equal(s.hop_hist[4], 19);
  assert_int_equal(s.hop_hist[6], 133);
  assert_int_equal(s.max_hops, 6);
  ts_topo_stats_free(&s);
  ts_topo_free(t);
}

/* 32 hosts, 2 rails, leaves 32 down / 8 up (4 cables to each of 2 spines),
 * 50 GB/s ports. Leaf: down 32 x 50 = 1600, up 8 x 50 = 400: oversub 4.0.
 * NIC cut 64 x 50 = 3200, leaf cut 2 x 400 = 800: bisection = 800 / 2 =
 * 400 GB/s = NICs x B / 8. */
static void test_oversub_4_to_1(void **state) {
  (void)state;
  fx_clos_cfg c = {.hosts = 32, .rails = 2, .spines = 2, .cables = 4,
                   .leaf_radix = 40, .nic_bw = 50e9, .gpus = 2,
                   .miswire_host = -1};
  ts_topo *t = fx_clos(&c);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  assert_true(s.planes[0].tier[1].oversub == 4.0);
  assert_true(s.planes[0].bisection_bw == 64 * 50 * GB / 8);
  assert_true(s.bisection_bw == 400 * GB);
  assert_int_equal(s.planes[0].tier[1].ports_free, 0);
  assert_int_equal(s.scale_up_domain, 1); /* no NVLink at all */
  ts_topo_stats_free(&s);
  ts_topo_free(t);
}

/* 24 hosts on a 40-port leaf that also keeps 20 uplinks: 44 ports. */
static void test_radix_overflow(void **state) {
  (void)state;
  fx_clos_cfg c = {.hosts = 24, .rails = 2, .spines = 4, .cables = 5,
                   .leaf_radix = 40, .nic_bw = 25e9, .gpus = 2,
                   .miswire_host = -1};
  ts_topo *t = fx_clos(&c);
  ts_problems p;
  assert_int_equal(validate(t, &p), 2);
  assert_string_equal(p.items[0].msg,
                      "switch 'leaf-r0' uses 44 ports but its radix is 40");
  assert_string_equal(p.items[0].file, "fabric.yaml");
  ts_problems_free(&p);
  ts_topo_free(t);
}

static void test_miswired_rail(void **state) {
  (void)state;
  fx_clos_cfg c = superpod_su;
  c.miswire_host = 3;
  c.miswire_rail = 2;
  c.miswire_to = 5;
  ts_topo *t = fx_clos(&c);
  ts_problems p;
  /* The stray cable also pushes leaf-r5 to 41 of its 40 ports. */
  assert_int_equal(validate(t, &p), 2);
  assert_string_equal(p.items[0].msg,
                      "switch 'leaf-r5' uses 41 ports but its radix is 40");
  assert_string_equal(p.items[1].msg,
                      "NIC 'dgx3/nic2' (rail 2) is cabled to leaf 'leaf-r5' "
                      "of rail 5");
  ts_problems_free(&p);
  ts_topo_free(t);
}

/* Storage plane: two hosts, each NIC on its own switch, no inter-switch
 * cable. A rail-only backend (leaf per rail, no spine) stays valid: the
 * host bridges its two NICs. */
static ts_topo *two_planes(int cable_second_nic) {
  ts_topo *t = topo_new("planes.yaml");
  uint16_t be = fx_plane(t, "backend", TS_PLANE_BACKEND, "rail_optimized");
  uint16_t st = fx_plane(t, "storage", TS_PLANE_STORAGE, "explicit");
  uint32_t leaf[2], ssw[2];
  char name[32];
  for (uint32_t i = 0; i < 2; i++) {
    snprintf(name, sizeof name, "leaf-r%u", i);
    leaf[i] = fx_node(t, TS_NODE_SWITCH, TS_NONE, be, name);
    t->nodes[leaf[i]].tier = TS_TIER_LEAF;
    t->nodes[leaf[i]].rail = (int16_t)i;
    snprintf(name, sizeof name, "stor-sw%u", i);
    ssw[i] = fx_node(t, TS_NODE_SWITCH, TS_NONE, st, name);
  }
  for (uint32_t h = 0; h < 2; h++) {
    snprintf(name, sizeof name, "h%u/snic", h);
    uint32_t snic = fx_node(t, TS_NODE_NIC, (int32_t)h, st, name);
    topo_add_link(t, snic, ssw[h], TS_LINK_NET, 1, 12.5e9, 0, st);
    for (uint32_t r = 0; r < 2; r++) {
      snprintf(name, sizeof name, "h%u/nic%u", h, r);
      uint32_t nic = fx_node(t, TS_NODE_NIC, (int32_t)h, be, name);
      t->nodes[nic].rail = (int16_t)r;
      if (r == 0 || cable_second_nic)
        topo_add_link(t, nic, leaf[r], TS_LINK_NET, 1, 25e9, 0, be);
    }
  }
  return fx_finalize(t);
}

static void test_disconnected_plane(void **state) {
  (void)state;
  ts_topo *t = two_planes(1);
  ts_problems p;
  assert_int_equal(validate(t, &p), 1);
  assert_string_equal(p.items[0].msg,
                      "plane 'storage' falls into 2 disconnected parts (e.g. "
                      "'stor-sw0' cannot reach 'stor-sw1')");
  ts_problems_free(&p);
  ts_topo_free(t);
}

static void test_nic_without_cable(void **state) {
  (void)state;
  ts_topo *t = two_planes(0);
  ts_problems p;
  /* leaf-r1 lost all its cables, so the backend splits too; then the
   * storage split and the two bare NICs. */
  assert_int_equal(validate(t, &p), 4);
  assert_string_equal(p.items[0].msg,
                      "plane 'backend' falls into 2 disconnected parts (e.g. "
                      "'leaf-r0' cannot reach 'leaf-r1')");
  assert_string_equal(p.items[2].msg,
                      "NIC 'h0/nic1' on plane 'backend' has no network link");
  ts_problems_free(&p);
  ts_topo_free(t);
}

/* Two DGX-like hosts with NVSwitches but no NIC cabling: two islands. */
static void test_gpu_islands(void **state) {
  (void)state;
  fx_clos_cfg c = {.hosts = 2, .rails = 0, .nvswitch = 1, .nic_bw = 25e9,
                   .miswire_host = -1};
  ts_topo *t = fx_clos(&c);
  ts_problems p;
  assert_int_equal(validate(t, &p), 1);
  assert_string_equal(p.items[0].msg,
                      "GPU 'dgx0/gpu0' cannot reach GPU 'dgx1/gpu0'");
  ts_problems_free(&p);
  ts_topo_free(t);
}

static void pair_row(const ts_topo *t, uint32_t g, char *row, size_t len) {
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus);
  row[0] = 0;
  for (uint32_t j = 0; j < n; j++) {
    char c[16];
    ts_topo_gpu_pair_class(t, gpus[g], gpus[j], c, sizeof c);
    if (j) strncat(row, " ", len - strlen(row) - 1);
    strncat(row, c, len - strlen(row) - 1);
  }
}

/* 8x A100 PCIe, NVLink bridge pairs of width 3 (domain brief section 2). */
static void test_matrix_a100_pcie(void **state) {
  (void)state;
  ts_topo *t = fx_pcie(FX_A100_PCIE);
  char row[128];
  pair_row(t, 0, row, sizeof row);
  assert_string_equal(row, "X NV3 PIX PIX SYS SYS SYS SYS");
  pair_row(t, 2, row, sizeof row);
  assert_string_equal(row, "PIX PIX X NV3 SYS SYS SYS SYS");
  pair_row(t, 4, row, sizeof row);
  assert_string_equal(row, "SYS SYS SYS SYS X NV3 PIX PIX");
  ts_topo_free(t);
}

static void test_matrix_switch_shapes(void **state) {
  (void)state;
  char row[128];
  ts_topo *t = fx_pcie(FX_TWO_SW);
  pair_row(t, 0, row, sizeof row);
  assert_string_equal(row, "X PIX PHB PHB SYS SYS SYS SYS");
  ts_topo_free(t);
  t = fx_pcie(FX_CASCADE);
  pair_row(t, 0, row, sizeof row);
  assert_string_equal(row, "X PIX PXB PXB SYS SYS SYS SYS");
  ts_topo_free(t);
  t = fx_pcie(FX_TWO_ROOTS);
  pair_row(t, 0, row, sizeof row);
  assert_string_equal(row, "X PIX NODE NODE SYS SYS SYS SYS");
  ts_topo_free(t);
}

/* DGX A100: 6 NVSwitch chips x 2 NVLinks per GPU = NV12 everywhere. */
static void test_matrix_nv12(void **state) {
  (void)state;
  fx_clos_cfg c = {.hosts = 1, .rails = 0, .nvswitch = 1,
                   .miswire_host = -1};
  ts_topo *t = fx_clos(&c);
  char row[128];
  pair_row(t, 3, row, sizeof row);
  assert_string_equal(row, "NV12 NV12 NV12 X NV12 NV12 NV12 NV12");
  ts_topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_superpod_su_stats),
      cmocka_unit_test(test_oversub_4_to_1),
      cmocka_unit_test(test_radix_overflow),
      cmocka_unit_test(test_miswired_rail),
      cmocka_unit_test(test_disconnected_plane),
      cmocka_unit_test(test_nic_without_cable),
      cmocka_unit_test(test_gpu_islands),
      cmocka_unit_test(test_matrix_a100_pcie),
      cmocka_unit_test(test_matrix_switch_shapes),
      cmocka_unit_test(test_matrix_nv12),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
