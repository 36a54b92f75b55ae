/* exec_coll_run.c - one collective on a topology, end to end
 * (ts_coll_run.h): communicator from topology labels, cost-model bandwidths
 * from the built network (ts_exec.h), lowering, and a run of the plan on a
 * fresh runtime (ts_exec_create). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "topsim/ts_budget.h"
#include "topsim/ts_coll_run.h"

/* First NVLS-capable NVSwitch of host, or TS_NONE. */
static int32_t nvls_switch(const ts_topo *t, uint32_t gpu) {
  const uint32_t *adj = ts_topo_adj(t, gpu);
  for (uint32_t i = 0; i < ts_topo_degree(t, gpu); i++) {
    uint32_t sw = ts_topo_dir_head(t, adj[i]);
    const ts_node *n = ts_topo_node(t, sw);
    if (n->kind == TS_NODE_NVSWITCH && (n->flags & TS_NODE_F_NVLS)) return (int32_t)sw;
  }
  return TS_NONE;
}

int ts_coll_comm_from_topo(const ts_topo *t, const uint32_t *gpus, uint32_t n,
                           ts_coll_comm **out) {
  int *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
  int *hosts = malloc((size_t)(n ? n : 1) * sizeof *hosts);
  int rc = ids && hosts ? 0 : TS_ENOMEM;
  for (uint32_t i = 0; !rc && i < n; i++) {
    ids[i] = (int)gpus[i];
    hosts[i] = ts_topo_node(t, gpus[i])->host;
  }
  if (!rc) rc = ts_coll_comm_new(ids, (int)n, out);
  if (!rc) rc = ts_coll_comm_set_hosts(*out, hosts);
  /* NVLS is declared per host: the first rank of each host finds its chip. */
  for (uint32_t i = 0; !rc && i < n; i++) {
    if (i && hosts[i] == hosts[i - 1]) continue;
    int32_t sw = nvls_switch(t, gpus[i]);
    if (sw != TS_NONE) rc = ts_coll_comm_set_nvls(*out, hosts[i], sw);
  }
  free(ids);
  free(hosts);
  if (rc && *out) {
    ts_coll_comm_free(*out);
    *out = NULL;
  }
  return rc;
}

/* Bandwidth of direction dir: as built in net (bundles, failures), else
 * the topology's nominal link bandwidth. */
static double dir_bw(const ts_topo *t, const ts_net *net, uint32_t dir) {
  return net ? ts_net_dir_bandwidth(net, dir) : ts_topo_link(t, dir >> 1)->bandwidth;
}

/* Backend NIC bandwidth of gpu's host divided by the host's GPUs, whether
 * its sockets are AMD (*amd), and the latency the network model adds to a
 * transfer between two of its NICs (*wire: the plane's software overhead
 * and a cable out and in). O(nodes): called once per run, never per
 * transfer. */
static double nic_share(const ts_topo *t, const ts_net *net, int32_t host,
                        int *amd, ts_time_ps *wire) {
  double nic = 0;
  uint32_t gpus = 0;
  *amd = 0;
  *wire = 0;
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *n = ts_topo_node(t, i);
    if (n->host != host) continue;
    gpus += n->kind == TS_NODE_GPU;
    if (n->kind == TS_NODE_CPU && (n->flags & TS_NODE_F_CPU_AMD)) *amd = 1;
    if (n->kind != TS_NODE_NIC || n->plane == TS_NO_PLANE ||
        ts_topo_plane(t, n->plane)->kind != TS_PLANE_BACKEND)
      continue;
    const uint32_t *adj = ts_topo_adj(t, i);
    ts_time_ps sw = ts_topo_plane(t, n->plane)->sw_overhead;
    for (uint32_t k = 0; k < ts_topo_degree(t, i); k++) {
      const ts_link *l = ts_topo_link(t, adj[k] >> 1);
      if (l->kind != TS_LINK_NET) continue;
      nic += dir_bw(t, net, adj[k]);
      if (sw + 2 * l->latency > *wire) *wire = sw + 2 * l->latency;
    }
  }
  return gpus ? nic / gpus : 0;
}

void exec_coll_params(const ts_topo *t, const ts_net *net, uint32_t gpu,
                      ts_coll_params *p) {
  double nvlink = 0, pcie = 0;
  ts_time_ps nvhop = 0; /* wire latency GPU to GPU over NVLink */
  /* With NVSwitch bundling the bundle chip's link carries the sum of the
   * GPU's NVSwitch links; the others must not count again. */
  uint32_t bundle = net ? ts_net_nvswitch_bundle(net, gpu) : UINT32_MAX;
  const uint32_t *adj = ts_topo_adj(t, gpu);
  for (uint32_t i = 0; i < ts_topo_degree(t, gpu); i++) {
    const ts_link *l = ts_topo_link(t, adj[i] >> 1);
    uint32_t head = ts_topo_dir_head(t, adj[i]);
    if (l->kind == TS_LINK_NVLINK) {
      int via_switch = ts_topo_node(t, head)->kind == TS_NODE_NVSWITCH;
      if (l->latency * (1 + via_switch) > nvhop) nvhop = l->latency * (1 + via_switch);
      if (bundle != UINT32_MAX && head != bundle && via_switch) continue;
      nvlink += dir_bw(t, net, adj[i]);
    } else if (l->kind == TS_LINK_PCIE || l->kind == TS_LINK_C2C) {
      pcie += dir_bw(t, net, adj[i]);
    }
  }
  const ts_node *g = ts_topo_node(t, gpu);
  p->bw_intra = nvlink > 0 ? nvlink : pcie;
  p->bw_nvls = p->bw_intra;
  int amd;
  ts_time_ps wire;
  double inter = nic_share(t, net, g->host, &amd, &wire);
  p->bw_inter = inter > 0 ? inter : p->bw_intra;
  p->hbm_bw = ts_topo_gpu_model(t, g->model)->hbm_bandwidth;
  if (p->cost_model != TS_COLL_COST_DEFAULT) return;
  ts_coll_params_nccl(p, ts_coll_gpu_gen_from_name(ts_topo_gpu_model(t, g->model)->name));
  ts_coll_params_net_overhead(p, amd);
  /* NCCL's per-step hwLat includes the wire; the network model adds the
   * links' latencies to every transfer, so the step keeps the rest (the
   * network overhead is a floor on the same in-host step). */
  for (int q = 0; q < TS_COLL_PROTO_COUNT; q++) {
    p->alpha_intra[q] = p->alpha_intra[q] > nvhop ? p->alpha_intra[q] - nvhop : 0;
    p->net_overhead[q] = p->net_overhead[q] > nvhop ? p->net_overhead[q] - nvhop : 0;
    p->alpha_inter[q] = p->alpha_inter[q] > wire ? p->alpha_inter[q] - wire : 0;
    p->tree_alpha_intra[q] = p->tree_alpha_intra[q] > nvhop ? p->tree_alpha_intra[q] - nvhop : 0;
    p->tree_alpha_inter[q] = p->tree_alpha_inter[q] > wire ? p->tree_alpha_inter[q] - wire : 0;
  }
}

void ts_coll_params_from_topo(const ts_topo *t, uint32_t gpu, ts_coll_params *p) {
  exec_coll_params(t, NULL, gpu, p);
}

void ts_exec_coll_params(const ts_exec *x, uint32_t gpu, ts_coll_params *p) {
  exec_coll_params(x->t, x->net, gpu, p);
}

void ts_coll_run_opts_default(ts_coll_run_opts *o) {
  memset(o, 0, sizeof *o);
  ts_coll_params_default(&o->params);
  o->params.bw_intra = o->params.bw_inter = o->params.bw_nvls = 0;
  o->params.hbm_bw = 0;
  ts_net_config_default(&o->net);
}

typedef struct run_ctx {
  ts_sim *sim;
  ts_time_ps end;
  int done;
} run_ctx;

static void on_done(void *ctx, uint64_t tag) {
  (void)tag;
  run_ctx *c = ctx;
  c->end = ts_sim_now(c->sim);
  c->done = 1;
}

/* Params with the network's bandwidths filled in where left at zero, and
 * NCCL's cost structure of the system unless the caller chose a model. */
static ts_coll_params net_params(const ts_exec *x, uint32_t gpu,
                                 const ts_coll_params *given) {
  ts_coll_params p = *given, from = *given;
  ts_exec_coll_params(x, gpu, &from);
  if (p.cost_model == TS_COLL_COST_DEFAULT) {
    double bi = p.bw_intra, bn = p.bw_inter, bv = p.bw_nvls, hb = p.hbm_bw;
    p = from;
    p.bw_intra = bi, p.bw_inter = bn, p.bw_nvls = bv, p.hbm_bw = hb;
  }
  if (p.bw_intra <= 0) p.bw_intra = from.bw_intra;
  if (p.bw_inter <= 0) p.bw_inter = from.bw_inter;
  if (p.bw_nvls <= 0) p.bw_nvls = from.bw_nvls;
  if (p.hbm_bw <= 0) p.hbm_bw = from.hbm_bw;
  return p;
}

/* Across hosts NCCL runs as many rings as a node has NICs, each leaving the
 * node through a different one: one channel per GPU of a host, rotated
 * (TS_COLL_RING_ROTATE), unless the caller chose channels or an order. */
void exec_multi_host_rings(const ts_coll_comm *comm, ts_coll_params *p) {
  if (ts_coll_comm_nhosts(comm) < 2 || p->channels != 1 ||
      p->ring_order != TS_COLL_RING_SAME)
    return;
  int per_host = ts_coll_comm_size(comm) / ts_coll_comm_nhosts(comm);
  p->channels = per_host > 1 ? (uint32_t)per_host : 1;
  p->ring_order = TS_COLL_RING_ROTATE;
}

static void on_ring_done(ts_sim *sim, void *ctx, uint64_t arg) {
  (void)sim;
  on_done(ctx, arg);
}

/* Runs plan (or, plan NULL, waits for a closed-form ring that ends at
 * ring_end: its completion is an event at that time, so the clock and the
 * simulated-time budget see it as they see a plan's last delivery). */
static int execute(ts_exec *x, const ts_coll_plan *plan, double hbm_bw,
                   ts_time_ps ring_end, ts_coll_run_result *out, ts_diag *d) {
  run_ctx c = {x->sim, 0, 0};
  int rc = plan ? ts_exec_coll_start(x, plan, hbm_bw, on_done, &c, 1)
                : ts_sim_schedule(x->sim, ring_end, on_ring_done, &c, 1, NULL);
  if (!rc) rc = ts_sim_run(x->sim);
  if (rc == TS_ELIMIT && ts_sim_overrun(x->sim))
    return ts_budget_refuse_run(d, ts_sim_overrun(x->sim));
  if (!rc) rc = ts_exec_status(x, d);
  if (!rc && !c.done)
    rc = ts_diag_set(d, TS_EINTERNAL, NULL, 0, 0, "the collective did not complete");
  if (!rc) {
    out->time = c.end;
    out->transfers = ts_exec_transfers(x);
    out->wire_bytes = ts_exec_wire_bytes(x);
    ts_net_stats_get(x->net, &out->net);
    ts_sim_stats_get(x->sim, &out->sim);
  }
  return rc;
}

static int lower_and_run(ts_exec *x, const uint32_t *gpus, uint32_t n,
                         ts_coll_op op, uint64_t bytes,
                         const ts_coll_run_opts *o, ts_coll_run_result *out,
                         ts_diag *d) {
  ts_coll_comm *comm = NULL;
  ts_coll_plan *plan = NULL;
  ts_coll_params p = net_params(x, gpus[0], &o->params);
  int rc = ts_coll_comm_from_topo(x->t, gpus, n, &comm);
  if (rc) return ts_diag_set(d, rc, NULL, 0, 0, "cannot build the communicator");
  exec_multi_host_rings(comm, &p);
  unsigned flags = o->compact ? TS_COLL_COMPACT : 0;
  double hbm = o->reduction_cost ? p.hbm_bw : 0;
  /* A step ring whose flows each run alone is computed in closed form
   * without building its transfers (exec_ring.c); anything else, or
   * --exact, is lowered and simulated. */
  ts_coll_ring ring;
  ts_time_ps end = 0;
  int closed = o->exact ? 1 : ts_coll_ring_describe(comm, op, bytes, &p, flags, &ring, d);
  if (closed == 0) closed = exec_ring_closed(x, &ring, hbm, &end, d);
  if (closed == 0) {
    out->algo = ring.algo;
    out->proto = ring.proto;
    out->predicted_s = ring.predicted_s;
    rc = execute(x, NULL, 0, end, out, d);
    out->closed_form = 1;
  } else if (closed < 0) {
    rc = closed;
  } else {
    rc = ts_coll_lower(comm, op, bytes, &p, flags, &plan, d);
    if (!rc) {
      out->algo = ts_coll_plan_algo(plan);
      out->proto = ts_coll_plan_proto(plan);
      out->predicted_s = ts_coll_plan_predicted_s(plan);
      rc = execute(x, plan, hbm, 0, out, d);
    }
  }
  ts_coll_plan_free(plan);
  ts_coll_comm_free(comm);
  return rc;
}

int ts_coll_run_on(ts_exec *x, const uint32_t *gpus, uint32_t n,
                   ts_coll_op op, uint64_t bytes, const ts_coll_run_opts *o,
                   ts_coll_run_result *out, ts_diag *d) {
  memset(out, 0, sizeof *out);
  if (n == 0) return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "no GPUs selected");
  return lower_and_run(x, gpus, n, op, bytes, o, out, d);
}

int ts_coll_run(const ts_topo *t, const uint32_t *gpus, uint32_t n,
                ts_coll_op op, uint64_t bytes, const ts_coll_run_opts *o,
                ts_coll_run_result *out, ts_diag *d) {
  memset(out, 0, sizeof *out);
  if (n == 0) return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "no GPUs selected");
  if (bytes > ts_budget_get()->message_bytes) {
    char what[96];
    snprintf(what, sizeof what, "a %s of %llu bytes", ts_coll_op_name(op),
             (unsigned long long)bytes);
    return ts_budget_refuse(d, TS_BUDGET_MESSAGE_BYTES, NULL, 0, 0, what);
  }
  ts_exec_opts eo = {o->net, o->route, o->state, o->faults};
  ts_exec *x = NULL;
  int rc = ts_exec_create(t, &eo, &x, d);
  if (!rc) rc = lower_and_run(x, gpus, n, op, bytes, o, out, d);
  ts_exec_free(x);
  return rc;
}
