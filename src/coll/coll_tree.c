/* coll_tree.c - NCCL's double binary tree all-reduce.
 *
 * Tree 0 is the "lowest set bit" binary tree NCCL builds (trees.cc): rank 0
 * is the root; a rank r != 0 with lowest set bit b hangs under
 * (r ^ b) | (b << 1), or under r ^ b when that is out of range. In such a
 * tree on a power of two every odd rank is a leaf. Tree 1 is tree 0 mirrored
 * (r -> p-1-r) when p is even, shifted by one rank when p is odd, so a rank
 * that is a leaf in one tree is mostly interior in the other and the two
 * trees together use each rank's links evenly. Each tree carries half of S.
 *
 * Per tree: reduce up (each rank sends its partial sum to its parent once
 * its children's partial sums have arrived; reduce_bytes = the fan-in read
 * plus the write) then broadcast down from the root. Chunk j of a step
 * depends on chunk j of the steps feeding it, so chunks pipeline through the
 * levels.
 *
 * Closed form (our definition, checked by the tests): with depth D (edges
 * root to deepest leaf; D = log2 p for a power of two), k = 1 and uniform
 * dedicated links the plan takes 2 D (alpha + S/(2B)): the trees' up and down
 * phases on a shared directed link never overlap at k = 1. With k chunks and
 * no shared links, (2D + k - 1)(alpha + S/(2kB)). NCCL's tuner instead
 * charges algbw = busBw/2 with busBw x 0.92 for trees (coll_cost.c), because
 * it assumes one NIC per GPU carries a rank's traffic to parent and children.
 *
 * Cost: O(p log p) to build the trees, 2 (2 (p - 1)) k transfers. */
#include <stdlib.h>

#include "coll/coll.h"

static int btree_parent(int n, int r) {
  if (r == 0) return -1;
  int b = r & -r;
  int up = (r ^ b) | (b << 1);
  return up < n ? up : r ^ b;
}

/* Parent of r in tree t (0 or 1). */
static int dtree_parent(int n, int t, int r) {
  if (t == 0) return btree_parent(n, r);
  if (n % 2 == 0) {
    int u = btree_parent(n, n - 1 - r);
    return u < 0 ? -1 : n - 1 - u;
  }
  int u = btree_parent(n, (r - 1 + n) % n);
  return u < 0 ? -1 : (u + 1) % n;
}

typedef struct tree {
  int n;
  int *parent, *depth, *order; /* order: ranks by increasing depth */
  int *child_first, *child;    /* CSR children lists */
} tree;

static void tree_free(tree *t) {
  free(t->parent), free(t->depth), free(t->order);
  free(t->child_first), free(t->child);
}

static int tree_build(tree *t, int n, int which) {
  t->n = n;
  t->parent = malloc(sizeof(int) * (size_t)n);
  t->depth = malloc(sizeof(int) * (size_t)n);
  t->order = malloc(sizeof(int) * (size_t)n);
  t->child_first = calloc((size_t)n + 1, sizeof(int));
  t->child = malloc(sizeof(int) * (size_t)n);
  if (!t->parent || !t->depth || !t->order || !t->child_first || !t->child)
    return TS_ENOMEM;
  int maxd = 0;
  for (int r = 0; r < n; r++) t->parent[r] = dtree_parent(n, which, r);
  for (int r = 0; r < n; r++) {
    int d = 0;
    for (int u = t->parent[r]; u >= 0; u = t->parent[u]) d++;
    t->depth[r] = d;
    if (d > maxd) maxd = d;
  }
  int m = 0; /* bucket by depth, ranks ascending within a level */
  for (int d = 0; d <= maxd; d++)
    for (int r = 0; r < n; r++)
      if (t->depth[r] == d) t->order[m++] = r;
  for (int r = 0; r < n; r++)
    if (t->parent[r] >= 0) t->child_first[t->parent[r] + 1]++;
  for (int r = 0; r < n; r++) t->child_first[r + 1] += t->child_first[r];
  int *fill = calloc((size_t)n, sizeof(int));
  if (!fill) return TS_ENOMEM;
  for (int r = 0; r < n; r++) {
    int u = t->parent[r];
    if (u >= 0) t->child[t->child_first[u] + fill[u]++] = r;
  }
  free(fill);
  return 0;
}

/* Lowers one tree carrying b bytes; up/down are per-rank scratch arrays. */
static void tree_allreduce(coll_ctx *c, const tree *t, uint64_t b, uint32_t ch,
                           uint32_t *up, uint32_t *down, uint32_t *deps) {
  int n = t->n;
  for (int i = n - 1; i >= 0; i--) { /* deepest first */
    int v = t->order[i], u = t->parent[v];
    int nc = t->child_first[v + 1] - t->child_first[v];
    for (int q = 0; q < nc; q++) deps[q] = up[t->child[t->child_first[v] + q]];
    if (u < 0) continue;
    uint64_t red = nc ? coll_reduce_cost(b, (uint32_t)nc) : 0;
    up[v] = coll_step(c, v, u, b, red, ch, deps, (uint32_t)nc);
  }
  for (int i = 0; i < n; i++) {
    int v = t->order[i], u = t->parent[v];
    int nc = t->child_first[v + 1] - t->child_first[v];
    uint32_t nd = 1;
    uint64_t red = 0;
    if (u < 0) { /* the root reduces its children's sums, then sends down */
      for (int q = 0; q < nc; q++)
        deps[q] = up[t->child[t->child_first[v] + q]];
      nd = (uint32_t)nc;
      red = coll_reduce_cost(b, (uint32_t)nc);
    } else {
      deps[0] = down[v];
    }
    for (int q = 0; q < nc; q++) {
      int w = t->child[t->child_first[v] + q];
      down[w] = coll_step(c, v, w, b, q == 0 ? red : 0, ch, deps, nd);
    }
  }
}

int coll_tree_lower(coll_ctx *c) {
  int n = c->comm->n;
  if (n < 2) return 0;
  coll_set_chunks(c, c->bytes / 2 + (c->bytes & 1));
  uint32_t *buf = malloc(sizeof *buf * 3 * (size_t)n);
  if (!buf) return TS_ENOMEM;
  int rc = 0;
  for (int w = 0; w < 2 && !rc; w++) {
    tree t = {0};
    rc = tree_build(&t, n, w);
    if (!rc)
      tree_allreduce(c, &t, coll_part(c->bytes, 2, (uint64_t)w), (uint32_t)w,
                     buf, buf + n, buf + 2 * n);
    tree_free(&t);
  }
  free(buf);
  return rc ? rc : c->plan->err;
}
