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

/* NCCL's NVLS pipeline in flight: 16 channels x 128 KiB chunks
 * (NCCL_NVLS_NCHANNELS, nvlsChunkSize defaults). */
#define NVLS_LEAD_BYTES (16ull * 128 * 1024)

static uint64_t up_bytes(const coll_ctx *c, int p, int i) {
  return c->op == TS_COLL_ALL_GATHER ? coll_part(c->bytes, (uint64_t)p, (uint64_t)i)
                                     : c->bytes;
}

static uint64_t down_bytes(const coll_ctx *c, int p, int i) {
  uint64_t part = coll_part(c->bytes, (uint64_t)p, (uint64_t)i);
  return c->op == TS_COLL_ALL_GATHER       ? c->bytes - part
         : c->op == TS_COLL_REDUCE_SCATTER ? part
                                           : c->bytes;
}

/* One step of b bytes split into a lead of at most NVLS_LEAD_BYTES and the
 * body after it; *body gets the body's index (COLL_NONE when empty). */
static uint32_t lead_body(coll_ctx *c, int src, int dst, int ep, uint64_t b,
                          const uint32_t *deps, uint32_t ndeps, uint32_t *body) {
  uint64_t lead = b < NVLS_LEAD_BYTES ? b : NVLS_LEAD_BYTES;
  uint32_t l = coll_switch_step(c, src, dst, ep, lead, 0, deps, ndeps);
  *body = b > lead ? coll_switch_step(c, src, dst, ep, b - lead, 0, &l, 1) : COLL_NONE;
  return l;
}

/* NVLS all-reduce as NCCL runs it: a reduce-scatter by multimem loads
 * (the switch reads every GPU's S, each GPU receives its reduced S/p) and
 * an all-gather by multimem stores (each GPU writes its S/p, the switch
 * multicasts S to every GPU): S (1 + 1/p) per GPU in each direction. */
static uint64_t nvls_ar_bytes(uint64_t S, int p) {
  return S + coll_part(S, (uint64_t)p, 0);
}

/* NCCL structure, no explicit chunking: the switch starts multicasting
 * results as soon as the first chunks of every GPU have arrived, so the up
 * and down halves run at once on the two directions of each GPU's NVLinks.
 * Modelled as a lead (the chunks in flight) followed by the body: every
 * down transfer waits for the join of the leads only. A fluid pipeline:
 * the down body cannot overtake the up body while both run at the same
 * rate, which holds on the symmetric NVLink bundle. 4p + 1 transfers. The
 * single NVLS latency is in the plan's startup, so transfers carry none. */
static int nvls_overlap(coll_ctx *c, int p, int ep, uint32_t *lead) {
  uint32_t body;
  int ar = c->op == TS_COLL_ALL_REDUCE;
  for (int i = 0; i < p; i++) {
    uint64_t b = ar ? nvls_ar_bytes(c->bytes, p) : up_bytes(c, p, i);
    lead[i] = lead_body(c, i, -1, ep, b, NULL, 0, &body);
  }
  uint32_t join = coll_join(c, ep, lead, (uint32_t)p);
  for (int i = 0; i < p; i++) {
    uint64_t b = ar ? nvls_ar_bytes(c->bytes, p) : down_bytes(c, p, i);
    lead_body(c, -1, i, ep, b, &join, 1, &body);
  }
  for (uint32_t i = 0; !c->plan->err && i < c->plan->n; i++) c->plan->x[i].alpha = 0;
  return c->plan->err;
}

int coll_nvls_lower(coll_ctx *c) {
  int p = c->comm->n, ep = c->comm->nvls_ep[0];
  if (coll_nccl(c->prm) && c->prm->chunk_bytes == 0) {
    uint32_t *lead = malloc(sizeof *lead * (size_t)p);
    if (!lead) return TS_ENOMEM;
    int rc = nvls_overlap(c, p, ep, lead);
    free(lead);
    return rc;
  }
  coll_set_chunks(c, c->bytes);
  uint32_t *up = malloc(sizeof *up * (size_t)p);
  if (!up) return TS_ENOMEM;
  for (int i = 0; i < p; i++) up[i] = coll_switch_step(c, i, -1, ep, up_bytes(c, p, i), 0, NULL, 0);
  uint32_t join = coll_join(c, ep, up, (uint32_t)p);
  for (int i = 0; i < p; i++) coll_switch_step(c, -1, i, ep, down_bytes(c, p, i), 0, &join, 1);
  free(up);
  return c->plan->err;
}
