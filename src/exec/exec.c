/* exec.c - the one constructor of the engine side (ts_exec.h): engine,
 * router with the failure overlay, network model with that overlay's link
 * factors, and the collective executor, wired in one place. Cost:
 * O(nodes + links) to build, O(links) to apply an overlay. */
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/exec_path.h"
#include "topsim/ts_budget.h"

void ts_exec_opts_default(ts_exec_opts *o) {
  memset(o, 0, sizeof *o);
  ts_net_config_default(&o->net);
}

/* The overlay's factors (0 down, < 1 degraded) into the network model. */
static int apply_state(ts_exec *x, const ts_route_state *s) {
  for (uint32_t l = 0; s && l < ts_topo_link_count(x->t); l++) {
    double f = ts_route_link_up(s, l) ? ts_route_link_factor(s, l) : 0.0;
    if (f != 1.0 && ts_net_set_link_factor(x->net, l, f)) return TS_EINVALID;
  }
  return 0;
}

int ts_exec_create(const ts_topo *t, const ts_exec_opts *o, ts_exec **out,
                   ts_diag *d) {
  ts_exec_opts def;
  if (!o) {
    ts_exec_opts_default(&def);
    o = &def;
  }
  ts_exec *x = calloc(1, sizeof *x);
  *out = NULL;
  if (!x) return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  x->t = t;
  ts_net_config nc = o->net;
  int bundle_ok = 1;
  int rc = exec_faults_state(x, o, &bundle_ok, d);
  const ts_route_state *state = x->own_state ? x->own_state : o->state;
  /* NVSwitch bundles assume healthy chips (ts_net.h). */
  nc.bundle_nvswitch &= bundle_ok;
  if (!rc) rc = ts_sim_new(&x->sim);
  const ts_budget *b = ts_budget_get(); /* every run honours the budgets */
  if (!rc) ts_sim_set_limits(x->sim, b->sim_time, b->events);
  if (!rc) rc = ts_route_new(t, &o->route, state, &x->rt, d);
  if (!rc) rc = ts_net_new(t, x->sim, &nc, &x->net);
  if (!rc) rc = apply_state(x, state);
  if (!rc) rc = exec_coll_init(x);
  if (!rc) rc = exec_faults_arm(x, d);
  if (rc) {
    if (d && !d->msg[0])
      ts_diag_set(d, rc, NULL, 0, 0, "cannot build the engine: %s",
                  ts_strerror(rc));
    ts_exec_free(x);
    return rc;
  }
  *out = x;
  return 0;
}

void ts_exec_free(ts_exec *x) {
  if (!x) return;
  exec_coll_fini(x);
  ts_net_free(x->net);
  ts_route_free(x->rt);
  ts_sim_free(x->sim);
  ts_route_state_free(x->own_state);
  free(x->slow);
  free(x->crossed);
  free(x);
}

const ts_topo *ts_exec_topo(const ts_exec *x) { return x->t; }
ts_sim *ts_exec_sim(const ts_exec *x) { return x->sim; }
ts_net *ts_exec_net(const ts_exec *x) { return x->net; }
ts_route *ts_exec_route(const ts_exec *x) { return x->rt; }
