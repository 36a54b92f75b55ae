/* ts_coll_exec.h - running collective plans (ts_coll.h) on the engine:
 * every transfer of a plan is routed (ts_route) and sent through the
 * network model (ts_net) once its dependencies have finished, so
 * collectives started together contend for the same links.
 *
 * One executor serves any number of concurrent plans on one engine; a
 * higher layer (the step model, `topsim bench`) starts plans and is called
 * back when each completes. Transfer rules: a join transfer completes as
 * soon as its dependencies have; a transfer with reduce_bytes first spends
 * reduce_bytes / hbm_bw on the sender (a timer); then wire_bytes go over
 * the route with the plan's alpha. NVSwitch hops are striped over every
 * chip; a transfer to or from an NVSwitch endpoint (NVLS) is striped over
 * every chip of that host the GPU links to.
 *
 * Cost: starting a plan is O(transfers + dependencies) (a successor list is
 * built once per start); each transfer costs one route and one send.
 * Memory per running plan: O(transfers). */
#ifndef TOPSIM_TS_COLL_EXEC_H
#define TOPSIM_TS_COLL_EXEC_H

#include <stdint.h>

#include "topsim/ts_coll.h"
#include "topsim/ts_error.h"
#include "topsim/ts_net.h"
#include "topsim/ts_route.h"
#include "topsim/ts_sim.h"
#include "topsim/ts_topo.h"

typedef struct ts_coll_exec ts_coll_exec;

/* Called at the simulated time the plan's last transfer completes. */
typedef void (*ts_coll_done_fn)(void *ctx, uint64_t tag);

/* Creates an executor over borrowed t, sim, net and rt (all must outlive
 * it). TS_ENOMEM; *out NULL on error. Free with ts_coll_exec_free. */
int ts_coll_exec_new(const ts_topo *t, ts_sim *sim, ts_net *net, ts_route *rt,
                     ts_coll_exec **out);

/* Frees the executor and the state of plans still running (their
 * callbacks never fire). NULL is fine. */
void ts_coll_exec_free(ts_coll_exec *x);

/* Starts plan now. The plan is borrowed and must stay alive until fn
 * fires. hbm_bw (bytes/s) times local reductions; 0 makes them free.
 * TS_ENOMEM (nothing started). An empty plan completes at once (fn runs
 * from an event at the current time). Transfers are routed when they
 * become ready; a transfer without a route records an error (see
 * ts_coll_exec_status), stops the engine, and its plan never completes. */
int ts_coll_exec_start(ts_coll_exec *x, const ts_coll_plan *plan,
                       double hbm_bw, ts_coll_done_fn fn, void *ctx,
                       uint64_t tag);

/* 0 if every transfer so far was routed and sent; else the first error's
 * code, with its message (naming both endpoints) copied into d. */
int ts_coll_exec_status(const ts_coll_exec *x, ts_diag *d);

/* Transfers sent and bytes put on the wire so far (all plans). */
uint64_t ts_coll_exec_transfers(const ts_coll_exec *x);
uint64_t ts_coll_exec_wire_bytes(const ts_coll_exec *x);

#endif
