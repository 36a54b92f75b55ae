/* exec_step_run.c - one training step on the engine (ts_step.h).
 *
 * The step is compiled by `work` (ts_step_compile) into one program per
 * (pipeline stage, EP index); this file runs them on a runtime built by
 * ts_exec_create. Each rank is a small state machine over its program:
 * it runs instructions until one must wait (a compute segment's end, a
 * collective not completed yet, a pipeline message not delivered yet), and
 * resumes from the event that ends the wait. Nothing is allocated per
 * event: rank, stream and message state live in arrays sized once.
 *
 * Streams: a rank has one communication stream per group kind; collectives
 * issued on a stream join their group's rendezvous in issue order, one at a
 * time (NCCL runs a communicator's kernels in order on one stream).
 * Rendezvous per (group, sequence number): the group counts arrivals of the
 * instance at the head of its members' streams; the last arrival starts the
 * plan (ts_coll_exec), and its completion advances every member's stream.
 * Since a stream holds at most one arrived instance, a group has at most one
 * instance gathering or running at a time and its state is one counter.
 * Pipeline sends are asynchronous (isend); the receiver blocks. A send of
 * one transfer is posted at once (exec_coll_send1) unless opts.exact.
 *
 * Folding (exec_step_fold.c): when the members of every TP group provably
 * see the same traffic (on disjoint links, or on the orbits of a TP
 * rotation), only member 0 of each runs (TP rendezvous of one, other
 * groups' counts scaled by the TP size; a live TP collective runs member
 * 0's share of its plan) and unfold() copies its results to the others at
 * the end.
 *
 * Accounting: a wait on a collective of dimension d adds to exposed[d]; a
 * wait on a pipeline receive is bubble until the sender sent, exposed PP
 * after. Deterministic: ranks start in rank order, group members resume in
 * group order, the engine breaks time ties by insertion order.
 * Cost: O(instructions of all ranks + group members per instance). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/exec.h"
#include "topsim/ts_budget.h"

enum { W_RUN, W_COMP, W_STREAM, W_RECV, W_DONE };

#define TAG_KIND(t) ((t) >> 62)
#define TAG_COLL (1ull << 62)
#define TAG_PP (2ull << 62)
#define TAG_COMP (3ull << 62)
#define TAG_LOW(t) ((t) & 0xffffffffull)
#define TAG_MID(t) (((t) >> 32) & 0x3fffffffull)

typedef struct step_stream {
  uint32_t issued, arrived, done;
  uint32_t batch;     /* collectives in the arrived instance (a batch,
                         exec_step_batch.c), 0 or 1: one */
  ts_time_ps arrive_t;
} step_stream;

typedef struct step_rank {
  const ts_step_prog *prog;
  uint32_t pc, msg_base;
  uint8_t wait;
  ts_time_ps t;       /* local clock: now, or ahead of it (lookahead) */
  ts_time_ps since, finish;
  step_stream st[TS_GROUP_COUNT];
  ts_step_breakdown bd;
} step_rank;

/* Lookahead state of one rank's stream of an exclusive group. */
typedef struct step_ahead {
  ts_time_ps issue_t[EXEC_AHEAD_RING], done_t[EXEC_AHEAD_RING];
} step_ahead;

typedef struct step_msg {
  ts_time_ps sent_at;
  uint8_t state; /* 0 nothing, 1 sent, 2 delivered */
} step_msg;

typedef struct step_state {
  const ts_topo *t;
  const ts_mapping *m;
  const ts_step_opts *o;
  ts_exec *x;
  ts_sim *sim;
  ts_net *net;
  exec_colls colls;
  exec_fast fast;
  exec_fold fold;
  int nofold;                    /* folding refused: the rerun */
  int quiet;                     /* quiet-window replays of TP groups */
  int nodp;                      /* none of data-parallel kinds (dp_kind):
                                    an earlier attempt saw one crossed */
  ts_time_ps *resv, *pend;       /* their per-direction windows (x->resv) */
  uint64_t *rkey;                /* per direction: the instance (quiet_key)
                                    that reserved it (x->resv_key) */
  const uint64_t *skip;          /* sorted keys of instances an earlier
                                    attempt saw crossed: run live */
  uint32_t nskip;
  uint64_t cross[TS_DIM_COUNT];  /* bytes leaving the host, all ranks: an
                                    integer sum, exact in any order */
  ts_step_progs sp;
  step_rank *rank;
  step_msg *msg;
  uint32_t nranks, finished, v, mb;
  const ts_step_ins **scratch; /* member instructions of one instance */
  ts_step_ins *bins;           /* members' merged instructions (batches) */
  uint64_t ins_done, ins_total;  /* progress: instructions executed, all */
  double wall0, wall_last;       /* progress: start, last report */
  uint32_t micro0;               /* rank 0's latest micro-batch + 1 */
  uint64_t calls;
  step_ahead *ahead[TS_GROUP_COUNT]; /* [rank], kinds with exclusive groups */
  uint32_t *ready, nready_head, nready_tail; /* lookahead run queue */
  int draining;
  exec_trace trace;
  ts_step_result *res;
  double hbm_bw;
  int err;
  int passed;                    /* opts.horizon passed, a rank busy */
  ts_time_ps **rest;             /* with opts.horizon: [program][pc] the
                                    compute left from pc to the end */
  ts_diag *d;
  const exec_step_req *req;      /* microbatches, per-direction totals */
} step_state;

static void rank_run(step_state *S, uint32_t r);
static void ready_push(step_state *S, uint32_t r);

/* True when r is simulated (not folded onto its TP group's member 0). */
static bool simulated(const step_state *S, uint32_t r) {
  return !S->fold.on || exec_fold_rep(S->m, r) == r;
}

static uint32_t nsim(const step_state *S) {
  return S->fold.on ? S->fold.nsim : S->nranks;
}

static void fail(step_state *S, int rc) {
  if (!S->err) S->err = rc;
  ts_sim_stop(S->sim);
}

static const ts_rank_label *label(const step_state *S, uint32_t r) {
  return ts_mapping_rank(S->m, r);
}

static void on_exec_done(void *ctx, uint64_t tag);

static void on_event(ts_sim *sim, void *ctx, uint64_t tag) {
  (void)sim;
  on_exec_done(ctx, tag);
}

static void at_now(step_state *S, uint64_t tag) {
  int rc = ts_sim_schedule_in(S->sim, 0, on_event, S, tag, NULL);
  if (rc) fail(S, rc);
}

/* ---- collectives ---------------------------------------------------- */

static const ts_step_ins *stream_ins(const step_state *S, uint32_t r, uint32_t g,
                                  uint32_t ord) {
  const ts_step_prog *p = S->rank[r].prog;
  return &p->ins[p->ords[g][ord]];
}

/* Members of group kind g that run: folded TP groups run member 0 only. */
static uint32_t run_size(const step_state *S, uint32_t g) {
  return S->fold.on && g == TS_GROUP_TP ? 1 : ts_mapping_group_size(S->m, (ts_group)g);
}

/* Instances one run of a group of kind g stands for: folded, a class-0
 * group stands for its images in every class. */
static uint64_t run_mult(const step_state *S, uint32_t g) {
  return S->fold.on && g != TS_GROUP_TP ? S->fold.T : 1;
}

/* Member instructions of the instance of (g, id) at the head of its
 * streams into S->scratch; folded TP members read member 0's (same
 * program, same stream position). */
static void member_ins(step_state *S, uint32_t g, uint32_t id) {
  uint32_t n = ts_mapping_group_size(S->m, (ts_group)g), nr = run_size(S, g);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t q = ts_mapping_group_member(S->m, (ts_group)g, id, i < nr ? i : 0);
    const step_stream *st = &S->rank[q].st[g];
    if (st->batch > 1) { /* a batch: one instruction of the summed bytes */
      exec_batch_merge(S->rank[q].prog, g, st->arrived - st->batch,
                       st->batch, &S->bins[i]);
      S->scratch[i] = &S->bins[i];
    } else {
      S->scratch[i] = stream_ins(S, q, g, st->arrived - 1);
    }
  }
}

/* A batch's delay: its members' isolated times minus its own (both runs
 * memoised on their plan entries), so that on links nothing else uses
 * the batch ends when its members would have, one after the other. */
static int batch_extra(step_state *S, uint32_t g, uint32_t id,
                       exec_plan_ent *e) {
  if (e->xset) return 0;
  uint32_t q = ts_mapping_group_member(S->m, (ts_group)g, id, 0);
  const step_stream *st = &S->rank[q].st[g];
  uint32_t n = ts_mapping_group_size(S->m, (ts_group)g);
  int rc = exec_fast_memo(&S->fast, S->x, S->o, e->plan, S->hbm_bw,
                          &e->memo, S->d);
  ts_time_ps sum = 0;
  for (uint32_t t = 0; t < st->batch && !rc; t++) {
    const ts_step_ins *in = stream_ins(S, q, g, st->arrived - st->batch + t);
    for (uint32_t i = 0; i < n; i++) S->scratch[i] = in;
    exec_plan_ent *one = NULL;
    rc = exec_colls_plan(&S->colls, (ts_group)g, id, S->scratch, &one, S->d);
    if (!rc && !one->memo)
      rc = exec_fast_memo(&S->fast, S->x, S->o, one->plan, S->hbm_bw,
                          &one->memo, S->d);
    if (!rc) sum += one->memo->dur;
  }
  if (rc) return rc;
  e->extra = sum > e->memo->dur ? sum - e->memo->dur : 0;
  e->xset = 1;
  return 0;
}

/* Plan of the instance, proven for every class when folding. */
static int plan_of(step_state *S, uint32_t g, uint32_t id, exec_plan_ent **e) {
  member_ins(S, g, id);
  int rc = exec_colls_plan(&S->colls, (ts_group)g, id, S->scratch, e, S->d);
  if (!rc && S->fold.on && g == TS_GROUP_TP && !(*e)->fplan)
    return exec_fold_check_tp(&S->fold, &S->colls, S->x, id, *e, S->d);
  if (rc || !S->fold.on || g == TS_GROUP_TP || (*e)->checked) return rc;
  (*e)->checked = 1;
  return exec_fold_check_group(&S->fold, &S->colls, S->x, (ts_group)g, id,
                               S->scratch, (*e)->plan, S->d);
}

/* ---- quiet-window replays ---------------------------------------------
 *
 * A TP group that does not own its NVLinks (DP rings or PXN hops cross
 * them), or an EP group's all-to-all, still runs most instances alone:
 * whenever no other flow is active or about to become active on any
 * direction the instance uses, and no other stream of its members has an
 * instance gathering or running (the usual source of a flow that would
 * start meanwhile), the instance is replayed from its isolated run
 * (exec_step_fast.c) as one timer, and each of its directions is reserved
 * until its own last flow leaves it in that run. Any transfer that would
 * be active on a reserved direction inside its window sets x->violated
 * (exec_coll.c; with TS_STEP_CROSS a TP, CP or EP replay stands instead,
 * quiet_init): the attempt is void, runs on to collect every crossed
 * instance, and ts_step_run runs the step again with those live (or, past
 * QUIET_ATTEMPTS, without these replays). So a step that finishes used
 * them only where the instance ran alone, where the replay is exact
 * (without TS_STEP_CROSS). */

/* Directions the network sees e's plan use: its isolated footprint through
 * the fold's representatives, each with when its last flow left it, its
 * bytes and busy time (the most of any direction of its orbit: they are
 * images) and its peak flow count. 0 or TS_ENOMEM. */
static int quiet_dirs(step_state *S, exec_plan_ent *e) {
  const exec_memo *M = e->memo;
  e->q = malloc(((size_t)M->n + 1) * sizeof *e->q);
  if (!e->q) return TS_ENOMEM;
  for (uint32_t i = 0; i < M->n; i++) {
    uint32_t d = M->dir[i];
    if (S->x->dir_rep && S->x->dir_rep[d] != UINT32_MAX) d = S->x->dir_rep[d];
    uint32_t j = 0;
    while (S->x->dir_rep && j < e->nq && e->q[j].dir != d) j++;
    if (!S->x->dir_rep || j == e->nq) {
      j = e->nq++;
      e->q[j] = (exec_quiet_dir){.dir = d};
    }
    exec_quiet_dir *q = &e->q[j];
    if (M->end[i] > q->end) q->end = M->end[i];
    if (M->busy[i] > q->busy) q->busy = M->busy[i];
    if (M->bytes[i] > q->bytes) q->bytes = M->bytes[i];
    if (M->peak[i] > q->peak) q->peak = M->peak[i];
  }
  e->qnvl = 1;
  for (uint32_t j = 0; j < e->nq; j++)
    e->qnvl &= ts_topo_link(S->t, e->q[j].dir >> 1)->kind == TS_LINK_NVLINK;
  return 0;
}

/* Bounded (--bounded), for an instance inside one host's NVLinks (every
 * direction it uses is an NVLink: pipeline sends and DP rings reach NIC
 * directions often enough that windows there would keep voiding the
 * attempt): how much later than in isolation the instance
 * would end if it ran beside the flows now active on its directions, or
 * -1 when it may not be replayed beside them. It may when every such flow
 * is held below what the instance leaves it: on each direction d with
 * capacity c, active rates summing to L (at most m each) and the
 * instance's peak of k flows there, (c - L) / k >= m, so progressive
 * filling gives those flows the rates they have now (their bottleneck is
 * elsewhere) and the instance the rest, c - L. Its bytes B on d, sent in
 * busy time b alone, then take max(b, B / (c - L)); the instance ends
 * later by the most any direction adds. Approximate: the active flows'
 * rates are taken as constant over the window (they may rise up to their
 * own bottlenecks meanwhile, which an exact run would charge to the
 * instance) and a rate change of theirs does not void the replay. */
static ts_time_ps quiet_stretch(step_state *S, const exec_plan_ent *e) {
  ts_time_ps most = 0;
  for (uint32_t i = 0; i < e->nq; i++) {
    const exec_quiet_dir *q = &e->q[i];
    if (!ts_net_dir_active(S->net, q->dir)) continue;
    double sum, max;
    if (ts_net_dir_rates(S->net, q->dir, &sum, &max)) return -1;
    double left = ts_net_dir_bandwidth(S->net, q->dir) - sum;
    uint32_t k = q->peak ? q->peak : 1;
    if (!(left > 0) || left / k < max * (1 + 1e-9)) return -1;
    double t = (double)q->bytes / left * 1e12;
    if (t > (double)q->busy && t - (double)q->busy > (double)most)
      most = (ts_time_ps)(t - (double)q->busy + 0.5);
  }
  return (ts_time_ps)most;
}

/* The instance of (g, id) starting now, the same in every attempt: group
 * kind, id and its position in member 0's stream. */
static uint64_t quiet_key(const step_state *S, uint32_t g, uint32_t id) {
  uint32_t q = ts_mapping_group_member(S->m, (ts_group)g, id, 0);
  return (uint64_t)g << 60 | (uint64_t)id << 32 | (S->rank[q].st[g].arrived - 1);
}

static bool quiet_skipped(const step_state *S, uint64_t key) {
  uint32_t lo = 0, hi = S->nskip;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (S->skip[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < S->nskip && S->skip[lo] == key;
}

/* Other streams of the members of (g, id): 0 when none has an instance
 * arrived and not done; 1 when every such instance is running with all
 * its transfers posted (its flows exist: the direction test sees them),
 * whatever is queued behind it; 2 when one is gathering (it may start any
 * time) or still has transfers to post. Exact quiet replays need 0: the
 * next instance queued on a stream starts, and its flows with it, when
 * the running one ends. */
static int quiet_streams(const step_state *S, uint32_t g, uint32_t id) {
  int worst = 0;
  for (uint32_t i = 0; i < run_size(S, g); i++) {
    uint32_t q = ts_mapping_group_member(S->m, (ts_group)g, id, i);
    for (uint32_t h = 0; h < TS_GROUP_COUNT; h++) {
      const step_stream *st = &S->rank[q].st[h];
      if (h == g || st->arrived == st->done) continue;
      const exec_group *H = &S->colls.groups[h][label(S, q)->group[h]];
      if (H->arrived || H->unposted) return 2;
      worst = 1;
    }
  }
  return worst;
}

/* Data-parallel group kinds: gradient and ZeRO 3 weight rings (DP x CP,
 * expert, HSDP shard and replica groups). Their rings span many hosts, so
 * a crossing is likelier than for a TP or CP instance, and they go
 * together: one crossed voids them all (TRY_NODP). */
static bool dp_kind(uint32_t g) {
  return g == TS_GROUP_DP || g == TS_GROUP_GRAD ||
         g == TS_GROUP_EXPERT_GRAD || g == TS_GROUP_SHARD ||
         g == TS_GROUP_REPLICA;
}

/* Group kinds replayed in quiet windows: TP, CP; EP (all-to-alls) unless
 * folded (the fold mirrors class 0's counters before the replays' are
 * added); the data-parallel kinds unless an attempt saw one crossed. */
static bool quiet_kind(const step_state *S, uint32_t g) {
  return g == TS_GROUP_TP || g == TS_GROUP_CP ||
         (g == TS_GROUP_EP && !S->fold.on) || (dp_kind(g) && !S->nodp);
}

/* True when the instance of (g, id) starting now was replayed (a timer
 * scheduled); false to run it live (quiet_kind says which kinds may be).
 * Errors fail the step. */
static bool quiet_replay(step_state *S, uint32_t g, uint32_t id,
                         exec_plan_ent *e, uint64_t tag) {
  if (!S->quiet || !quiet_kind(S, g)) return false;
  uint64_t key = quiet_key(S, g, id);
  if (quiet_skipped(S, key)) return false;
  /* bounded: instances inside one host's NVLinks also beside other
   * streams' running instances and active flows (quiet_stretch) */
  bool bounded = (S->o->bounded & TS_STEP_BESIDE) && !S->o->exact &&
                 g != TS_GROUP_EP;
  int streams = quiet_streams(S, g, id);
  if (streams == 2 || (streams == 1 && !bounded)) return false;
  int rc = e->memo ? 0 : exec_fast_memo(&S->fast, S->x, S->o, e->plan,
                                        S->hbm_bw, &e->memo, S->d);
  if (!rc && !e->q) rc = quiet_dirs(S, e);
  if (rc) {
    fail(S, rc);
    return true;
  }
  if (streams == 1 && !e->qnvl) return false;
  ts_time_ps now = ts_sim_now(S->sim);
  int busy = 0;
  for (uint32_t i = 0; i < e->nq; i++) {
    uint32_t d = e->q[i].dir;
    if (S->pend[d] > now || S->resv[d] > now) return false;
    busy |= ts_net_dir_active(S->net, d) != 0;
  }
  ts_time_ps late = 0;
  if (busy) {
    if (!bounded || !e->qnvl) return false;
    ts_time_ps t = quiet_stretch(S, e);
    if (t == (ts_time_ps)-1) return false;
    late = t;
    S->res->replayed_beside += run_mult(S, g);
  }
  for (uint32_t i = 0; i < e->nq; i++) {
    S->resv[e->q[i].dir] = now + e->q[i].end + late + 1;
    S->rkey[e->q[i].dir] = key;
  }
  e->memo->replays++;
  S->res->replayed += run_mult(S, g);
  if (dp_kind(g)) S->res->replayed_dp += run_mult(S, g);
  if (ts_sim_schedule_in(S->sim, e->memo->dur + late, on_event, S, tag, NULL))
    fail(S, TS_ELIMIT);
  return true;
}

static void coll_start(step_state *S, uint32_t g, uint32_t id) {
  uint64_t tag = TAG_COLL | (uint64_t)g << 32 | id;
  S->res->collectives += run_mult(S, g);
  if (S->o->free_comm) {
    at_now(S, tag);
    return;
  }
  exec_plan_ent *e = NULL;
  int rc = plan_of(S, g, id, &e);
  if (!rc && e->count > 1) {
    rc = batch_extra(S, g, id, e);
    if (!rc) S->colls.groups[g][id].extra = e->extra;
  }
  if (!rc && quiet_replay(S, g, id, e, tag)) return;
  /* folded, a live TP group runs member 0's share (exec_step_fold.c) */
  const ts_coll_plan *pl = e && e->fplan ? e->fplan : e ? e->plan : NULL;
  if (!rc)
    rc = exec_coll_start_counted(S->x, pl, S->hbm_bw, on_exec_done, S, tag,
                                 &S->colls.groups[g][id].unposted);
  if (rc) fail(S, rc);
}

static void group_arrive(step_state *S, uint32_t r, uint32_t g) {
  uint32_t id = label(S, r)->group[g];
  exec_group *G = &S->colls.groups[g][id];
  const ts_step_ins *in = stream_ins(S, r, g, S->rank[r].st[g].arrived - 1);
  if (G->arrived == 0) G->op = in->kind;
  else if (G->op != in->kind) {
    ts_diag_set(S->d, TS_EINTERNAL, NULL, 0, 0, "rank %u joins %s group %u "
                "with %s while others run %s", r, ts_group_name((ts_group)g),
                id, ts_coll_op_name((ts_coll_op)in->kind),
                ts_coll_op_name((ts_coll_op)G->op));
    fail(S, TS_EINTERNAL);
    return;
  }
  if (++G->arrived < run_size(S, g)) return;
  G->arrived = 0;
  coll_start(S, g, id);
}

/* Moves the next issued collective of r's stream g into its rendezvous. */
static void stream_kick(step_state *S, uint32_t r, uint32_t g) {
  step_stream *st = &S->rank[r].st[g];
  if (st->arrived != st->done || st->arrived == st->issued) return;
  /* a batch joins once all of it is issued (the rank issues the rest at
   * this same time, before it next waits) */
  uint32_t k = exec_batch_len(&S->colls, S->rank[r].prog, g, st->arrived);
  if (k < 1) k = 1;
  if (st->issued - st->arrived < k) return;
  st->arrived += k;
  st->batch = k;
  st->arrive_t = ts_sim_now(S->sim);
  group_arrive(S, r, g);
}

static void resume(step_state *S, uint32_t r, ts_time_ps *acct,
                   ts_time_ps amount) {
  step_rank *R = &S->rank[r];
  *acct += amount;
  R->wait = W_RUN;
  R->pc++;
  R->t = ts_sim_now(S->sim);
  rank_run(S, r);
}

/* ---- lookahead: exclusive groups without the engine -----------------
 *
 * A group that owns its links (exec_step_fast.c) runs every collective in
 * a known time, so its rendezvous is arithmetic: member k's arrival is
 * max(its issue time, the previous instance's end), the instance starts at
 * the latest arrival and ends dur later. Ranks then run ahead of the
 * engine's clock on their own clock R->t through compute segments and such
 * collectives, and fall back to the engine (an event at R->t) only before
 * touching it: a pipeline send or receive, a collective of another group.
 * Same times as the event-driven path, with events only where the engine
 * is involved. Ranks resumed by a completion go to a FIFO run queue instead
 * of a nested call, so the stack stays flat. */

static bool ahead(const step_state *S, uint32_t r, uint32_t g) {
  return S->fast.on && S->fast.excl[g][label(S, r)->group[g]];
}

/* True (and an event at R->t scheduled) when r's clock is past now. */
static bool sync_to_sim(step_state *S, uint32_t r) {
  step_rank *R = &S->rank[r];
  ts_time_ps now = ts_sim_now(S->sim);
  if (R->t <= now) {
    R->t = now;
    return false;
  }
  R->wait = W_COMP;
  if (ts_sim_schedule_in(S->sim, R->t - now, on_event, S, TAG_COMP | r, NULL))
    fail(S, TS_ELIMIT);
  return true;
}

static void ahead_arrive(step_state *S, uint32_t r, uint32_t g, ts_time_ps t);

static void ahead_kick(step_state *S, uint32_t r, uint32_t g) {
  step_stream *st = &S->rank[r].st[g];
  if (st->arrived != st->done || st->arrived == st->issued) return;
  const step_ahead *A = &S->ahead[g][r];
  uint32_t k = st->arrived;
  ts_time_ps t = A->issue_t[k % EXEC_AHEAD_RING];
  if (k && A->done_t[(k - 1) % EXEC_AHEAD_RING] > t)
    t = A->done_t[(k - 1) % EXEC_AHEAD_RING];
  st->arrived++;
  st->arrive_t = t;
  ahead_arrive(S, r, g, t);
}

static void ahead_issue(step_state *S, uint32_t r, uint32_t g) {
  step_stream *st = &S->rank[r].st[g];
  S->ahead[g][r].issue_t[st->issued % EXEC_AHEAD_RING] = S->rank[r].t;
  st->issued++;
  ahead_kick(S, r, g);
}

/* Members waiting for an instance that is now complete continue at
 * max(when they started waiting, when it ended). */
static void ahead_wake(step_state *S, uint32_t g, uint32_t id) {
  uint32_t n = run_size(S, g);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t q = ts_mapping_group_member(S->m, (ts_group)g, id, i);
    step_rank *R = &S->rank[q];
    if (R->wait != W_STREAM) continue;
    const ts_step_ins *w = &R->prog->ins[R->pc];
    if (w->group != g || R->st[g].done <= w->ord) continue;
    ts_time_ps end = S->ahead[g][q].done_t[w->ord % EXEC_AHEAD_RING];
    ts_time_ps t = end > R->since ? end : R->since;
    R->bd.exposed[exec_dim_of(g)] += t - R->since;
    R->t = t;
    R->wait = W_RUN;
    R->pc++;
    ready_push(S, q);
  }
}

static void ahead_complete(step_state *S, uint32_t g, uint32_t id,
                           ts_time_ps start) {
  uint32_t n = run_size(S, g);
  S->res->collectives += run_mult(S, g);
  exec_plan_ent *e = NULL;
  int rc = plan_of(S, g, id, &e);
  if (!rc && !e->memo)
    rc = exec_fast_memo(&S->fast, S->x, S->o, e->plan, S->hbm_bw, &e->memo, S->d);
  if (rc) {
    fail(S, rc);
    return;
  }
  e->memo->replays++;
  S->res->replayed += run_mult(S, g);
  ts_time_ps end = start + e->memo->dur;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t q = ts_mapping_group_member(S->m, (ts_group)g, id, i);
    step_stream *st = &S->rank[q].st[g];
    const ts_step_ins *in = stream_ins(S, q, g, st->done);
    S->ahead[g][q].done_t[st->done % EXEC_AHEAD_RING] = end;
    st->done++;
    exec_trace_add(&S->trace, q, (uint8_t)(1 + exec_dim_of(g)), in->kind,
                   (uint16_t)g, in->layer, in->micro, st->arrive_t,
                   end - st->arrive_t);
  }
  for (uint32_t i = 0; i < n && !S->err; i++)
    ahead_kick(S, ts_mapping_group_member(S->m, (ts_group)g, id, i), g);
  ahead_wake(S, g, id);
}

static void ahead_arrive(step_state *S, uint32_t r, uint32_t g, ts_time_ps t) {
  uint32_t id = label(S, r)->group[g];
  exec_group *G = &S->colls.groups[g][id];
  const ts_step_ins *in = stream_ins(S, r, g, S->rank[r].st[g].arrived - 1);
  if (G->arrived == 0) {
    G->op = in->kind;
    G->max_t = 0;
  } else if (G->op != in->kind) {
    ts_diag_set(S->d, TS_EINTERNAL, NULL, 0, 0, "rank %u joins %s group %u "
                "with %s while others run %s", r, ts_group_name((ts_group)g),
                id, ts_coll_op_name((ts_coll_op)in->kind),
                ts_coll_op_name((ts_coll_op)G->op));
    fail(S, TS_EINTERNAL);
    return;
  }
  if (t > G->max_t) G->max_t = t;
  if (++G->arrived < run_size(S, g)) return;
  G->arrived = 0;
  ahead_complete(S, g, id, G->max_t);
}

/* One instruction of an exclusive group's stream; false if r must wait. */
static bool ahead_step(step_state *S, uint32_t r, const ts_step_ins *in) {
  step_rank *R = &S->rank[r];
  if (in->op == TS_SI_COLL) {
    R->pc++;
    S->res->rank_bytes[(size_t)r * TS_DIM_COUNT + exec_dim_of(in->group)] += in->sent;
    S->cross[exec_dim_of(in->group)] += in->cross;
    ahead_issue(S, r, in->group);
    return true;
  }
  step_stream *st = &R->st[in->group];
  if (st->done <= in->ord) {
    R->wait = W_STREAM;
    R->since = R->t;
    return false;
  }
  ts_time_ps end = S->ahead[in->group][r].done_t[in->ord % EXEC_AHEAD_RING];
  if (end > R->t) {
    R->bd.exposed[exec_dim_of(in->group)] += end - R->t;
    R->t = end;
  }
  R->pc++;
  return true;
}

static void coll_done(step_state *S, uint32_t g, uint32_t id) {
  uint32_t n = run_size(S, g);
  ts_time_ps now = ts_sim_now(S->sim);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t q = ts_mapping_group_member(S->m, (ts_group)g, id, i);
    step_stream *st = &S->rank[q].st[g];
    const ts_step_ins *in = stream_ins(S, q, g, st->done);
    st->done += st->batch > 1 ? st->batch : 1;
    exec_trace_add(&S->trace, q, (uint8_t)(1 + exec_dim_of(g)), in->kind,
                   (uint16_t)g, in->layer, in->micro, st->arrive_t,
                   now - st->arrive_t);
  }
  for (uint32_t i = 0; i < n; i++)
    stream_kick(S, ts_mapping_group_member(S->m, (ts_group)g, id, i), g);
  for (uint32_t i = 0; i < n && !S->err; i++) {
    uint32_t q = ts_mapping_group_member(S->m, (ts_group)g, id, i);
    step_rank *R = &S->rank[q];
    if (R->wait != W_STREAM) continue;
    const ts_step_ins *w = &R->prog->ins[R->pc];
    if (w->group != g || R->st[g].done <= w->ord) continue;
    resume(S, q, &R->bd.exposed[exec_dim_of(g)], now - R->since);
  }
}

/* ---- pipeline messages ---------------------------------------------- */

static void on_send_done(ts_net *net, void *ctx, uint64_t tag) {
  (void)net;
  on_exec_done(ctx, tag);
}

static void pp_send(step_state *S, uint32_t r, const ts_step_ins *in) {
  const ts_rank_label *lb = label(S, r);
  uint32_t peer = ts_mapping_group_member(S->m, TS_GROUP_PP,
                                          lb->group[TS_GROUP_PP], in->peer);
  step_msg *msg = &S->msg[S->rank[peer].msg_base + in->ord];
  msg->sent_at = ts_sim_now(S->sim);
  msg->state = 1;
  uint64_t tag = TAG_PP | (uint64_t)peer << 32 | in->ord;
  if (S->o->free_comm) {
    at_now(S, tag);
    return;
  }
  ts_coll_plan *plan = NULL;
  int rc = exec_colls_pp_plan(&S->colls, r, in->kind, peer, in->val, &plan,
                              S->d);
  if (!rc && S->fold.on)
    rc = exec_fold_check_pp(&S->fold, &S->colls, S->x, r, in->kind, peer,
                            in->val, plan, S->d);
  if (rc) {
    fail(S, rc);
    return;
  }
  /* A send is one transfer: post it now, with no run and no start event
   * (same time, the engine's clock does not move in between). */
  if (!S->o->exact && exec_coll_single(plan, S->hbm_bw))
    rc = exec_coll_send1(S->x, plan, on_send_done, S, tag, S->d);
  else
    rc = ts_exec_coll_start(S->x, plan, S->hbm_bw, on_exec_done, S, tag);
  if (rc) fail(S, rc);
}

static void pp_deliver(step_state *S, uint32_t r, uint32_t slot) {
  step_rank *R = &S->rank[r];
  step_msg *msg = &S->msg[R->msg_base + slot];
  ts_time_ps now = ts_sim_now(S->sim);
  msg->state = 2;
  exec_trace_add(&S->trace, r, 1 + TS_DIM_PP, TS_COLL_SEND_RECV,
                 TS_GROUP_PP, -1, (int32_t)(slot % S->mb), msg->sent_at,
                 now - msg->sent_at);
  if (R->wait != W_RECV || R->prog->ins[R->pc].ord != slot) return;
  ts_time_ps from = msg->sent_at > R->since ? msg->sent_at : R->since;
  R->bd.bubble += from - R->since;
  resume(S, r, &R->bd.exposed[TS_DIM_PP], now - from);
}

/* ---- the compute stream --------------------------------------------- */

static void account(step_state *S, uint32_t r, const ts_step_ins *in,
                    uint32_t dim, bool cross) {
  S->res->rank_bytes[(size_t)r * TS_DIM_COUNT + dim] += in->sent;
  S->cross[dim] += cross ? in->sent : in->cross;
}

/* Duration of a compute segment of `val` on rank r: a straggler GPU
 * (--straggler) runs every kernel `factor` times slower. */
static ts_time_ps comp_time(const step_state *S, uint32_t r, ts_time_ps val) {
  double f = ts_exec_straggler(S->x, label(S, r)->gpu);
  return f == 1.0 ? val : (ts_time_ps)llround((double)val * f);
}

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Calls the progress callback when a quarter second of wall time passed
 * (the clock is read every 4,096 instructions). */
static void progress(step_state *S) {
  double w = wall_now();
  if (w - S->wall_last < 0.25) return;
  S->wall_last = w;
  ts_sim_stats st;
  ts_sim_stats_get(S->sim, &st);
  ts_step_progress p = {ts_sim_now(S->sim), 0, S->micro0, S->mb,
                        st.events_processed, w - S->wall0, -1};
  if (S->ins_total) p.done = (double)S->ins_done / (double)S->ins_total;
  if (p.done > 0) p.eta_s = p.wall_s * (1 - p.done) / p.done;
  S->o->progress(S->o->progress_ctx, &p);
}

/* Runs r's instructions until one waits. Returns after scheduling or
 * registering that wait, or when the program ends. */
static void rank_loop(step_state *S, uint32_t r) {
  step_rank *R = &S->rank[r];
  const ts_step_prog *P = R->prog;
  bool la = S->fast.on;
  while (R->pc < P->n && !S->err) {
    const ts_step_ins *in = &P->ins[R->pc];
    if ((in->op == TS_SI_COLL || in->op == TS_SI_WAIT) && ahead(S, r, in->group)) {
      if (!ahead_step(S, r, in)) return;
      continue;
    }
    if (in->op != TS_SI_COMP && la && sync_to_sim(S, r)) return;
    switch (in->op) {
    case TS_SI_COMP: {
      R->pc++;
      if (!in->val) break;
      ts_time_ps dur = comp_time(S, r, in->val);
      R->bd.compute += dur;
      exec_trace_add(&S->trace, r, TS_STEP_STREAM_COMPUTE, in->kind,
                     in->chunk, in->layer, in->micro, R->t, dur);
      if (la) {
        R->t += dur;
        break;
      }
      R->wait = W_COMP;
      if (ts_sim_schedule_in(S->sim, dur, on_event, S, TAG_COMP | r, NULL))
        fail(S, TS_ELIMIT);
      return;
    }
    case TS_SI_COLL:
      R->pc++;
      account(S, r, in, exec_dim_of(in->group), false);
      R->st[in->group].issued++;
      stream_kick(S, r, in->group);
      break;
    case TS_SI_WAIT:
      if (R->st[in->group].done > in->ord) {
        R->pc++;
        break;
      }
      R->wait = W_STREAM;
      R->since = R->t;
      return;
    case TS_SI_SEND: {
      R->pc++;
      uint32_t peer = ts_mapping_group_member(S->m, TS_GROUP_PP,
                                              label(S, r)->group[TS_GROUP_PP],
                                              in->peer);
      account(S, r, in, TS_DIM_PP, label(S, peer)->host != label(S, r)->host);
      pp_send(S, r, in);
      break;
    }
    case TS_SI_RECV:
      if (S->msg[R->msg_base + in->ord].state == 2) {
        R->pc++;
        break;
      }
      R->wait = W_RECV;
      R->since = R->t;
      return;
    }
  }
  if (R->pc < P->n || R->wait == W_DONE) return;
  R->wait = W_DONE;
  R->finish = R->t;
  S->finished++;
}

/* rank_loop, with the progress count. */
static void rank_exec(step_state *S, uint32_t r) {
  step_rank *R = &S->rank[r];
  uint32_t pc0 = R->pc;
  rank_loop(S, r);
  S->ins_done += R->pc - pc0;
  /* Early stop: the rank reaches pc at R->t or later (R->t never runs
   * ahead of it) and runs at least the compute left after it, each
   * segment at >= its time (stragglers slow it): its finish, so the step,
   * is later than the horizon as soon as this is. */
  if (S->rest && !S->passed && !S->x->violated &&
      R->t + S->rest[R->prog - S->sp.prog][R->pc] > S->o->horizon) {
    S->passed = 1;
    ts_sim_stop(S->sim);
  }
  if (!S->o->progress) return;
  if (r == 0 && R->pc < R->prog->n && R->prog->ins[R->pc].micro >= 0)
    S->micro0 = (uint32_t)R->prog->ins[R->pc].micro + 1;
  if ((++S->calls & 255) == 0) progress(S);
}

static void ready_push(step_state *S, uint32_t r) {
  S->ready[S->nready_tail] = r;
  S->nready_tail = (S->nready_tail + 1) % (S->nranks + 1);
}

/* Without lookahead: run r now (the event-driven order). With it: queue r
 * and drain the queue unless an outer call is already draining. */
static void rank_run(step_state *S, uint32_t r) {
  if (!S->fast.on) {
    rank_exec(S, r);
    return;
  }
  ready_push(S, r);
  if (S->draining) return;
  S->draining = 1;
  while (S->nready_head != S->nready_tail && !S->err) {
    uint32_t q = S->ready[S->nready_head];
    S->nready_head = (S->nready_head + 1) % (S->nranks + 1);
    rank_exec(S, q);
  }
  S->draining = 0;
}

static void on_exec_done(void *ctx, uint64_t tag) {
  step_state *S = ctx;
  switch (TAG_KIND(tag)) {
  case 1: {
    uint32_t g = (uint32_t)TAG_MID(tag), id = (uint32_t)TAG_LOW(tag);
    exec_group *G = &S->colls.groups[g][id];
    if (G->extra) { /* a batch: its members' gaps still to come */
      ts_time_ps x = G->extra;
      G->extra = 0;
      if (ts_sim_schedule_in(S->sim, x, on_event, S, tag, NULL))
        fail(S, TS_ELIMIT);
      break;
    }
    coll_done(S, g, id);
    break;
  }
  case 2: pp_deliver(S, (uint32_t)TAG_MID(tag), (uint32_t)TAG_LOW(tag)); break;
  default: {
    uint32_t r = (uint32_t)TAG_LOW(tag);
    S->rank[r].wait = W_RUN;
    S->rank[r].t = ts_sim_now(S->sim);
    rank_run(S, r);
  }
  }
}

/* ---- setup ------------------------------------------------------------ */

static int alloc_state(step_state *S) {
  uint32_t n = S->nranks, slots = 2 * S->v * S->mb, maxg = 2;
  for (int g = 0; g < TS_GROUP_COUNT; g++) {
    uint32_t s = ts_mapping_group_size(S->m, (ts_group)g);
    if (s > maxg) maxg = s;
  }
  S->rank = calloc(n + 1, sizeof *S->rank);
  S->msg = calloc((size_t)n * slots + 1, sizeof *S->msg);
  S->scratch = calloc(maxg, sizeof *S->scratch);
  S->bins = calloc(maxg, sizeof *S->bins);
  ts_step_result *r = S->res;
  r->rank_bytes = calloc((size_t)n * TS_DIM_COUNT + 1, sizeof *r->rank_bytes);
  r->rank_finish = calloc(n + 1, sizeof *r->rank_finish);
  r->rank_breakdown = calloc(n + 1, sizeof *r->rank_breakdown);
  if (!S->rank || !S->msg || !S->scratch || !S->bins || !r->rank_bytes ||
      !r->rank_finish || !r->rank_breakdown)
    return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++) S->rank[i].msg_base = i * slots;
  return 0;
}

/* Lookahead rings for every group kind with an exclusive group, and the
 * run queue (only when the shortcut is on). */
static int ahead_alloc(step_state *S) {
  if (!S->fast.on) return 0;
  S->ready = malloc(((size_t)S->nranks + 1) * sizeof *S->ready);
  if (!S->ready) return TS_ENOMEM;
  for (uint32_t g = 0; g < TS_GROUP_COUNT; g++) {
    uint32_t any = 0;
    for (uint32_t id = 0; id < ts_mapping_group_count(S->m, (ts_group)g); id++)
      any |= S->fast.excl[g][id];
    if (!any) continue;
    S->ahead[g] = calloc((size_t)S->nranks + 1, sizeof *S->ahead[g]);
    if (!S->ahead[g]) return TS_ENOMEM;
  }
  return 0;
}

static int engine_new(step_state *S) {
  ts_exec_opts eo = {S->o->net, S->o->route, S->o->state, S->o->faults};
  int rc = ts_exec_create(S->t, &eo, &S->x, S->d);
  if (rc) return rc;
  S->sim = ts_exec_sim(S->x);
  S->net = ts_exec_net(S->x);
  return 0;
}

static void state_free(step_state *S) {
  for (uint32_t i = 0; S->rest && i < S->sp.nprogs; i++) free(S->rest[i]);
  free(S->rest); /* before the programs: nprogs counts its rows */
  ts_exec_free(S->x);
  exec_colls_free(&S->colls);
  exec_fast_free(&S->fast);
  exec_fold_free(&S->fold);
  ts_step_progs_free(&S->sp);
  free(S->rank);
  free(S->msg);
  free(S->scratch);
  free(S->bins);
  free(S->ready);
  free(S->resv);
  free(S->pend);
  free(S->rkey);
  for (int g = 0; g < TS_GROUP_COUNT; g++) free(S->ahead[g]);
  exec_trace_free(&S->trace);
}

static void on_sample(ts_sim *sim, void *ctx, uint64_t arg) {
  step_state *S = ctx;
  if (S->finished == nsim(S)) return; /* the last sample is the step end */
  exec_trace_sample(&S->trace, S->net, ts_sim_now(sim));
  if (ts_sim_pending(sim) > 0)
    ts_sim_schedule_in(sim, S->trace.interval, on_sample, S, arg, NULL);
}

/* ---- results ---------------------------------------------------------- */

/* Folded: every rank takes its representative's state and bytes, cross-
 * node bytes (summed over simulated ranks) count every class, image links
 * their class-0 twins' counters; TP replays are added after the mirror
 * (their NVLinks are not images of anything). */
static void unfold(step_state *S) {
  if (!S->fold.on) {
    exec_colls_apply_memos(&S->colls, S->x);
    return;
  }
  for (uint32_t g = 0; g < TS_GROUP_COUNT; g++)
    if (g != TS_GROUP_TP) exec_colls_apply_kind(&S->colls, S->x, g);
  exec_fold_mirror_links(&S->fold, S->x);
  exec_colls_apply_kind(&S->colls, S->x, TS_GROUP_TP);
  for (uint32_t r = 0; r < S->nranks; r++) {
    uint32_t q = exec_fold_rep(S->m, r);
    if (q == r) continue;
    S->rank[r].bd = S->rank[q].bd;
    S->rank[r].finish = S->rank[q].finish;
    S->rank[r].wait = W_DONE;
    memcpy(&S->res->rank_bytes[(size_t)r * TS_DIM_COUNT],
           &S->res->rank_bytes[(size_t)q * TS_DIM_COUNT],
           TS_DIM_COUNT * sizeof *S->res->rank_bytes);
  }
  for (int k = 0; k < TS_DIM_COUNT; k++) S->cross[k] *= S->fold.T;
}

/* True when link a ranks above b: busier, then more bytes, then lower id. */
static bool busier(const ts_step_link *a, const ts_step_link *b) {
  if (a->busy != b->busy) return a->busy > b->busy;
  if (a->bytes != b->bytes) return a->bytes > b->bytes;
  return a->dir < b->dir;
}

void exec_top_add(ts_step_result *r, uint32_t dir, uint64_t bytes,
                  ts_time_ps busy) {
  ts_step_link l = {dir, bytes, busy, 0};
  if (r->ntop == TS_STEP_TOP_LINKS && !busier(&l, &r->top[r->ntop - 1]))
    return;
  uint32_t i = r->ntop < TS_STEP_TOP_LINKS ? r->ntop++ : r->ntop - 1;
  for (; i > 0 && busier(&l, &r->top[i - 1]); i--) r->top[i] = r->top[i - 1];
  r->top[i] = l;
}

void exec_top_finish(ts_step_result *r) {
  for (uint32_t i = 0; i < r->ntop && r->step_time; i++)
    r->top[i].utilization = (double)r->top[i].busy / (double)r->step_time;
}

static void top_links(step_state *S) {
  ts_step_result *r = S->res;
  uint32_t nd = 2 * ts_topo_link_count(S->t);
  exec_dir_stat *out = S->req ? S->req->dirs : NULL;
  for (uint32_t d = 0; d < nd; d++) {
    ts_net_dir_stats st;
    if (ts_net_dir_stats_get(S->net, d, &st) || (!st.busy_ps && !st.bytes))
      continue;
    if (out) out[d] = (exec_dir_stat){st.bytes, st.busy_ps};
    exec_top_add(r, d, st.bytes, st.busy_ps);
  }
  exec_top_finish(r);
}

static void breakdowns(step_state *S) {
  ts_step_result *r = S->res;
  uint32_t n = S->nranks;
  /* Critical: a rank finishing last; among those the one that computed
   * longest (it waited least: a straggler, not the ranks it held up). */
  for (uint32_t i = 0; i < n; i++) {
    const step_rank *R = &S->rank[i], *C = &S->rank[r->critical_rank];
    if (R->finish > r->step_time ||
        (R->finish == r->step_time && R->bd.compute > C->bd.compute)) {
      r->step_time = R->finish;
      r->critical_rank = i;
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    ts_step_breakdown *b = &r->rank_breakdown[i];
    *b = S->rank[i].bd;
    ts_time_ps used = b->compute + b->bubble;
    for (int k = 0; k < TS_DIM_COUNT; k++) used += b->exposed[k];
    b->idle = used < r->step_time ? r->step_time - used : 0;
    r->rank_finish[i] = S->rank[i].finish;
    for (int k = 0; k < TS_DIM_COUNT; k++)
      r->bytes_mean[k] += (double)r->rank_bytes[(size_t)i * TS_DIM_COUNT + k];
  }
  r->critical = r->rank_breakdown[r->critical_rank];
  for (int k = 0; k < TS_DIM_COUNT; k++) {
    r->bytes_critical[k] = r->rank_bytes[(size_t)r->critical_rank * TS_DIM_COUNT + k];
    r->bytes_mean[k] /= n ? n : 1;
    r->cross_node_mean[k] = (double)S->cross[k] / (n ? n : 1);
  }
}

void exec_step_rates(ts_step_result *r, const ts_step_progs *P,
                     uint32_t nranks, uint32_t microbatches) {
  double s = ts_ps_to_s(r->step_time);
  r->ranks = nranks;
  r->microbatches = microbatches;
  r->tokens_per_step = P->tokens_per_step;
  r->model_flops = P->model_flops;
  r->peak_flops = P->peak_flops;
  if (s <= 0 || !nranks) return;
  r->tokens_per_s = r->tokens_per_step / s;
  r->flops_per_gpu = r->model_flops / s / nranks;
  r->mfu = r->peak_flops > 0 ? r->flops_per_gpu / r->peak_flops : 0;
  r->hw_flops_per_gpu = P->hw_flops / s / nranks;
  r->hfu = r->peak_flops > 0 ? r->hw_flops_per_gpu / r->peak_flops : 0;
}

static int stuck(step_state *S) {
  for (uint32_t i = 0; i < S->nranks; i++) {
    const step_rank *R = &S->rank[i];
    if (R->wait == W_DONE || !simulated(S, i)) continue;
    const ts_step_ins *in = &R->prog->ins[R->pc];
    return ts_diag_set(S->d, TS_EINTERNAL, NULL, 0, 0, "%u of %u ranks never "
                       "finished; rank %u waits at instruction %u of %u (op %d, "
                       "group %s, micro-batch %d)", nsim(S) - S->finished,
                       S->nranks, i, R->pc, R->prog->n, in->op,
                       ts_group_name((ts_group)in->group), in->micro);
  }
  return TS_EINTERNAL;
}

/* The early stop's compute left per program and pc (suffix sums of the
 * compute segments). 0 or TS_ENOMEM. */
static int rest_init(step_state *S) {
  if (!S->o->horizon) return 0;
  S->rest = calloc(S->sp.nprogs + 1, sizeof *S->rest);
  if (!S->rest) return TS_ENOMEM;
  for (uint32_t i = 0; i < S->sp.nprogs; i++) {
    const ts_step_prog *P = &S->sp.prog[i];
    ts_time_ps *a = malloc(((size_t)P->n + 1) * sizeof *a);
    if (!(S->rest[i] = a)) return TS_ENOMEM;
    a[P->n] = 0;
    for (uint32_t k = P->n; k-- > 0;)
      a[k] = a[k + 1] + (P->ins[k].op == TS_SI_COMP ? P->ins[k].val : 0);
  }
  return 0;
}

static int run(step_state *S) {
  ts_time_ps est = 0;
  for (uint32_t i = 0; i < S->sp.nprogs; i++)
    if (S->sp.prog[i].compute > est) est = S->sp.prog[i].compute;
  int rc = exec_trace_init(&S->trace, S->o, S->nranks,
                           2 * ts_topo_link_count(S->t), est / 32);
  if (!rc) rc = rest_init(S);
  if (rc) return rc;
  for (uint32_t r = 0; r < S->nranks; r++)
    if (simulated(S, r)) S->ins_total += S->rank[r].prog->n;
  S->wall0 = S->wall_last = wall_now();
  for (uint32_t r = 0; r < S->nranks && !S->err; r++)
    if (simulated(S, r)) rank_run(S, r);
  if (S->trace.cap_samples)
    ts_sim_schedule(S->sim, S->trace.interval, on_sample, S, 0, NULL);
  if (!S->err && S->o->horizon) {
    /* Early stop (sweep): a rank's time plus its compute left passed the
     * horizon (rank_exec), or every event due by the horizon has run and
     * a rank is still busy, which it then resumes only in a later event
     * (or at an instance end that a later arrival decides), or a rank run
     * ahead of the clock (lookahead) finished after it. Either way the
     * step is longer. Stopped runs (errors, a void replay or fold) fall
     * through below. */
    rc = S->passed ? 0 : ts_sim_run_until(S->sim, S->o->horizon);
    bool late = S->passed || (S->finished < nsim(S) && ts_sim_pending(S->sim));
    for (uint32_t r = 0; r < S->nranks && !late; r++)
      late = simulated(S, r) && S->rank[r].wait == W_DONE &&
             S->rank[r].finish > S->o->horizon;
    if (!rc && !S->err && !S->x->violated && late) {
      S->passed = 1;
      return ts_diag_set(S->d, TS_ELIMIT, NULL, 0, 0, "the step passes the "
                         "horizon of %.6f s", ts_ps_to_s(S->o->horizon));
    }
    S->passed = 0; /* a failed or void run proves nothing */
  }
  if (!S->err && !rc) rc = ts_sim_run(S->sim);
  if (S->x->violated) { /* quiet replay void: rerun */
    S->passed = 0;      /* (a run going on after a crossing is inexact) */
    return TS_EINTERNAL;
  }
  if (rc == TS_ELIMIT && ts_sim_overrun(S->sim))
    return ts_budget_refuse_run(S->d, ts_sim_overrun(S->sim));
  if (!rc) rc = S->err;
  if (!rc && !S->o->free_comm) rc = ts_exec_status(S->x, S->d);
  if (rc) {
    if (!S->d || !S->d->msg[0])
      ts_diag_set(S->d, rc, NULL, 0, 0, "step simulation failed: %s",
                  ts_strerror(rc));
    return rc;
  }
  if (S->finished < nsim(S)) return stuck(S);
  return 0;
}

static int results(step_state *S) {
  unfold(S);
  breakdowns(S);
  exec_step_rates(S->res, &S->sp, S->nranks, S->mb);
  top_links(S);
  ts_step_result *r = S->res;
  ts_net_stats_get(S->net, &r->net);
  ts_sim_stats_get(S->sim, &r->sim);
  r->transfers = ts_exec_transfers(S->x);
  r->ranks_simulated = nsim(S);
  r->crossed_kept = S->x->crossed_kept;
  r->memo_runs = S->fast.runs;
  r->memo_shared = S->fast.shared;
  r->wire_bytes = ts_exec_wire_bytes(S->x);
  if (S->trace.cap_samples) exec_trace_sample(&S->trace, S->net, r->step_time);
  return exec_trace_finish(&S->trace, r);
}

void ts_step_opts_default(ts_step_opts *o) {
  memset(o, 0, sizeof *o);
  ts_net_config_default(&o->net);
  o->compact_min = 8;
  o->alpha_ps = -1;
  o->bounded = TS_STEP_BOUNDED_DEFAULT;
}

void ts_step_result_free(ts_step_result *r) {
  if (!r) return;
  free(r->rank_bytes);
  free(r->rank_finish);
  free(r->rank_breakdown);
  free(r->slices);
  free(r->counters);
  memset(r, 0, sizeof *r);
}

const char *ts_step_dim_name(ts_step_dim d) {
  static const char *const names[] = {"tp", "cp", "ep", "pp", "dp"};
  return (unsigned)d < TS_DIM_COUNT ? names[d] : "?";
}

/* Every rank starts on its (stage, EP index) program. */
static void assign_progs(step_state *S) {
  for (uint32_t r = 0; r < S->nranks; r++)
    S->rank[r].prog = ts_step_progs_rank(&S->sp, S->m, r);
}

enum { TRY_NOFOLD = 1, TRY_NOQUIET = 2, TRY_SKIP = 4, TRY_NODP = 8 };

/* Attempts with quiet replays before they are given up: each runs live
 * the instances the previous ones saw crossed. A void attempt that saw
 * more than a quarter of its replays crossed gives them up at once. */
enum { QUIET_ATTEMPTS = 3 };

/* Keys of the replayed instances earlier attempts saw crossed, sorted. */
typedef struct quiet_skip {
  uint64_t *k;
  uint32_t n, cap;
} quiet_skip;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Adds the crossed keys of x to q (sorted, unique). 0 or TS_ENOMEM. */
static int skip_add(quiet_skip *q, const ts_exec *x) {
  if (q->n + x->ncrossed > q->cap) {
    uint32_t cap = q->n + x->ncrossed;
    uint64_t *v = realloc(q->k, ((size_t)cap + 1) * sizeof *v);
    if (!v) return TS_ENOMEM;
    q->k = v;
    q->cap = cap;
  }
  memcpy(q->k + q->n, x->crossed, x->ncrossed * sizeof *q->k);
  q->n += x->ncrossed;
  qsort(q->k, q->n, sizeof *q->k, cmp_u64);
  uint32_t n = 0;
  for (uint32_t i = 0; i < q->n; i++)
    if (!n || q->k[i] != q->k[n - 1]) q->k[n++] = q->k[i];
  q->n = n;
  return 0;
}

/* Whether data-parallel quiet replays may pay: no pipeline (its sends
 * cross the rings' NIC directions throughout the step: on every GPT-3
 * 175B mapping with PP > 1 measured, an attempt saw one crossed and the
 * step ended with none replayed), and every program issues its first
 * data-parallel collective within the first half of its compute (ZeRO
 * 2 / 3, FSDP: per micro-batch). A crossed one costs the attempt up to
 * the crossing (it stops there), so where the stream only runs at the
 * step's end (ZeRO 0 / 1 gradient buckets, the optimizer's gathers) a
 * crossing would cost nearly a whole step, for few instances saved.
 * Cost: O(instructions). */
static bool dp_early(const step_state *S) {
  if (ts_mapping_group_size(S->m, TS_GROUP_PP) > 1) return false;
  for (uint32_t i = 0; i < S->sp.nprogs; i++) {
    const ts_step_prog *p = &S->sp.prog[i];
    ts_time_ps t = 0;
    uint32_t k = 0;
    for (; k < p->n; k++) {
      const ts_step_ins *in = &p->ins[k];
      if (in->op == TS_SI_COLL && dp_kind(in->group)) break;
      if (in->op == TS_SI_COMP) t += (ts_time_ps)in->val;
    }
    if (k < p->n && t > p->compute / 2) return false;
  }
  return true;
}

/* Quiet-window replays (above) for the groups that are not replayed
 * outright (quiet_kind), when the fast path is on with the flow model.
 * 0 or TS_ENOMEM. */
static int quiet_init(step_state *S, int off) {
  const ts_step_opts *o = S->o;
  if (off || !S->fast.on || o->net.fidelity != TS_NET_FLOW || o->net.full_solve)
    return 0;
  /* bounded: crossed TP / CP / EP replays stand; data-parallel ones keep
   * the exact rule (theirs standing put a ZeRO 2 step whose stream queues
   * all step 5.2% short, docs/performance.md "Crossed replays stand") */
  if ((o->bounded & TS_STEP_CROSS) && !o->exact)
    S->x->cross_keep = 1u << TS_GROUP_TP | 1u << TS_GROUP_CP |
                       1u << TS_GROUP_EP;
  if (!S->nodp && !dp_early(S)) S->nodp = 1;
  for (uint32_t g = 0; g < TS_GROUP_COUNT; g++) {
    if (g == TS_GROUP_PP || (dp_kind(g) && S->nodp) ||
        ts_mapping_group_size(S->m, (ts_group)g) < 2)
      continue;
    for (uint32_t id = 0; id < ts_mapping_group_count(S->m, (ts_group)g); id++)
      if (!S->fast.excl[g][id]) S->quiet = 1;
  }
  if (!S->quiet) return 0;
  for (uint32_t g = 0; g < TS_GROUP_COUNT && !S->nodp; g++)
    if (dp_kind(g)) S->x->crossed_stop |= 1u << g;
  size_t nd = 2 * (size_t)ts_topo_link_count(S->t) + 1;
  S->resv = calloc(nd, sizeof *S->resv);
  S->pend = calloc(nd, sizeof *S->pend);
  S->rkey = calloc(nd, sizeof *S->rkey);
  if (!S->resv || !S->pend || !S->rkey) return TS_ENOMEM;
  S->x->resv = S->resv;
  S->x->pend = S->pend;
  S->x->resv_key = S->rkey;
  return 0;
}

/* One attempt at the step with shortcuts `tries` (TRY_*) off and the
 * instances in qs run live; *retry gets the shortcut to turn off when this
 * attempt was void (folding refused mid-run, quiet replays crossed and
 * too many of them), or TRY_SKIP with the crossed instances added to qs:
 * nothing of a void attempt is kept. */
static int step_once(const ts_workload *w, const ts_topo *t,
                     const ts_mapping *m, const ts_step_opts *o,
                     const exec_step_req *req, unsigned tries,
                     quiet_skip *qs, ts_step_result *out, ts_diag *d,
                     unsigned *retry, char *why, size_t nwhy) {
  memset(out, 0, sizeof *out);
  step_state S;
  memset(&S, 0, sizeof S);
  S.t = t, S.m = m, S.o = o, S.res = out, S.d = d, S.req = req;
  S.nofold = (tries & TRY_NOFOLD) != 0;
  S.nodp = (tries & TRY_NODP) != 0;
  S.skip = qs->k;
  S.nskip = qs->n;
  int rc = ts_step_compile_mb(w, t, m, req ? req->microbatches : 0, &S.sp, d);
  if (rc) return rc;
  S.v = S.sp.chunks;
  S.mb = S.sp.microbatches;
  S.nranks = ts_mapping_ranks(m);
  rc = engine_new(&S);
  if (!rc) rc = alloc_state(&S);
  if (!rc)
    rc = exec_colls_init(&S.colls, S.x, m, &S.sp, o->compact_min, o->alpha_ps);
  /* bounded shortcut: rings below compact_min on one host compact too */
  S.colls.compact_host = (o->bounded & TS_STEP_COMPACT_SMALL) && !o->exact;
  if (!rc) assign_progs(&S);
  if (!rc) rc = exec_fast_init(&S.fast, S.x, m, &S.sp, o);
  if (!rc) rc = exec_batch_init(&S.colls, o, S.fast.on);
  if (!rc && !S.nofold) rc = exec_fold_init(&S.fold, &S.colls, S.x, &S.fast, o);
  if (!rc) rc = ahead_alloc(&S);
  if (!rc) rc = quiet_init(&S, tries & TRY_NOQUIET);
  S.hbm_bw = S.colls.params.hbm_bw;
  if (!rc) rc = run(&S);
  *retry = !rc || S.passed ? 0 : S.x && S.x->violated ? TRY_NOQUIET
                 : S.fold.refused ? TRY_NOFOLD : 0;
  /* a data-parallel instance crossed (the run stopped there): the next
   * attempt runs them all live, and the other kinds' crossed instances */
  if (*retry == TRY_NOQUIET && S.x->crossed_stop_hit && !S.x->crossed_full &&
      skip_add(qs, S.x) == 0)
    *retry = TRY_NODP;
  /* a retry pays a whole step: only while crossings are the exception */
  else if (*retry == TRY_NOQUIET && !S.x->crossed_full && S.x->ncrossed &&
      (uint64_t)S.x->ncrossed * 4 <= out->replayed && skip_add(qs, S.x) == 0)
    *retry = TRY_SKIP;
  if (!rc) rc = results(&S);
  snprintf(why, nwhy, "%s", S.fold.why);
  if (rc == TS_ENOMEM) ts_diag_set(d, rc, NULL, 0, 0, "out of memory");
  state_free(&S);
  if (rc) ts_step_result_free(out);
  out->horizon_passed = S.passed;
  return rc;
}

int ts_step_run(const ts_workload *w, const ts_topo *t, const ts_mapping *m,
                const ts_step_opts *o, ts_step_result *out, ts_diag *d) {
  ts_step_opts def;
  if (!o) {
    ts_step_opts_default(&def);
    o = &def;
  }
  int rc;
  if (exec_steady_run(w, t, m, o, out, d, &rc)) return rc;
  return exec_step_full(w, t, m, o, NULL, out, d);
}

int exec_step_full(const ts_workload *w, const ts_topo *t, const ts_mapping *m,
                   const ts_step_opts *o, const exec_step_req *req,
                   ts_step_result *out, ts_diag *d) {
  /* A void attempt turns its shortcut off, or (quiet replays crossed) runs
   * the crossed instances live in the next attempt, QUIET_ATTEMPTS at most;
   * the fold's first reason is the one reported (a rerun without folding
   * says "off"). */
  unsigned tries = 0, retry = 0, skips = 0, attempts = 1;
  quiet_skip qs = {NULL, 0, 0};
  char why[sizeof out->fold], why2[sizeof out->fold];
  int rc = step_once(w, t, m, o, req, tries, &qs, out, d, &retry, why,
                     sizeof why);
  while (retry && !(tries & retry)) {
    if (retry == TRY_SKIP && ++skips == QUIET_ATTEMPTS) retry = TRY_NOQUIET;
    if (retry != TRY_SKIP) tries |= retry;
    if (d) memset(d, 0, sizeof *d);
    rc = step_once(w, t, m, o, req, tries, &qs, out, d, &retry, why2,
                   sizeof why2);
    if (!(tries & TRY_NOFOLD)) memcpy(why, why2, sizeof why);
    attempts++;
  }
  free(qs.k);
  out->attempts = attempts;
  if (!rc) snprintf(out->fold, sizeof out->fold, "%s", why);
  return rc;
}
