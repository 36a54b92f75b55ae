/* coll_nvls.c - NVLink SHARP (NVLS): the NVSwitch reduces and multicasts.
 *
 * Every GPU sends its data to the switch endpoint once and receives the
 * result once: for all-reduce S up and S down per GPU; all-gather part i up
 * and S - part i down; reduce-scatter S up and part i down. The switch's
 * reduction of chunk j is a join transfer at the switch endpoint that waits
 * for chunk j from every GPU; the down transfers of chunk j wait for it.
 * GPUs do no local reduction (the switch does). Requires one host whose
 * NVSwitch endpoint was declared with ts_coll_comm_set_nvls, or, for
 * all-reduce under NCCL's structure, every host (NVLS-tree, nvls_tree).
 * Under uniform links, k = 1: 2 (alpha + S/B) for all-reduce. Cost:
 * (2p + 1) k transfers (NVLS-tree: 6p + H). */
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

/* NVLS-tree (NCCL's NVLS_TREE), all-reduce over H hosts of L ranks, as a
 * fluid pipeline like nvls_overlap: every rank sends S (1 + 1/L) up to its
 * host's switch (lead + body), and its host's leads join (the first chunks
 * are reduced); each rank then sends its share S/L of the host's sum over
 * its NIC to the same local rank of the next host: f S/L with f = 1 on two
 * hosts and 2 (H-1)/H beyond (a ring over the rail, about what NCCL's tree
 * moves per NIC), lead + body, the lead carrying the tree latency 2
 * ceil(log2 H) x nvls_tree_latency; every rank's down transfers (S (1 +
 * 1/L) from its switch) start once its host's join and its incoming NIC
 * lead are done. 6p + H transfers. */
static int nvls_tree(coll_ctx *c) {
  const ts_coll_comm *m = c->comm;
  int p = m->n, H = m->nhosts, L = m->host_size[0];
  uint32_t *lead = malloc(sizeof *lead * (size_t)p);
  uint32_t *net = malloc(sizeof *net * (size_t)p);
  uint32_t *join = malloc(sizeof *join * (size_t)H);
  int *by = malloc(sizeof *by * (size_t)p); /* [h*L + l] -> rank */
  uint32_t *grp = malloc(sizeof *grp * (size_t)L);
  uint32_t *nlead = malloc(sizeof *nlead * (size_t)p); /* NIC bodies */
  if (!lead || !net || !join || !by || !grp || !nlead) {
    free(lead), free(net), free(join), free(by), free(grp), free(nlead);
    return TS_ENOMEM;
  }
  uint32_t body;
  uint64_t b = nvls_ar_bytes(c->bytes, L);
  for (int r = 0; r < p; r++) by[m->host[r] * L + m->local[r]] = r;
  for (int i = 0; i < p; i++)
    lead[i] = lead_body(c, i, -1, m->nvls_ep[m->host[i]], b, NULL, 0, &body);
  for (int h = 0; h < H; h++) {
    for (int l = 0; l < L; l++) grp[l] = lead[by[h * L + l]];
    join[h] = coll_join(c, m->nvls_ep[h], grp, (uint32_t)L);
  }
  for (uint32_t i = 0; !c->plan->err && i < c->plan->n; i++) c->plan->x[i].alpha = 0;
  int levels = coll_log2_ceil(H);
  ts_time_ps tree = 2 * levels * c->prm->nvls_tree_latency;
  /* k = 1 here (no coll_set_chunks): a step is one transfer */
  for (int i = 0; i < p; i++) {
    int h = m->host[i], l = m->local[i], to = by[((h + 1) % H) * L + l];
    uint64_t seg = coll_part(c->bytes, (uint64_t)L, (uint64_t)l);
    uint64_t nb = H == 2 ? seg : (uint64_t)((double)seg * 2.0 * (H - 1) / H + 0.5);
    uint64_t l0 = nb < NVLS_LEAD_BYTES / (uint64_t)L ? nb : NVLS_LEAD_BYTES / (uint64_t)L;
    net[to] = coll_step(c, i, to, l0, 0, (uint32_t)l, &join[h], 1);
    nlead[to] = nb > l0 ? coll_step(c, i, to, nb - l0, 0, (uint32_t)l, &net[to], 1)
                        : COLL_NONE;
  }
  /* The NIC side runs at the links' NVLS efficiency: NCCL's per-channel
   * NVLS-tree cap (coll_nvls_tree_cap, in the plan's efficiency) is
   * charged once, on the NVLink side. */
  double en = coll_nvls_link_eff(m, c->prm, c->bytes);
  for (int i = 0; !c->plan->err && i < p; i++) {
    c->plan->x[net[i]].wire_bytes = coll_wire(en, c->plan->x[net[i]].bytes);
    if (nlead[i] != COLL_NONE)
      c->plan->x[nlead[i]].wire_bytes = coll_wire(en, c->plan->x[nlead[i]].bytes);
    c->plan->x[net[i]].alpha = tree;
    if (nlead[i] != COLL_NONE) c->plan->x[nlead[i]].alpha = 0;
    uint32_t deps[2] = {join[m->host[i]], net[i]};
    uint32_t first = c->plan->n;
    lead_body(c, -1, i, m->nvls_ep[m->host[i]], b, deps, 2, &body);
    for (uint32_t j = first; !c->plan->err && j < c->plan->n; j++) c->plan->x[j].alpha = 0;
  }
  free(lead), free(net), free(join), free(by), free(grp), free(nlead);
  return c->plan->err;
}

int coll_nvls_lower(coll_ctx *c) {
  if (c->comm->nhosts > 1) return nvls_tree(c);
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
