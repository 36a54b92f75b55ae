/* coll_hd.c - recursive halving-doubling (Rabenseifner) all-reduce, and
 * recursive halving reduce-scatter / recursive doubling all-gather.
 *
 * On q = 2^L participants: reduce-scatter by halving, L steps; at step t
 * participant j exchanges with j ^ (q >> (t+1)), keeps the half named by that
 * bit and sends the other half (S/2, S/4, ..., S/q). All-gather by doubling
 * replays the distances in reverse (1, 2, ..., q/2) sending S/q, ..., S/2.
 * Each rank sends (q-1)/q * S per phase; under uniform links with k = 1 the
 * all-reduce takes 2 L alpha + 2 (q-1)/q * S/B exactly.
 *
 * Non-powers of two (all-reduce only; all-gather and reduce-scatter refuse
 * with TS_EUSAGE): with q the largest power of two <= p and r = p - q, rank
 * 2i (i < r) first sends its whole vector to rank 2i+1, which reduces it; the
 * q survivors (2i+1 for i < r, then r*2 .. p-1) run the power-of-two
 * algorithm (its first send also carries the reduction of the folded
 * vector); finally 2i+1 sends the result back to 2i. That adds two steps of
 * alpha + S/B (the MPICH choice).
 *
 * A step's data is a sub-block of what arrived in the previous step, so
 * cross-step dependencies wait for every chunk of that step (gates); a
 * rank's own consecutive sends are chunk-aligned (in-order processing).
 * Cost: O(p + q log q * k) transfers. */
#include <stdlib.h>

#include "coll/coll.h"

typedef struct hd {
  int q, L;
  int *rank;      /* participant j -> rank index */
  uint32_t *recv; /* last step received by participant j */
  uint32_t *own;  /* last step sent by participant j */
} hd;

static void hd_phase(coll_ctx *c, hd *h, int halving, int reduce_first) {
  int q = h->q, L = h->L;
  uint32_t *cur = malloc(sizeof *cur * (size_t)q);
  if (!cur) {
    c->plan->err = TS_ENOMEM;
    return;
  }
  for (int t = 0; t < L; t++) {
    int d = halving ? q >> (t + 1) : 1 << t;
    for (int j = 0; j < q; j++) {
      int pj = j ^ d;
      uint64_t b = halving
          ? coll_part(c->bytes, 2ull << t, (uint64_t)(pj >> (L - t - 1)))
          : coll_part(c->bytes, 1ull << (L - t), (uint64_t)(j >> t));
      int reduce = halving ? t >= 1 : t == 0 && reduce_first;
      cur[j] = coll_step_gate(c, h->rank[j], h->rank[pj], b,
                              reduce ? coll_reduce_cost(b, 1) : 0, 0,
                              &h->own[j], 1, &h->recv[j], 1);
    }
    for (int j = 0; j < q; j++) {
      h->recv[j ^ d] = cur[j];
      h->own[j] = cur[j];
    }
  }
  free(cur);
}

int coll_hd_lower(coll_ctx *c) {
  int p = c->comm->n;
  if (p < 2) return 0;
  hd h = {0};
  h.L = coll_log2_ceil(p);
  if (!coll_is_pow2(p)) h.L--;
  h.q = 1 << h.L;
  int r = p - h.q;
  int ar = c->op == TS_COLL_ALL_REDUCE;
  coll_set_chunks(c, r ? c->bytes : c->bytes / 2 + (c->bytes & 1));
  h.rank = malloc(sizeof(int) * (size_t)h.q);
  h.recv = malloc(sizeof(uint32_t) * 2 * (size_t)h.q);
  if (!h.rank || !h.recv) {
    free(h.rank), free(h.recv);
    return TS_ENOMEM;
  }
  h.own = h.recv + h.q;
  for (int j = 0; j < h.q; j++) {
    h.rank[j] = j < r ? 2 * j + 1 : j + r;
    h.recv[j] = h.own[j] = COLL_NONE;
  }
  for (int i = 0; i < r; i++) /* fold the extra ranks in */
    h.recv[i] = coll_step(c, 2 * i, 2 * i + 1, c->bytes, 0, 0, NULL, 0);
  uint32_t base = c->plan->n;
  if (c->op != TS_COLL_ALL_GATHER) hd_phase(c, &h, 1, 0);
  for (int i = 0; i < r && !c->plan->err; i++) /* 2i+1 reduces 2i's vector */
    for (uint32_t j = 0, k = c->plan->k; j < k; j++)
      c->plan->x[base + (uint32_t)i * k + j].reduce_bytes +=
          coll_part(coll_reduce_cost(c->bytes, 1), k, j);
  if (c->op != TS_COLL_REDUCE_SCATTER) hd_phase(c, &h, 0, ar);
  for (int i = 0; i < r; i++) /* hand the result back */
    coll_step_gate(c, 2 * i + 1, 2 * i, c->bytes, 0, 0, &h.own[i], 1,
                   &h.recv[i], 1);
  free(h.rank);
  free(h.recv);
  return c->plan->err;
}
