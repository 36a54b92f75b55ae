/* coll_direct.c - one-shot algorithms: every rank sends straight to every
 * other rank in a single step (all-to-all, all-to-allv, the NVSwitch-style
 * direct all-gather / reduce-scatter / all-reduce) and point-to-point
 * send/recv.
 *
 * all_to_all: rank i sends part j of its S-byte buffer to rank j, so each
 * rank sends S - part i = (p-1)/p * S; under uniform dedicated links with
 * k = 1: alpha + S/(pB). all_to_allv: matrix[i*p + j] bytes from i to j, the
 * diagonal being a local copy (no transfer). all_gather: rank i sends its
 * part i to all others. reduce_scatter: rank i sends part j to rank j (the
 * receiver's final reduction is not attached to a transfer). all_reduce:
 * reduce-scatter, then each rank, once every part addressed to it has
 * arrived, reduces (p - 1 inputs) and all-gathers its part: 2 steps.
 * Transfers of one step have no dependencies on each other; an executor's
 * link sharing decides their real overlap. Cost: p (p - 1) k transfers. */
#include <stdlib.h>

#include "coll/coll.h"

static uint64_t a2av_max(const coll_ctx *c) {
  int p = c->comm->n;
  uint64_t m = 0;
  for (int i = 0; i < p * p; i++)
    if (i / p != i % p && c->prm->matrix[i] > m) m = c->prm->matrix[i];
  return m;
}

/* One-step exchange; gate[i] (or NULL) gates all of rank i's sends; when
 * into is non-NULL, into[j*p + i] records the step from i to j. */
static void exchange(coll_ctx *c, int kind, const uint32_t *gate,
                     uint32_t *into) {
  int p = c->comm->n;
  for (int i = 0; i < p; i++)
    for (int j = 0; j < p; j++) {
      if (i == j) continue;
      uint64_t b = kind == TS_COLL_ALL_TO_ALLV ? c->prm->matrix[i * p + j]
                   : kind == TS_COLL_ALL_GATHER
                       ? coll_part(c->bytes, (uint64_t)p, (uint64_t)i)
                       : coll_part(c->bytes, (uint64_t)p, (uint64_t)j);
      uint64_t red = gate && (j == (i + 1) % p)
                         ? coll_reduce_cost(b, (uint32_t)p - 1) : 0;
      uint32_t g = gate ? gate[i] : COLL_NONE;
      uint32_t s = coll_step_gate(c, i, j, b, red, 0, NULL, 0, &g, 1);
      if (into) into[j * p + i] = s;
    }
}

static int direct_allreduce(coll_ctx *c) {
  int p = c->comm->n;
  uint32_t *into = malloc(sizeof *into * (size_t)p * (size_t)p);
  uint32_t *join = malloc(sizeof *join * (size_t)p);
  if (!into || !join) {
    free(into), free(join);
    return TS_ENOMEM;
  }
  exchange(c, TS_COLL_REDUCE_SCATTER, NULL, into);
  for (int j = 0; j < p; j++) { /* rank j has every part j: join at j */
    uint32_t *row = into + (size_t)j * (size_t)p;
    row[j] = COLL_NONE;
    join[j] = coll_join(c, c->comm->gpu[j], row, (uint32_t)p);
  }
  exchange(c, TS_COLL_ALL_GATHER, join, NULL);
  free(into), free(join);
  return c->plan->err;
}

int coll_direct_lower(coll_ctx *c) {
  int p = c->comm->n;
  if (c->op == TS_COLL_SEND_RECV) {
    coll_set_chunks(c, c->bytes);
    coll_step(c, c->prm->root, c->prm->peer, c->bytes, 0, 0, NULL, 0);
    return c->plan->err;
  }
  if (p < 2) return 0;
  uint64_t big = c->op == TS_COLL_ALL_TO_ALLV
                     ? a2av_max(c) : c->bytes / (uint64_t)p + !!(c->bytes % (uint64_t)p);
  coll_set_chunks(c, big);
  if (c->op == TS_COLL_ALL_REDUCE) return direct_allreduce(c);
  exchange(c, c->op, NULL, NULL);
  return c->plan->err;
}
