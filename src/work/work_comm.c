/* work_comm.c - the collectives one rank takes part in during a step.
 *
 * Sizes (b micro-batch, s sequence, s' = s/cp, h hidden, t = tp, 2-byte
 * activations, m micro-batches; per occurrence):
 *   TP   per layer per micro-batch, S = s'*b*h*2: without sequence
 *        parallelism 2 all-reduces forward (after attention, after MLP) and
 *        2 backward; with it each all-reduce becomes an all-gather +
 *        reduce-scatter pair (same bytes on the wire). Full recompute repeats
 *        the forward ones.
 *   CP   per layer: K and V of the whole sequence for this TP shard,
 *        S = 2*b*s*kv_heads*head_dim/t*2, all-gathered forward (ring P2P in
 *        practice); backward all-gathers again and reduce-scatters dK, dV.
 *   PP   per model chunk per micro-batch: activations s'*b*h*2/t forward to
 *        the next stage and gradients of the same size back (Megatron's
 *        scatter/gather optimisation: each TP rank sends its 1/t slice).
 *   EP   per MoE layer per micro-batch: dispatch and combine all-to-alls
 *        forward, their transposes backward. This rank routes T = s'*b/t
 *        tokens, top_k pairs each (h*2 bytes a pair); EP rank j receives
 *        share_j of all pairs (Zipf skew, capacity drops). Sent: pairs for
 *        other GPUs of the node (intra) plus pairs for other nodes (cross).
 *        With node_limited_routing = M, dispatch is deduplicated per node
 *        (one copy per destination node, forwarded over NVLink there, as
 *        DeepSeek-V3/DeepEP do), so cross-node bytes per token are
 *        h*2*(min(D, M) - D_own), D the expected distinct nodes hit by
 *        top_k draws, D_own the chance the own node is among them.
 *   DP   once per step, in buckets of dp_bucket_size bytes: dense gradients
 *        over DP x CP, expert gradients over (DP/EP) x CP. ZeRO 0:
 *        all-reduce; ZeRO 1 / distributed optimizer: reduce-scatter of
 *        gradients + all-gather of bf16 weights (after the optimizer, or
 *        with dp_param_overlap ahead of the next step's forward, layer by
 *        layer: Megatron's --overlap-param-gather, NeMo's
 *        overlap_param_sync); ZeRO 2: the reduce-scatter
 *        per micro-batch; ZeRO 3: also all-gathers weights forward and
 *        backward per micro-batch. fsdp / hsdp: reduce once per step
 *        (fsdp_comm below).
 * Sent bytes: ring all-reduce 2(p-1)/p*S, all-gather and reduce-scatter
 * (p-1)/p*S. Cost: O(layers + buckets + ep^2) per rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_budget.h"
#include "topsim/ts_checked.h"
#include "work/work_int.h"

typedef struct comm_list {
  ts_comm_desc *v;
  size_t n, cap;
  int fail;
  const work_cfg *c;
  const ts_mapping *m;
  const ts_rank_label *lb;
  uint32_t rank, mb;
  double cross[TS_GROUP_COUNT]; /* share of a ring collective's bytes that
                                   leave the host (cross_shares) */
} comm_list;

typedef struct ep_traffic {
  uint64_t bytes;             /* this rank's pairs * h * 2 */
  uint64_t disp, disp_cross;  /* dispatch: sent, of which cross-node */
  uint64_t comb, comb_cross;  /* combine */
} ep_traffic;

static uint64_t ring_ar(uint64_t s, uint32_t p) { return s * 2 * (p - 1) / p; }
static uint64_t ring_ag(uint64_t s, uint32_t p) { return s * (p - 1) / p; }

static ts_comm_desc *add(comm_list *L, ts_coll_op k, ts_group g,
                         ts_phase ph, int32_t layer, uint64_t bytes,
                         uint64_t sent) {
  if (L->fail) return NULL;
  if (L->n >= ts_budget_get()->descriptors) { /* e.g. dp_bucket_size: 1B */
    L->fail = 2;
    return NULL;
  }
  if (L->n == L->cap) {
    size_t cap = L->cap ? 2 * L->cap : 128;
    ts_comm_desc *v = realloc(L->v, cap * sizeof *v);
    if (!v) {
      L->fail = 1;
      return NULL;
    }
    L->v = v;
    L->cap = cap;
  }
  ts_comm_desc *x = &L->v[L->n++];
  memset(x, 0, sizeof *x); /* padding too: descriptors compare with memcmp */
  x->kind = (uint8_t)k;
  x->group_kind = (uint8_t)g;
  x->phase = (uint8_t)ph;
  x->overlap = 0;
  x->per_microbatch = 1;
  x->group = L->lb->group[g];
  x->group_size = L->m->size[g];
  x->layer = layer;
  x->peer = -1;
  x->repeat = L->mb;
  x->bytes = bytes;
  x->sent = sent;
  /* rings (all-reduce, all-gather, reduce-scatter): cross_shares */
  x->sent_cross_node = k == TS_COLL_ALL_TO_ALL || k == TS_COLL_SEND_RECV
                           ? 0 : (uint64_t)llround((double)sent * L->cross[g]);
  return x;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* For each of the rank's groups, the share of a ring collective's bytes
 * that leave the host: NCCL orders a ring by host, so of its p edges H
 * cross between the H hosts the group spans (none when H = 1), and the
 * channels rotate which rank of a host sends across: H / p per rank on
 * average. O(p log p) per group. Returns TS_ENOMEM or 0. */
static int cross_shares(comm_list *L) {
  int32_t *h = malloc(((size_t)L->m->ranks + 1) * sizeof *h);
  if (!h) return TS_ENOMEM;
  for (int g = 0; g < TS_GROUP_COUNT; g++) {
    uint32_t p = L->m->size[g], id = L->lb->group[g], hosts = 0;
    for (uint32_t i = 0; i < p; i++)
      h[i] = L->m->labels[ts_mapping_group_member(L->m, (ts_group)g, id, i)].host;
    qsort(h, p, sizeof *h, cmp_i32);
    for (uint32_t i = 0; i < p; i++) hosts += i == 0 || h[i] != h[i - 1];
    L->cross[g] = hosts > 1 ? (double)hosts / p : 0;
  }
  free(h);
  return 0;
}

/* a x b x c x d bytes, saturating at UINT64_MAX instead of wrapping: a
 * huge layout then meets the message-size budget with its own message
 * rather than a wrapped, small size. */
static uint64_t sat_bytes(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t x;
  if (ts_mul_u64(a, b, &x) || ts_mul_u64(x, c, &x) || ts_mul_u64(x, d, &x))
    return UINT64_MAX;
  return x;
}

static void tp_layer(comm_list *L, int32_t layer, ts_phase ph) {
  const work_cfg *c = L->c;
  uint32_t p = c->tp;
  uint64_t S = sat_bytes((uint64_t)c->seq_len / c->cp, c->micro_batch,
                         c->hidden, 2);
  for (int blk = 0; blk < 2; blk++) { /* attention, MLP */
    ts_comm_desc *x[2] = {NULL, NULL};
    if (c->sequence_parallel) {
      x[0] = add(L, TS_COLL_ALL_GATHER, TS_GROUP_TP, ph, layer, S, ring_ag(S, p));
      x[1] = add(L, TS_COLL_REDUCE_SCATTER, TS_GROUP_TP, ph, layer, S,
                 ring_ag(S, p));
    } else {
      x[0] = add(L, TS_COLL_ALL_REDUCE, TS_GROUP_TP, ph, layer, S, ring_ar(S, p));
    }
    for (int i = 0; i < 2; i++)
      if (x[i]) x[i]->overlap = c->tp_comm_overlap;
  }
}

static void cp_layer(comm_list *L, int32_t layer, ts_phase ph) {
  const work_cfg *c = L->c;
  uint32_t p = c->cp;
  uint64_t S = sat_bytes(sat_bytes(2ull * c->micro_batch, c->seq_len,
                                   (uint64_t)c->kv_heads * c->head_dim, 1) /
                             c->tp,
                         2, 1, 1);
  ts_comm_desc *x = add(L, TS_COLL_ALL_GATHER, TS_GROUP_CP, ph, layer, S,
                        ring_ag(S, p));
  if (x) x->overlap = 1;
  if (ph == TS_PHASE_BWD &&
      (x = add(L, TS_COLL_REDUCE_SCATTER, TS_GROUP_CP, ph, layer, S,
               ring_ag(S, p))))
    x->overlap = 1;
}

/* Expected distinct nodes among top_k draws landing on node with share P. */
static double hit(double P, uint32_t k) { return 1 - pow(1 - P, k); }

/* Loads of the EP group by host: O(ep * experts) for the shares, O(ep^2)
 * to group members by host. Returns TS_ENOMEM or 0. */
static int ep_compute(comm_list *L, ep_traffic *e) {
  const work_cfg *c = L->c;
  const ts_mapping *m = L->m;
  uint32_t ep = c->ep, gid = L->lb->group[TS_GROUP_EP];
  uint32_t me = L->lb->index[TS_GROUP_EP], k = c->top_k;
  int32_t own = L->lb->host;
  double *share = malloc((size_t)ep * sizeof *share);
  int32_t *host = malloc((size_t)ep * sizeof *host);
  if (!share || !host) {
    free(share);
    free(host);
    return TS_ENOMEM;
  }
  for (uint32_t i = 0; i < ep; i++) {
    share[i] = work_moe_rank_share(c, i);
    host[i] = m->labels[ts_mapping_group_member(m, TS_GROUP_EP, gid, i)].host;
  }
  double tokens = (double)c->seq_len / c->cp * c->micro_batch / c->tp;
  double unit = tokens * c->hidden * 2, bytes = unit * k;
  double total = 0, p_own = 0, mine = share[me], d_all = 0, remote = 0;
  for (uint32_t i = 0; i < ep; i++) {
    total += share[i];
    if (host[i] == own) p_own += share[i];
    else remote++;
    bool first = true; /* a node's share is summed at its first member */
    for (uint32_t j = 0; j < i && first; j++) first = host[j] != host[i];
    if (!first) continue;
    double pn = 0;
    for (uint32_t j = i; j < ep; j++)
      if (host[j] == host[i]) pn += share[j];
    d_all += hit(pn, k);
  }
  free(share);
  free(host);
  double intra = bytes * (p_own - mine), cross = bytes * (total - p_own);
  double ratio = 1;
  if (c->node_limit) {
    double d = d_all < c->node_limit ? d_all : c->node_limit;
    double lim = unit * fmax(d - hit(p_own, k), 0);
    if (lim < cross) ratio = cross > 0 ? lim / cross : 1, cross = lim;
  }
  double recv_intra = bytes * mine * (ep - 1 - remote);
  double recv_cross = bytes * mine * remote * ratio;
  e->bytes = ts_double_to_u64_sat(bytes);
  e->disp_cross = ts_double_to_u64_sat(cross);
  e->disp = ts_double_to_u64_sat(intra) + e->disp_cross;
  e->comb_cross = ts_double_to_u64_sat(recv_cross);
  e->comb = ts_double_to_u64_sat(recv_intra) + e->comb_cross;
  return 0;
}

/* Bytes of a dispatched element relative to bf16: FP8 dispatch (DeepEP,
 * DeepSeek-V3 section 3.3) sends 1 byte per element plus an fp32 scale per
 * 128-element tile: (1 + 4/128) / 2. */
static double dispatch_ratio(const work_cfg *c) {
  return c->dispatch_dtype == WORK_FP8 ? (1 + 4.0 / 128) / 2 : 1;
}

static uint64_t scaled(uint64_t v, double r) {
  return r == 1 ? v : (uint64_t)llround((double)v * r);
}

static void ep_layer(comm_list *L, const ep_traffic *e, int32_t layer,
                     ts_phase ph) {
  /* forward: dispatch then combine; backward: their transposes (bf16
   * gradients, so only a forward dispatch may be FP8) */
  bool bwd = ph == TS_PHASE_BWD;
  for (int i = 0; i < 2; i++) {
    bool disp = (i == 0) != bwd;
    double r = disp && !bwd ? dispatch_ratio(L->c) : 1;
    ts_comm_desc *x = add(L, TS_COLL_ALL_TO_ALL, TS_GROUP_EP, ph, layer,
                          scaled(e->bytes, r),
                          scaled(disp ? e->disp : e->comb, r));
    if (x) x->sent_cross_node = scaled(disp ? e->disp_cross : e->comb_cross, r);
  }
}

static void layer_comm(comm_list *L, const ep_traffic *e, uint32_t layer) {
  const work_cfg *c = L->c;
  bool full = c->recompute == WORK_RC_FULL;
  bool moe = work_layer_is_moe(c, layer) && c->ep > 1;
  static const ts_phase phases[] = {TS_PHASE_FWD, TS_PHASE_RECOMPUTE,
                                    TS_PHASE_BWD};
  for (int i = 0; i < 3; i++) {
    ts_phase ph = phases[i];
    if (ph == TS_PHASE_RECOMPUTE && !full) continue;
    if (c->tp > 1) tp_layer(L, (int32_t)layer, ph);
    if (c->cp > 1) cp_layer(L, (int32_t)layer, ph);
    if (moe) ep_layer(L, e, (int32_t)layer, ph);
  }
}

static void pp_send(comm_list *L, uint32_t to_stage, ts_phase ph) {
  const work_cfg *c = L->c;
  uint64_t S = sat_bytes((uint64_t)c->seq_len / c->cp, c->micro_batch,
                         c->hidden, 2) / c->tp;
  uint32_t peer = ts_mapping_group_member(L->m, TS_GROUP_PP,
                                          L->lb->group[TS_GROUP_PP], to_stage);
  ts_comm_desc *x = add(L, TS_COLL_SEND_RECV, TS_GROUP_PP, ph, -1, S, S);
  if (!x) return;
  x->peer = (int32_t)peer;
  if (L->m->labels[peer].host != L->lb->host) x->sent_cross_node = S;
}

static void pp_comm(comm_list *L) {
  const work_cfg *c = L->c;
  uint32_t pp = c->pp, v = work_chunks(c), s = L->lb->index[TS_GROUP_PP];
  if (pp < 2) return;
  for (uint32_t ch = 0; ch < v; ch++) {
    uint32_t peer, pch;
    if (work_chunk_peer(c, s, ch, 0, &peer, &pch))
      pp_send(L, peer, TS_PHASE_FWD);
    if (work_chunk_peer(c, s, ch, 1, &peer, &pch))
      pp_send(L, peer, TS_PHASE_BWD);
  }
}

/* Buckets of `total` bytes: one descriptor per bucket (of bsz / div). */
static void buckets_div(comm_list *L, ts_coll_op k, ts_group g, ts_phase ph,
                        double total, bool per_mb, uint64_t div) {
  const work_cfg *c = L->c;
  uint32_t p = L->m->size[g];
  uint64_t left = ts_double_to_u64_sat(total), bsz = c->dp_bucket / div;
  if (!bsz) bsz = 1;
  while (left > 0 && p > 1) {
    uint64_t sz = left < bsz ? left : bsz;
    uint64_t sent = k == TS_COLL_ALL_REDUCE ? ring_ar(sz, p) : ring_ag(sz, p);
    ts_comm_desc *x = add(L, k, g, ph, -1, sz, sent);
    if (!x) return;
    x->overlap = c->dp_overlap;
    x->per_microbatch = per_mb;
    x->repeat = per_mb ? L->mb : 1;
    left -= sz;
  }
}

static void buckets(comm_list *L, ts_coll_op k, ts_group g, ts_phase ph,
                    double total, bool per_mb) {
  buckets_div(L, k, g, ph, total, per_mb, 1);
}

/* FSDP / HSDP, gradients accumulated locally over the micro-batches and
 * reduced once per step: reduce-scatter over the shard group (the whole
 * gradient group for fsdp) during the last backward; HSDP then all-reduces
 * each shard over its replica group before the optimizer (phase step, kind
 * all-reduce). Unsharded bf16 weights are all-gathered once per step ahead
 * of the first micro-batch's forward (phase fwd, once per step) and kept
 * (no reshard after forward, as Llama 3 ran FSDP). Expert weights shard
 * over their expert gradient group. */
static void fsdp_comm(comm_list *L, double params, bool expert, double gb) {
  const work_cfg *c = L->c;
  bool hsdp = c->dp_mode == WORK_DP_HSDP && !expert;
  ts_group g = expert ? TS_GROUP_EXPERT_GRAD
               : hsdp ? TS_GROUP_SHARD : TS_GROUP_GRAD;
  buckets(L, TS_COLL_REDUCE_SCATTER, g, TS_PHASE_BWD, params * gb, false);
  if (hsdp) {
    uint32_t ds = L->m->size[TS_GROUP_SHARD];
    buckets_div(L, TS_COLL_ALL_REDUCE, TS_GROUP_REPLICA, TS_PHASE_STEP,
                params * gb / ds, false, ds);
  }
  buckets(L, TS_COLL_ALL_GATHER, g, TS_PHASE_FWD, params * 2, false);
}

static void dp_comm(comm_list *L) {
  const work_cfg *c = L->c;
  double dense, expert;
  work_stage_params(c, L->lb->index[TS_GROUP_PP], &dense, &expert);
  double gb = c->grad_dtype == WORK_GRAD_FP32 ? 4 : 2;
  static const ts_group gk[2] = {TS_GROUP_GRAD, TS_GROUP_EXPERT_GRAD};
  double params[2] = {dense, expert};
  for (int i = 0; i < 2; i++) {
    ts_group g = gk[i];
    if (params[i] <= 0) continue;
    if (c->dp_mode != WORK_DP_ZERO) {
      fsdp_comm(L, params[i], i == 1, gb);
      continue;
    }
    if (c->zero_stage == 0) {
      buckets(L, TS_COLL_ALL_REDUCE, g, TS_PHASE_BWD, params[i] * gb, false);
      continue;
    }
    buckets(L, TS_COLL_REDUCE_SCATTER, g, TS_PHASE_BWD, params[i] * gb,
            c->zero_stage >= 2);
    if (c->zero_stage >= 3) {
      buckets(L, TS_COLL_ALL_GATHER, g, TS_PHASE_FWD, params[i] * 2, true);
      buckets(L, TS_COLL_ALL_GATHER, g, TS_PHASE_BWD, params[i] * 2, true);
    } else if (c->dp_param_overlap) {
      /* overlapped with the next step's forward: phase fwd, once per step
       * (the step program prefetches them as it does FSDP's) */
      buckets(L, TS_COLL_ALL_GATHER, g, TS_PHASE_FWD, params[i] * 2, false);
    } else {
      buckets(L, TS_COLL_ALL_GATHER, g, TS_PHASE_STEP, params[i] * 2, false);
    }
  }
}

int ts_work_comm(const ts_workload *w, const ts_mapping *m, uint32_t rank,
                 ts_comm_desc **out, size_t *n) {
  *out = NULL;
  *n = 0;
  work_cfg c;
  work_derive(w, &c);
  if (rank >= m->ranks || work_validate(w, NULL) ||
      m->size[TS_GROUP_TP] != c.tp || m->size[TS_GROUP_PP] != c.pp ||
      m->size[TS_GROUP_EP] != c.ep || m->size[TS_GROUP_DP] != c.dp)
    return TS_EINVALID; /* mapping made from another layout */
  comm_list L = {NULL, 0, 0, 0, &c, m, &m->labels[rank], rank,
                 work_chunk_microbatches(&c), {0}};
  if (cross_shares(&L)) return TS_ENOMEM;
  ep_traffic e = {0, 0, 0, 0, 0};
  if (c.experts && c.ep > 1 && ep_compute(&L, &e)) return TS_ENOMEM;
  uint32_t stage = L.lb->index[TS_GROUP_PP];
  for (uint32_t ch = 0; ch < work_chunks(&c); ch++) {
    uint32_t first, count;
    work_stage_layers(&c, stage, ch, &first, &count);
    for (uint32_t l = first; l < first + count; l++) layer_comm(&L, &e, l);
  }
  pp_comm(&L);
  dp_comm(&L);
  if (L.fail) {
    free(L.v);
    return L.fail == 2 ? TS_ELIMIT : TS_ENOMEM;
  }
  *out = L.v;
  *n = L.n;
  return 0;
}

void ts_work_comm_volume(const ts_comm_desc *c, size_t n, ts_comm_volume *v) {
  memset(v, 0, sizeof *v);
  for (size_t i = 0; i < n; i++) {
    uint8_t g = c[i].group_kind;
    if (g >= TS_GROUP_COUNT) continue;
    if (c[i].per_microbatch) v->per_microbatch[g] += c[i].sent;
    v->per_step[g] += c[i].sent * c[i].repeat;
    v->cross_node_per_step += c[i].sent_cross_node * c[i].repeat;
    v->cross_node[g] += c[i].sent_cross_node * c[i].repeat;
  }
}
