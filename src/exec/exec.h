/* exec.h - private layout of the runtime (ts_exec.h) and the pieces the
 * exec_*.c files share.
 *
 * exec.c            ts_exec_create: engine, router, network, executor.
 * exec_coll.c       the collective executor (plans on the engine).
 * exec_cache.c      route cache per connection (hashed, grows).
 * exec_path.c       endpoint pairs -> path sets (NVSwitch stripes, bundles).
 * exec_coll_run.c   one collective on a topology (ts_coll_run.h) and the
 *                   topology/network -> collective bridge.
 * exec_ring.c       step rings in closed form when each flow runs alone.
 * exec_p2p.c        point-to-point patterns (ts_p2p.h).
 * exec_step_run.c   a training step: rank state machines, rendezvous.
 * exec_step_coll.c  communicators and cached plans of a step.
 * exec_step_trace.c trace slices and link utilization samples.
 * exec_step_fast.c  replays collectives of groups that own their links.
 * exec_step_fold.c  simulates one rank per TP group when that is exact.
 * exec_step_steady.c a long step's steady phase from two shorter runs. */
#ifndef TOPSIM_EXEC_H
#define TOPSIM_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "topsim/ts_coll.h"
#include "topsim/ts_exec.h"
#include "topsim/ts_step.h"
#include "topsim/ts_step_prog.h"

struct exec_run;

/* Route cache per connection (exec_cache.c). NULL is a valid, empty cache
 * (get misses, put does nothing). */
typedef struct exec_cache exec_cache;
exec_cache *exec_cache_new(void);
void exec_cache_free(exec_cache *c);
/* 1 and *out, *lat (the path's summed hop latency, as put) filled when
 * (src, dst, channel) is cached, else 0. */
int exec_cache_get(const exec_cache *c, uint32_t src, uint32_t dst,
                   uint32_t ch, ts_path *out, ts_time_ps *lat);
/* Forgets every entry (keeps the memory). */
void exec_cache_clear(exec_cache *c);
/* Remembers p and its summed hop latency lat for the connection (silently
 * not, without memory). */
void exec_cache_put(exec_cache *c, uint32_t src, uint32_t dst, uint32_t ch,
                    const ts_path *p, ts_time_ps lat);

struct ts_exec {
  const ts_topo *t;
  ts_sim *sim;
  ts_route *rt;
  ts_net *net;
  /* what-if (exec_faults.c) */
  const ts_faults *faults;        /* borrowed, or NULL */
  ts_route_state *own_state;      /* state + static faults, or NULL */
  double *slow;                   /* per node: straggler factor, or NULL */
  /* executor (exec_coll.c) */
  ts_path *paths;                 /* scratch for one path set */
  ts_time_ps path_lat;            /* summed hop latency of paths[0] as
                                     exec_xfer_paths last set it */
  uint64_t transfers, wire_bytes;
  int err;
  ts_diag diag;
  struct exec_run *runs;          /* live runs, freed with the runtime */
  exec_cache *cache;              /* route cache, or NULL */
  /* footprint recording for isolated runs (exec_step_fast.c) */
  int recording, rec_fail;
  uint32_t *rec, nrec, caprec;    /* directions sent over, with repeats */
  /* folding with live TP groups (exec_step_fold.c): every hop is sent over
   * its orbit's representative direction, or NULL */
  const uint32_t *dir_rep;
  /* quiet-window replays (exec_step_run.c), per direction the network
   * sees, or NULL: end of the replayed window + 1 and latest activation of
   * a posted transfer + 1 (0: none); violated is set (and the engine
   * stopped) when a transfer would be active inside a replayed window */
  ts_time_ps *resv, *pend;
  int violated;
  /* with resv_key (the replayed instance that reserved each direction):
   * the run goes on after a crossing and collects the crossed instances'
   * keys in crossed[ncrossed] (a later attempt runs them live); the
   * engine is stopped once EXEC_CROSSED_MAX are collected */
  uint64_t *resv_key, *crossed;
  uint32_t ncrossed, capcrossed;
  int crossed_full;                /* out of room: give replays up */
  /* bit g set: a crossed key of group kind g (key >> 60) stops the engine
   * at once (crossed_stop_hit set): the next attempt runs every instance
   * of those kinds live, so the rest of this one would teach nothing */
  uint32_t crossed_stop;
  int crossed_stop_hit;
  /* bounded (TS_STEP_CROSS), bit g set: a crossed replay of group kind g
   * stands, the crossing counted in crossed_kept: neither side is slowed
   * by the other over the overlap */
  uint32_t cross_keep;
  uint64_t crossed_kept;
};

/* Builds x->own_state (o->state plus the static faults) when o has faults,
 * and says in *bundle_ok whether NVSwitch bundling survives every fault,
 * timed ones included. 0, TS_ENOMEM or the faults' error (d set). */
int exec_faults_state(ts_exec *x, const ts_exec_opts *o, int *bundle_ok,
                      ts_diag *d);
/* Schedules x->faults' timed failures and installs the network's reroute
 * hook when there are any. 0 or TS_EUSAGE (chunk fidelity) with d set. */
int exec_faults_arm(ts_exec *x, ts_diag *d);

/* Forgets every cached route (after a link died mid-run). */
void exec_cache_reset(ts_exec *x);

/* Executor state inside x: 0 or TS_ENOMEM. exec_coll_fini frees it and
 * every run still live. */
int exec_coll_init(ts_exec *x);
void exec_coll_fini(ts_exec *x);

/* ts_exec_coll_start that also keeps *unposted, the count of the plan's
 * transfers not yet posted to the network (joins never are): set at the
 * start, decremented as each is posted, so 0 once every flow the run will
 * ever make exists (quiet replays, exec_step_run.c). */
int exec_coll_start_counted(ts_exec *x, const ts_coll_plan *plan,
                            double hbm_bw, ts_coll_done_fn fn, void *ctx,
                            uint64_t tag, uint32_t *unposted);

/* True when plan is one transfer that starts at once (no deps, no join,
 * no reduction timer at hbm_bw): exec_coll_send1 can run it. */
bool exec_coll_single(const ts_coll_plan *plan, double hbm_bw);
/* Sends a single plan's transfer now, without a run or a start event;
 * fn(net, ctx, tag) on delivery. ts_exec_coll_start would start it at the
 * same simulated time through a zero-delay event. 0 or an error, d set. */
int exec_coll_send1(ts_exec *x, const ts_coll_plan *plan, ts_net_done_fn fn,
                    void *ctx, uint64_t tag, ts_diag *d);

/* The path set the executor sends xf over, into x->paths[0..*k) (the same
 * route, cached or not), and paths[0]'s summed hop latency into
 * x->path_lat. 0 or the router's error, d set. */
int exec_xfer_paths(ts_exec *x, const ts_coll_xfer *xf, uint32_t *k,
                    ts_diag *d);
/* Latency the executor charges xf on top of the network's, for the path
 * set exec_xfer_paths just put in x->paths. */
ts_time_ps exec_xfer_alpha(const ts_exec *x, const ts_coll_xfer *xf);

/* Runs the step ring r on x in closed form when that is provably what the
 * full simulation would do (x idle, every ring edge alone on its links,
 * an edge's transfers never overlapping: exec_ring.c): 0 with *end the
 * last delivery time and the link, network and executor counters added as
 * the flows would have; 1 when it does not apply (nothing changed: run the
 * plan instead); TS_ENOMEM with d set. */
int exec_ring_closed(ts_exec *x, const ts_coll_ring *r, double hbm_bw,
                     ts_time_ps *end, ts_diag *d);

/* Cost-model bandwidths of gpu; net NULL reads nominal link bandwidths. */
void exec_coll_params(const ts_topo *t, const ts_net *net, uint32_t gpu,
                      ts_coll_params *p);

/* Rings across hosts as NCCL runs them: one channel per GPU of a host,
 * rotated so each leaves the host through a different NIC, unless p
 * already asks for channels or an order (exec_coll_run.c). */
void exec_multi_host_rings(const ts_coll_comm *comm, ts_coll_params *p);

/* ---- step: collectives (exec_step_coll.c) ---- */

/* Result of one isolated run of a plan (exec_step_fast.c). */
enum { EXEC_CROSSED_MAX = 4096 };

typedef struct exec_memo {
  ts_time_ps dur;               /* start to last delivery */
  uint64_t transfers, wire;     /* executor counters */
  uint32_t n;                   /* directions used */
  uint32_t *dir;
  uint64_t *bytes;
  ts_time_ps *busy;
  uint32_t *peak;
  ts_time_ps *end;              /* after the start: the last flow left
                                   the direction (quiet replays) */
  const ts_coll_plan *plan;     /* borrowed: the plan it is the run of */
  uint64_t sig;                 /* memo_sig(plan) */
  uint64_t replays;             /* instances replayed, applied at the end */
} exec_memo;

/* One direction a plan's isolated run uses, as the network sees it (after
 * the fold's dir_rep; the most of any direction of its orbit). */
typedef struct exec_quiet_dir {
  uint32_t dir;
  uint32_t peak;    /* most flows at once there */
  ts_time_ps end;   /* when, after the start, its last flow leaves it */
  ts_time_ps busy;  /* busy time there in isolation */
  uint64_t bytes;   /* bytes there in isolation */
} exec_quiet_dir;

typedef struct exec_plan_ent {
  uint8_t op;
  uint8_t flags;
  uint32_t count;               /* collectives merged (batch), 1 alone */
  uint64_t bytes, sent;
  ts_time_ps extra;             /* batch: its members' isolated times
                                   minus its own (exec_step_batch.c) */
  uint8_t xset;                 /* extra computed */
  ts_coll_plan *plan;
  exec_memo *memo;              /* isolated result, once computed */
  uint8_t checked;              /* fold: images proven (exec_step_fold.c) */
  ts_coll_plan *fplan;          /* fold, live TP: member 0's share */
  exec_quiet_dir *q;            /* quiet replay: directions the network
                                   sees the plan use (after dir_rep) */
  uint32_t nq;
  uint8_t qnvl;                 /* ... all of them NVLinks (one host) */
  struct exec_plan_ent *next;
} exec_plan_ent;

typedef struct exec_group {
  ts_coll_comm *comm;
  exec_plan_ent *plans;
  uint32_t arrived;
  uint8_t op;
  ts_time_ps max_t;             /* lookahead: latest arrival so far */
  ts_time_ps extra;             /* the running batch's delay still due */
  uint32_t unposted;            /* live instance: transfers not yet posted
                                   (exec_coll_start_counted) */
} exec_group;

typedef struct exec_colls {
  const ts_topo *t;
  const ts_mapping *m;
  const ts_step_progs *sp;
  ts_coll_params params;
  uint32_t compact_min;
  int compact_host;   /* 1 (TS_STEP_COMPACT_SMALL): rings of 2 ranks up on
                         one host compact too (exec_step_coll.c lower) */
  exec_group *groups[TS_GROUP_COUNT]; /* [group id] */
  ts_coll_plan **pp_plan;              /* [rank * 2 + dir] */
  uint16_t **bat;                      /* [program * TS_GROUP_COUNT + g]:
                                          batches (exec_step_batch.c) */
} exec_colls;

/* Cost-model parameters come from x's network as seen by rank 0's GPU;
 * alpha_ps >= 0 replaces every per-step latency. */
int exec_colls_init(exec_colls *k, const ts_exec *x, const ts_mapping *m,
                    const ts_step_progs *sp, uint32_t compact_min,
                    int64_t alpha_ps);
void exec_colls_free(exec_colls *k);
/* Plan for the collective issued by every member of group (g, id);
 * member_ins[i] is member i's instruction (all-to-all rows). 0 or an error
 * with d set. */
int exec_colls_plan(exec_colls *k, ts_group g, uint32_t id,
                    const ts_step_ins *const *member_ins, exec_plan_ent **out,
                    ts_diag *d);
/* Plan of a pipeline send from rank r in direction dir (0 fwd, 1 bwd) to
 * rank peer. */
int exec_colls_pp_plan(exec_colls *k, uint32_t r, uint32_t dir,
                       uint32_t peer, uint64_t bytes, ts_coll_plan **out,
                       ts_diag *d);

/* ---- step: batches of back-to-back collectives (exec_step_batch.c) */

/* With o->bounded (and not o->exact), finds in every program the runs of
 * collectives of one stream issued back to back (consecutive instructions,
 * same op and flags, no wait on any but the last) that run as one; only
 * for group kinds that are not TP, EP or PP. 0 or TS_ENOMEM. */
int exec_batch_init(exec_colls *k, const ts_step_opts *o, int fast_on);
void exec_batch_free(exec_colls *k);
/* Collectives in the batch starting at ordinal ord of p's stream g: 1
 * when alone (or batches are off), 0 when ord is inside a batch. */
uint32_t exec_batch_len(const exec_colls *k, const ts_step_prog *p,
                        uint32_t g, uint32_t ord);
/* The batch of n collectives from ordinal first of p's stream g as one
 * instruction: the first's, bytes summed, count n. */
void exec_batch_merge(const ts_step_prog *p, uint32_t g, uint32_t first,
                      uint32_t n, ts_step_ins *out);

static inline ts_step_dim exec_dim_of(uint32_t g) {
  switch (g) {
  case TS_GROUP_TP: return TS_DIM_TP;
  case TS_GROUP_CP: return TS_DIM_CP;
  case TS_GROUP_EP: return TS_DIM_EP;
  case TS_GROUP_PP: return TS_DIM_PP;
  default: return TS_DIM_DP;
  }
}

/* ---- step: exact shortcut for groups owning their links
 * (exec_step_fast.c) ---- */

/* Collectives a rank may have issued on one stream and not yet waited
 * for, for the lookahead of exclusive groups (issue and completion times
 * are kept in rings of this size). */
#define EXEC_AHEAD_RING 16u

typedef struct exec_fast {
  int on;
  uint8_t *excl[TS_GROUP_COUNT];  /* [group id]: 1 = runs alone */
  ts_exec *scratch;               /* runtime for isolated runs */
  uint64_t *base_bytes;           /* scratch counters already memoised */
  ts_time_ps *base_busy;
  uint64_t runs, hits;
  uint64_t shared;                /* memos renamed from an image's */
  exec_memo **memos;              /* every memo run in isolation, the
                                     images' sources (borrowed) */
  uint32_t nmemos, capmemos;
  uint32_t *map, *rmap, *mst, *rst, stamp; /* direction bijection scratch */
  ts_path *pa;                    /* one path set of the earlier plan */
} exec_fast;

/* Decides which groups own their links; all off with o->exact,
 * o->free_comm or tracing. 0 or TS_ENOMEM. */
int exec_fast_init(exec_fast *F, const ts_exec *x, const ts_mapping *m,
                   const ts_step_progs *sp, const ts_step_opts *o);
void exec_fast_free(exec_fast *F);
/* Runs plan alone on the scratch runtime, or renames the run of an
 * earlier plan whose routes plan's are an image of (exec_step_fast.c,
 * "memos shared between images"); *out owned by the caller
 * (exec_memo_free), plan borrowed for as long as *out lives. 0 or an
 * error with d set. */
int exec_fast_memo(exec_fast *F, const ts_exec *x, const ts_step_opts *o,
                   const ts_coll_plan *plan, double hbm_bw, exec_memo **out,
                   ts_diag *d);
void exec_memo_free(exec_memo *M);
/* Adds the link and executor counters of M->replays replays to x (once,
 * at the end: busy time and bytes are only read then, tracing being off),
 * each direction d at rep[d] when rep is given and holds one (a folded
 * class-0 group's replays land on its orbits' representatives, which
 * exec_fold_mirror_links then copies). */
void exec_fast_apply(ts_exec *x, const exec_memo *M, const uint32_t *rep);
/* exec_fast_apply for every memo of every group of k. */
void exec_colls_apply_memos(exec_colls *k, ts_exec *x);

/* exec_fast_apply for the memos of group kind g only. */
void exec_colls_apply_kind(exec_colls *k, ts_exec *x, uint32_t g);

/* ---- step: symmetric-rank folding (exec_step_fold.c) ---- */

/* Hash (direction, class) -> direction. */
typedef struct exec_fold_map {
  uint64_t *key;
  uint32_t *val, n, cap;
} exec_fold_map;

typedef struct exec_fold {
  int on, refused;
  int live;                   /* TP groups run (member 0's share), not replayed */
  int sealed;                 /* live: orbits fixed, no more proofs */
  uint32_t T;                 /* classes: the TP group size */
  uint32_t nd, nsim;          /* directions; ranks simulated */
  uint32_t *phi;              /* [dir]: class-0 direction it images */
  uint16_t *cls;              /* [dir]: 0 unused, else class + 1 (live:
                                 1 when class 0 uses it) */
  exec_fold_map inv;          /* (class-0 dir, class) -> image dir */
  exec_fold_map img;          /* live: (image dir, class) -> class-0 dir */
  uint32_t *rep;              /* live: [dir] orbit representative or ~0 */
  uint32_t *qp, nqp, capqp;   /* live: class-0 paths (length, dirs...) */
  uint8_t *pp_checked;        /* [rank * 2 + dir]: send proven */
  ts_path *p0;                /* scratch path set */
  char why[256];              /* "on: ...", "off: ..." or "refused: ..." */
} exec_fold;

/* Member 0 of r's TP group (the rank simulated for r when folding). */
uint32_t exec_fold_rep(const ts_mapping *m, uint32_t r);
/* Turns folding on when the static conditions hold (same programs and
 * stragglers, groups inside classes, every TP group replayed; off with
 * o->exact, chunk fidelity, full_solve or fast->on unset) and every
 * pipeline send of class 0 is proven (lowering them into k's cache).
 * 0 or TS_ENOMEM. */
int exec_fold_init(exec_fold *F, exec_colls *k, ts_exec *x,
                   const exec_fast *fast, const ts_step_opts *o);
void exec_fold_free(exec_fold *F);
/* Proves that every other class's plan of class-0 group (g, id) is the
 * image of plan on disjoint links. 0, TS_ENOMEM, or TS_EINTERNAL with
 * F->refused set when it is not. */
int exec_fold_check_group(exec_fold *F, exec_colls *k, ts_exec *x, ts_group g,
                          uint32_t id, const ts_step_ins *const *ins,
                          const ts_coll_plan *plan, ts_diag *d);
/* The same for class-0 rank r's pipeline send plan (once per r, dir). */
int exec_fold_check_pp(exec_fold *F, exec_colls *k, ts_exec *x, uint32_t r,
                       uint32_t dir, uint32_t peer, uint64_t bytes,
                       const ts_coll_plan *plan, ts_diag *d);
/* Live TP: proves that TP group id's plan (its entry e) is symmetric under
 * rotating member indices and its rotated transfers are images on the
 * real routes, and builds e->fplan (member 0's transfers). 0, TS_ENOMEM,
 * or TS_EINTERNAL with F->refused set. */
int exec_fold_check_tp(exec_fold *F, exec_colls *k, ts_exec *x, uint32_t id,
                       exec_plan_ent *e, ts_diag *d);
/* Copies every class-0 direction's counters onto its images and scales the
 * executor's counters by the class count (before TP replays are added). */
void exec_fold_mirror_links(const exec_fold *F, ts_exec *x);

/* ---- step: trace (exec_step_trace.c) ---- */

typedef struct exec_trace {
  uint8_t *on;                 /* per rank: record its slices */
  ts_step_slice *v;
  uint64_t n, cap;
  uint32_t ndirs, cap_samples, nsamples;
  ts_time_ps interval;         /* between samples; doubles when full */
  ts_time_ps *t;               /* [sample] */
  ts_time_ps *busy;            /* [sample * ndirs + dir], cumulative */
  int fail;
} exec_trace;

/* Prepares recording for opts' trace ranks; samples every direction's busy
 * time every `interval` (doubled whenever 64 samples are held) unless that
 * would take more than 16M entries. 0 or TS_ENOMEM. */
int exec_trace_init(exec_trace *T, const ts_step_opts *o, uint32_t ranks,
                    uint32_t ndirs, ts_time_ps interval);
void exec_trace_add(exec_trace *T, uint32_t rank, uint8_t stream,
                    uint8_t kind, uint16_t chunk, int32_t layer,
                    int32_t micro, ts_time_ps start, ts_time_ps dur);
void exec_trace_sample(exec_trace *T, const ts_net *net, ts_time_ps now);
/* Moves slices into r and turns samples of r->top links into counters. */
int exec_trace_finish(exec_trace *T, ts_step_result *r);
void exec_trace_free(exec_trace *T);

/* ---- step: runs and results (exec_step_run.c) ---- */

/* Bytes and busy time of one link direction over a step. */
typedef struct exec_dir_stat {
  uint64_t bytes;
  ts_time_ps busy;
} exec_dir_stat;

/* What a run is asked beyond ts_step_run's arguments. */
typedef struct exec_step_req {
  uint32_t microbatches; /* compile with this many (0: the workload's) */
  exec_dir_stat *dirs;   /* NULL, or [2 * links]: filled at the end */
} exec_step_req;

/* ts_step_run without the steady-phase shortcut; req may be NULL. */
int exec_step_full(const ts_workload *w, const ts_topo *t, const ts_mapping *m,
                   const ts_step_opts *o, const exec_step_req *req,
                   ts_step_result *out, ts_diag *d);
/* Sets r's rates (tokens/s, FLOP/s, MFU, HFU) from its step time and P's
 * facts, and its ranks and micro-batches. */
void exec_step_rates(ts_step_result *r, const ts_step_progs *P,
                     uint32_t nranks, uint32_t microbatches);
/* Adds direction dir to r's busiest links if it is among the busiest. */
void exec_top_add(ts_step_result *r, uint32_t dir, uint64_t bytes,
                  ts_time_ps busy);
/* Sets the utilization of r's busiest links from its step time. */
void exec_top_finish(ts_step_result *r);

/* ---- step: the steady phase extrapolated (exec_step_steady.c) ---- */

/* With TS_STEP_STEADY and a step long enough, runs it at two shorter
 * micro-batch counts and extrapolates; returns 1 with *rc set, or 0 when
 * the shortcut does not apply (the caller runs the full step). */
int exec_steady_run(const ts_workload *w, const ts_topo *t, const ts_mapping *m,
                    const ts_step_opts *o, ts_step_result *out, ts_diag *d,
                    int *rc);

#endif
