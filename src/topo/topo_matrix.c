/* topo_matrix.c - nvidia-smi `topo -m` path class between two GPUs
 * (ts_topo_gpu_pair_class).
 *
 * Rules, first match wins:
 *   X     the same GPU;
 *   NV#   joined by NVLink: # = direct NVLinks between them plus, for each
 *         NVSwitch both link to, min(links a->sw, links b->sw). DGX A100:
 *         6 switches x 2 links = NV12; an A100 PCIe bridge pair: NV3;
 *   PIX   the PCIe chains (GPU -> PCIe switches -> CPU root complex) first
 *         meet at a switch both GPUs hang directly under;
 *   PXB   they first meet at a PCIe switch, through more than one switch;
 *   PHB   they first meet at the same CPU (root complex, host bridge);
 *   NODE  different CPU nodes with the same NUMA label;
 *   SYS   different NUMA domains (socket interconnect), or no chain.
 * A GPU's chain is its shortest PCIe path to a CPU, found by BFS through
 * PCIe switches only; in a PCIe tree that path is the walk up to the root.
 * Cost: O(deg(a) * deg(b)) for NVLink, O(s^2) per chain where s is the
 * host's PCIe switch count (bounded by TOPO_PCIE_MAX nodes explored; a
 * larger tree is reported as SYS). No state, no allocation. */
#include <stdio.h>

#include "topo/topo_uf.h"
#include "topsim/ts_topo_check.h"

#define TOPO_PCIE_MAX 256

/* NVLinks (summed widths) between a and node x. */
static uint32_t nvlinks_between(const ts_topo *t, uint32_t a, uint32_t x) {
  uint32_t w = 0;
  for (uint32_t i = t->adj_off[a]; i < t->adj_off[a + 1]; i++) {
    uint32_t dir = t->adj[i];
    const ts_link *l = &t->links[dir >> 1];
    if (l->kind == TS_LINK_NVLINK && topo_dir_head(t, dir) == x) w += l->width;
  }
  return w;
}

/* True if an earlier direction of a (before index i) reaches the same node. */
static bool seen_before(const ts_topo *t, uint32_t a, uint32_t i, uint32_t x) {
  for (uint32_t j = t->adj_off[a]; j < i; j++)
    if (topo_dir_head(t, t->adj[j]) == x) return true;
  return false;
}

static uint32_t nvlink_width(const ts_topo *t, uint32_t a, uint32_t b) {
  uint32_t w = nvlinks_between(t, a, b);
  for (uint32_t i = t->adj_off[a]; i < t->adj_off[a + 1]; i++) {
    uint32_t dir = t->adj[i], sw = topo_dir_head(t, dir);
    if (t->links[dir >> 1].kind != TS_LINK_NVLINK ||
        t->nodes[sw].kind != TS_NODE_NVSWITCH || seen_before(t, a, i, sw))
      continue;
    uint32_t wa = nvlinks_between(t, a, sw), wb = nvlinks_between(t, b, sw);
    w += wa < wb ? wa : wb;
  }
  return w;
}

/* PCIe chain of a GPU: chain[0] = gpu, chain[n-1] = its CPU (if found).
 * BFS through PCIe switches; returns the chain length (1 if no CPU). */
static uint32_t pcie_chain(const ts_topo *t, uint32_t gpu, uint32_t *chain) {
  uint32_t node[TOPO_PCIE_MAX], from[TOPO_PCIE_MAX], n = 1, head = 0;
  node[0] = gpu;
  from[0] = UINT32_MAX;
  while (head < n) {
    uint32_t q = head++, u = node[q];
    if (t->nodes[u].kind == TS_NODE_CPU) {
      uint32_t len = 0;
      for (uint32_t k = q; k != UINT32_MAX; k = from[k]) len++;
      for (uint32_t k = q, i = len; k != UINT32_MAX; k = from[k]) chain[--i] = node[k];
      return len;
    }
    if (q > 0 && t->nodes[u].kind != TS_NODE_PCIE_SW) continue;
    for (uint32_t i = t->adj_off[u]; i < t->adj_off[u + 1]; i++) {
      uint32_t dir = t->adj[i], h = topo_dir_head(t, dir);
      if (t->links[dir >> 1].kind != TS_LINK_PCIE || n == TOPO_PCIE_MAX) continue;
      uint8_t k = t->nodes[h].kind;
      if (k != TS_NODE_PCIE_SW && k != TS_NODE_CPU) continue;
      bool dup = false;
      for (uint32_t j = 0; j < n && !dup; j++) dup = node[j] == h;
      if (dup) continue;
      node[n] = h;
      from[n++] = q;
    }
  }
  chain[0] = gpu;
  return 1;
}

static const char *pcie_class(const ts_topo *t, uint32_t a, uint32_t b) {
  uint32_t ca[TOPO_PCIE_MAX], cb[TOPO_PCIE_MAX];
  uint32_t na = pcie_chain(t, a, ca), nb = pcie_chain(t, b, cb);
  for (uint32_t i = 1; i < na; i++)
    for (uint32_t j = 1; j < nb; j++) {
      if (ca[i] != cb[j]) continue;
      if (t->nodes[ca[i]].kind == TS_NODE_CPU) return "PHB";
      return i == 1 && j == 1 ? "PIX" : "PXB";
    }
  if (na < 2 || nb < 2) return "SYS";
  const ts_node *x = &t->nodes[ca[na - 1]], *y = &t->nodes[cb[nb - 1]];
  if (x->kind != TS_NODE_CPU || y->kind != TS_NODE_CPU) return "SYS";
  return x->numa >= 0 && x->numa == y->numa ? "NODE" : "SYS";
}

void ts_topo_gpu_pair_class(const ts_topo *t, uint32_t gpu_a, uint32_t gpu_b,
                            char *buf, size_t len) {
  if (!len) return;
  if (gpu_a >= t->node_count || gpu_b >= t->node_count) {
    snprintf(buf, len, "SYS");
    return;
  }
  if (gpu_a == gpu_b) {
    snprintf(buf, len, "X");
    return;
  }
  uint32_t nv = nvlink_width(t, gpu_a, gpu_b);
  if (nv) snprintf(buf, len, "NV%u", nv);
  else snprintf(buf, len, "%s", pcie_class(t, gpu_a, gpu_b));
}
