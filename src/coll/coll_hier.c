/* coll_hier.c - hierarchical all-reduce: intra-host ring reduce-scatter,
 * inter-host ring all-reduce per rail, intra-host ring all-gather.
 *
 * H hosts of L ranks each (equal sizes required: TS_EUSAGE otherwise); a
 * rank's local index is its position among its host's ranks in communicator
 * order, and rail l is the set of ranks with local index l (the GPUs sharing
 * NIC rail l in a rail-optimised cluster). Phases:
 *   1. every host: ring reduce-scatter of S over its L ranks; the rank at
 *      local index l ends owning segment (l+1) mod L (about S/L bytes);
 *   2. every rail: ring all-reduce of that segment over the H ranks;
 *   3. every host: ring all-gather of the L segments.
 * A rank starts phase 2 (3) once its last phase-1 (2) receive has completed
 * (every chunk). Transfers between hosts get alpha_inter. Closed form under
 * uniform links, k = 1:
 *   2 (L-1)(a_i + S/(L B_i)) + 2 (H-1)(a_n + S/(L H B_n)).
 * Cost: O(k (H L^2 + L H^2)) transfers (step rings). */
#include <stdlib.h>

#include "coll/coll.h"

int coll_hier_lower(coll_ctx *c) {
  const ts_coll_comm *m = c->comm;
  int H = m->nhosts, L = m->host_size[0], p = m->n;
  if (p < 2) return 0;
  uint64_t per = L > 1 ? (uint64_t)L : (uint64_t)H; /* largest step */
  coll_set_chunks(c, c->bytes / per + !!(c->bytes % per));
  int *by = malloc(sizeof *by * (size_t)p);      /* [h*L + l] -> rank */
  int *mem = malloc(sizeof *mem * (size_t)(H > L ? H : L));
  uint32_t *in = malloc(sizeof *in * 2 * (size_t)p); /* per rank */
  uint32_t *g = malloc(sizeof *g * (size_t)(H > L ? H : L));
  uint32_t *o = malloc(sizeof *o * (size_t)(H > L ? H : L));
  if (!by || !mem || !in || !g || !o) {
    free(by), free(mem), free(in), free(g), free(o);
    return TS_ENOMEM;
  }
  for (int r = 0; r < p; r++) by[m->host[r] * L + m->local[r]] = r;
  uint32_t *in2 = in + p;
  for (int h = 0; h < H; h++) { /* 1: intra-host reduce-scatter */
    coll_ring_run(c, by + h * L, L, c->bytes, COLL_RS, 0, NULL, o);
    for (int l = 0; l < L; l++) in[by[h * L + l]] = o[l];
  }
  for (int l = 0; l < L; l++) { /* 2: per-rail all-reduce */
    for (int h = 0; h < H; h++) {
      mem[h] = by[h * L + l];
      g[h] = in[mem[h]];
    }
    uint64_t seg = coll_part(c->bytes, (uint64_t)L, (uint64_t)((l + 1) % L));
    coll_ring_run(c, mem, H, seg, COLL_AR, 0, g, o);
    for (int h = 0; h < H; h++) in2[mem[h]] = o[h];
  }
  for (int h = 0; h < H; h++) { /* 3: intra-host all-gather */
    for (int l = 0; l < L; l++) { /* position (l+1)%L owns segment (l+1)%L */
      mem[(l + 1) % L] = by[h * L + l];
      g[(l + 1) % L] = in2[by[h * L + l]];
    }
    coll_ring_run(c, mem, L, c->bytes, COLL_AG, 0, g, NULL);
  }
  free(by), free(mem), free(in), free(g), free(o);
  return c->plan->err;
}
