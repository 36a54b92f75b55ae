/* bench_paths.h - GPU->GPU paths for the net benchmarks by a simple
 * up-down walk on labels, until the route module offers this:
 * GPU -> PCIe switch -> NIC of the GPU's rail -> leaf -> (spine ->
 * (core -> spine) ->) leaf -> NIC -> PCIe switch -> GPU, uplinks chosen
 * by a hash. Header-only: each benchmark is one source file. */
#ifndef TOPSIM_BENCH_PATHS_H
#define TOPSIM_BENCH_PATHS_H

#include <stdint.h>
#include <stdlib.h>

#include "topsim/ts_topo.h"

/* Direction from node a to node b, or UINT32_MAX. */
static uint32_t dir_to(const ts_topo *t, uint32_t a, uint32_t b) {
  const uint32_t *adj = ts_topo_adj(t, a);
  for (uint32_t i = 0; i < ts_topo_degree(t, a); i++)
    if (ts_topo_dir_head(t, adj[i]) == b) return adj[i];
  return UINT32_MAX;
}

/* Neighbour of n with the given kind (and rail >= 0: that rail). */
static uint32_t neighbour(const ts_topo *t, uint32_t n, int kind, int rail) {
  const uint32_t *adj = ts_topo_adj(t, n);
  for (uint32_t i = 0; i < ts_topo_degree(t, n); i++) {
    uint32_t h = ts_topo_dir_head(t, adj[i]);
    const ts_node *x = ts_topo_node(t, h);
    if (x->kind == kind && (rail < 0 || x->rail == rail)) return h;
  }
  return UINT32_MAX;
}

/* The k-th (mod count) up-neighbour of switch s at tier `tier`. */
static uint32_t up_pick(const ts_topo *t, uint32_t s, int tier, uint64_t k) {
  const uint32_t *adj = ts_topo_adj(t, s);
  uint32_t n = 0, deg = ts_topo_degree(t, s);
  for (uint32_t i = 0; i < deg; i++)
    n += ts_topo_node(t, ts_topo_dir_head(t, adj[i]))->tier == tier;
  if (!n) return UINT32_MAX;
  k %= n;
  for (uint32_t i = 0; i < deg; i++) {
    uint32_t h = ts_topo_dir_head(t, adj[i]);
    if (ts_topo_node(t, h)->tier == tier && k-- == 0) return h;
  }
  return UINT32_MAX;
}

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

/* Switch-level up-down walk from leaf a to leaf b; appends nodes. */
static int walk_switches(const ts_topo *t, uint32_t a, uint32_t b,
                         uint64_t h, uint32_t *nodes, int n) {
  if (a == b) return n;
  uint32_t s = up_pick(t, a, TS_TIER_SPINE, h);
  nodes[n++] = s;
  if (dir_to(t, s, b) != UINT32_MAX) {
    nodes[n++] = b;
    return n;
  }
  /* Through a core: the first core (in hash order) that reaches one of
   * b's spines. A stamp array marks the core's neighbours so each try
   * costs O(degree), not O(degree^2). */
  static uint32_t *mark, stamp;
  if (!mark) mark = calloc(ts_topo_node_count(t), sizeof *mark);
  uint32_t ncore = 0;
  for (uint32_t i = 0; i < ts_topo_degree(t, s); i++)
    ncore += ts_topo_node(t, ts_topo_dir_head(t, ts_topo_adj(t, s)[i]))->tier == TS_TIER_CORE;
  for (uint32_t k = 0; k < ncore; k++) {
    uint32_t c = up_pick(t, s, TS_TIER_CORE, (h >> 16) + k);
    const uint32_t *cadj = ts_topo_adj(t, c);
    stamp++;
    for (uint32_t i = 0; i < ts_topo_degree(t, c); i++)
      mark[ts_topo_dir_head(t, cadj[i])] = stamp;
    const uint32_t *badj = ts_topo_adj(t, b);
    for (uint32_t i = 0; i < ts_topo_degree(t, b); i++) {
      uint32_t s2 = ts_topo_dir_head(t, badj[i]);
      if (mark[s2] != stamp || ts_topo_node(t, s2)->tier != TS_TIER_SPINE)
        continue;
      nodes[n++] = c;
      nodes[n++] = s2;
      nodes[n++] = b;
      return n;
    }
  }
  return -1;
}

/* GPU src -> GPU dst path as directions; returns hops or -1. */
static int build_path(const ts_topo *t, uint32_t src, uint32_t dst,
                      uint64_t h, uint32_t *path) {
  uint32_t nodes[16];
  int n = 0;
  const ts_node *gs = ts_topo_node(t, src), *gd = ts_topo_node(t, dst);
  uint32_t ps = neighbour(t, src, TS_NODE_PCIE_SW, -1);
  uint32_t pd = neighbour(t, dst, TS_NODE_PCIE_SW, -1);
  uint32_t ns = neighbour(t, ps, TS_NODE_NIC, gs->local);
  uint32_t nd = neighbour(t, pd, TS_NODE_NIC, gd->local);
  uint32_t ls = neighbour(t, ns, TS_NODE_SWITCH, -1);
  uint32_t ld = neighbour(t, nd, TS_NODE_SWITCH, -1);
  nodes[n++] = src;
  nodes[n++] = ps;
  nodes[n++] = ns;
  nodes[n++] = ls;
  n = walk_switches(t, ls, ld, h, nodes, n);
  if (n < 0) return -1;
  nodes[n++] = nd;
  nodes[n++] = pd;
  nodes[n++] = dst;
  for (int i = 0; i + 1 < n; i++) {
    path[i] = dir_to(t, nodes[i], nodes[i + 1]);
    if (path[i] == UINT32_MAX) return -1;
  }
  return n - 1;
}

#endif
