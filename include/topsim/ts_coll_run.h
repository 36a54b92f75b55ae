/* ts_coll_run.h - one collective on a set of GPUs of a topology, run on a
 * fresh engine through routes and the network model: the library side of
 * `topsim bench --op all_reduce ...`, on a runtime built by ts_exec_create
 * (ts_exec.h), with cost-model bandwidths read from the built network.
 *
 * Each run is independent and deterministic. Cost: lowering (O(transfers))
 * plus the engine run; compact rings keep a p-rank ring at O(p) flows. */
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
} ts_coll_run_result;

/* Runs op of `bytes` (nccl-tests size convention, ts_coll.h) on
 * gpus[0..n). TS_EUSAGE (with d) when the algorithm cannot run op on this
 * set; TS_EINVALID when a transfer has no route; TS_ENOMEM. */
int ts_coll_run(const ts_topo *t, const uint32_t *gpus, uint32_t n,
                ts_coll_op op, uint64_t bytes, const ts_coll_run_opts *o,
                ts_coll_run_result *out, ts_diag *d);

#endif
