/* topo_fixtures.h - small topologies built with the graph builder, shared by
 * test_check.c and test_report.c (header-only: tests/CMakeLists.txt builds
 * each test_*.c with testutil.c alone).
 *
 * fx_clos: `hosts` DGX-like nodes, each with 8 GPUs (or `gpus`),
 * optional 6 NVSwitch chips (2 NVLinks per GPU per chip: NV12), one backend
 * NIC per rail (GPU i -PCIe- NIC i), one leaf per rail and `spines` spines,
 * each leaf cabled to each spine with `cables` cables bundled in one link.
 * Labels: rack = host / 4, su = 0 for hosts and leaves.
 *
 * fx_pcie: one dual-socket host of 8 PCIe GPUs in one of several shapes. */
#ifndef TOPSIM_TOPO_FIXTURES_H
#define TOPSIM_TOPO_FIXTURES_H

#include <stdio.h>

#include "testutil.h"
#include "topo/topo_graph.h"

typedef struct fx_clos_cfg {
  uint32_t hosts, rails, spines, cables;
  uint32_t leaf_radix;
  uint32_t gpus;        /* GPUs per host; 0 means 8 */
  double nic_bw;        /* bytes/s per NIC port and per cable */
  int nvswitch;         /* add 6 NVSwitch chips per host */
  int miswire_host;     /* -1, or host whose NIC miswire_rail goes ... */
  int miswire_rail;
  int miswire_to;       /* ... to this rail's leaf */
} fx_clos_cfg;

static inline ts_topo *fx_finalize(ts_topo *t) {
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(topo_finalize(t, &d), 0);
  return t;
}

static inline uint16_t fx_plane(ts_topo *t, const char *name,
                                ts_plane_kind kind, const char *gen) {
  ts_plane p = {0};
  p.name = topo_strdup(t, name);
  p.kind = (uint8_t)kind;
  p.link_preset = topo_strdup(t, kind == TS_PLANE_BACKEND ? "hdr" : "");
  p.generator = topo_strdup(t, gen);
  return topo_add_plane(t, &p, (topo_mark){3, 5});
}

static inline uint32_t fx_node(ts_topo *t, ts_node_kind kind, int32_t host,
                               uint16_t plane, const char *name) {
  ts_node n = topo_node_proto(kind);
  n.host = host;
  n.plane = plane;
  if (host >= 0) {
    n.rack = host / 4;
    n.su = 0;
  }
  return topo_add_node(t, &n, "%s", name);
}

static inline void fx_host(ts_topo *t, const fx_clos_cfg *c, uint32_t h,
                           uint16_t plane, const uint32_t *leaf) {
  char name[64];
  uint32_t nvsw[6];
  for (uint32_t s = 0; c->nvswitch && s < 6; s++) {
    snprintf(name, sizeof name, "dgx%u/nvsw%u", h, s);
    nvsw[s] = fx_node(t, TS_NODE_NVSWITCH, (int32_t)h, TS_NO_PLANE, name);
  }
  for (uint32_t g = 0; g < (c->gpus ? c->gpus : 8); g++) {
    snprintf(name, sizeof name, "dgx%u/gpu%u", h, g);
    uint32_t gpu = fx_node(t, TS_NODE_GPU, (int32_t)h, TS_NO_PLANE, name);
    t->nodes[gpu].local = (int16_t)g;
    t->nodes[gpu].numa = (int16_t)(g / 4);
    for (uint32_t s = 0; c->nvswitch && s < 6; s++)
      topo_add_link(t, gpu, nvsw[s], TS_LINK_NVLINK, 2, 50e9, 0, TS_NO_PLANE);
    if (g >= c->rails) continue;
    snprintf(name, sizeof name, "dgx%u/nic%u", h, g);
    uint32_t nic = fx_node(t, TS_NODE_NIC, (int32_t)h, plane, name);
    t->nodes[nic].rail = (int16_t)g;
    t->port_bw[nic] = c->nic_bw;
    topo_add_link(t, gpu, nic, TS_LINK_PCIE, 16, 25e9, 0, TS_NO_PLANE);
    uint32_t r = (int)h == c->miswire_host && (int)g == c->miswire_rail
                     ? (uint32_t)c->miswire_to : g;
    topo_add_link(t, nic, leaf[r], TS_LINK_NET, 1, c->nic_bw, 0, plane);
  }
}

static inline ts_topo *fx_clos(const fx_clos_cfg *c) {
  ts_topo *t = topo_new("fabric.yaml");
  assert_non_null(t);
  ts_gpu_model m = {"A100-SXM4-80GB", 312e12, 0, 80ull << 30, 2.0e12, 108};
  topo_add_model(t, &m);
  uint16_t plane = fx_plane(t, "compute", TS_PLANE_BACKEND, "rail_optimized");
  uint32_t leaf[8], spine[16];
  char name[64];
  for (uint32_t r = 0; r < c->rails; r++) {
    snprintf(name, sizeof name, "leaf-r%u", r);
    leaf[r] = fx_node(t, TS_NODE_SWITCH, TS_NONE, plane, name);
    t->nodes[leaf[r]].tier = TS_TIER_LEAF;
    t->nodes[leaf[r]].rail = (int16_t)r;
    t->nodes[leaf[r]].su = 0;
    t->nodes[leaf[r]].radix = c->leaf_radix;
  }
  for (uint32_t s = 0; s < c->spines; s++) {
    snprintf(name, sizeof name, "spine%u", s);
    spine[s] = fx_node(t, TS_NODE_SWITCH, TS_NONE, plane, name);
    t->nodes[spine[s]].tier = TS_TIER_SPINE;
    t->nodes[spine[s]].radix = 40;
    for (uint32_t r = 0; r < c->rails; r++)
      topo_add_link(t, leaf[r], spine[s], TS_LINK_NET, (uint16_t)c->cables,
                    c->cables * c->nic_bw, 0, plane);
  }
  for (uint32_t h = 0; h < c->hosts; h++) fx_host(t, c, h, plane, leaf);
  return fx_finalize(t);
}

/* fx_pcie shapes (one host, two sockets cpu0 numa 0 / cpu1 numa 1 joined
 * by a CPU link, 8 GPUs):
 *   FX_A100_PCIE  one PCIe switch per socket holding 4 GPUs, NVLink bridges
 *                 (0,1) (2,3) (4,5) (6,7) of width 3;
 *   FX_TWO_SW     two PCIe switches per socket directly under the CPU, 2 GPUs
 *                 each;
 *   FX_CASCADE    like FX_TWO_SW but both switches of a socket hang under a
 *                 common PCIe switch;
 *   FX_TWO_ROOTS  like FX_TWO_SW but each switch under its own root node
 *                 (two CPU nodes per socket sharing its NUMA label). */
enum { FX_A100_PCIE, FX_TWO_SW, FX_CASCADE, FX_TWO_ROOTS };

static inline uint32_t fx_pcie_node(ts_topo *t, ts_node_kind k, int numa,
                                    const char *fmt, uint32_t i) {
  char name[64];
  snprintf(name, sizeof name, fmt, i);
  uint32_t id = fx_node(t, k, 0, TS_NO_PLANE, name);
  t->nodes[id].numa = (int16_t)numa;
  return id;
}

static inline ts_topo *fx_pcie(int shape) {
  ts_topo *t = topo_new("pcie.yaml");
  assert_non_null(t);
  ts_gpu_model m = {"A100-PCIE-40GB", 312e12, 0, 40ull << 30, 1.6e12, 108};
  topo_add_model(t, &m);
  uint32_t cpu[4], sw[4], gpu[8];
  int roots = shape == FX_TWO_ROOTS ? 4 : 2;
  for (int c = 0; c < roots; c++)
    cpu[c] = fx_pcie_node(t, TS_NODE_CPU, c * 2 / roots, "h0/cpu%u", (uint32_t)c);
  for (int c = 1; c < roots; c++)
    topo_add_link(t, cpu[c - 1], cpu[c], TS_LINK_CPU, 1, 40e9, 0, TS_NO_PLANE);
  int nsw = shape == FX_A100_PCIE ? 2 : 4;
  for (int s = 0; s < nsw; s++) {
    int sock = s * 2 / nsw;
    sw[s] = fx_pcie_node(t, TS_NODE_PCIE_SW, sock, "h0/pcisw%u", (uint32_t)s);
    uint32_t up = roots == 4 ? cpu[s] : cpu[sock];
    if (shape == FX_CASCADE && s % 2 == 0) {
      uint32_t top = fx_pcie_node(t, TS_NODE_PCIE_SW, sock, "h0/pcitop%u",
                                  (uint32_t)sock);
      topo_add_link(t, top, up, TS_LINK_PCIE, 16, 25e9, 0, TS_NO_PLANE);
      up = top;
    } else if (shape == FX_CASCADE) {
      up = sw[s - 1] + 1; /* the pcitop node added right after sw[s-1] */
    }
    topo_add_link(t, sw[s], up, TS_LINK_PCIE, 16, 25e9, 0, TS_NO_PLANE);
  }
  for (uint32_t g = 0; g < 8; g++) {
    gpu[g] = fx_pcie_node(t, TS_NODE_GPU, (int)g / 4, "h0/gpu%u", g);
    t->nodes[gpu[g]].local = (int16_t)g;
    topo_add_link(t, gpu[g], sw[g * nsw / 8], TS_LINK_PCIE, 16, 25e9, 0,
                  TS_NO_PLANE);
    if (shape == FX_A100_PCIE && g % 2 == 1)
      topo_add_link(t, gpu[g - 1], gpu[g], TS_LINK_NVLINK, 3, 100e9, 0,
                    TS_NO_PLANE);
  }
  return fx_finalize(t);
}

#endif
