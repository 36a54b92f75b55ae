/* exec_faults.c - a what-if (ts_faults.h) on the runtime.
 *
 *   static faults   fail/degrade go into the runtime's own link state (a
 *                   copy of the caller's plus these), read by the router
 *                   and applied to the network model at creation;
 *   timed failures  one engine event per distinct time: the named links go
 *                   down in the state (new routes avoid them), the route
 *                   cache is forgotten, and the network model's factor drops
 *                   to 0, which moves every flow on them to a fresh route
 *                   from the router (ts_net_set_reroute) with the bytes it
 *                   has left: adaptive routing / a transport retry, with no
 *                   detection delay modelled (docs/model.md, "Faults");
 *   stragglers      a per-node factor table (ts_exec_straggler, O(1)), read
 *                   by the step runner for every compute segment.
 * NVSwitch bundling is kept only when no fault, timed or not, touches an
 * NVLink (bundles assume healthy chips). Costs: O(links) per state copy and
 * per timed failure (one event each; entries at the same time fire in file
 * order); a reroute costs one route per moved flow. */
#include <stdlib.h>

#include "exec/exec.h"
#include "exec/exec_path.h"

static void copy_state(ts_route_state *dst, const ts_route_state *src,
                       uint32_t links) {
  for (uint32_t l = 0; src && l < links; l++)
    if (!ts_route_link_up(src, l) || ts_route_link_factor(src, l) != 1.0)
      ts_route_state_set(dst, l, ts_route_link_up(src, l),
                         ts_route_link_up(src, l)
                             ? ts_route_link_factor(src, l) : 1.0);
}

/* NVSwitch bundling survives: no fault, timed ones too, touches NVLink. */
static int bundles_survive(const ts_exec *x, const ts_faults *f) {
  ts_route_state *all;
  if (ts_route_state_new(x->t, &all)) return 0;
  copy_state(all, x->own_state, ts_topo_link_count(x->t));
  for (uint32_t i = 0; i < f->n; i++)
    if (f->v[i].kind == TS_FAULT_FAIL_AT)
      ts_route_fail_by_name(all, x->t, f->v[i].name, NULL);
  int ok = exec_path_bundle_ok(x->t, all);
  ts_route_state_free(all);
  return ok;
}

/* Per-node compute factors, so a compute segment reads its slowdown in
 * O(1) whatever the number of faults. */
static int slow_table(ts_exec *x, ts_diag *d) {
  uint32_t n = ts_topo_node_count(x->t);
  x->slow = malloc(((size_t)n + 1) * sizeof *x->slow);
  if (!x->slow) return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  for (uint32_t i = 0; i < n; i++) x->slow[i] = 1.0;
  for (uint32_t i = 0; i < x->faults->n; i++)
    if (x->faults->v[i].kind == TS_FAULT_STRAGGLER)
      x->slow[x->faults->v[i].gpu] *= x->faults->v[i].factor;
  return 0;
}

int exec_faults_state(ts_exec *x, const ts_exec_opts *o, int *bundle_ok,
                      ts_diag *d) {
  *bundle_ok = exec_path_bundle_ok(x->t, o->state);
  x->faults = o->faults && o->faults->n ? o->faults : NULL;
  if (!x->faults) return 0;
  if (ts_route_state_new(x->t, &x->own_state))
    return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  copy_state(x->own_state, o->state, ts_topo_link_count(x->t));
  int rc = ts_faults_apply(x->faults, x->t, x->own_state, d);
  if (!rc) *bundle_ok = bundles_survive(x, x->faults);
  if (!rc && ts_faults_has(x->faults, TS_FAULT_STRAGGLER)) rc = slow_table(x, d);
  return rc;
}

/* Reroute hook: a fresh ECMP route (bundle-aware), the salt choosing a
 * stripe when the route is striped over NVSwitch chips. */
static uint32_t reroute(void *ctx, uint32_t src, uint32_t dst, uint64_t salt,
                        uint32_t *path) {
  ts_exec *x = ctx;
  uint32_t k = 0;
  if (exec_path_route(x->t, x->net, x->rt, src, dst, salt, 0, x->paths,
                      EXEC_PATH_STRIPES, &k, NULL) || k == 0)
    return 0;
  const ts_path *p = &x->paths[salt % k];
  for (uint32_t i = 0; i < p->len; i++) path[i] = p->dir[i];
  return p->len;
}

/* Timed failure number i takes effect now. */
static void on_fail_at(ts_sim *sim, void *ctx, uint64_t i) {
  ts_exec *x = ctx;
  ts_route_fail_by_name(x->own_state, x->t, x->faults->v[i].name, NULL);
  exec_cache_reset(x);
  for (uint32_t l = 0; l < ts_topo_link_count(x->t); l++)
    if (!ts_route_link_up(x->own_state, l) &&
        ts_net_dir_bandwidth(x->net, 2 * l) > 0)
      ts_net_set_link_factor(x->net, l, 0.0);
  (void)sim;
}

int exec_faults_arm(ts_exec *x, ts_diag *d) {
  const ts_faults *f = x->faults;
  if (!f || !ts_faults_has(f, TS_FAULT_FAIL_AT)) return 0;
  if (ts_net_set_reroute(x->net, reroute, x))
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "--fail-at needs flow "
                       "fidelity: chunked queues do not reroute");
  for (uint32_t i = 0; i < f->n; i++)
    if (f->v[i].kind == TS_FAULT_FAIL_AT &&
        ts_sim_schedule(x->sim, f->v[i].at, on_fail_at, x, i, NULL))
      return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  return 0;
}

double ts_exec_straggler(const ts_exec *x, uint32_t gpu) {
  return x->slow && gpu < ts_topo_node_count(x->t) ? x->slow[gpu] : 1.0;
}
