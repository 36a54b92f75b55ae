/* test_xml.c - NCCL topology XML import (src/topo/topo_xml.c) on every real
 * file in tests/data/nccl-topo (copies of ../shared/reference/nccl-topo,
 * each with its SOURCE line). Every expectation below is derived by reading
 * the XML, as a comment next to it says, not by running topsim.
 *
 * Rules used (docs/topology-format.md section 17): pci class 0x03 = GPU,
 * 0x02 = NIC (one port per <net>), 0x0604 = PCIe switch; nvlink tclass
 * 0x068000 = NVSwitch keyed by target bus id; a GPU naming itself joins
 * nothing; link_width 0 = x16, unknown link_speed = gen 3 (as NCCL). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "topo/topo_graph.h"
#include "topo/topo_preset.h"
#include "topsim/ts_topo_check.h"

#define DIR "tests/data/nccl-topo/"

/* NIC port speed (bytes/s) as the loader stored it. */
static double port_bw(const ts_topo *t, uint32_t id) { return t->port_bw[id]; }

static ts_topo *load_xml(const char *file) {
  char rel[256];
  snprintf(rel, sizeof rel, DIR "%s", file);
  return tu_load(rel);
}

/* Links of a kind, and their summed width. */
static uint32_t links_of(const ts_topo *t, ts_link_kind k, uint32_t *width) {
  uint32_t n = 0, w = 0;
  for (uint32_t i = 0; i < ts_topo_link_count(t); i++)
    if (ts_topo_link(t, i)->kind == k) n++, w += ts_topo_link(t, i)->width;
  if (width) *width = w;
  return n;
}

static uint32_t node_id(const ts_topo *t, const char *name) {
  uint32_t id = UINT32_MAX;
  assert_int_equal(ts_topo_find_node(t, name, &id), 0);
  return id;
}

static void assert_class(const ts_topo *t, const char *a, const char *b,
                         const char *want) {
  char buf[16];
  ts_topo_gpu_pair_class(t, node_id(t, a), node_id(t, b), buf, sizeof buf);
  if (strcmp(buf, want)) fail_msg("%s - %s: %s, want %s", a, b, buf, want);
}

/* Bandwidth of the one link between two named nodes. */
static double link_bw(const ts_topo *t, const char *a, const char *b) {
  uint32_t x = node_id(t, a), y = node_id(t, b);
  for (uint32_t i = 0; i < ts_topo_link_count(t); i++) {
    const ts_link *l = ts_topo_link(t, i);
    if ((l->a == x && l->b == y) || (l->a == y && l->b == x)) return l->bandwidth;
  }
  fail_msg("no link %s - %s", a, b);
  return 0;
}

static void assert_close(double got, double want) {
  if (fabs(got - want) > 1e-6 * want) fail_msg("%.6g, want %.6g", got, want);
}

static void assert_valid(const ts_topo *t) {
  ts_problems p = {0};
  assert_int_equal(ts_topo_validate(t, &p), 0);
  ts_problems_free(&p);
}

/* p4d.24xlarge: 2 <cpu>, each with 2 switches (class 0x060400) holding
 * 2 GPUs (0x030200, device 0x20b0 = A100-SXM4-40GB) and 1 EFA NIC
 * (0x020000, no <net>). No <nvlink> at all (NCCL detects NVSwitch at run
 * time): 8 GPUs, 4 NICs, 4 PCIe switches, 0 NVSwitch, 0 NVLink.
 * Classes: GPU0/GPU1 share switch 0 -> PIX; GPU0/GPU2 meet at cpu0 -> PHB;
 * GPU0/GPU4 on other sockets -> SYS; NIC0 sits with GPU0 -> PIX, NIC1 on
 * cpu0's other switch -> PHB, NIC2 on cpu1 -> SYS. */
static void test_aws_p4d(void **state) {
  (void)state;
  ts_topo *t = load_xml("aws-p4d-24xl-topo.xml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 8);
  assert_int_equal(tu_count(t, TS_NODE_NIC, -1), 4);
  assert_int_equal(tu_count(t, TS_NODE_PCIE_SW, -1), 4);
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1), 0);
  assert_int_equal(tu_count(t, TS_NODE_CPU, -1), 2);
  assert_int_equal(links_of(t, TS_LINK_NVLINK, NULL), 0);
  /* 8 GPUs + 4 NICs + 4 switches each have one PCIe uplink. */
  assert_int_equal(links_of(t, TS_LINK_PCIE, NULL), 16);
  assert_string_equal(ts_topo_gpu_model(t, ts_topo_node(t, node_id(t, "node0/gpu0"))->model)->name,
                      "A100-SXM4-40GB");
  assert_class(t, "node0/gpu0", "node0/gpu1", "PIX");
  assert_class(t, "node0/gpu0", "node0/gpu2", "PHB");
  assert_class(t, "node0/gpu0", "node0/gpu4", "SYS");
  assert_class(t, "node0/gpu0", "node0/nic0", "PIX");
  assert_class(t, "node0/gpu0", "node0/nic1", "PHB");
  assert_class(t, "node0/gpu0", "node0/nic2", "SYS");
  /* link_speed "8 GT/s" x16 = gen 3: 0.9846 GB/s/lane x 16 x 0.85. */
  assert_close(link_bw(t, "node0/gpu0", "node0/pcie0"), topo_pcie_lane_rate(3) * 16 * 0.85);
  /* cpu numaid 0 and 1; affinity is kept verbatim. */
  assert_int_equal(ts_topo_node(t, node_id(t, "node0/gpu4"))->numa, 1);
  assert_string_equal(ts_topo_cpu_affinity(t, node_id(t, "node0/cpu1")),
                      "ffffff00,0000ffff,ff000000");
  assert_valid(t);
  ts_topo_free(t);
}

/* Azure NC A100 v4: 4 <cpu> (numaid 0-3, AMD), each with one GPU directly
 * on the CPU (device 0x20b5 = A100-PCIe-80GB); each GPU's only <nvlink>
 * targets its own bus id, so no NVLink; one eth0 <nic> on cpu0 at
 * 100000 Mb/s = 12.5 GB/s. GPUs on different NUMA nodes: all SYS; GPU0
 * and eth0 both hang off cpu0: PHB; GPU1-eth0: SYS. 4 CPUs, every pair
 * linked (NCCL joins all CPU pairs): 6 socket links at NCCL's AMD 16 GB/s. */
static void test_azure_ncv4(void **state) {
  (void)state;
  ts_topo *t = load_xml("azure-ncv4-topo.xml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 4);
  assert_int_equal(tu_count(t, TS_NODE_NIC, -1), 1);
  assert_int_equal(tu_count(t, TS_NODE_PCIE_SW, -1), 0);
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1), 0);
  assert_int_equal(links_of(t, TS_LINK_NVLINK, NULL), 0);
  assert_int_equal(links_of(t, TS_LINK_CPU, NULL), 6);
  assert_close(link_bw(t, "node0/cpu0", "node0/cpu3"), 16e9);
  assert_class(t, "node0/gpu0", "node0/gpu1", "SYS");
  assert_class(t, "node0/gpu2", "node0/gpu3", "SYS");
  assert_class(t, "node0/gpu0", "node0/eth0", "PHB");
  assert_class(t, "node0/gpu1", "node0/eth0", "SYS");
  uint32_t nic = node_id(t, "node0/eth0");
  assert_close(port_bw(t, nic), 12.5e9);
  assert_int_equal(ts_topo_node(t, node_id(t, "node0/gpu3"))->numa, 3);
  ts_topo_free(t);
}

/* Azure NDv2: bare skeleton (no <gpu>, no <nic>): cpu0 has 4 GPUs
 * (0x030200) and one InfiniBand NIC (0x020700) straight on the CPU, cpu1
 * 4 GPUs. 8 GPUs, 1 NIC, no switch, no NVLink; no sm and no device id, so
 * the model is "unknown" with zero figures. GPU0/GPU3 meet at cpu0: PHB;
 * GPU0/GPU4: SYS; NIC/GPU0 PHB, NIC/GPU7 SYS. 16 GT/s x16 = gen 4. */
static void test_azure_ndv2(void **state) {
  (void)state;
  ts_topo *t = load_xml("azure-ndv2-topo.xml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 8);
  assert_int_equal(tu_count(t, TS_NODE_NIC, -1), 1);
  assert_int_equal(tu_count(t, TS_NODE_PCIE_SW, -1), 0);
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1), 0);
  assert_int_equal(links_of(t, TS_LINK_NVLINK, NULL), 0);
  assert_class(t, "node0/gpu0", "node0/gpu3", "PHB");
  assert_class(t, "node0/gpu0", "node0/gpu4", "SYS");
  assert_class(t, "node0/gpu0", "node0/nic0", "PHB");
  assert_class(t, "node0/gpu7", "node0/nic0", "SYS");
  assert_close(link_bw(t, "node0/gpu5", "node0/cpu1"), topo_pcie_lane_rate(4) * 16 * 0.85);
  const ts_gpu_model *m = ts_topo_gpu_model(t, 0);
  assert_true(m->bf16_flops == 0);
  ts_topo_free(t);
}

/* Azure NDv4: 4 <cpu> (numaid 0-3), each with one switch holding 2 GPUs
 * and 2 IB NICs (0x020700), interleaved GPU, NIC, GPU, NIC. 8 GPUs,
 * 8 NICs, 4 switches, no NVLink in the file. Document order: GPU0, GPU1
 * and NIC0, NIC1 under cpu0's switch -> GPU0/GPU1 PIX, GPU0/NIC1 PIX;
 * GPU0/GPU2 (cpu1) SYS; GPU2/NIC2 PIX; GPU0/NIC2 SYS. */
static void test_azure_ndv4(void **state) {
  (void)state;
  ts_topo *t = load_xml("azure-ndv4-topo.xml");
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 8);
  assert_int_equal(tu_count(t, TS_NODE_NIC, -1), 8);
  assert_int_equal(tu_count(t, TS_NODE_PCIE_SW, -1), 4);
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1), 0);
  assert_int_equal(tu_count(t, TS_NODE_CPU, -1), 4);
  assert_int_equal(links_of(t, TS_LINK_NVLINK, NULL), 0);
  assert_class(t, "node0/gpu0", "node0/gpu1", "PIX");
  assert_class(t, "node0/gpu0", "node0/nic1", "PIX");
  assert_class(t, "node0/gpu0", "node0/gpu2", "SYS");
  assert_class(t, "node0/gpu2", "node0/nic2", "PIX");
  assert_class(t, "node0/gpu0", "node0/nic2", "SYS");
  assert_class(t, "node0/nic0", "node0/nic1", "PIX");
  ts_topo_free(t);
}

/* IBM Cloud 8x H100 (a real NCCL_TOPO_DUMP_FILE): 2 <cpu>, 8 switches (4
 * per CPU), each with one NIC (mlx5_N, 200000 Mb/s) and one GPU (0x2330,
 * sm 90 = H100-SXM5-80GB). Each GPU lists 4 NVSwitch targets (tclass
 * 0x068000) f3:4, f4:5, f5:5, f6:4 links: 4 NVSwitches, 32 bundles of
 * 8 x 18 = 144 NVLinks; every GPU pair NV(4+5+5+4) = NV18. NICs numbered by
 * dev: NIC mlx5_0 sits with GPU7 (switch e7) -> PIX, mlx5_7 with GPU0 ->
 * PIX; mlx5_4 (with GPU3, cpu0) and GPU0 meet at cpu0 -> PHB; mlx5_0/GPU0
 * SYS. Switch uplinks say 2.5 GT/s x1 (a VM's virtual bridge): gen 1 x1. */
static void test_ibm_h100(void **state) {
  (void)state;
  ts_topo *t = load_xml("ibm-cloud-h100-8gpu-topo.xml");
  uint32_t width = 0;
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 8);
  assert_int_equal(tu_count(t, TS_NODE_NIC, -1), 8);
  assert_int_equal(tu_count(t, TS_NODE_PCIE_SW, -1), 8);
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1), 4);
  assert_int_equal(links_of(t, TS_LINK_NVLINK, &width), 32);
  assert_int_equal(width, 144);
  for (int a = 0; a < 8; a++)
    for (int b = 0; b < 8; b++) {
      char x[32], y[32];
      snprintf(x, sizeof x, "node0/gpu%d", a);
      snprintf(y, sizeof y, "node0/gpu%d", b);
      assert_class(t, x, y, a == b ? "X" : "NV18");
    }
  assert_class(t, "node0/gpu7", "node0/mlx5_0", "PIX");
  assert_class(t, "node0/gpu0", "node0/mlx5_7", "PIX");
  assert_class(t, "node0/gpu0", "node0/mlx5_4", "PHB");
  assert_class(t, "node0/gpu0", "node0/mlx5_0", "SYS");
  /* nvsw0 is the lowest target bus id, f3: 4 links x 20.6 GB/s (NCCL's
   * SM90 per-link figure); nvsw1 = f4: 5 links. */
  assert_close(link_bw(t, "node0/gpu0", "node0/nvsw0"), 4 * 20.6e9);
  assert_close(link_bw(t, "node0/gpu0", "node0/nvsw1"), 5 * 20.6e9);
  assert_close(link_bw(t, "node0/pcie0", "node0/cpu0"), topo_pcie_lane_rate(1) * 1 * 0.85);
  /* "32.0 GT/s PCIe", link_width 0 -> gen 5 x16. */
  assert_close(link_bw(t, "node0/gpu0", "node0/pcie0"), topo_pcie_lane_rate(5) * 16 * 0.85);
  assert_close(port_bw(t, node_id(t, "node0/mlx5_3")), 25e9);
  /* Sapphire Rapids (family 6, model 143 >= 0x8F): NCCL's 22 GB/s. */
  assert_close(link_bw(t, "node0/cpu0", "node0/cpu1"), 22e9);
  assert_int_equal(ts_topo_node(t, node_id(t, "node0/mlx5_0"))->numa, 1);
  assert_valid(t);
  ts_topo_free(t);
}

/* The graph file (NCCL_GRAPH_FILE) is not a topology: a clear error on the
 * <graphs> line (2, after the SOURCE comment), exit 65 class. */
static void test_graph_file_rejected(void **state) {
  (void)state;
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_topo_load_file(tu_path(DIR "azure-ncv4-graph.xml"), &t, &d), TS_ESCHEMA);
  assert_null(t);
  assert_int_equal(d.line, 2);
  assert_non_null(strstr(d.msg, "NCCL graph file"));
}

/* --hosts 4 --fabric ib_ndr on the IBM node: 32 GPUs; 8 rails x 1 SU with
 * one tier (4 hosts <= 64 ports) = 8 leaves, 32 NIC cables; a NIC port is
 * the XML's 200 Gb/s x ib_ndr's 0.96 = 24 GB/s. 100 hosts: 32 per SU ->
 * 4 SUs x 8 rails = 32 leaves, 32 hosts down + 32 up per leaf; spines:
 * the fewest s >= 32 x 32 / 64 = 16 dividing 32 -> 16. */
static void test_cluster_from_xml(void **state) {
  (void)state;
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  const char *f = tu_path(DIR "ibm-cloud-h100-8gpu-topo.xml");
  assert_int_equal(ts_topo_load_nccl_xml(f, 4, "ib_ndr", &t, &d), 0);
  assert_int_equal(ts_topo_host_count(t), 4);
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 32);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 8);
  assert_int_equal(links_of(t, TS_LINK_NET, NULL), 32);
  assert_close(port_bw(t, node_id(t, "node3/mlx5_3")), 24e9);
  assert_int_equal(ts_topo_node(t, node_id(t, "node3/mlx5_3"))->rail, 3);
  assert_valid(t);
  ts_topo_free(t);
  assert_int_equal(ts_topo_load_nccl_xml(f, 100, "ib_ndr", &t, &d), 0);
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 800);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 32);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_SPINE), 16);
  assert_valid(t);
  ts_topo_free(t);
  assert_int_equal(ts_topo_load_nccl_xml(f, 2, "ib_nope", &t, &d), TS_EUSAGE);
  assert_non_null(strstr(d.msg, "ib_ndr"));
}

/* A YAML template that references the XML: same graph as the import plus
 * the file's own model name and plane; two hosts -> 16 GPUs, 4 NVSwitches
 * each, NICs on the explicit plane. */
static void test_yaml_template(void **state) {
  (void)state;
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "topsim: 1\nname: two-ibm\n"
           "gpu_models:\n  H100-custom: {bf16: 900TFLOP/s, hbm: 80GB, hbm_bandwidth: 3TB/s}\n"
           "planes:\n  - {name: be, kind: backend, technology: roce_v2,\n"
           "     generator: {type: rail_optimized, tiers: 1, leaf: {radix: 64}}}\n"
           "templates:\n  ibm: {nccl_topo: \"%s\", gpu_model: H100-custom, plane: be}\n"
           "nodes:\n  - {name: h, template: ibm, count: 2}\n",
           tu_path(DIR "ibm-cloud-h100-8gpu-topo.xml"));
  ts_topo *t = NULL;
  ts_diag d;
  assert_int_equal(tu_load_text(yaml, &t, &d), 0);
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), 16);
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1), 8);
  assert_int_equal(tu_count(t, TS_NODE_SWITCH, TS_TIER_LEAF), 8);
  assert_string_equal(ts_topo_gpu_model(t, ts_topo_node(t, node_id(t, "h1/gpu0"))->model)->name,
                      "H100-custom");
  assert_class(t, "h1/gpu0", "h1/gpu5", "NV18");
  /* roce_v2 efficiency 0.92 x the XML's 200 Gb/s. */
  assert_close(port_bw(t, node_id(t, "h0/mlx5_0")), 25e9 * 0.92);
  ts_topo_free(t);
  /* nccl_topo takes no hand-written devices. */
  snprintf(yaml, sizeof yaml,
           "topsim: 1\nname: x\ntemplates:\n  n: {nccl_topo: \"%s\", gpus: {count: 2}}\n"
           "nodes:\n  - {name: h, template: n, count: 1}\n",
           tu_path(DIR "azure-ndv2-topo.xml"));
  assert_int_equal(tu_load_text(yaml, &t, &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "unknown key 'gpus'"));
}

/* The YAML reader handed XML says so instead of a YAML complaint. */
static void test_yaml_given_xml(void **state) {
  (void)state;
  ts_topo *t = NULL;
  ts_diag d;
  assert_int_equal(tu_load_text("\n  <system version=\"1\"></system>\n", &t, &d), TS_ESYNTAX);
  assert_int_equal(d.line, 2);
  assert_int_equal(d.col, 3);
  assert_non_null(strstr(d.msg, "this is XML"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aws_p4d),          cmocka_unit_test(test_azure_ncv4),
      cmocka_unit_test(test_azure_ndv2),       cmocka_unit_test(test_azure_ndv4),
      cmocka_unit_test(test_ibm_h100),         cmocka_unit_test(test_graph_file_rejected),
      cmocka_unit_test(test_cluster_from_xml), cmocka_unit_test(test_yaml_template),
      cmocka_unit_test(test_yaml_given_xml),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
