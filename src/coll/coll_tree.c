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

/* Nodes with two children on the path from rank 1 (a deepest leaf) to the
 * root of NCCL's binary tree over n ranks (btree_parent): the path is 1,
 * 2, 4, ..., 2^m (< n), 0. Node u = 2^j (j >= 1) has child u/2, child
 * u + u/2 when it is < n, and child u + b (b < u/2 a power of two) when
 * u + b < n <= u + 2b (btree_parent folds it back onto u); the root has
 * one child. Tree 1 (dtree_parent) mirrors or shifts tree 0, same shape.
 * O(log^2 n), no allocation: the chooser calls it per cost. */
int coll_btree_forks(int n) {
  int forks = 0;
  for (int u = 2; u < n; u *= 2) {
    int kids = 1 + (u + u / 2 < n);
    for (int b = 1; b < u / 2; b *= 2) kids += u + b < n && u + 2 * b >= n;
    forks += kids >= 2;
  }
  return forks;
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

/* ---- NCCL's tree (NCCL structure) --------------------------------------
 *
 * trees.cc / connect.cc: channel c carries part c of S over one tree.
 * Inside host h the ranks form a chain starting at local rank c mod L_h (the
 * chain head, whose NIC the channel leaves by, as the channel's ring does);
 * across hosts the heads form tree c mod 2 of the double binary tree over
 * the hosts (dtree_parent on host indices), a head hanging under its parent
 * host's head. A rank reduces its chain successor's and its child hosts'
 * partial sums into its own and sends the sum up; the root head sends the
 * total down the same edges (NCCL's runTreeSplit: reduce and broadcast run
 * at once, chunk by chunk).
 *
 * Each edge moves its channel's bytes in NCCL's tree chunks
 * (coll_ntree_chunk), in order: chunk j waits for chunk j-1 of the same edge
 * (one CTA copies its slices in order) and for chunk j of the edges that
 * feed it. The hop latency is paid once per edge, by its first chunk: NCCL
 * keeps NCCL_STEPS chunks in flight, so later chunks' latencies overlap
 * their predecessors' transfer. Critical path: the deepest chain tail of a
 * leaf host up to the root and back, D = 2 ((L-1) + depth(hosts)) hops.
 * Cost: O(n) per channel to build, 2 (n - 1) k transfers per channel. */

typedef struct ntree {
  const ts_coll_comm *m;
  const int *at, *base; /* rank of (host h, local i) = at[base[h] + i] */
  uint32_t ch;
} ntree;

static int ntree_rank(const ntree *t, int h, int pos) {
  int L = t->m->host_size[h];
  return t->at[t->base[h] + (int)(((uint32_t)pos + t->ch) % (uint32_t)L)];
}

/* One edge of k chunks: chunk j after chunk j of each of deps (first
 * indices; COLL_NONE skipped) and after chunk j-1 of the edge; red0 = the
 * reduction traffic of the whole edge (0 if none). */
static uint32_t ntree_edge(coll_ctx *c, int src, int dst, uint64_t b,
                           uint64_t red, uint32_t ch, const uint32_t *deps,
                           uint32_t nd, uint32_t k) {
  uint32_t buf[8], first = COLL_NONE, prev = COLL_NONE;
  for (uint32_t j = 0; j < k; j++) {
    uint32_t m = 0;
    for (uint32_t i = 0; i < nd && m < 7; i++)
      if (deps[i] != COLL_NONE) buf[m++] = deps[i] + j;
    if (prev != COLL_NONE) buf[m++] = prev;
    uint32_t x = coll_xfer(c, src, -1, dst, -1, coll_part(b, k, j),
                           coll_part(red, k, j), ch, buf, m);
    if (x == COLL_NONE) return COLL_NONE;
    if (j > 0) c->plan->x[x].alpha = 0;
    if (j == 0) first = x;
    prev = x;
  }
  return first;
}

/* Up-edge children of the rank at chain position i of host h: its chain
 * successor and, for the head, the child hosts' heads. */
static uint32_t ntree_kids(const ntree *t, const tree *ht, int h, int i,
                           int *kid) {
  uint32_t nk = 0;
  if (i + 1 < t->m->host_size[h]) kid[nk++] = ntree_rank(t, h, i + 1);
  if (i == 0)
    for (int q = ht->child_first[h]; q < ht->child_first[h + 1] && nk < 7; q++)
      kid[nk++] = ntree_rank(t, ht->child[q], 0);
  return nk;
}

static void ntree_channel(coll_ctx *c, const ntree *t, const tree *ht,
                          uint64_t b, uint32_t k, uint32_t *up, uint32_t *dn) {
  const ts_coll_comm *m = c->comm;
  int kid[8];
  uint32_t deps[8];
  for (int r = 0; r < m->n; r++) up[r] = dn[r] = COLL_NONE;
  for (int o = m->nhosts - 1; o >= 0; o--) { /* up: deepest hosts first */
    int h = ht->order[o];
    for (int i = m->host_size[h] - 1; i >= 0; i--) {
      int v = ntree_rank(t, h, i);
      int u = i > 0 ? ntree_rank(t, h, i - 1)
                    : ht->parent[h] >= 0 ? ntree_rank(t, ht->parent[h], 0) : -1;
      if (u < 0) continue;
      uint32_t nk = ntree_kids(t, ht, h, i, kid);
      for (uint32_t q = 0; q < nk; q++) deps[q] = up[kid[q]];
      up[v] = ntree_edge(c, v, u, b, nk ? coll_reduce_cost(b, nk) : 0, t->ch,
                         deps, nk, k);
    }
  }
  for (int o = 0; o < m->nhosts; o++) { /* down: root host first */
    int h = ht->order[o];
    for (int i = 0; i < m->host_size[h]; i++) {
      int v = ntree_rank(t, h, i);
      uint32_t nk = ntree_kids(t, ht, h, i, kid), nd = 1;
      uint64_t red = 0;
      if (i == 0 && ht->parent[h] < 0) { /* the root reduces, then sends */
        for (uint32_t q = 0; q < nk; q++) deps[q] = up[kid[q]];
        nd = nk;
        red = coll_reduce_cost(b, nk);
      } else {
        deps[0] = dn[v];
      }
      for (uint32_t q = 0; q < nk; q++)
        dn[kid[q]] = ntree_edge(c, v, kid[q], b, q == 0 ? red : 0, t->ch,
                                deps, nd, k);
    }
  }
}

static int ntree_lower(coll_ctx *c) {
  const ts_coll_comm *m = c->comm;
  int n = m->n, H = m->nhosts;
  uint32_t C = coll_ntree_channels(m, c->prm);
  uint64_t sz = c->prm->chunk_bytes
                    ? c->prm->chunk_bytes
                    : coll_ntree_chunk(m, c->prm, c->plan->proto, c->bytes);
  int *base = calloc((size_t)H + 1, sizeof *base);
  int *at = malloc(sizeof *at * (size_t)n);
  uint32_t *buf = malloc(sizeof *buf * 2 * (size_t)n);
  tree ht[2] = {{0}, {0}};
  int rc = base && at && buf ? 0 : TS_ENOMEM;
  for (int w = 0; w < 2 && !rc; w++) rc = tree_build(&ht[w], H, w);
  if (!rc) {
    for (int h = 0; h < H; h++) base[h + 1] = base[h] + m->host_size[h];
    for (int r = 0; r < n; r++) at[base[m->host[r]] + m->local[r]] = r;
    uint64_t kmax = 1;
    for (uint32_t ch = 0; ch < C && !c->plan->err; ch++) {
      uint64_t b = coll_part(c->bytes, C, ch), k = (b + sz - 1) / sz;
      if (k < 1) k = 1;
      if (k > COLL_MAX_XFERS) k = COLL_MAX_XFERS;
      if (k > kmax) kmax = k;
      ntree t = {m, at, base, ch};
      ntree_channel(c, &t, &ht[ch % 2], b, (uint32_t)k, buf, buf + n);
    }
    c->plan->k = (uint32_t)kmax;
  }
  tree_free(&ht[0]), tree_free(&ht[1]);
  free(base), free(at), free(buf);
  return rc ? rc : c->plan->err;
}

int coll_tree_lower(coll_ctx *c) {
  int n = c->comm->n;
  if (n < 2) return 0;
  if (coll_nccl(c->prm)) return ntree_lower(c);
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
