/* coll_nvls.c - NVLink SHARP (NVLS): the NVSwitch reduces and multicasts.
 *
 * Every GPU sends its data to the switch endpoint once and receives the
 * result once: for all-reduce S up and S down per GPU; all-gather part i up
 * and S - part i down; reduce-scatter S up and part i down. The switch's
 * reduction of chunk j is a join transfer at the switch endpoint that waits
 * for chunk j from every GPU; the down transfers of chunk j wait for it.
 * GPUs do no local reduction (the switch does). Requires one host whose
 * NVSwitch endpoint was declared with ts_coll_comm_set_nvls (multi-host
 * NVLS-tree is left for later). Under uniform links, k = 1: 2 (alpha + S/B)
 * for all-reduce. Cost: (2p + 1) k transfers. */
#include <stdlib.h>

#include "coll/coll.h"

int coll_nvls_lower(coll_ctx *c) {
  int p = c->comm->n, ep = c->comm->nvls_ep[0];
  coll_set_chunks(c, c->bytes);
  uint32_t *up = malloc(sizeof *up * (size_t)p);
  if (!up) return TS_ENOMEM;
  for (int i = 0; i < p; i++) {
    uint64_t b = c->op == TS_COLL_ALL_GATHER
                     ? coll_part(c->bytes, (uint64_t)p, (uint64_t)i) : c->bytes;
    up[i] = coll_switch_step(c, i, -1, ep, b, 0, NULL, 0);
  }
  uint32_t join = coll_join(c, ep, up, (uint32_t)p);
  for (int i = 0; i < p; i++) {
    uint64_t part = coll_part(c->bytes, (uint64_t)p, (uint64_t)i);
    uint64_t b = c->op == TS_COLL_ALL_GATHER       ? c->bytes - part
                 : c->op == TS_COLL_REDUCE_SCATTER ? part
                                                   : c->bytes;
    coll_switch_step(c, -1, i, ep, b, 0, &join, 1);
  }
  free(up);
  return c->plan->err;
}
