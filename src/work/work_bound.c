/* work_bound.c - a provable lower bound on the step time of compiled
 * programs (ts_step_bound, ts_step_prog.h), for `topsim sweep`, which
 * simulates mappings in increasing-bound order and stops once no bound can
 * reach its top rows.
 *
 * The bound replays the programs of one (stage, EP index) each, not the
 * ranks, in the max-plus algebra the step runner follows:
 *   COMP  t += val                          (the runner: val x straggler
 *                                            factor >= val, ts_faults.h)
 *   COLL  start = max(t, stream free)       (the runner: the instance starts
 *         end = start + lb(instance)         at the LAST member's arrival,
 *         stream free = end                  after the previous instance of
 *                                            the stream completed)
 *   WAIT  t = max(t, end of that instance)
 *   SEND  the receiver's slot is ready at t (the runner: at t + transfer)
 *   RECV  t = max(t, slot ready)
 * and the step is the latest program end (the runner: the latest rank
 * finish). Proof sketch that bound <= simulated step: by induction over
 * each program's instructions in order, every time above is <= the time at
 * which ANY rank running that program reaches the same instruction in the
 * simulation, because each rule takes a max of lower bounds (a rank's own
 * arrival <= the last member's; a sender's send time <= the delivery) and
 * adds a duration no larger than the simulated one: COMP exactly val (f >=
 * 1), COLL lb() below, SEND 0. Folding, the fast path and the solver
 * shortcuts of exec are exact (docs/model.md), so they change nothing.
 * Nothing in the runner reorders a stream by timing: each stream runs its
 * instructions and instances in program order, whatever the contention.
 *
 * lb(instance) of a collective with p > 1 members is bytes / ingress, where
 * ingress >= the sum of the capacities of every link direction entering
 * any GPU (a flow never runs faster than a direction's capacity, degraded
 * or failed links only lower it, and the instance starts no transfer before
 * its last member arrived) and bytes is what one member must receive
 * whatever the algorithm: all-reduce of S: S (every element of its result
 * depends on the other members' inputs, so at least one value per element
 * arrives, reduced in a peer or in a switch); all-gather of the gathered
 * tensor S: S (p-1)/p; reduce-scatter: S/p; all-to-all and sends: 0.
 *
 * The host term: a member on host H, whose group has k_H <= K members on
 * H (K = host_members), needs data that only other hosts hold, and it all
 * crosses H's cut, whose entering link directions add up to <= host_in:
 * all-reduce of S: S (every element of its result depends on the inputs
 * of the members off H, so at least one value per element enters H);
 * all-gather: the p - k_H shards held off H, S (p-K)/p at least;
 * reduce-scatter: the shards of the p - k_H members off H, S (p-K)/p at
 * least, leave H (every element of them depends on the inputs of the
 * members on H, so at least one value per element leaves), and the
 * instance ends for every member at once (exec_step_run.c's coll_done),
 * after the last of them. Only when K < p (every group has a member off
 * every host); lb is the larger of the two terms, each a lower bound on
 * the instance's time from its start.
 *
 * Host fluid terms (bp->host_flags; docs/model.md "Host fluid"). The
 * bytes an instance must move across a host H's cut (the host term's
 * counts above) cannot start crossing before the instance starts, which
 * is at or after every member's issue time, and H's cut carries at most
 * host_in per direction. For a set of such jobs j released at r_j with
 * b_j bytes each way, the time all have ended is at least the makespan of
 * one machine of speed host_in with release dates and preemption,
 * max_k (r_k + sum_{r_j >= r_k} b_j / host_in), which the recursion
 * E = max(r, E) + b / host_in computes exactly when jobs come in
 * nondecreasing r (program order: the replayed issue time t only grows).
 * Two sets are used, each direction on its own machine:
 *  - TS_HOST_TP_WHOLE: the tp members of a TP group, all on one host and
 *    all running this program, are in tp distinct groups of every kind
 *    that fixes the tp coordinate (CP, EP, DP, gradients), each with at
 *    most K members on H: the k-th instance of such a stream, summed over
 *    the TP group, moves >= tp S (p-K)/p in the major direction (all-
 *    gather in, reduce-scatter out) and >= tp S/p in the other (all-
 *    reduce: tp S each way). A stream's instances end in order, so once
 *    every member waited for its k-th instance, the latest member's time
 *    is >= E_k of that stream's first k jobs. hi, a lower bound on the
 *    latest member's time at the same instruction, takes it; a compute
 *    segment adds its time to hi too (every member runs it for at least
 *    that), and a TP collective starts at the last member's arrival, so
 *    at or after hi: this is how the CP all-gathers of the 8 ranks of a
 *    DGX, which share its NICs, reach every rank's time.
 *  - TS_HOST_ONE_STAGE: every host holds n = host_gpus ranks of one stage
 *    and one EP rank (so running this program), in m >= ceil(n/K)
 *    distinct groups of the kind (sum of their members on H = n): an
 *    instance moves >= S (m - n/p) in the major direction and S n/p in the
 *    other (all-reduce S m each way). Every instance up to the last one waited for on its
 *    stream ends before its member's program does, so the step is >= E
 *    over all of them, all streams on one machine per direction (their
 *    bytes are different data).
 *
 * Cost: O(programs x program length) per call, plus O(passes x programs)
 * for RECVs met before their SEND was replayed. */
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_checked.h"
#include "topsim/ts_coll_op.h"
#include "work/work_step.h"

typedef struct bound_prog {
  uint32_t pc;
  ts_time_ps t;
  ts_time_ps hi;                    /* <= the latest TP member's time */
  ts_time_ps free_at[TS_GROUP_COUNT];
  ts_time_ps *end[TS_GROUP_COUNT]; /* [ordinal]: instance end */
  ts_time_ps *tp_end[TS_GROUP_COUNT]; /* [ordinal]: the TP group's E_k */
  ts_time_ps tp_e[TS_GROUP_COUNT][2];  /* running E per stream, in/out */
  ts_time_ps host_e[2];               /* the host's E, in/out */
  uint32_t last_wait[TS_GROUP_COUNT]; /* 1 + last ordinal waited for */
} bound_prog;

/* Kinds whose groups fix the tp coordinate (TP members: distinct groups). */
static bool fixes_tp(uint8_t g) {
  return g == TS_GROUP_CP || g == TS_GROUP_EP || g == TS_GROUP_DP ||
         g == TS_GROUP_GRAD || g == TS_GROUP_EXPERT_GRAD;
}

/* One job of b bytes released at r on a machine of speed cap (bytes/s):
 * *e = max(r, *e) + b / cap, floored (a lower bound). */
static void fluid_add(ts_time_ps *e, ts_time_ps r, double b, double cap) {
  if (!(b > 0)) return;
  if (r > *e) *e = r;
  /* saturating at 2^62 ps (53 days): still a lower bound, never UB */
  const ts_time_ps top = (ts_time_ps)1 << 62;
  double x = b / cap * 1e12;
  ts_time_ps add = x < (double)top ? (ts_time_ps)x : top;
  *e = *e < top && add < top - *e ? *e + add : top;
}

/* Bytes in (dir 0) and out (dir 1) of a host of instances of kind over
 * groups of p members: groups of them counted, major and minor the sums
 * of (p - k)/p and k/p over those groups (see above). */
static void fluid_bytes(uint8_t kind, double S, double groups, double major,
                        double minor, double b[2]) {
  b[0] = b[1] = 0;
  switch (kind) {
  case TS_COLL_ALL_REDUCE: b[0] = b[1] = S * groups; break;
  case TS_COLL_ALL_GATHER: b[0] = S * major, b[1] = S * minor; break;
  case TS_COLL_REDUCE_SCATTER: b[1] = S * major, b[0] = S * minor; break;
  default: break;
  }
}

/* The fluid terms of one COLL issued at the program's time t. */
static void fluid_coll(const ts_step_ins *in, const ts_step_bound_params *bp,
                       bound_prog *b) {
  uint8_t g = in->group;
  uint32_t p = bp->group_size[g], K = bp->host_members[g], tp = bp->group_size[TS_GROUP_TP];
  double cap = bp->host_in_bps, S = (double)in->val, x[2];
  if (!(cap > 0) || p <= 1 || !K || K >= p) return;
  if (bp->host_flags & TS_HOST_TP_WHOLE && tp > 1 && fixes_tp(g)) {
    fluid_bytes(in->kind, S, tp, (double)tp * (p - K) / p, (double)tp / p, x);
    for (int d = 0; d < 2; d++) fluid_add(&b->tp_e[g][d], b->t, x[d], cap);
    ts_time_ps e = b->tp_e[g][0] > b->tp_e[g][1] ? b->tp_e[g][0] : b->tp_e[g][1];
    b->tp_end[g][in->ord] = e;
  }
  uint32_t n = bp->host_gpus;
  if (bp->host_flags & TS_HOST_ONE_STAGE && n && in->ord < b->last_wait[g]) {
    double m = (double)((n + K - 1) / K);
    fluid_bytes(in->kind, S, m, m - (double)n / p, (double)n / p, x);
    for (int d = 0; d < 2; d++) fluid_add(&b->host_e[d], b->t, x[d], cap);
  }
}

/* The least bytes a member of a p-member group inside one host sends,
 * on average over the members, in one instance of kind over a tensor of S
 * bytes, whatever algorithm the chooser picks (the TP egress term, above):
 * every lowering but NVLS moves 2 (p-1) S in all for an all-reduce and
 * (p-1) S for a reduce-scatter or an all-gather; NVLS at least p S, p S
 * and S. 0 for other kinds. */
static double out_bytes(uint8_t kind, double S, uint32_t p, uint32_t nvls) {
  double ring = S * (p - 1) / p;
  switch (kind) {
  case TS_COLL_ALL_REDUCE: return nvls ? S : 2 * ring;
  case TS_COLL_ALL_GATHER: return nvls ? S / p : ring;
  case TS_COLL_REDUCE_SCATTER: return ring;
  default: return 0;
  }
}

/* lb() of one instance of collective kind over p members of tensor size
 * val bytes: the largest of the GPU term (the rules above), the host term
 * (below) and, when tp_out > 0 (a group inside one host), the egress term. */
static ts_time_ps kind_lb(uint8_t kind, uint64_t val, uint32_t p, uint32_t k,
                          double ingress, double host_in, double tp_out,
                          uint32_t nvls, ts_time_ps startup) {
  if (p <= 1) return 0;
  double bytes = 0, host = 0, s = (double)val;
  switch (kind) {
  case TS_COLL_ALL_REDUCE: bytes = s, host = s; break;
  case TS_COLL_ALL_GATHER: bytes = s * (p - 1) / p, host = s * (p - k) / p; break;
  case TS_COLL_REDUCE_SCATTER: bytes = s / p, host = s * (p - k) / p; break;
  default: return 0;
  }
  /* floor: a rounded-down time stays a lower bound */
  double t = ingress > 0 ? bytes / ingress : 0;
  if (host_in > 0 && k && k < p && host / host_in > t) t = host / host_in;
  /* no transfer starts before the operation's startup latency, so the
   * bytes leave a member after it */
  double eg = tp_out > 0 ? (double)startup / 1e12 + out_bytes(kind, s, p, nvls) / tp_out : 0;
  if (eg > t) t = eg;
  return (ts_time_ps)(t * 1e12);
}

/* The egress capacity the TP term may use under bp, or 0: only when every
 * TP group lies inside one host. */
static double tp_out_of(const ts_step_bound_params *bp) {
  return bp->host_flags & TS_HOST_TP_WHOLE ? bp->tp_out_bps : 0;
}

static ts_time_ps coll_lb(const ts_step_ins *in, const ts_step_bound_params *bp) {
  double out = in->group == TS_GROUP_TP ? tp_out_of(bp) : 0;
  return kind_lb(in->kind, in->val, bp->group_size[in->group],
                 bp->host_members[in->group], bp->ingress_bps, bp->host_in_bps,
                 out, bp->tp_nvls, bp->tp_startup_ps);
}

/* Runs program i until it ends or meets a RECV whose message is not
 * there yet. Returns the instructions executed. */
static uint32_t advance(const ts_step_progs *P, uint32_t i, bound_prog *B,
                        ts_time_ps *ready, uint8_t *sent, uint32_t slots,
                        const ts_step_bound_params *bp) {
  const ts_step_prog *pr = &P->prog[i];
  bound_prog *b = &B[i];
  uint32_t pc0 = b->pc;
  bool tp_whole = bp->host_flags & TS_HOST_TP_WHOLE;
  while (b->pc < pr->n) {
    const ts_step_ins *in = &pr->ins[b->pc];
    switch (in->op) {
    case TS_SI_COMP: b->t += in->val, b->hi += in->val; break;
    case TS_SI_COLL: {
      ts_time_ps s = b->t > b->free_at[in->group] ? b->t : b->free_at[in->group];
      /* a TP instance starts at its last member's arrival */
      if (tp_whole && in->group == TS_GROUP_TP && b->hi > s) s = b->hi;
      b->free_at[in->group] = s + coll_lb(in, bp);
      b->end[in->group][in->ord] = b->free_at[in->group];
      fluid_coll(in, bp, b);
      break;
    }
    case TS_SI_WAIT: {
      ts_time_ps e = b->end[in->group][in->ord];
      if (e > b->t) b->t = e;
      if (b->tp_end[in->group][in->ord] > b->hi) b->hi = b->tp_end[in->group][in->ord];
      break;
    }
    case TS_SI_SEND: {
      size_t k = ((size_t)in->peer * P->ep + i % P->ep) * slots + in->ord;
      ready[k] = b->t;
      sent[k] = 1;
      break;
    }
    case TS_SI_RECV: {
      size_t k = (size_t)i * slots + in->ord;
      if (!sent[k]) return b->pc - pc0;
      if (ready[k] > b->t) b->t = ready[k];
      break;
    }
    }
    if (b->t > b->hi) b->hi = b->t;
    b->pc++;
  }
  return b->pc - pc0;
}

int ts_step_bound(const ts_step_progs *P, const ts_step_bound_params *bp,
                  ts_time_ps *out) {
  uint32_t n = P->nprogs, slots = 2 * (P->chunks ? P->chunks : 1) * P->microbatches;
  bound_prog *B = calloc(n ? n : 1, sizeof *B);
  ts_time_ps *ready = calloc((size_t)n * slots + 1, sizeof *ready);
  uint8_t *sent = calloc((size_t)n * slots + 1, 1);
  int rc = B && ready && sent ? 0 : TS_ENOMEM;
  for (uint32_t i = 0; !rc && i < n; i++) {
    for (int g = 0; !rc && g < TS_GROUP_COUNT; g++)
      if (!(B[i].end[g] = calloc(P->prog[i].nords[g] + 1, sizeof(ts_time_ps))) ||
          !(B[i].tp_end[g] = calloc(P->prog[i].nords[g] + 1, sizeof(ts_time_ps))))
        rc = TS_ENOMEM;
    for (uint32_t k = 0; !rc && k < P->prog[i].n; k++) {
      const ts_step_ins *in = &P->prog[i].ins[k];
      if (in->op == TS_SI_WAIT && in->ord + 1 > B[i].last_wait[in->group])
        B[i].last_wait[in->group] = in->ord + 1;
    }
  }
  uint32_t left = n;
  while (!rc && left) {
    uint64_t moved = 0;
    left = 0;
    for (uint32_t i = 0; i < n; i++) {
      moved += advance(P, i, B, ready, sent, slots, bp);
      left += B[i].pc < P->prog[i].n;
    }
    if (left && !moved) rc = TS_EINTERNAL; /* a RECV no program sends to */
  }
  ts_time_ps worst = 0;
  for (uint32_t i = 0; !rc && i < n; i++) {
    const bound_prog *b = &B[i];
    ts_time_ps e = b->t;
    if (b->hi > e) e = b->hi;
    if (b->host_e[0] > e) e = b->host_e[0];
    if (b->host_e[1] > e) e = b->host_e[1];
    if (e > worst) worst = e;
  }
  for (uint32_t i = 0; B && i < n; i++)
    for (int g = 0; g < TS_GROUP_COUNT; g++) free(B[i].end[g]), free(B[i].tp_end[g]);
  free(B);
  free(ready);
  free(sent);
  *out = rc ? 0 : worst;
  return rc;
}

/* ---- the closed form ---------------------------------------------------
 *
 * ts_work_step_bound_quick needs no mapping and no programs, only the ops
 * of one micro-batch per stage (ts_work_ops): per stage s, F_s and B_s
 * (forward; backward with recompute) summed over its chunks, F0_s and B0_s
 * those of its chunk 0 (layers of work_stage_layers(s, 0), layer ops only),
 * and O_s its once-per-step ops. With m micro-batches, the programs of
 * work_step_prog.c give, for gpipe, 1f1b and interleaved (m divisible by
 * pp) on a dense model:
 *   - stage s's first compute follows its first receive, which is stage
 *     s-1's first unit's send, F(chunk 0, micro-batch 0), its first unit:
 *     start_s >= sum_{j<s} F0_j;
 *   - stage s runs m (F_s + B_s) of unit compute after start_s, then O_s;
 *   - its last unit is B(chunk 0, micro-batch m-1) (interleaved: backward
 *     unit m v - 1 has chunk v-1 - ((m v - 1)/pp mod v) = 0 when pp | m),
 *     whose send is the receive of stage s-1's last unit, the same one:
 *     stage 0 ends after sum_{j<s} B0_j more, then O_0.
 * So step >= max_s start_s + m (F_s + B_s) + max(O_s, sum_{j<s} B0_j + O_0),
 * every term a sum of compute segments of the replay above (which is
 * itself <= the simulated step). Anything else (DualPipe, MoE, where EP
 * ranks run other ops) gets 0: the program replay decides.
 *
 * Blocking TP collectives (tp > 1, tp_comm_overlap off) join F_s, B_s,
 * F0_s and B0_s: work_step_prog.c's emit_block ends every non-empty block
 * (attention, MLP) of a layer's forward, backward and, with full
 * recompute, recompute pass with an all-reduce of S = s/cp b h 2 bytes
 * (sequence parallel: starts it with an all-gather of S and ends it with a
 * reduce-scatter of S), issued and waited for at once (coll(): COLL then
 * WAIT, nothing between them), on the compute stream of the same unit as
 * the layer's ops. In the replay a COLL + WAIT pair moves t to at least
 * t + lb(instance), so each adds tp_blk = lb(AR of S), or lb(AG of S) +
 * lb(RS of S), to the unit's time exactly like a compute segment, and the
 * chains above (first forward unit, last backward unit, a stage's m units)
 * keep holding with the sums extended. lb is kind_lb with the replay's
 * ingress, host terms and flooring, so this form stays <= ts_step_bound.
 * With ingress_bps and host_in_bps 0 the term is 0 (compute alone).
 *
 * ZeRO 3 (dp_mode zero) weight all-gathers join the same way: fwd_unit of
 * chunk 0 and bwd_unit of chunk v-1 issue, for every micro-batch, the
 * stage's dense weights (params x 2 bytes, work_comm.c's dp_comm, in
 * dp_bucket-sized buckets over the gradient group of dp x cp members)
 * and wait for each at once (dp_per_mb with block): z3_s = sum over the
 * buckets of lb(all-gather) joins F_s and B_s, F0_s (chunk 0's forward
 * unit carries it) and B0_s when v = 1 (chunk 0's backward unit is then
 * chunk v-1's). Where the gradient group spans hosts (K < p members per
 * host), kind_lb's host term makes each all-gather at least
 * bucket (p-K)/p / host_in: the shards held off the member's host cross
 * its NICs, which on a DGX A100 take 200 GB/s against 507 GB/s into one
 * GPU. */
static int tp_block_lb(const work_cfg *c, const ts_step_bound_params *bp,
                       ts_time_ps *out) {
  uint64_t S;
  *out = 0;
  if (c->tp <= 1 || c->tp_comm_overlap) return 0;
  /* work_comm.c's tp_layer size, saturating the same way */
  if (ts_mul_u64((uint64_t)c->seq_len / c->cp, c->micro_batch, &S) ||
      ts_mul_u64(S, c->hidden, &S) || ts_mul_u64(S, 2, &S))
    S = UINT64_MAX;
  uint32_t k = bp->host_members[TS_GROUP_TP];
  double in = bp->ingress_bps, hin = bp->host_in_bps;
  double eg = tp_out_of(bp);
  uint32_t nv = bp->tp_nvls;
  ts_time_ps st = bp->tp_startup_ps;
  *out = c->sequence_parallel
             ? kind_lb(TS_COLL_ALL_GATHER, S, c->tp, k, in, hin, eg, nv, st) +
                   kind_lb(TS_COLL_REDUCE_SCATTER, S, c->tp, k, in, hin, eg, nv, st)
             : kind_lb(TS_COLL_ALL_REDUCE, S, c->tp, k, in, hin, eg, nv, st);
  return 0;
}

/* The ZeRO 3 weight all-gathers of stage s for one forward (or one
 * backward) unit, as above; 0 where they do not apply. */
static ts_time_ps zero3_lb(const work_cfg *c, uint32_t s,
                           const ts_step_bound_params *bp) {
  uint32_t p = c->dp * c->cp, k = bp->host_members[TS_GROUP_GRAD];
  double in = bp->ingress_bps, hin = bp->host_in_bps;
  if (c->dp_mode != WORK_DP_ZERO || c->zero_stage < 3 || p <= 1) return 0;
  double dense, expert;
  work_stage_params(c, s, &dense, &expert);
  if (dense <= 0) return 0;
  /* work_comm.c's buckets: full buckets of bsz, then the rest */
  uint64_t total = ts_double_to_u64_sat(dense * 2);
  uint64_t bsz = c->dp_bucket ? c->dp_bucket : 1;
  ts_time_ps full = kind_lb(TS_COLL_ALL_GATHER, bsz, p, k, in, hin, 0, 0, 0);
  return (ts_time_ps)(total / bsz) * full +
         kind_lb(TS_COLL_ALL_GATHER, total % bsz, p, k, in, hin, 0, 0, 0);
}

/* Per stage the forward (fb[0]) and backward + recompute (fb[1]) time of
 * one micro-batch, all chunks (sum) and chunk 0 (sum0), plus tp_blk per
 * non-empty TP-carrying block; seen: scratch of c->layers bytes. */
static void stage_sums(const work_cfg *c, const ts_op *ops, size_t n,
                       uint32_t stage, ts_time_ps tp_blk, uint8_t *seen,
                       ts_time_ps sum[2], ts_time_ps sum0[2], ts_time_ps *o) {
  uint32_t first, count;
  work_stage_layers(c, stage, 0, &first, &count);
  memset(seen, 0, c->layers);
  for (size_t i = 0; i < n; i++) {
    const ts_op *op = &ops[i];
    bool in0 = op->layer >= 0 && (uint32_t)op->layer >= first &&
               (uint32_t)op->layer < first + count;
    if (op->phase == TS_PHASE_STEP) {
      *o += op->time;
      continue;
    }
    int k = op->phase != TS_PHASE_FWD;
    ts_time_ps add = op->time;
    /* one bit per (phase, block) of the layer: the first op of a block
     * brings the block's TP collectives */
    bool tp_pass = op->phase != TS_PHASE_RECOMPUTE || c->recompute == WORK_RC_FULL;
    if (tp_blk && tp_pass && op->layer >= 0 && (uint32_t)op->layer < c->layers) {
      uint8_t bit = (uint8_t)(1u << (op->phase * 2 + !step_op_is_attn(op->kind)));
      if (!(seen[op->layer] & bit)) add += tp_blk;
      seen[op->layer] |= bit;
    }
    sum[k] += add;
    if (in0) sum0[k] += add;
  }
}

/* Bytes over one host's cut of one collective kind over groups of p
 * members, K at most on the host, n ranks there: eg/in gain the egress
 * and ingress of `times` instances of size S on every group there. */
static void host_bytes(uint8_t kind, double S, double times, uint32_t p,
                       uint32_t K, uint32_t n, double *eg, double *in) {
  double g = (double)((n + K - 1) / K), on = (double)n / p, off = g - on;
  switch (kind) {
  case TS_COLL_ALL_REDUCE: *eg += times * S * g, *in += times * S * g; break;
  case TS_COLL_REDUCE_SCATTER: *eg += times * S * off, *in += times * S * on; break;
  case TS_COLL_ALL_GATHER: *eg += times * S * on, *in += times * S * off; break;
  default: break;
  }
}

/* The volume term with the CP collectives per micro-batch counted by the
 * caller (cp_ag all-gathers and cp_rs reduce-scatters of K and V, the
 * fewest over stages). */
static ts_time_ps volume_lb(const work_cfg *c, const ts_step_bound_params *bp,
                            uint32_t cp_ag, uint32_t cp_rs) {
  uint32_t n = bp->host_gpus;
  if (c->dp_mode != WORK_DP_ZERO || bp->host_in_bps <= 0 || !n) return 0;
  double eg = 0, in = 0, m = work_microbatches(c);
  uint32_t p = c->dp * c->cp, K = bp->host_members[TS_GROUP_GRAD];
  double dense = -1, expert;
  for (uint32_t s = 0; s < c->pp; s++) {
    double d;
    work_stage_params(c, s, &d, &expert);
    if (dense < 0 || d < dense) dense = d;
  }
  if (K && K < p && dense > 0) {
    double S = (double)ts_double_to_u64_sat(dense * (c->grad_dtype == WORK_GRAD_FP32 ? 4 : 2));
    double W = (double)ts_double_to_u64_sat(dense * 2);
    if (c->zero_stage == 0) {
      host_bytes(TS_COLL_ALL_REDUCE, S, 1, p, K, n, &eg, &in);
    } else {
      host_bytes(TS_COLL_REDUCE_SCATTER, S, c->zero_stage >= 2 ? m : 1, p, K, n, &eg, &in);
      host_bytes(TS_COLL_ALL_GATHER, W, c->zero_stage >= 3 ? 2 * m : 1, p, K, n, &eg, &in);
    }
  }
  uint32_t Kc = bp->host_members[TS_GROUP_CP];
  if (c->cp > 1 && Kc && Kc < c->cp) {
    /* work_comm.c's cp_layer size, saturating the same way */
    uint64_t x;
    if (ts_mul_u64(2ull * c->micro_batch, c->seq_len, &x) ||
        ts_mul_u64(x, (uint64_t)c->kv_heads * c->head_dim, &x))
      x = UINT64_MAX;
    x /= c->tp;
    double S = x > UINT64_MAX / 2 ? (double)UINT64_MAX : (double)(x * 2);
    host_bytes(TS_COLL_ALL_GATHER, S, m * cp_ag, c->cp, Kc, n, &eg, &in);
    host_bytes(TS_COLL_REDUCE_SCATTER, S, m * cp_rs, c->cp, Kc, n, &eg, &in);
  }
  double t = (eg > in ? eg : in) / bp->host_in_bps * 1e12;
  /* floored, less one ps for the rounding of the sums: a lower bound */
  return t > 1 ? (ts_time_ps)t - 1 : 0;
}

/* The CP collectives one micro-batch of a stage issues (work_step_prog.c's
 * emit_block): an all-gather at every non-empty attention block of the
 * forward, of the backward and (full recompute) of the recompute pass,
 * and in the backward a reduce-scatter after the last attention core op;
 * bits: scratch of c->layers bytes. */
static void cp_counts(const work_cfg *c, const ts_op *ops, size_t n,
                      uint8_t *bits, uint32_t *ag, uint32_t *rs) {
  memset(bits, 0, c->layers);
  for (size_t i = 0; i < n; i++) {
    const ts_op *o = &ops[i];
    if (o->layer < 0 || (uint32_t)o->layer >= c->layers || !step_op_is_attn(o->kind))
      continue;
    uint8_t b = o->phase == TS_PHASE_FWD ? 1
                : o->phase == TS_PHASE_BWD ? 4
                : o->phase == TS_PHASE_RECOMPUTE && c->recompute == WORK_RC_FULL ? 2
                                                                                  : 0;
    if (b == 4 && (o->kind == TS_OP_ATTN_SCORE || o->kind == TS_OP_ATTN_VALUE)) b |= 8;
    bits[o->layer] |= b;
  }
  *ag = *rs = 0;
  for (uint32_t l = 0; l < c->layers; l++) {
    *ag += !!(bits[l] & 1) + !!(bits[l] & 2) + !!(bits[l] & 4);
    *rs += !!(bits[l] & 8);
  }
}

/* ---- the host volume term ---------------------------------------------
 *
 * Whatever the order and the algorithm, the collectives of a step move
 * their bytes inside the step: every byte that must leave (or enter) a
 * host H crosses its cut, whose link directions add up to <= host_in each
 * way, so step >= max(egress_H, ingress_H) / host_in. Per group with k
 * members on H (p members, k < p) and per instance of size S:
 *   all-reduce: egress >= S (every element of the result off H depends on
 *     H's inputs: one value per element leaves), ingress >= S;
 *   reduce-scatter: egress >= S (p-k)/p (the shards of the members off H
 *     each need H's partial sums), ingress >= S k/p;
 *   all-gather: egress >= S k/p (H's shards, each needed off H), ingress
 *     >= S (p-k)/p.
 * Over the groups of one kind on H (n ranks, each group <= K members
 * there, so at least g = ceil(n/K) groups, sum k = n): sum (p-k)/p >=
 * g - n/p. Bytes of different collectives are different data, so they
 * add. Counted: the gradient group (dp x cp): work_comm.c's dp_comm issues
 * per step (m micro-batches, S the stage's dense gradients, params x grad
 * bytes, W its bf16 weights) ZeRO 0 one all-reduce of S; ZeRO 1 one
 * reduce-scatter of S and one all-gather of W; ZeRO 2 the reduce-scatter
 * every micro-batch; ZeRO 3 also two all-gathers of W every micro-batch,
 * in dp_bucket buckets adding up to the totals; S and W at the smallest
 * stage (H may hold any stage). The CP group: per micro-batch, the
 * all-gathers and reduce-scatters of K and V that cp_counts finds, at the
 * fewest over stages. Every quantity is a lower bound on bytes the
 * simulation moves through H's links within the step, so the term holds
 * under any fault, straggler or contention. gpu NULL: no CP part. */
ts_time_ps ts_work_step_bound_volume(const ts_workload *w, const ts_gpu_model *gpu,
                                     const ts_step_bound_params *bp) {
  work_cfg c;
  work_derive(w, &c);
  if (c.dp_mode != WORK_DP_ZERO || bp->host_in_bps <= 0 || !bp->host_gpus) return 0;
  uint32_t ag = UINT32_MAX, rs = UINT32_MAX;
  uint8_t *bits = c.cp > 1 && gpu ? malloc(c.layers + 1) : NULL;
  if (!bits) ag = rs = 0; /* no CP, or no memory: no CP part */
  for (uint32_t s = 0; bits && s < c.pp; s++) {
    ts_op *ops = NULL;
    size_t n = 0;
    uint32_t a, r;
    if (ts_work_ops(w, gpu, s, 0, &ops, &n)) {
      ag = rs = 0; /* unknown: no CP part */
      break;
    }
    cp_counts(&c, ops, n, bits, &a, &r);
    free(ops);
    if (a < ag) ag = a;
    if (r < rs) rs = r;
  }
  free(bits);
  return volume_lb(&c, bp, ag == UINT32_MAX ? 0 : ag, rs == UINT32_MAX ? 0 : rs);
}

int ts_work_step_bound_quick(const ts_workload *w, const ts_gpu_model *gpu,
                             const ts_step_bound_params *bp, ts_time_ps *out) {
  work_cfg c;
  work_derive(w, &c);
  *out = 0;
  if (c.schedule == WORK_DUALPIPE || c.experts || c.ep > 1) return 0;
  uint32_t m = work_microbatches(&c);
  if (c.schedule == WORK_INTERLEAVED && (!c.pp || m % c.pp)) return 0;
  ts_time_ps start = 0, chain_b = 0, o0 = 0, best = 0, tp_blk;
  tp_block_lb(&c, bp, &tp_blk);
  uint8_t *seen = malloc(2 * (size_t)c.layers + 1);
  uint32_t cp_ag = UINT32_MAX, cp_rs = UINT32_MAX;
  if (!seen) return TS_ENOMEM;
  for (uint32_t s = 0; s < c.pp; s++) {
    ts_op *ops = NULL;
    size_t n = 0;
    int rc = ts_work_ops(w, gpu, s, 0, &ops, &n);
    if (rc) {
      free(seen);
      return rc;
    }
    ts_time_ps sum[2] = {0, 0}, sum0[2] = {0, 0}, o = 0;
    stage_sums(&c, ops, n, s, tp_blk, seen, sum, sum0, &o);
    uint32_t a, r;
    cp_counts(&c, ops, n, seen + c.layers, &a, &r);
    if (a < cp_ag) cp_ag = a;
    if (r < cp_rs) cp_rs = r;
    free(ops);
    ts_time_ps z3 = zero3_lb(&c, s, bp);
    ts_time_ps f = sum[0] + z3, b = sum[1] + z3, f0 = sum0[0] + z3,
               b0 = sum0[1] + (work_chunks(&c) == 1 ? z3 : 0);
    if (!s) o0 = o;
    ts_time_ps tail = s ? chain_b + o0 : o;
    ts_time_ps t = start + (ts_time_ps)m * (f + b) + (tail > o ? tail : o);
    if (t > best) best = t;
    start += f0;
    chain_b += b0;
  }
  free(seen);
  ts_time_ps vol = volume_lb(&c, bp, cp_ag == UINT32_MAX ? 0 : cp_ag,
                             cp_rs == UINT32_MAX ? 0 : cp_rs);
  *out = best > vol ? best : vol;
  return 0;
}
