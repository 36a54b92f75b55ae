/* work_moe.c - the all-to-all byte matrix of one MoE dispatch or combine
 * from a routing model (ts_moe_matrix, ts_work.h), for `topsim bench --op
 * moe_dispatch|moe_combine`.
 *
 * Expected bytes, per source rank i with T tokens of b bytes each (b = 2h
 * bf16, h + 4h/128 fp8), k = top_k, share_j = the routed share of rank j's
 * experts, hit(P) = 1 - (1 - P)^k the chance a token reaches a set of
 * share P (draws taken as independent):
 *   same node j != i      T b hit(share_j)              (NVLink, once per rank)
 *   remote node N         T b hit(P_N) x lim            (RDMA, to the rank of
 *                                                        N with i's local index)
 *   forward on N          T b hit(share_j) x lim from that landing rank to
 *                         each other rank j of N        (NVLink)
 * lim = 1, or with node_limit M: (min(D, M) - hit(P_own)) / (D - hit(P_own))
 * where D = sum over nodes of hit(P_N) is the expected number of nodes a
 * token would reach unrestricted (the same dedup rule as ts_work_comm).
 * Combine is the transpose in bf16. Cost: O(n^2 + experts). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "work/work_int.h"

static double hit(double p, uint32_t k) { return 1 - pow(1 - p, k); }

/* Shares per rank and per node, local indices, the node-limit ratio. */
typedef struct moe_ctx {
  double *share, *pnode, lim;
  uint32_t *local, *nodes_of;
} moe_ctx;

static int moe_ctx_init(moe_ctx *x, const ts_moe_route *r,
                        const int32_t *hosts, uint32_t n) {
  memset(x, 0, sizeof *x);
  x->share = calloc(n, sizeof *x->share);
  x->pnode = calloc(n, sizeof *x->pnode); /* indexed by first rank of node */
  x->local = calloc(n, sizeof *x->local);
  x->nodes_of = calloc(n, sizeof *x->nodes_of); /* first rank of the node */
  if (!x->share || !x->pnode || !x->local || !x->nodes_of) return TS_ENOMEM;
  work_cfg c;
  memset(&c, 0, sizeof c);
  c.experts = r->experts;
  c.ep = n;
  c.routing_skew = r->skew;
  for (uint32_t i = 0; i < n; i++) {
    x->share[i] = work_moe_rank_share(&c, i);
    uint32_t f = i;
    for (uint32_t j = 0; j < i; j++)
      if (hosts[j] == hosts[i]) {
        f = j;
        break;
      }
    x->nodes_of[i] = f;
    x->local[i] = 0;
    for (uint32_t j = 0; j < i; j++) x->local[i] += hosts[j] == hosts[i];
    x->pnode[f] += x->share[i];
  }
  return 0;
}

static void moe_ctx_free(moe_ctx *x) {
  free(x->share);
  free(x->pnode);
  free(x->local);
  free(x->nodes_of);
}

/* Node-limit ratio for a source on node `own` (first rank). */
static double limit_ratio(const moe_ctx *x, const ts_moe_route *r,
                          uint32_t n, uint32_t own) {
  if (!r->node_limit) return 1;
  double d = 0;
  for (uint32_t i = 0; i < n; i++)
    if (x->nodes_of[i] == i) d += hit(x->pnode[i], r->top_k);
  double mine = hit(x->pnode[own], r->top_k), cross = d - mine;
  double lim = fmin(d, r->node_limit) - mine;
  return cross > 0 && lim < cross ? fmax(lim, 0) / cross : 1;
}

/* Rank of node `first` with local index `li` (wrapping if it has fewer). */
static uint32_t landing(const moe_ctx *x, const int32_t *hosts, uint32_t n,
                        uint32_t first, uint32_t li) {
  uint32_t count = 0, pick = first;
  for (uint32_t j = first; j < n; j++) count += hosts[j] == hosts[first];
  li %= count;
  for (uint32_t j = first; j < n; j++)
    if (hosts[j] == hosts[first] && x->local[j] == li) pick = j;
  return pick;
}

static void add(double *acc, uint32_t n, uint32_t s, uint32_t d, double v,
                int combine) {
  acc[combine ? (size_t)d * n + s : (size_t)s * n + d] += v;
}

int ts_moe_matrix(const ts_moe_route *r, const int32_t *hosts, uint32_t n,
                  int combine, uint64_t *matrix) {
  if (!n || !r->experts || !r->top_k || !r->hidden || r->experts % n ||
      r->top_k > r->experts)
    return TS_EINVALID;
  moe_ctx x;
  double *acc = calloc((size_t)n * n, sizeof *acc);
  int rc = acc ? moe_ctx_init(&x, r, hosts, n) : TS_ENOMEM;
  if (rc) {
    free(acc);
    if (acc) moe_ctx_free(&x);
    return rc;
  }
  double h = r->hidden, k = r->top_k;
  double b = combine || !r->fp8 ? 2 * h : h + 4 * h / 128;
  for (uint32_t i = 0; i < n; i++) {
    double T = (double)r->tokens * b, lim = limit_ratio(&x, r, n, x.nodes_of[i]);
    for (uint32_t j = 0; j < n; j++) {
      if (j == i) continue;
      if (hosts[j] == hosts[i]) { /* NVLink, once per rank */
        add(acc, n, i, j, T * hit(x.share[j], (uint32_t)k), combine);
        continue;
      }
      if (x.nodes_of[j] != j) continue; /* remote nodes once, at their first */
      /* j is the first rank of a remote node: RDMA to the landing rank */
      uint32_t to = landing(&x, hosts, n, j, x.local[i]);
      add(acc, n, i, to, T * hit(x.pnode[j], (uint32_t)k) * lim, combine);
      for (uint32_t q = j; q < n; q++)
        if (hosts[q] == hosts[j] && q != to)
          add(acc, n, to, q, T * hit(x.share[q], (uint32_t)k) * lim, combine);
    }
  }
  for (size_t e = 0; e < (size_t)n * n; e++)
    matrix[e] = (uint64_t)llround(acc[e]);
  free(acc);
  moe_ctx_free(&x);
  return 0;
}
