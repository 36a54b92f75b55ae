/* ts_step.h - one training step predicted on the discrete-event engine.
 *
 * The step is compiled by `work` into per-rank programs (ts_step_prog.h)
 * and run here, on a runtime built by ts_exec_create (ts_exec.h).
 * Every rank of a mapped workload (ts_work.h) runs its own operation graph:
 * a compute stream (forward and backward per layer per micro-batch in the
 * pipeline schedule's order, then the optimizer) and one communication
 * stream per process group (TP, CP, EP, dense and expert gradients), plus
 * point-to-point pipeline sends. Collectives are lowered (ts_coll.h) and run
 * concurrently over the shared fabric (ts_exec.h), so traffic of
 * different groups contends on the same links. docs/model.md ("Step model")
 * describes streams, dependencies, schedules, overlap and the rendezvous.
 *
 * Cost: O(ranks x program length) instruction steps, where a rank's program
 * has O(micro-batches x layers on its stage) entries and is shared by every
 * rank of the same (pipeline stage, EP index); plus the network model's cost
 * for the transfers of every collective. Memory: O(ranks) rank state,
 * O(groups) rendezvous state, one cached plan per distinct (group, op,
 * size), O(programs x program length) instructions.
 *
 * Errors: TS_EINVALID (mapping made from another layout, no route between
 * members, with a message), TS_EUSAGE (bad options), TS_ENOMEM,
 * TS_EINTERNAL (a rank never finished: a bug). */
#ifndef TOPSIM_TS_STEP_H
#define TOPSIM_TS_STEP_H

#include <stdint.h>

#include "topsim/ts_error.h"
#include "topsim/ts_faults.h"
#include "topsim/ts_exec.h"
#include "topsim/ts_net.h"
#include "topsim/ts_route.h"
#include "topsim/ts_sim.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_units.h"
#include "topsim/ts_work.h"

/* Parallel dimensions communication time and bytes are reported by. */
typedef enum ts_step_dim {
  TS_DIM_TP,
  TS_DIM_CP,
  TS_DIM_EP,
  TS_DIM_PP,
  TS_DIM_DP, /* dense and expert gradient reduction, ZeRO gathers */
  TS_DIM_COUNT
} ts_step_dim;

/* Streams of a rank in the trace (tid = rank * TS_STEP_STREAMS + stream). */
enum { TS_STEP_STREAM_COMPUTE = 0, TS_STEP_STREAMS = 1 + TS_DIM_COUNT };

/* Where a running step is, for a progress line (ts_step_opts.progress). */
typedef struct ts_step_progress {
  ts_time_ps sim_time;   /* engine clock */
  double done;           /* instructions executed / all ranks' total */
  uint32_t micro, microbatches; /* rank 0's current micro-batch, of */
  uint64_t events;       /* engine events so far */
  double wall_s;         /* since the run started */
  double eta_s;          /* wall seconds left at the pace so far, or < 0 */
} ts_step_progress;

typedef void (*ts_step_progress_fn)(void *ctx, const ts_step_progress *p);

/* Bounded shortcuts: not exact, each within a stated error of the full
 * simulation (docs/model.md "Bounded shortcuts", docs/performance.md). */
enum {
  TS_STEP_BATCH = 1u << 0,         /* back-to-back collectives of a stream
                                      (gradient buckets) run as one */
  TS_STEP_COMPACT_SMALL = 1u << 1, /* rings of 2-7 ranks on one host
                                      compact too */
  TS_STEP_BESIDE = 1u << 2,        /* TP / CP instances inside one host
                                      replayed beside active flows that
                                      keep their rates */
  TS_STEP_STEADY = 1u << 3,        /* a step of many micro-batches: its
                                      steady phase extrapolated from two
                                      runs of fewer (exec_step_steady.c) */
  TS_STEP_CROSS = 1u << 4,         /* a TP / CP / EP quiet replay stands
                                      when a later transfer crosses its
                                      window (both keep the full rate
                                      meanwhile) */
  TS_STEP_BOUNDED_ALL = TS_STEP_BATCH | TS_STEP_COMPACT_SMALL |
                        TS_STEP_BESIDE | TS_STEP_STEADY | TS_STEP_CROSS,
  /* on by default (unless opts.exact): within 1% of the full simulation
   * on the cases measured bar one, +2.04% (docs/model.md "Bounded
   * shortcuts", docs/performance.md) */
  TS_STEP_BOUNDED_DEFAULT = TS_STEP_BATCH | TS_STEP_CROSS
};

typedef struct ts_step_opts {
  ts_net_config net;     /* fidelity (flow / chunk) */
  ts_route_opts route;   /* PXN or not */
  const ts_route_state *state; /* failed / degraded links, or NULL */
  const ts_faults *faults;     /* resolved what-if (ts_faults.h), or NULL:
                                  fail/degrade on top of state, stragglers,
                                  timed failures; borrowed */
  int free_comm;         /* 1: every collective and send takes zero time */
  int64_t alpha_ps;      /* >= 0: per-step latency of every collective
                            and pipeline send, every protocol (pure
                            bandwidth at 0); < 0: NCCL's (default) */
  int exact;             /* 1: no shortcuts: every collective of every
                            group through the network model (0: groups
                            that provably own their links replay one
                            isolated run per distinct collective; same
                            times, docs/performance.md; and the bounded
                            shortcuts below, which are not exact) */
  unsigned bounded;      /* the shortcuts that are not exact, one bit
                            each (TS_STEP_BATCH, TS_STEP_COMPACT_SMALL,
                            TS_STEP_BESIDE, TS_STEP_STEADY, TS_STEP_CROSS;
                            docs/model.md
                            "Bounded shortcuts"); ignored with exact. Default
                            TS_STEP_BOUNDED_DEFAULT; --bounded sets
                            TS_STEP_BOUNDED_ALL */
  uint32_t compact_min;  /* groups of at least this size run the compact
                            ring (O(p) flows); smaller ones ts_coll auto.
                            Default 8; with TS_STEP_COMPACT_SMALL smaller
                            rings on one host too */
  ts_step_progress_fn progress; /* called about every 0.25 wall seconds
                                  while running (NULL: never) */
  void *progress_ctx;
  const uint32_t *trace_ranks; /* ranks whose slices are recorded */
  uint32_t ntrace_ranks;       /* 0: record nothing */
  ts_time_ps horizon;          /* > 0: stop once every event up to this
                                  simulated time has run and a rank is
                                  still busy: the step is then provably
                                  longer, ts_step_run returns TS_ELIMIT
                                  with result.horizon_passed set (the
                                  sweep's early stop). 0: run to the end */
} ts_step_opts;

/* Defaults: flow fidelity, PXN, no failures, real communication,
 * compact_min 8, no trace. */
void ts_step_opts_default(ts_step_opts *o);

/* Where one rank's step time went. compute + sum(exposed) + bubble + idle
 * equals the step time. exposed[d] is the time the compute stream waited on
 * a collective (or, for PP, a receive already sent) of dimension d; bubble
 * is the time it waited on a pipeline receive whose sender had not sent yet;
 * idle is the rest (waiting after its program ended). */
typedef struct ts_step_breakdown {
  ts_time_ps compute;
  ts_time_ps exposed[TS_DIM_COUNT];
  ts_time_ps bubble;
  ts_time_ps idle;
} ts_step_breakdown;

typedef struct ts_step_link {
  uint32_t dir;          /* direction id (2*link + side) */
  uint64_t bytes;
  ts_time_ps busy;
  double utilization;    /* busy / step time */
} ts_step_link;

#define TS_STEP_TOP_LINKS 10

/* One recorded slice of the trace (a compute segment or a collective). */
typedef struct ts_step_slice {
  uint32_t rank;
  uint8_t stream;        /* TS_STEP_STREAM_COMPUTE or 1 + ts_step_dim */
  uint8_t kind;          /* compute: ts_phase; comm: ts_coll_op */
  uint16_t chunk;        /* model chunk (compute), group kind (comm) */
  int32_t layer;         /* first layer of the segment, -1 none */
  int32_t micro;         /* micro-batch, -1 none */
  ts_time_ps start, dur;
} ts_step_slice;

/* Utilization samples of the busiest links (trace counters). */
typedef struct ts_step_counter {
  ts_time_ps t;
  double util[TS_STEP_TOP_LINKS]; /* busy fraction since the last sample */
} ts_step_counter;

typedef struct ts_step_result {
  ts_time_ps step_time;       /* last rank's finish */
  uint32_t ranks, microbatches;
  double tokens_per_step, tokens_per_s;
  double model_flops;         /* ts_work_step_model_flops (no recompute) */
  double flops_per_gpu;       /* model FLOP/s per GPU */
  double peak_flops;          /* per GPU (bf16, or fp8 for fp8 models) */
  double mfu;                 /* model FLOP/s / peak */
  double hw_flops_per_gpu;    /* with recomputation (ts_work_step_flops), as
                                 Megatron-LM reports its TFLOP/s */
  double hfu;                 /* hw_flops_per_gpu / peak */
  uint32_t critical_rank;     /* latest finish, ties to the lowest rank */
  ts_step_breakdown critical;
  uint64_t bytes_critical[TS_DIM_COUNT]; /* bytes the critical rank sent */
  double bytes_mean[TS_DIM_COUNT];       /* mean bytes sent per GPU */
  double cross_node_mean[TS_DIM_COUNT];  /* of which leaving the host */
  uint64_t collectives;       /* collective instances run */
  uint64_t transfers, wire_bytes; /* ts_exec counters */
  uint64_t replayed;          /* collectives replayed from an isolated run
                                 (0 with opts.exact) */
  uint64_t replayed_beside;   /* of those, replayed beside active flows
                                 that keep their rates (--bounded only,
                                 exec_step_run.c quiet_stretch) */
  uint64_t replayed_dp;       /* of those, data-parallel instances (DP x
                                 CP gradient and ZeRO 3 weight rings,
                                 expert and HSDP groups) replayed in quiet
                                 windows */
  uint64_t crossed_kept;      /* crossings of a replayed window (one per
                                 transfer and direction) that left the
                                 replay standing (TS_STEP_CROSS) */
  uint64_t memo_runs;         /* isolated runs made for replays (the
                                 attempt that stood) */
  uint64_t memo_shared;       /* memos taken, renamed, from an image's
                                 isolated run instead (exec_step_fast.c) */
  uint32_t attempts;          /* runs of the step, void ones included: a
                                 quiet replay crossed or a fold refused
                                 mid-run (exec_step_run.c); 1 usually */
  uint32_t steady_from[2];    /* TS_STEP_STEADY: the micro-batch counts of
                                 the two runs extrapolated from ({0, 0}:
                                 the step ran whole); the counters above
                                 and net, sim are the two runs' sums */
  uint32_t ranks_simulated;   /* ranks run on the engine: ranks, or one per
                                 TP group when folded (exec_step_fold.c) */
  char fold[256];             /* folding: "on: ...", "off: ..." or
                                 "refused: <the first asymmetry found>" */
  int horizon_passed;         /* 1: opts.horizon was passed with a rank
                                 still busy (step_time > opts.horizon);
                                 only this field is set */
  ts_step_link top[TS_STEP_TOP_LINKS];
  uint32_t ntop;
  ts_net_stats net;
  ts_sim_stats sim;
  /* Per rank (owned; ts_step_result_free): */
  uint64_t *rank_bytes;       /* [rank * TS_DIM_COUNT + dim] bytes sent */
  ts_time_ps *rank_finish;
  ts_step_breakdown *rank_breakdown;
  /* Trace (only with opts.ntrace_ranks > 0; owned). */
  ts_step_slice *slices;
  uint64_t nslices;
  ts_step_counter *counters;
  uint32_t ncounters;
} ts_step_result;

/* Runs one step of w mapped by m on t. On success fills *out (free its
 * arrays with ts_step_result_free); on failure returns the code, leaves
 * *out zeroed and d says why. */
int ts_step_run(const ts_workload *w, const ts_topo *t, const ts_mapping *m,
                const ts_step_opts *o, ts_step_result *out, ts_diag *d);

/* Frees the arrays of a result (NULL or zeroed is fine). */
void ts_step_result_free(ts_step_result *r);

const char *ts_step_dim_name(ts_step_dim d);

#endif
