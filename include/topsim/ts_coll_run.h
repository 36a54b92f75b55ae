/* ts_coll_run.h - one collective on a set of GPUs of a topology, run on a
 * fresh engine through routes and the network model: the library side of
 * `topsim bench --op all_reduce ...`, on a runtime built by ts_exec_create
 * (ts_exec.h), with cost-model bandwidths read from the built network.
 *
 * Each run is independent and deterministic. Cost: lowering (O(transfers))
 * plus the engine run; compact rings keep a p-rank ring at O(p) flows; a
 * step ring whose every flow runs alone on its links is computed in closed
 * form (O(transfers) arithmetic, O(p) memory, no events), identical to the
 * full simulation, unless opts.exact. */
#ifndef TOPSIM_TS_COLL_RUN_H
#define TOPSIM_TS_COLL_RUN_H

#include <stdint.h>

#include "topsim/ts_coll.h"
#include "topsim/ts_exec.h"
#include "topsim/ts_net.h"
#include "topsim/ts_route.h"
#include "topsim/ts_sim.h"
#include "topsim/ts_topo.h"

typedef struct ts_coll_run_opts {
  ts_coll_params params;    /* algorithm, protocol, channels, chunking... */
  ts_net_config net;        /* fidelity */
  ts_route_opts route;      /* PXN */
  const ts_route_state *state; /* failed / degraded links, or NULL */
  const ts_faults *faults;     /* resolved what-if (ts_faults.h), or NULL:
                                  fail/degrade on top of state, stragglers,
                                  timed failures; borrowed */
  int compact;              /* rings as O(p) long-lived flows */
  int reduction_cost;       /* charge local reductions reduce_bytes / HBM
                               bandwidth before each send (default off:
                               NCCL fuses them into its copy loop) */
  int exact;                /* 1: no shortcut: a step ring whose flows each
                               run alone is still lowered and simulated
                               transfer by transfer (default 0: computed in
                               closed form, same times and link counters) */
} ts_coll_run_opts;

/* Defaults: params from ts_coll_params_default (bandwidths are filled from
 * the topology at run time unless already nonzero), flow fidelity, PXN,
 * step-by-step rings. */
void ts_coll_run_opts_default(ts_coll_run_opts *o);

typedef struct ts_coll_run_result {
  ts_time_ps time;          /* from start to the last transfer's delivery */
  ts_coll_algo algo;        /* chosen (after auto) */
  ts_coll_proto proto;
  double predicted_s;       /* the cost model's estimate for that choice */
  uint64_t transfers, wire_bytes;
  ts_net_stats net;
  ts_sim_stats sim;
  int closed_form;          /* 1: a step ring computed in closed form
                               (exec_ring.c), not simulated flow by flow */
} ts_coll_run_result;

/* Runs op of `bytes` (nccl-tests size convention, ts_coll.h) on
 * gpus[0..n). TS_EUSAGE (with d) when the algorithm cannot run op on this
 * set; TS_EINVALID when a transfer has no route; TS_ENOMEM. */
int ts_coll_run(const ts_topo *t, const uint32_t *gpus, uint32_t n,
                ts_coll_op op, uint64_t bytes, const ts_coll_run_opts *o,
                ts_coll_run_result *out, ts_diag *d);

/* The same on the caller's runtime x (its topology, faults, clock and
 * link counters; plans already started on it run alongside, and then the
 * step-ring shortcut never applies). ts_sim_run drives x until it is idle:
 * out->time is the simulated time this collective completed. */
int ts_coll_run_on(ts_exec *x, const uint32_t *gpus, uint32_t n,
                   ts_coll_op op, uint64_t bytes, const ts_coll_run_opts *o,
                   ts_coll_run_result *out, ts_diag *d);

#endif
