/* work_step_prog.c - a rank's program for one training step.
 *
 * The compute stream walks the pipeline schedule's units (forward or
 * backward of model chunk c for micro-batch mb):
 *   gpipe        F(0..m-1), then B(0..m-1);
 *   1f1b         warm-up F(0..w-1) with w = min(pp - stage - 1, m), then
 *                F(w+i) B(i) pairs, then the remaining B (Megatron-LM);
 *   interleaved  Megatron-LM's interleaved 1F1B over m*v units: unit k is
 *                chunk (k / pp) % v (reversed for backward), micro-batch
 *                (k / (pp v)) pp + k % pp; warm-up 2 (pp - stage - 1) +
 *                (v - 1) pp units.
 * A forward unit receives the previous virtual stage's activations (SI_RECV,
 * blocking), runs its layers and sends to the next (SI_SEND, asynchronous);
 * a backward unit receives gradients from the next virtual stage and sends
 * to the previous one. Inside a layer (block = attention, then MLP; reversed
 * in backward, ops reversed within a block):
 *   TP   all-reduce at block end (sequence parallel: all-gather at block
 *        start, reduce-scatter at block end); the compute stream waits for
 *        it at once, or, with tp_comm_overlap, after its next compute
 *        segment (the collective hides behind the following GEMMs);
 *   CP   all-gather of K, V issued at attention block start and waited for
 *        before the attention core (overlapping layernorm and QKV);
 *        backward reduce-scatter after the core, waited for lazily;
 *   EP   all-to-all before the first and after the last expert GEMM
 *        (dispatch/combine), blocking.
 * Gradient buckets (ZeRO 0/1 reduction) are issued during the last
 * micro-batch's backward as layers' gradients become final (a layer's share
 * of the stage's gradient bytes is taken as uniform) when dp_overlap, else
 * after the backward; the optimizer waits for all of them; ZeRO 1/2 weight
 * all-gathers follow the optimizer. ZeRO 2 reduce-scatters follow every
 * micro-batch's backward, ZeRO 3 weight all-gathers precede every forward
 * and backward (blocking).
 * Consecutive compute ops of one unit merge into one segment.
 * Cost: O(m v x (ops + descriptors of a chunk)) instructions. */
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_budget.h"
#include "work/work_step.h"

typedef struct range {
  uint32_t first, count;
} range;

typedef struct dp_queue {
  uint32_t *idx;   /* descriptor indices, in order */
  uint32_t *ord;   /* prefetch: ordinal of each on its stream */
  uint32_t n, next;
  double total;    /* bytes over all of them */
  double issued;   /* bytes issued so far */
} dp_queue;

typedef struct builder {
  const work_cfg *c;
  step_prog *p;
  uint32_t stage, v, m, pp;
  uint32_t mlast;          /* micro-batches per chunk (DualPipe: m / 2) */
  bool scratch;            /* building a unit aside: ordinals not stored */
  const ts_op *ops;
  const ts_comm_desc *descs;
  size_t ndescs;
  range *opr, *dr;         /* [layer * TS_PHASE_COUNT + phase] */
  ts_time_ps edge[2][2];   /* [embed/logits][fwd/bwd] */
  ts_time_ps optimizer;
  dp_queue final[2];       /* gradient reduction: dense, expert */
  dp_queue pre[2];         /* fsdp weight all-gathers, once per step */
  uint32_t *per_mb;        /* per-micro-batch DP descriptors */
  uint32_t nper_mb, *step_ag, nstep_ag, *pre_opt, npre_opt;
  uint32_t layers_total, layers_done, fwd_done;
  /* deferred waits: (group, ordinal); armed once a compute follows */
  uint8_t dg[64];
  uint32_t dord[64];
  bool darmed[64];
  uint32_t ndef;
  int chunk, micro;
} builder;

static step_ins *emit(builder *B, uint8_t op) {
  step_prog *p = B->p;
  if (p->fail) return NULL;
  if (p->n >= ts_budget_get()->descriptors) { /* before growing: ts_budget.h */
    p->fail = 2;
    return NULL;
  }
  if (p->n == p->cap) {
    uint32_t cap = p->cap ? 2 * p->cap : 256;
    step_ins *v = realloc(p->ins, (size_t)cap * sizeof *v);
    if (!v) {
      p->fail = 1;
      return NULL;
    }
    p->ins = v;
    p->cap = cap;
  }
  step_ins *in = &p->ins[p->n++];
  memset(in, 0, sizeof *in);
  in->op = op;
  in->chunk = (uint16_t)(B->chunk < 0 ? 0 : B->chunk);
  in->micro = B->micro;
  in->layer = -1;
  return in;
}

static void flush_waits(builder *B, bool all);

static void comp(builder *B, ts_time_ps t, ts_phase ph, int32_t layer) {
  for (uint32_t i = 0; i < B->ndef; i++) B->darmed[i] = true;
  B->p->compute += t;
  step_prog *p = B->p;
  if (p->n && !p->fail) {
    step_ins *last = &p->ins[p->n - 1];
    bool fwd = ph == TS_PHASE_FWD, lfwd = last->kind == TS_PHASE_FWD;
    if (last->op == SI_COMP && last->micro == B->micro &&
        last->chunk == B->chunk && fwd == lfwd) {
      last->val += t;
      return;
    }
  }
  step_ins *in = emit(B, SI_COMP);
  if (!in) return;
  in->kind = (uint8_t)ph;
  in->layer = layer;
  in->val = t;
}

static uint32_t ordinal(builder *B, uint32_t g, uint32_t at) {
  step_prog *p = B->p;
  if (B->scratch) return p->nords[g]++; /* renumbered when merged */
  if (p->nords[g] == p->capords[g]) {
    uint32_t cap = p->capords[g] ? 2 * p->capords[g] : 64;
    uint32_t *v = realloc(p->ords[g], (size_t)cap * sizeof *v);
    if (!v) {
      p->fail = 1;
      return 0;
    }
    p->ords[g] = v;
    p->capords[g] = cap;
  }
  p->ords[g][p->nords[g]] = at;
  return p->nords[g]++;
}

/* Descriptors say all_to_all; the step runs it as all_to_allv, since EP
 * groups carry a per-pair matrix (routing skew, node-limited routing). */
static ts_coll_op coll_op(uint8_t kind) {
  return kind == TS_COLL_ALL_TO_ALL ? TS_COLL_ALL_TO_ALLV : (ts_coll_op)kind;
}

static void wait_for(builder *B, uint32_t g, uint32_t ord) {
  flush_waits(B, false);
  step_ins *in = emit(B, SI_WAIT);
  if (!in) return;
  in->group = (uint8_t)g;
  in->ord = ord;
}

/* Issues descriptor x; returns its ordinal on the group's stream. */
static uint32_t issue(builder *B, const ts_comm_desc *x, uint8_t flags) {
  flush_waits(B, false);
  step_ins *in = emit(B, SI_COLL);
  if (!in) return 0;
  in->group = x->group_kind;
  in->kind = (uint8_t)coll_op(x->kind);
  in->flags = flags;
  in->layer = x->layer;
  in->val = x->bytes;
  in->sent = x->sent;
  in->cross = x->sent_cross_node;
  uint32_t ord = ordinal(B, x->group_kind, B->p->n - 1);
  B->p->ins[B->p->n - 1].ord = ord;
  return ord;
}

static void defer_wait(builder *B, uint32_t g, uint32_t ord) {
  if (B->ndef == 64) flush_waits(B, true);
  B->dg[B->ndef] = (uint8_t)g;
  B->dord[B->ndef] = ord;
  B->darmed[B->ndef++] = false;
}

/* Emits deferred waits that a compute segment has covered (all: every). */
static void flush_waits(builder *B, bool all) {
  uint32_t keep = 0, n = B->ndef;
  uint8_t g[64];
  uint32_t o[64];
  bool armed[64];
  memcpy(g, B->dg, sizeof g);
  memcpy(o, B->dord, sizeof o);
  memcpy(armed, B->darmed, sizeof armed);
  B->ndef = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (all || armed[i]) {
      step_ins *in = emit(B, SI_WAIT);
      if (in) in->group = g[i], in->ord = o[i];
    } else {
      B->dg[keep] = g[i];
      B->dord[keep] = o[i];
      B->darmed[keep++] = false;
    }
  }
  B->ndef = keep;
}

/* Issue + wait now, or + wait after the next compute when overlapped. */
static void coll(builder *B, const ts_comm_desc *x, uint8_t flags) {
  uint32_t ord = issue(B, x, flags);
  if (x->overlap) defer_wait(B, x->group_kind, ord);
  else wait_for(B, x->group_kind, ord);
}


/* ---- one layer ---------------------------------------------------- */

typedef struct layer_descs {
  const ts_comm_desc *tp[8], *cp[2], *ep[2];
  uint32_t ntp, itp, ncp, nep;
} layer_descs;

bool step_op_is_attn(uint8_t k) {
  return k == TS_OP_LAYERNORM || k == TS_OP_QKV || k == TS_OP_ATTN_SCORE ||
         k == TS_OP_ATTN_VALUE || k == TS_OP_ATTN_OUT || k == TS_OP_ELEMENTWISE;
}
static bool is_core(uint8_t k) {
  return k == TS_OP_ATTN_SCORE || k == TS_OP_ATTN_VALUE;
}
static bool is_expert(uint8_t k) {
  return k == TS_OP_EXPERT_UP || k == TS_OP_EXPERT_DOWN;
}

static void layer_descs_get(const builder *B, uint32_t layer, ts_phase ph,
                            layer_descs *L) {
  memset(L, 0, sizeof *L);
  range r = B->dr[layer * TS_PHASE_COUNT + ph];
  for (uint32_t i = r.first; i < r.first + r.count; i++) {
    const ts_comm_desc *x = &B->descs[i];
    if (x->group_kind == TS_GROUP_TP && L->ntp < 8) L->tp[L->ntp++] = x;
    else if (x->group_kind == TS_GROUP_CP && L->ncp < 2) L->cp[L->ncp++] = x;
    else if (x->group_kind == TS_GROUP_EP && L->nep < 2) L->ep[L->nep++] = x;
  }
}

/* Last index in idx[0..n) satisfying pred, or n. */
static uint32_t last_of(const ts_op *ops, const uint32_t *idx, uint32_t n,
                        bool (*pred)(uint8_t)) {
  uint32_t last = n;
  for (uint32_t i = 0; i < n; i++)
    if (pred(ops[idx[i]].kind)) last = i;
  return last;
}

/* One block (attention or MLP) whose ops are idx[0..n) in run order. */
static void emit_block(builder *B, const uint32_t *idx, uint32_t n,
                       layer_descs *L, ts_phase ph, bool attn) {
  if (!n) return;
  bool bwd = ph == TS_PHASE_BWD;
  if (L->itp < L->ntp && L->tp[L->itp]->kind == TS_COLL_ALL_GATHER)
    coll(B, L->tp[L->itp++], 0);
  uint32_t cp_ord = 0;
  bool cp_wait = false, ep_started = false;
  if (attn && L->ncp) {
    cp_ord = issue(B, L->cp[0], 0);
    cp_wait = true;
  }
  uint32_t last_exp = last_of(B->ops, idx, n, is_expert);
  uint32_t last_core = last_of(B->ops, idx, n, is_core);
  for (uint32_t i = 0; i < n; i++) {
    const ts_op *o = &B->ops[idx[i]];
    if (cp_wait && is_core(o->kind)) {
      wait_for(B, TS_GROUP_CP, cp_ord);
      cp_wait = false;
    }
    if (is_expert(o->kind) && !ep_started && L->nep == 2) {
      coll(B, L->ep[0], bwd ? SI_F_COMBINE : 0);
      ep_started = true;
    }
    comp(B, o->time, ph, o->layer);
    if (i == last_exp && ep_started) coll(B, L->ep[1], bwd ? 0 : SI_F_COMBINE);
    if (i == last_core && bwd && L->ncp > 1) coll(B, L->cp[1], 0);
  }
  if (cp_wait) wait_for(B, TS_GROUP_CP, cp_ord);
  if (L->itp < L->ntp) coll(B, L->tp[L->itp++], 0);
}

static void emit_layer(builder *B, uint32_t layer, ts_phase ph) {
  range r = B->opr[layer * TS_PHASE_COUNT + ph];
  if (!r.count) return;
  layer_descs L;
  layer_descs_get(B, layer, ph, &L);
  uint32_t attn[32], mlp[32], na = 0, nm = 0;
  bool bwd = ph == TS_PHASE_BWD;
  for (uint32_t k = 0; k < r.count && k < 32; k++) {
    uint32_t i = bwd ? r.first + r.count - 1 - k : r.first + k;
    if (step_op_is_attn(B->ops[i].kind)) attn[na++] = i;
    else mlp[nm++] = i;
  }
  if (bwd) {
    emit_block(B, mlp, nm, &L, ph, false);
    emit_block(B, attn, na, &L, ph, true);
  } else {
    emit_block(B, attn, na, &L, ph, true);
    emit_block(B, mlp, nm, &L, ph, false);
  }
}

/* ---- pipeline units ------------------------------------------------ */

static uint64_t pp_bytes(const builder *B) {
  for (size_t i = 0; i < B->ndescs; i++)
    if (B->descs[i].kind == TS_COLL_SEND_RECV) return B->descs[i].bytes;
  return 0;
}

static void recv(builder *B, uint32_t dir, uint32_t ch, uint32_t mb) {
  flush_waits(B, true);
  step_ins *in = emit(B, SI_RECV);
  if (!in) return;
  in->kind = (uint8_t)dir;
  in->ord = step_slot(dir, ch, mb, B->v, B->m);
}

static void send(builder *B, uint32_t dir, uint32_t ch, uint32_t mb) {
  uint32_t peer, rch;
  if (!work_chunk_peer(B->c, B->stage, ch, dir, &peer, &rch)) return;
  flush_waits(B, true);
  step_ins *in = emit(B, SI_SEND);
  if (!in) return;
  in->kind = (uint8_t)dir;
  in->peer = (uint16_t)peer;
  in->ord = step_slot(dir, rch, mb, B->v, B->m);
  in->val = in->sent = pp_bytes(B);
}

/* Per-micro-batch DP descriptors of phase ph and kind k: issue, and wait
 * at once when `block`. */
static void dp_per_mb(builder *B, ts_phase ph, uint8_t kind, bool block) {
  for (uint32_t i = 0; i < B->nper_mb; i++) {
    const ts_comm_desc *x = &B->descs[B->per_mb[i]];
    if (x->phase != ph || x->kind != kind) continue;
    uint32_t ord = issue(B, x, 0);
    if (block) wait_for(B, x->group_kind, ord);
  }
}

/* Issues gradient buckets whose bytes are final (force: all left). */
static void issue_buckets(builder *B, bool force) {
  if (!force && !B->c->dp_overlap) return;
  for (int q = 0; q < 2; q++) {
    dp_queue *Q = &B->final[q];
    double target = force || !B->layers_total
                        ? Q->total
                        : Q->total * B->layers_done / B->layers_total;
    while (Q->next < Q->n) {
      const ts_comm_desc *x = &B->descs[Q->idx[Q->next]];
      if (Q->issued + (double)x->bytes > target + 0.5) break;
      issue(B, x, 0);
      Q->issued += (double)x->bytes;
      Q->next++;
    }
  }
}

/* fsdp: every weight all-gather is issued when the step starts ... */
static void prefetch_issue(builder *B) {
  for (int q = 0; q < 2; q++)
    for (uint32_t i = 0; i < B->pre[q].n; i++)
      B->pre[q].ord[i] = issue(B, &B->descs[B->pre[q].idx[i]], 0);
}

/* ... and the first micro-batch's forward waits, before each layer, for
 * that layer's share of the stage's weights (uniform per layer, as FSDP
 * prefetches the next layer's shard while this one computes). */
static void prefetch_wait(builder *B) {
  B->fwd_done++;
  for (int q = 0; q < 2; q++) {
    dp_queue *Q = &B->pre[q];
    double target = B->layers_total
                        ? Q->total * B->fwd_done / B->layers_total : Q->total;
    while (Q->next < Q->n && Q->issued < target - 0.5) {
      const ts_comm_desc *x = &B->descs[Q->idx[Q->next]];
      wait_for(B, x->group_kind, Q->ord[Q->next]);
      Q->issued += (double)x->bytes;
      Q->next++;
    }
  }
}

/* Pipeline position of chunk ch on this stage, and the last position. */
static uint32_t vstage(const builder *B, uint32_t ch) {
  return work_chunk_pos(B->c, B->stage, ch);
}

static void fwd_unit(builder *B, uint32_t ch, uint32_t mb) {
  uint32_t g = vstage(B, ch), first, count, P = work_positions(B->c);
  B->chunk = (int)ch;
  B->micro = (int)mb;
  bool pipe = B->pp > 1; /* pp = 1 with chunks: activations stay local */
  if (pipe && g > 0) recv(B, 0, ch, mb);
  if (ch == 0) dp_per_mb(B, TS_PHASE_FWD, TS_COLL_ALL_GATHER, true);
  if (g == 0) comp(B, B->edge[0][0], TS_PHASE_FWD, -1);
  work_stage_layers(B->c, B->stage, ch, &first, &count);
  for (uint32_t l = first; l < first + count; l++) {
    if (mb == 0) prefetch_wait(B);
    emit_layer(B, l, TS_PHASE_FWD);
  }
  if (g + 1 == P) comp(B, B->edge[1][0], TS_PHASE_FWD, -1);
  flush_waits(B, true);
  if (pipe && g + 1 < P) send(B, 0, ch, mb);
}

static void bwd_unit(builder *B, uint32_t ch, uint32_t mb) {
  uint32_t g = vstage(B, ch), first, count, P = work_positions(B->c);
  B->chunk = (int)ch;
  B->micro = (int)mb;
  bool pipe = B->pp > 1;
  if (pipe && g + 1 < P) recv(B, 1, ch, mb);
  if (ch + 1 == B->v) dp_per_mb(B, TS_PHASE_BWD, TS_COLL_ALL_GATHER, true);
  if (g + 1 == P) comp(B, B->edge[1][1], TS_PHASE_BWD, -1);
  work_stage_layers(B->c, B->stage, ch, &first, &count);
  for (uint32_t l = first + count; l-- > first;) {
    emit_layer(B, l, TS_PHASE_RECOMPUTE);
    emit_layer(B, l, TS_PHASE_BWD);
    if (mb + 1 == B->mlast) {
      B->layers_done++;
      issue_buckets(B, false);
    }
  }
  if (g == 0) comp(B, B->edge[0][1], TS_PHASE_BWD, -1);
  flush_waits(B, true);
  if (pipe && g > 0) send(B, 1, ch, mb);
  if (ch == 0) dp_per_mb(B, TS_PHASE_BWD, TS_COLL_REDUCE_SCATTER, false);
}

/* Unit k of the forward (bwd = 0) or backward order. */
static void unit_of(const builder *B, uint32_t k, bool bwd, uint32_t *ch,
                    uint32_t *mb) {
  uint32_t pp = B->pp, v = B->v;
  if (v == 1) {
    *ch = 0;
    *mb = k;
    return;
  }
  uint32_t c = (k / pp) % v;
  *ch = bwd ? v - 1 - c : c;
  *mb = (k / (pp * v)) * pp + k % pp;
}

static void run_unit(builder *B, uint32_t k, bool bwd) {
  uint32_t ch, mb;
  unit_of(B, k, bwd, &ch, &mb);
  if (bwd) bwd_unit(B, ch, mb);
  else fwd_unit(B, ch, mb);
}

/* ---- overlapped forward/backward pairs ------------------------------ *
 * DualPipe (and ep_comm_overlap for 1F1B / interleaved) runs the forward
 * of one micro-batch and the backward of another as one pair whose EP
 * all-to-alls hide behind the other's compute (DeepSeek-V3 report, figure
 * 4). Each unit is built aside into its own instruction list; the two
 * lists then merge: copy one until it must wait for one of its EP
 * collectives, switch to the other (whose compute now runs while the
 * all-to-all is in flight), come back when that one waits too. Each list
 * keeps its own order, so every unit's dependencies hold; collectives are
 * renumbered on their streams in merged issue order. */

typedef struct aside {
  step_prog p;
  uint32_t at;
  bool held;                       /* stopped at an EP wait */
  uint32_t base[TS_GROUP_COUNT];   /* main ordinals before the unit */
  uint32_t *map[TS_GROUP_COUNT];   /* aside ordinal - base -> main */
} aside;

static void build_aside(builder *B, aside *A, bool bwd, uint32_t ch,
                        uint32_t mb) {
  memset(A, 0, sizeof *A);
  step_prog *main = B->p;
  memcpy(A->base, main->nords, sizeof A->base);
  memcpy(A->p.nords, main->nords, sizeof A->p.nords);
  B->p = &A->p;
  B->scratch = true;
  if (bwd) bwd_unit(B, ch, mb);
  else fwd_unit(B, ch, mb);
  B->p = main;
  B->scratch = false;
  main->compute += A->p.compute;
  for (int g = 0; g < TS_GROUP_COUNT && !A->p.fail; g++) {
    uint32_t n = A->p.nords[g] - A->base[g];
    if (n && !(A->map[g] = malloc(n * sizeof *A->map[g]))) A->p.fail = 1;
  }
  if (A->p.fail) main->fail = 1;
}

static void aside_free(aside *A) {
  free(A->p.ins);
  for (int g = 0; g < TS_GROUP_COUNT; g++) free(A->map[g]);
}

static void copy_ins(builder *B, aside *A, const step_ins *in) {
  step_ins *o = emit(B, in->op);
  if (!o) return;
  *o = *in;
  uint32_t g = in->group;
  if (in->op == SI_COLL) {
    o->ord = ordinal(B, g, B->p->n - 1);
    A->map[g][in->ord - A->base[g]] = o->ord;
  } else if (in->op == SI_WAIT && in->ord >= A->base[g]) {
    o->ord = A->map[g][in->ord - A->base[g]];
  }
}

static void merge(builder *B, aside *x, aside *y) {
  aside *cur = x, *oth = y;
  while (!B->p->fail) {
    if (cur->at >= cur->p.n) {
      if (oth->at >= oth->p.n) break;
      aside *t = cur;
      cur = oth, oth = t;
      continue;
    }
    const step_ins *in = &cur->p.ins[cur->at];
    if (in->op == SI_WAIT && in->group == TS_GROUP_EP && !cur->held &&
        oth->at < oth->p.n) {
      cur->held = true;
      aside *t = cur;
      cur = oth, oth = t;
      continue;
    }
    cur->held = false;
    copy_ins(B, cur, in);
    cur->at++;
  }
}

/* Forward (fch, fmb) and backward (bch, bmb), overlapped when asked and
 * independent (not the same micro-batch of the same chunk, whose backward
 * needs its own forward done). */
static void pair(builder *B, uint32_t fch, uint32_t fmb, uint32_t bch,
                 uint32_t bmb, bool overlap) {
  if (!overlap || (fch == bch && fmb == bmb) || B->c->experts == 0) {
    fwd_unit(B, fch, fmb);
    bwd_unit(B, bch, bmb);
    return;
  }
  aside f, b;
  build_aside(B, &f, false, fch, fmb);
  build_aside(B, &b, true, bch, bmb);
  if (!B->p->fail) merge(B, &f, &b);
  aside_free(&f);
  aside_free(&b);
}

/* ---- DualPipe (DeepSeek-V3; deepseek-ai/DualPipe's step order) ------- *
 * Rank s holds two chunks: chunk 0 = position s of the forward direction,
 * chunk 1 = position pp-1-s of the reverse direction; each direction
 * carries m/2 micro-batches. Phase 0 of the reference code is the
 * direction in which the rank sits in the first half of the pipeline. The
 * weight-gradient split of zero-bubble steps (W) stays inside B here. */

typedef struct dual {
  builder *B;
  uint32_t flip, f[2], b[2];
} dual;

static void dual_f(dual *D, uint32_t phase) {
  uint32_t ch = phase ^ D->flip;
  if (D->f[ch] < D->B->mlast) fwd_unit(D->B, ch, D->f[ch]++);
}

static void dual_b(dual *D, uint32_t phase) {
  uint32_t ch = phase ^ D->flip;
  if (D->b[ch] < D->B->mlast) bwd_unit(D->B, ch, D->b[ch]++);
}

static void dual_fb(dual *D, uint32_t pf, uint32_t pb) {
  uint32_t cf = pf ^ D->flip, cb = pb ^ D->flip;
  if (D->f[cf] >= D->B->mlast) return dual_b(D, pb);
  if (D->b[cb] >= D->B->mlast) return dual_f(D, pf);
  uint32_t fm = D->f[cf]++, bm = D->b[cb]++;
  pair(D->B, cf, fm, cb, bm, true);
}

static void dualpipe(builder *B) {
  uint32_t pp = B->pp, H = pp / 2, N = B->mlast;
  uint32_t hr = B->stage < pp - 1 - B->stage ? B->stage : pp - 1 - B->stage;
  bool middle = hr == H - 1;
  dual D = {B, B->stage >= H, {0, 0}, {0, 0}};
  for (uint32_t i = 0; i < (H - hr - 1) * 2; i++) dual_f(&D, 0); /* nF0 */
  for (uint32_t i = 0; i < hr + 1; i++) dual_f(&D, 0), dual_f(&D, 1);
  for (uint32_t i = 0; i < H - hr - 1; i++) dual_b(&D, 1), dual_f(&D, 1);
  for (uint32_t i = 0; i + pp < N + hr + 1; i++) { /* main: nF0B1F1B0 */
    if (i == 0 && middle) dual_f(&D, 0), dual_b(&D, 1);
    else dual_fb(&D, 0, 1);
    dual_fb(&D, 1, 0);
  }
  for (uint32_t i = 0; i < H - hr - 1; i++) dual_b(&D, 1), dual_fb(&D, 1, 0);
  for (uint32_t i = 0; i < hr + 1; i++) dual_b(&D, 1), dual_b(&D, 0);
  for (uint32_t i = 0; i < H - hr - 1; i++) dual_b(&D, 0);
  for (uint32_t ch = 0; ch < 2; ch++) { /* guards: every unit runs once */
    while (D.f[ch] < N) fwd_unit(B, ch, D.f[ch]++);
    while (D.b[ch] < N) bwd_unit(B, ch, D.b[ch]++);
  }
}

static void schedule(builder *B) {
  uint32_t total = B->m * B->v, warm;
  prefetch_issue(B);
  if (B->c->schedule == WORK_DUALPIPE) {
    dualpipe(B);
    return;
  }
  if (B->c->schedule == WORK_GPIPE) {
    for (uint32_t k = 0; k < total; k++) run_unit(B, k, false);
    for (uint32_t k = 0; k < total; k++) run_unit(B, k, true);
    return;
  }
  if (B->v > 1) warm = (B->pp - B->stage - 1) * 2 + (B->v - 1) * B->pp;
  else warm = B->pp - B->stage - 1;
  if (warm > total) warm = total;
  for (uint32_t k = 0; k < warm; k++) run_unit(B, k, false);
  for (uint32_t k = 0; k + warm < total; k++) {
    uint32_t fch, fmb, bch, bmb;
    unit_of(B, warm + k, false, &fch, &fmb);
    unit_of(B, k, true, &bch, &bmb);
    pair(B, fch, fmb, bch, bmb, B->c->ep_comm_overlap);
  }
  for (uint32_t k = total - warm; k < total; k++) run_unit(B, k, true);
}

/* Optimizer: wait for every gradient collective, step, then gather. */
static void finish(builder *B) {
  issue_buckets(B, true);
  flush_waits(B, true);
  B->chunk = -1;
  B->micro = -1;
  static const uint8_t gk[3] = {TS_GROUP_GRAD, TS_GROUP_EXPERT_GRAD,
                                TS_GROUP_SHARD};
  for (int i = 0; i < 3; i++)
    if (B->p->nords[gk[i]]) wait_for(B, gk[i], B->p->nords[gk[i]] - 1);
  /* HSDP: the shards' all-reduce over replicas needs the reduce-scatter */
  for (uint32_t i = 0; i < B->npre_opt; i++)
    issue(B, &B->descs[B->pre_opt[i]], 0);
  if (B->p->nords[TS_GROUP_REPLICA])
    wait_for(B, TS_GROUP_REPLICA, B->p->nords[TS_GROUP_REPLICA] - 1);
  comp(B, B->optimizer, TS_PHASE_STEP, -1);
  for (uint32_t i = 0; i < B->nstep_ag; i++)
    issue(B, &B->descs[B->step_ag[i]], 0);
  for (int i = 0; i < 2; i++)
    if (B->p->nords[gk[i]]) wait_for(B, gk[i], B->p->nords[gk[i]] - 1);
}

/* ---- indexing ------------------------------------------------------ */

static void index_ops(builder *B, size_t nops) {
  for (size_t i = 0; i < nops; i++) {
    const ts_op *o = &B->ops[i];
    if (o->layer >= 0) {
      range *r = &B->opr[(uint32_t)o->layer * TS_PHASE_COUNT + o->phase];
      if (!r->count) r->first = (uint32_t)i;
      r->count++;
      continue;
    }
    int bwd = o->phase == TS_PHASE_BWD;
    if (o->kind == TS_OP_EMBED) B->edge[0][bwd] += o->time;
    else if (o->kind == TS_OP_LOGITS) B->edge[1][bwd] += o->time;
    else if (o->kind == TS_OP_OPTIMIZER) B->optimizer += o->time;
  }
}

static int index_descs(builder *B) {
  size_t n = B->ndescs;
  B->per_mb = malloc((n + 1) * sizeof *B->per_mb);
  B->step_ag = malloc((n + 1) * sizeof *B->step_ag);
  B->final[0].idx = malloc((n + 1) * sizeof(uint32_t));
  B->final[1].idx = malloc((n + 1) * sizeof(uint32_t));
  B->pre_opt = malloc((n + 1) * sizeof *B->pre_opt);
  for (int q = 0; q < 2; q++) {
    B->pre[q].idx = malloc((n + 1) * sizeof(uint32_t));
    B->pre[q].ord = malloc((n + 1) * sizeof(uint32_t));
    if (!B->pre[q].idx || !B->pre[q].ord) return TS_ENOMEM;
  }
  if (!B->per_mb || !B->step_ag || !B->final[0].idx || !B->final[1].idx ||
      !B->pre_opt)
    return TS_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    const ts_comm_desc *x = &B->descs[i];
    if (x->layer >= 0) {
      range *r = &B->dr[(uint32_t)x->layer * TS_PHASE_COUNT + x->phase];
      if (!r->count) r->first = (uint32_t)i;
      r->count++;
    } else if (x->kind == TS_COLL_SEND_RECV) {
      continue;
    } else if (x->per_microbatch) {
      B->per_mb[B->nper_mb++] = (uint32_t)i;
    } else if (x->phase == TS_PHASE_STEP && x->kind == TS_COLL_ALL_REDUCE) {
      B->pre_opt[B->npre_opt++] = (uint32_t)i;
    } else if (x->phase == TS_PHASE_STEP) {
      B->step_ag[B->nstep_ag++] = (uint32_t)i;
    } else if (x->phase == TS_PHASE_FWD) {
      dp_queue *Q = &B->pre[x->group_kind == TS_GROUP_EXPERT_GRAD];
      Q->idx[Q->n++] = (uint32_t)i;
      Q->total += (double)x->bytes;
    } else {
      dp_queue *Q = &B->final[x->group_kind == TS_GROUP_EXPERT_GRAD];
      Q->idx[Q->n++] = (uint32_t)i;
      Q->total += (double)x->bytes;
    }
  }
  return 0;
}

static void builder_free(builder *B) {
  free(B->opr);
  free(B->dr);
  free(B->per_mb);
  free(B->step_ag);
  free(B->final[0].idx);
  free(B->final[1].idx);
  free(B->pre_opt);
  for (int q = 0; q < 2; q++) {
    free(B->pre[q].idx);
    free(B->pre[q].ord);
  }
}

void step_prog_free(step_prog *p) {
  if (!p) return;
  free(p->ins);
  for (int g = 0; g < TS_GROUP_COUNT; g++) free(p->ords[g]);
  memset(p, 0, sizeof *p);
}

int step_prog_build(const work_cfg *c, uint32_t stage, const ts_op *ops,
                    size_t nops, const ts_comm_desc *descs, size_t ndescs,
                    step_prog *p) {
  memset(p, 0, sizeof *p);
  builder B;
  memset(&B, 0, sizeof B);
  B.c = c;
  B.p = p;
  B.stage = stage;
  B.v = work_chunks(c);
  B.m = work_microbatches(c);
  B.mlast = work_chunk_microbatches(c);
  B.pp = c->pp;
  B.ops = ops;
  B.descs = descs;
  B.ndescs = ndescs;
  B.chunk = B.micro = -1;
  size_t nr = (size_t)c->layers * TS_PHASE_COUNT;
  B.opr = calloc(nr, sizeof *B.opr);
  B.dr = calloc(nr, sizeof *B.dr);
  int rc = B.opr && B.dr ? index_descs(&B) : TS_ENOMEM;
  if (!rc) {
    index_ops(&B, nops);
    for (uint32_t ch = 0; ch < B.v; ch++) {
      uint32_t first, count;
      work_stage_layers(c, stage, ch, &first, &count);
      B.layers_total += count;
    }
    schedule(&B);
    finish(&B);
    if (p->fail) rc = p->fail == 2 ? TS_ELIMIT : TS_ENOMEM;
  }
  builder_free(&B);
  if (rc) step_prog_free(p);
  return rc;
}
