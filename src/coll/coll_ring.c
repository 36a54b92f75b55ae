/* coll_ring.c - ring all-reduce / all-gather / reduce-scatter with C
 * channels, the pipelined chain for broadcast and reduce, and the compact
 * O(p) ring.
 *
 * Step ring on n members: the data of a channel is cut into n segments; at
 * step s member i sends segment (i - s) mod n to member i+1. Reduce-scatter
 * runs n-1 steps (member i ends owning segment (i+1) mod n fully reduced),
 * all-gather n-1 steps, all-reduce both: 2(n-1). Each rank therefore sends
 * (n-1)/n * S per phase, 2(n-1)/n * S for all-reduce (domain.md section 4).
 * Member i's step s depends on the step it received at s-1 (the data it
 * forwards) and on its own step s-1 (one channel processes in order), chunk j
 * on chunk j. A reduce-scatter step s >= 1 sends data it has just reduced:
 * reduce_bytes = 3 * segment (read received + local, write).
 *
 * Channels: channel c carries part c of S (NCCL splits a collective across
 * channels the same way). Ring order per channel: params.ring_order, see
 * ts_coll.h. Under uniform links the step ring on one channel takes exactly
 * 2(n-1)(alpha + S/(nB)) for all-reduce with k = 1.
 *
 * Compact ring: one flow per member and channel, i -> i+1, carrying exactly
 * what the step ring sends on that link (closed form, O(1) per flow) with
 * alpha = (steps * k) step latencies and no dependencies. On a dedicated
 * link the step ring keeps that link busy back to back, so both forms take
 * the same time; on a congested link both serialise the same bytes. Cost:
 * O(C p) transfers instead of O(C p steps k). */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

/* Payload of member i's step s on an n-member ring of `bytes`: segment
 * (i - s) mod n; *red its reduction traffic (steps 1..reduce_until). */
static uint64_t ring_step_bytes(uint64_t bytes, int n, int s, int i,
                                int reduce_until, uint64_t *red) {
  int seg = ((i - s) % n + n) % n;
  uint64_t b = coll_part(bytes, (uint64_t)n, (uint64_t)seg);
  *red = s >= 1 && s <= reduce_until ? coll_reduce_cost(b, 1) : 0;
  return b;
}

/* One flow per member: bytes, reduction and latencies of its whole ring
 * over members[0..n) (ranks), started after gates[i] (or at once); the
 * member's last receive is its predecessor's flow (last_in[i]). Used for
 * whole rings and for the per-rail rings of the hierarchical algorithm. */
static void ring_compact(coll_ctx *c, const int *m, int n, uint64_t bytes,
                         coll_ring_kind kind, uint32_t ch,
                         const uint32_t *gates, uint32_t *last_in) {
  uint32_t nsteps = kind == COLL_AR ? 2u * (uint32_t)(n - 1) : (uint32_t)n - 1;
  for (int i = 0; i < n; i++) {
    uint64_t s1 = coll_part(bytes, (uint64_t)n, (uint64_t)((i + 1) % n));
    uint64_t s2 = coll_part(bytes, (uint64_t)n, (uint64_t)((i + 2) % n));
    uint64_t own = coll_part(bytes, (uint64_t)n, (uint64_t)i);
    uint64_t b = bytes - s1, red = 0;
    if (kind == COLL_AR) {
      b += bytes - s2;
      red = coll_reduce_cost(bytes - own, 1);
    } else if (kind == COLL_RS && n > 2) {
      red = coll_reduce_cost(bytes - own - s1, 1);
    }
    uint32_t gate = gates ? gates[i] : COLL_NONE;
    uint32_t x = coll_xfer(c, m[i], -1, m[(i + 1) % n], -1, b, red, ch,
                           gate == COLL_NONE ? NULL : &gate, gate != COLL_NONE);
    if (x == COLL_NONE) return;
    ts_coll_xfer *t = &c->plan->x[x];
    t->steps = nsteps * c->plan->k;
    t->alpha *= t->steps;
    t->flags |= TS_COLL_XFER_COMPACT;
    if (last_in) last_in[(i + 1) % n] = x;
  }
}

void coll_ring_run(coll_ctx *c, const int *members, int n, uint64_t bytes,
                   coll_ring_kind kind, uint32_t channel, const uint32_t *gates,
                   uint32_t *last_in) {
  if (n < 2) {
    if (last_in && n == 1) last_in[0] = gates ? gates[0] : COLL_NONE;
    return;
  }
  if (c->flags & TS_COLL_COMPACT) {
    ring_compact(c, members, n, bytes, kind, channel, gates, last_in);
    return;
  }
  int nsteps = kind == COLL_AR ? 2 * (n - 1) : n - 1;
  int reduce_until = kind == COLL_AR ? n - 1 : kind == COLL_RS ? n - 2 : 0;
  uint32_t *recv = malloc(sizeof *recv * (size_t)n);
  if (!recv) {
    c->plan->err = TS_ENOMEM;
    return;
  }
  /* Steps in flight per channel: 1 in the alpha-beta model (a channel
   * sends step s after its step s-1); NCCL_STEPS = 8 buffer slots under
   * NCCL's structure, so a rank's per-step latencies overlap and only the
   * data dependency chains the steps (NCCL's ring latency: one hop latency
   * per step along the ring, not per step of the slowest link). */
  int W = coll_nccl(c->prm) ? COLL_NCCL_STEPS : 1;
  uint32_t *own = malloc(sizeof *own * (size_t)n * (size_t)W);
  uint32_t *cur = malloc(sizeof *cur * (size_t)n);
  if (!cur || !own) {
    free(recv), free(cur), free(own);
    c->plan->err = TS_ENOMEM;
    return;
  }
  for (int i = 0; i < n; i++) recv[i] = COLL_NONE;
  for (size_t i = 0; i < (size_t)n * (size_t)W; i++) own[i] = COLL_NONE;
  for (int s = 0; s < nsteps; s++) {
    for (int i = 0; i < n; i++) {
      uint64_t red, b = ring_step_bytes(bytes, n, s, i, reduce_until, &red);
      uint32_t deps[2] = {recv[i], own[(size_t)(s % W) * (size_t)n + (size_t)i]};
      uint32_t gate = s == 0 && gates ? gates[i] : COLL_NONE;
      cur[i] = coll_step_gate(c, members[i], members[(i + 1) % n], b, red,
                              channel, deps, 2, &gate, 1);
    }
    for (int i = 0; i < n; i++) {
      recv[(i + 1) % n] = cur[i];
      own[(size_t)(s % W) * (size_t)n + (size_t)i] = cur[i];
    }
  }
  if (last_in)
    for (int i = 0; i < n; i++) last_in[i] = recv[i];
  free(cur);
  free(own);
  free(recv);
}

/* ROTATE order: host by host; inside host h, position j holds the rank of
 * local index (j + ch) mod L_h. Ranks of a host are found by their dense
 * host index and local index (O(n) with a per-host offset table). */
static void ring_rotated(const ts_coll_comm *cm, uint32_t ch, int *m) {
  int n = cm->n, H = cm->nhosts;
  int *base = calloc((size_t)H + 1, sizeof *base);
  if (!base) { /* fall back to communicator order */
    for (int i = 0; i < n; i++) m[i] = i;
    return;
  }
  for (int h = 0; h < H; h++) base[h + 1] = base[h] + cm->host_size[h];
  for (int r = 0; r < n; r++) {
    int h = cm->host[r], L = cm->host_size[h];
    int pos = ((cm->local[r] - (int)(ch % (uint32_t)L)) % L + L) % L;
    m[base[h] + pos] = r;
  }
  free(base);
}

/* Ring order `order` of channel ch on cm into m (rank indices). */
static void ring_members(const ts_coll_comm *cm, int order, uint32_t ch, int *m) {
  int n = cm->n;
  if (order == TS_COLL_RING_ROTATE) {
    ring_rotated(cm, ch, m);
    return;
  }
  int rev = order == TS_COLL_RING_ALTERNATE && (ch & 1u);
  for (int i = 0; i < n; i++) m[i] = rev ? n - 1 - i : i;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + !!(a % b); }

/* ---- the step ring described, not built (ts_coll_ring_describe) ---- */

/* Mirrors coll_ring_lower + coll_ring_run for the non-chain kinds: any
 * change there must change this (tests/test_coll.c compares the two
 * transfer by transfer). */
void coll_ring_setup(const ts_coll_comm *comm, ts_coll_op op, uint64_t bytes,
                     const ts_coll_params *p, ts_coll_ring *r) {
  int n = comm->n;
  r->comm = comm;
  r->op = op;
  r->bytes = bytes;
  r->channels = p->channels;
  r->ring_order = p->ring_order;
  r->steps = op == TS_COLL_ALL_REDUCE ? 2u * (uint32_t)(n - 1) : (uint32_t)n - 1;
  r->reduce_until = op == TS_COLL_ALL_REDUCE       ? n - 1
                    : op == TS_COLL_REDUCE_SCATTER ? n - 2
                                                   : 0;
  r->window = coll_nccl(p) ? COLL_NCCL_STEPS : 1;
  uint64_t per_step = ceil_div(ceil_div(bytes, p->channels), (uint64_t)n);
  uint64_t ch = p->chunk_bytes, k = 1;
  if (ch > 0 && per_step > ch) k = (per_step + ch - 1) / ch;
  r->chunks = k > COLL_MAX_XFERS ? COLL_MAX_XFERS : (uint32_t)k;
  r->efficiency = p->efficiency[r->proto];
  r->alpha_intra = p->alpha_intra[r->proto];
  r->alpha_inter = p->alpha_inter[r->proto];
}

void ts_coll_ring_members(const ts_coll_ring *r, uint32_t ch, int *m) {
  ring_members(r->comm, r->ring_order, ch, m);
}

void ts_coll_ring_xfer(const ts_coll_ring *r, const int *m, uint32_t ch,
                       uint32_t s, uint32_t i, uint32_t j, ts_coll_xfer *out) {
  const ts_coll_comm *cm = r->comm;
  int n = cm->n, src = m[i], dst = m[(i + 1) % (uint32_t)n];
  uint64_t red, b = ring_step_bytes(coll_part(r->bytes, r->channels, ch), n,
                                    (int)s, (int)i, r->reduce_until, &red);
  memset(out, 0, sizeof *out);
  out->src_rank = src, out->dst_rank = dst;
  out->src = cm->gpu[src], out->dst = cm->gpu[dst];
  out->bytes = coll_part(b, r->chunks, j);
  out->wire_bytes = coll_wire(r->efficiency, out->bytes);
  out->reduce_bytes = coll_part(red, r->chunks, j);
  out->alpha = cm->host[src] != cm->host[dst] ? r->alpha_inter : r->alpha_intra;
  if (s == 0 && j == 0) out->alpha += r->startup; /* no deps: starts the op */
  out->steps = 1;
  out->channel = ch;
  out->ndeps = (s > 0) + (s >= r->window) + (j > 0);
}

/* Broadcast or reduce as a chunked chain along the ring order: starting at
 * the root (broadcast) or ending at it (reduce); hop h's chunk j waits for
 * hop h-1's chunk j, so chunks pipeline down the chain. */
static void ring_chain(coll_ctx *c, const int *m, uint64_t bytes, uint32_t ch) {
  int n = c->comm->n, root = c->prm->root, reduce = c->op == TS_COLL_REDUCE;
  int at = 0;
  while (m[at] != root) at++;
  uint32_t prev = COLL_NONE;
  for (int h = 0; h < n - 1; h++) {
    int a = reduce ? (at + 1 + h) % n : (at + h) % n;
    int b = (a + 1) % n;
    uint64_t red = reduce && h > 0 ? coll_reduce_cost(bytes, 1) : 0;
    prev = coll_step(c, m[a], m[b], bytes, red, ch, &prev, 1);
  }
}

int coll_ring_lower(coll_ctx *c) {
  int n = c->comm->n;
  uint32_t C = c->prm->channels;
  coll_ring_kind kind = c->op == TS_COLL_ALL_REDUCE       ? COLL_AR
                        : c->op == TS_COLL_REDUCE_SCATTER ? COLL_RS
                                                          : COLL_AG;
  int chain = c->op == TS_COLL_BROADCAST || c->op == TS_COLL_REDUCE;
  uint64_t per_ch = ceil_div(c->bytes, C);
  coll_set_chunks(c, chain ? per_ch : ceil_div(per_ch, (uint64_t)n));
  int *m = malloc(sizeof *m * (size_t)n);
  if (!m) return TS_ENOMEM;
  for (uint32_t ch = 0; ch < C && !c->plan->err; ch++) {
    uint64_t b = coll_part(c->bytes, C, ch);
    ring_members(c->comm, c->prm->ring_order, ch, m);
    if (n < 2) break;
    if (chain)
      ring_chain(c, m, b, ch);
    else
      coll_ring_run(c, m, n, b, kind, ch, NULL, NULL);
  }
  free(m);
  return c->plan->err;
}
