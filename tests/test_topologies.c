/* test_topologies.c - every bundled topology loads, validates and has the
 * exact counts its source describes. Each case states the system and the
 * expected numbers (derived in the YAML file's header comment). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "topsim/ts_topo_check.h"

/* Loads, asserts zero validation problems, returns the topology. */
static ts_topo *load_valid(const char *rel) {
  ts_topo *t = tu_load(rel);
  ts_problems p = {0};
  int n = ts_topo_validate(t, &p);
  for (uint32_t i = 0; i < p.count; i++) print_error("%s: %s\n", rel, p.items[i].msg);
  ts_problems_free(&p);
  assert_int_equal(n, 0);
  return t;
}

static uint32_t links_of(const ts_topo *t, ts_link_kind kind) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < ts_topo_link_count(t); i++)
    n += ts_topo_link(t, i)->kind == kind;
  return n;
}

static void assert_class(const ts_topo *t, const char *a, const char *b,
                         const char *want) {
  uint32_t ia, ib;
  assert_int_equal(ts_topo_find_node(t, a, &ia), 0);
  assert_int_equal(ts_topo_find_node(t, b, &ib), 0);
  char buf[16];
  ts_topo_gpu_pair_class(t, ia, ib, buf, sizeof buf);
  assert_string_equal(buf, want);
}

/* Desktop: 1 CPU, 2 GPUs on root ports, 1 NIC: 3 PCIe links; GPUs meet at
 * the host bridge (PHB). */
static void desktop(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/desktop-2gpu-pcie.yaml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 2);
  assert_int_equal(tu_count(t, TS_NODE_CPU, -1), 1);
  assert_int_equal(ts_topo_link_count(t), 3);
  assert_class(t, "pc0/gpu0", "pc0/gpu1", "PHB");
  ts_topo_free(t);
}

/* Dual-socket server, no switches: 8 GPU + 1 NIC PCIe links + 1 UPI link,
 * and one root-complex P2P node per socket on a 26 GB/s PCIe link
 * (cpu_p2p_bandwidth); same socket PHB, across sockets SYS. */
static void server_pcie(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/server-8gpu-pcie.yaml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 8);
  assert_int_equal(links_of(t, TS_LINK_PCIE), 11);
  for (int i = 0; i < 2; i++) {
    uint32_t id;
    char name[32];
    snprintf(name, sizeof name, "srv0/cpu%d-p2p", i);
    assert_int_equal(ts_topo_find_node(t, name, &id), 0);
    assert_int_equal(ts_topo_node(t, id)->flags, TS_NODE_F_ROOT_COMPLEX);
    assert_int_equal(ts_topo_degree(t, id), 1);
    assert_true(ts_topo_link(t, ts_topo_adj(t, id)[0] >> 1)->bandwidth == 26e9);
  }
  assert_int_equal(links_of(t, TS_LINK_CPU), 1);
  assert_class(t, "srv0/gpu0", "srv0/gpu3", "PHB");
  assert_class(t, "srv0/gpu0", "srv0/gpu4", "SYS");
  ts_topo_free(t);
}

/* Cascaded switches (seed's first matrix): GPU0-1 PIX, GPU0-2 PXB, GPU0-4
 * SYS; 6 switches: 6 + 8 + 1 PCIe links. */
static void server_pcie_switch(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/server-8gpu-pcie-switch.yaml");
  assert_int_equal(tu_count(t, TS_NODE_PCIE_SW, -1), 6);
  assert_int_equal(links_of(t, TS_LINK_PCIE), 15);
  assert_class(t, "srv0/gpu0", "srv0/gpu1", "PIX");
  assert_class(t, "srv0/gpu0", "srv0/gpu2", "PXB");
  assert_class(t, "srv0/gpu0", "srv0/gpu3", "PXB");
  assert_class(t, "srv0/gpu0", "srv0/gpu4", "SYS");
  ts_topo_free(t);
}

/* 8x A100 PCIe with bridges: the seed's exact matrix. */
static void a100_bridge_matrix(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/a100-pcie-nvlink-bridge.yaml");
  static const char *rows[8][8] = {
      {"X", "NV3", "PIX", "PIX", "SYS", "SYS", "SYS", "SYS"},
      {"NV3", "X", "PIX", "PIX", "SYS", "SYS", "SYS", "SYS"},
      {"PIX", "PIX", "X", "NV3", "SYS", "SYS", "SYS", "SYS"},
      {"PIX", "PIX", "NV3", "X", "SYS", "SYS", "SYS", "SYS"},
      {"SYS", "SYS", "SYS", "SYS", "X", "NV3", "PIX", "PIX"},
      {"SYS", "SYS", "SYS", "SYS", "NV3", "X", "PIX", "PIX"},
      {"SYS", "SYS", "SYS", "SYS", "PIX", "PIX", "X", "NV3"},
      {"SYS", "SYS", "SYS", "SYS", "PIX", "PIX", "NV3", "X"}};
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      char a[32], b[32];
      snprintf(a, sizeof a, "srv0/gpu%d", i);
      snprintf(b, sizeof b, "srv0/gpu%d", j);
      assert_class(t, a, b, rows[i][j]);
    }
  assert_int_equal(links_of(t, TS_LINK_NVLINK), 4);
  /* 3 bridges x 100 GB/s per direction per pair x 0.8 achievable. */
  for (uint32_t i = 0; i < ts_topo_link_count(t); i++)
    if (ts_topo_link(t, i)->kind == TS_LINK_NVLINK)
      assert_true(fabs(ts_topo_link(t, i)->bandwidth - 240e9) < 1);
  ts_topo_free(t);
}

/* DGX A100: 8 GPUs, 6 NVSwitch, 4 PCIe switches, 2 CPUs, 12 NICs; 48 NVLink
 * bundles of 2 links; NV12 everywhere; scale-up domain 8. */
/* CPU sockets flagged AMD (cpu_link xgmi): NCCL's per-step network
 * overhead depends on it (ts_coll_params_net_overhead). */
static uint32_t amd_cpus(const ts_topo *t) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *x = ts_topo_node(t, i);
    n += x->kind == TS_NODE_CPU && (x->flags & TS_NODE_F_CPU_AMD);
  }
  return n;
}

static void dgx_a100(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/dgx-a100.yaml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 8);
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1), 6);
  assert_int_equal(tu_count(t, TS_NODE_PCIE_SW, -1), 4);
  assert_int_equal(tu_count(t, TS_NODE_NIC, -1), 12);
  assert_int_equal(links_of(t, TS_LINK_NVLINK), 48);
  assert_int_equal(ts_topo_link_count(t), 73);
  assert_class(t, "dgx0/gpu0", "dgx0/gpu7", "NV12");
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  assert_int_equal(s.scale_up_domain, 8);
  ts_topo_stats_free(&s);
  assert_int_equal(amd_cpus(t), 2); /* 2x AMD EPYC 7742, cpu_link xgmi */
  ts_topo_free(t);
}

/* DGX H100: 4 NVSwitch chips with 5/4/4/5 links per GPU: NV18. */
static void dgx_h100(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/dgx-h100.yaml");
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1), 4);
  assert_int_equal(links_of(t, TS_LINK_NVLINK), 32);
  assert_class(t, "dgx0/gpu0", "dgx0/gpu5", "NV18");
  assert_int_equal(amd_cpus(t), 0); /* Intel Xeon, cpu_link upi */
  ts_topo_free(t);
}

/* HGX B300: 2 NVSwitch chips x 9 NVLink5 links: NV18, 900 GB/s per GPU. */
static void hgx_b300(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/hgx-b300.yaml");
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1), 2);
  assert_int_equal(links_of(t, TS_LINK_NVLINK), 16);
  assert_int_equal(ts_topo_link_count(t), 44);
  assert_class(t, "hgx0/gpu1", "hgx0/gpu6", "NV18");
  ts_topo_free(t);
}

/* GB200 NVL72: 36 superchips, 72 GPUs, 18 NVSwitch chips each linked to
 * every GPU (1,296 NVLinks), one NVLink domain of 72; 2 rail leaves with 36
 * ports used. */
static void gb200_nvl72(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/gb200-nvl72.yaml");
  assert_int_equal(ts_topo_host_count(t), 36);
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 72);
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1), 18);
  assert_int_equal(links_of(t, TS_LINK_NVLINK), 1296);
  assert_int_equal(links_of(t, TS_LINK_C2C), 72);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 2);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  assert_int_equal(s.scale_up_domain, 72);
  ts_topo_stats_free(&s);
  ts_topo_free(t);
}

/* Backend stats of plane `name`. */
static const ts_plane_stats *plane_stats(const ts_topo *t, const ts_topo_stats *s,
                                         const char *name) {
  int p = ts_topo_plane_find(t, name);
  assert_true(p >= 0);
  return &s->planes[p];
}

/* One tier: 40 DGX A100, 8 leaves of 40 ports all used, 320 cables. */
static void cluster_1tier(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/cluster-1tier-dgx-a100.yaml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 320);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 8);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_SPINE), 0);
  assert_int_equal(links_of(t, TS_LINK_NET), 320);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  const ts_plane_stats *ps = plane_stats(t, &s, "compute");
  assert_int_equal(ps->tier[TS_TIER_LEAF].ports_free, 0);
  ts_topo_stats_free(&s);
  ts_topo_free(t);
}

/* 32-down/8-up: 1,024 GPUs, 32 leaves, 8 spines, 256 leaf-spine cables;
 * leaf oversubscription 4:1; bisection = NIC bandwidth / 8 =
 * 1024 x 24 GB/s / 8 = 3,072 GB/s (HDR 25 GB/s x 0.96 efficiency). */
static void cluster_4to1(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/cluster-2tier-4to1.yaml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 1024);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 32);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_SPINE), 8);
  assert_int_equal(links_of(t, TS_LINK_NET), 1024 + 256);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  const ts_plane_stats *ps = plane_stats(t, &s, "compute");
  assert_true(fabs(ps->tier[TS_TIER_LEAF].oversub - 4.0) < 1e-9);
  assert_true(fabs(s.bisection_bw - 3072e9) < 1e3);
  ts_topo_stats_free(&s);
  ts_topo_free(t);
}

/* SuperPOD 1 SU: compute 8 leaves + 4 spines, 32 leaf-spine bundles of 5
 * cables, 1:1, bisection 160 x 24 GB/s / 2 = 1,920 GB/s; storage 3
 * switches, frontend 1, oob 1; 24 hosts (20 DGX + 4 storage servers). */
static void superpod_1su(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/superpod-a100-1su.yaml");
  assert_int_equal(ts_topo_host_count(t), 24);
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 160);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  const ts_plane_stats *c = plane_stats(t, &s, "compute");
  assert_int_equal(c->tier[TS_TIER_LEAF].switches, 8);
  assert_int_equal(c->tier[TS_TIER_SPINE].switches, 4);
  assert_true(fabs(c->tier[TS_TIER_LEAF].oversub - 1.0) < 1e-9);
  assert_true(fabs(s.bisection_bw - 1920e9) < 1e3);
  assert_int_equal(plane_stats(t, &s, "storage")->switches, 3);
  assert_int_equal(plane_stats(t, &s, "storage")->nics, 48);
  assert_int_equal(plane_stats(t, &s, "frontend")->switches, 1);
  assert_int_equal(plane_stats(t, &s, "oob")->nics, 20);
  ts_topo_stats_free(&s);
  uint32_t width5 = 0;
  for (uint32_t i = 0; i < ts_topo_link_count(t); i++) {
    const ts_link *l = ts_topo_link(t, i);
    width5 += l->kind == TS_LINK_NET && l->width == 5;
  }
  assert_int_equal(width5, 32);
  ts_topo_free(t);
}

/* SuperPOD 7 SUs: 140 nodes, 1,120 GPUs, 56 leaves, 80 spines, 28 cores. */
static void superpod_7su(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/superpod-a100-7su.yaml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 1120);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 56);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_SPINE), 80);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_CORE), 28);
  ts_topo_free(t);
}

/* k=8 fat tree: 32 edge, 32 aggregation, 16 core switches; 128 host
 * cables + 128 edge-agg + 128 agg-core. */
static void fat_tree_k8(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/fat-tree-k8.yaml");
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 32);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_SPINE), 32);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_CORE), 16);
  assert_int_equal(links_of(t, TS_LINK_NET), 384);
  ts_topo_free(t);
}

/* Dual plane: per plane 16 leaves + 8 spines; 1,024 NICs over two planes. */
static void multi_plane(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/multi-plane-h100.yaml");
  assert_int_equal(tu_count(t, TS_NODE_NIC, -1), 1024);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  for (int p = 0; p < 2; p++) {
    assert_int_equal(s.planes[p].tier[TS_TIER_LEAF].switches, 16);
    assert_int_equal(s.planes[p].tier[TS_TIER_SPINE].switches, 8);
    assert_int_equal(s.planes[p].nics, 512);
  }
  ts_topo_stats_free(&s);
  ts_topo_free(t);
}

/* H100 SuperPOD 1 SU: 32 DGX H100 on 64-port NDR 32:32: 8 leaves, 4 spines
 * (fewest dividing 32 that take 256 uplinks), 8 cables per leaf-spine pair;
 * bisection 256 x 48 GB/s / 2 = 6,144 GB/s. */
static void superpod_h100(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/superpod-h100-1su.yaml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 256);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 8);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_SPINE), 4);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  assert_true(fabs(s.bisection_bw - 6144e9) < 1e3);
  ts_topo_stats_free(&s);
  ts_topo_free(t);
}

/* H800 cluster (DeepSeek-V3 example): 256 nodes x 8 H800 = 2,048 GPUs,
 * 8 x 400 Gb/s NICs per node, two tiers at 1:1: 64 leaves, 32 spines. */
static void h800_cluster(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/h800-cluster.yaml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 2048);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 64);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_SPINE), 32);
  ts_topo_free(t);
}

/* Generated 16,384-GPU fabric: 2,048 nodes, 8 rails, 64 nodes per SU ->
 * 32 SUs, 256 leaves; one pod (32 SUs <= 64 spine down ports): 8 rail
 * groups of 32 spines = 256; spine uplinks 256 x 64 / 128 ports = 128
 * cores. */
static void scale_16k(void **state) {
  (void)state;
  ts_topo *t = load_valid("topologies/scale-h100-16k.yaml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 16384);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 256);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_SPINE), 256);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_CORE), 128);
  ts_topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(desktop),       cmocka_unit_test(server_pcie),
      cmocka_unit_test(server_pcie_switch), cmocka_unit_test(a100_bridge_matrix),
      cmocka_unit_test(dgx_a100),      cmocka_unit_test(dgx_h100),
      cmocka_unit_test(hgx_b300),      cmocka_unit_test(gb200_nvl72),
      cmocka_unit_test(cluster_1tier), cmocka_unit_test(cluster_4to1),
      cmocka_unit_test(superpod_1su),  cmocka_unit_test(superpod_7su),
      cmocka_unit_test(fat_tree_k8),   cmocka_unit_test(multi_plane),
      cmocka_unit_test(superpod_h100), cmocka_unit_test(h800_cluster),
      cmocka_unit_test(scale_16k),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
