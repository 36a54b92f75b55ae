/* topo_uf.h - union-find over node ids and the link filters shared by the
 * topology checks and statistics.
 *
 * Invariant: parent[i] == i for a root; every other i points strictly closer
 * to its root. Union by size, find with path halving: near O(1) amortized
 * per call, O(V) memory, one allocation. */
#ifndef TOPSIM_TOPO_UF_H
#define TOPSIM_TOPO_UF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "topo/topo_graph.h"

typedef struct topo_uf {
  uint32_t *parent;
  uint32_t *size;
  uint32_t n;
} topo_uf;

/* Every element its own set. Returns 0 or TS_ENOMEM. */
static inline int topo_uf_init(topo_uf *u, uint32_t n) {
  u->n = n;
  u->parent = malloc(((size_t)n + 1) * sizeof *u->parent);
  u->size = malloc(((size_t)n + 1) * sizeof *u->size);
  if (!u->parent || !u->size) {
    free(u->parent);
    free(u->size);
    u->parent = u->size = NULL;
    return TS_ENOMEM;
  }
  for (uint32_t i = 0; i < n; i++) {
    u->parent[i] = i;
    u->size[i] = 1;
  }
  return 0;
}

static inline void topo_uf_free(topo_uf *u) {
  free(u->parent);
  free(u->size);
  u->parent = u->size = NULL;
}

static inline uint32_t topo_uf_find(topo_uf *u, uint32_t x) {
  while (u->parent[x] != x) {
    u->parent[x] = u->parent[u->parent[x]];
    x = u->parent[x];
  }
  return x;
}

static inline void topo_uf_union(topo_uf *u, uint32_t a, uint32_t b) {
  a = topo_uf_find(u, a);
  b = topo_uf_find(u, b);
  if (a == b) return;
  if (u->size[a] < u->size[b]) {
    uint32_t s = a;
    a = b;
    b = s;
  }
  u->parent[b] = a;
  u->size[a] += u->size[b];
}

/* Links that carry GPU-to-GPU training traffic: inside a node (no plane),
 * on a scale-up plane or on a backend plane. Frontend, storage and OOB
 * planes never do. */
static inline bool topo_link_is_compute(const ts_topo *t, const ts_link *l) {
  if (l->plane == TS_NO_PLANE) return true;
  if (l->plane >= t->plane_count) return false;
  uint8_t k = t->planes[l->plane].kind;
  return k == TS_PLANE_SCALE_UP || k == TS_PLANE_BACKEND;
}

static inline bool topo_is_switch(const ts_node *n) {
  return n->kind == TS_NODE_SWITCH || n->kind == TS_NODE_NVSWITCH;
}

#endif
