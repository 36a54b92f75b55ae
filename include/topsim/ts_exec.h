/* ts_exec.h - the engine side of topsim: one runtime that owns the event
 * engine (ts_sim), the router with its failure overlay (ts_route), the
 * network model (ts_net) and the collective executor, built once by
 * ts_exec_create and shared by everything that runs on the engine: one
 * collective (ts_coll_run.h, `topsim bench --op`), point-to-point patterns
 * (ts_p2p.h), and a training step (ts_step.h, `topsim run`, `topsim plan
 * --workload`). A command never wires these layers itself.
 *
 * Layering: exec sits above topo, route, sim, net, coll and work. `coll`
 * only lowers collectives into transfer DAGs (ts_coll.h) and `work` only
 * compiles a step into per-rank programs (ts_step_prog.h); neither reaches
 * into the engine. The bridge from topology and network to the collective
 * layer (communicators with host labels, cost-model bandwidths read from
 * the built network, so the chooser sees failed and degraded links as the
 * solver does) lives here too.
 *
 * Executor: any number of concurrent plans run on one runtime; every
 * transfer of a plan is routed and sent through the network model once its
 * dependencies have finished, so collectives started together contend for
 * the same links. A join transfer completes as soon as its dependencies
 * have; a transfer with reduce_bytes first spends reduce_bytes / hbm_bw on
 * the sender (a timer); then wire_bytes go over the route with the plan's
 * alpha. NVSwitch hops are striped over every chip (or sent through the
 * GPU's NVSwitch bundle); a transfer to or from an NVSwitch endpoint (NVLS)
 * uses every chip of that host the GPU links to.
 *
 * Cost: creating a runtime is O(nodes + links); starting a plan is
 * O(transfers + dependencies); each transfer costs one route (cached per
 * connection) and one send. Memory per running plan: O(transfers). Not
 * thread-safe; one runtime per thread. */
#ifndef TOPSIM_TS_EXEC_H
#define TOPSIM_TS_EXEC_H

#include <stdint.h>

#include "topsim/ts_coll.h"
#include "topsim/ts_error.h"
#include "topsim/ts_faults.h"
#include "topsim/ts_net.h"
#include "topsim/ts_route.h"
#include "topsim/ts_sim.h"
#include "topsim/ts_topo.h"

typedef struct ts_exec ts_exec;

typedef struct ts_exec_opts {
  ts_net_config net;           /* fidelity, chunk size, NVSwitch bundles */
  ts_route_opts route;         /* PXN or not */
  const ts_route_state *state; /* failed / degraded links, or NULL;
                                  borrowed, must outlive the runtime */
  const ts_faults *faults;     /* resolved what-if (ts_faults.h), or NULL:
                                  fail/degrade on top of state, stragglers,
                                  timed failures; borrowed */
} ts_exec_opts;

/* Defaults: ts_net_config_default, PXN on, no failures. */
void ts_exec_opts_default(ts_exec_opts *o);

/* Builds engine, router (with o->state), network model (link factors of
 * o->state applied; NVSwitch bundling turned off when the overlay touches
 * an NVLink) and executor over the borrowed t (must outlive the runtime).
 * o NULL means defaults. TS_EUSAGE (bad net config), TS_ENOMEM, or the
 * router's error, with d set; *out NULL on error. */
int ts_exec_create(const ts_topo *t, const ts_exec_opts *o, ts_exec **out,
                   ts_diag *d);

/* Frees the runtime and the state of plans still running (their callbacks
 * never fire). NULL is fine. */
void ts_exec_free(ts_exec *x);

/* The parts, owned by the runtime. */
const ts_topo *ts_exec_topo(const ts_exec *x);
ts_sim *ts_exec_sim(const ts_exec *x);
ts_net *ts_exec_net(const ts_exec *x);
ts_route *ts_exec_route(const ts_exec *x);

/* Compute slowdown of the GPU with node id gpu under the runtime's faults
 * (--straggler): >= 1, 1 when none. */
double ts_exec_straggler(const ts_exec *x, uint32_t gpu);

/* ---- topology and network -> collective layer ------------------------ */

/* Communicator over GPU node ids gpus[0..n) with host labels from the
 * topology and NVLS declared for every host whose NVSwitch chips reduce
 * (TS_NODE_F_NVLS). TS_EUSAGE, TS_ENOMEM; caller frees *out. */
int ts_coll_comm_from_topo(const ts_topo *t, const uint32_t *gpus, uint32_t n,
                           ts_coll_comm **out);

/* Fills the cost-model bandwidths of p as seen by GPU `gpu` in the built
 * network (degraded links count at their reduced rate, down links not at
 * all): bw_intra = its NVLink bandwidth (its NVSwitch bundle counted once;
 * its PCIe link without NVLink), bw_inter = its host's backend NIC
 * bandwidth divided by the host's GPUs, bw_nvls = bw_intra, hbm_bw = its
 * HBM. */
void ts_exec_coll_params(const ts_exec *x, uint32_t gpu, ts_coll_params *p);

/* The same from the topology's nominal link bandwidths (no runtime). */
void ts_coll_params_from_topo(const ts_topo *t, uint32_t gpu, ts_coll_params *p);

/* ---- executor ----------------------------------------------------------- */

/* Called at the simulated time the plan's last transfer completes. */
typedef void (*ts_coll_done_fn)(void *ctx, uint64_t tag);

/* Starts plan now. The plan is borrowed and must stay alive until fn
 * fires. hbm_bw (bytes/s) times local reductions; 0 makes them free.
 * TS_ENOMEM (nothing started). An empty plan completes at once (fn runs
 * from an event at the current time). Transfers are routed when they
 * become ready; a transfer without a route records an error (see
 * ts_exec_status), stops the engine, and its plan never completes. */
int ts_exec_coll_start(ts_exec *x, const ts_coll_plan *plan, double hbm_bw,
                       ts_coll_done_fn fn, void *ctx, uint64_t tag);

/* 0 if every transfer so far was routed and sent; else the first error's
 * code, with its message (naming both endpoints) copied into d. */
int ts_exec_status(const ts_exec *x, ts_diag *d);

/* Transfers sent and bytes put on the wire so far (all plans). */
uint64_t ts_exec_transfers(const ts_exec *x);
uint64_t ts_exec_wire_bytes(const ts_exec *x);

#endif
