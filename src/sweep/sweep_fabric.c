/* sweep_fabric.c - the TP egress capacity the step bound may assume
 * (ts_sweep_tp_egress, ts_sweep_fabric_of; docs/model.md "Step lower
 * bound", *TP egress*).
 *
 * What it must bound: every byte a GPU a sends to another GPU b of its own
 * host in a collective leaves a through the first direction of the path the
 * executor gives the transfer, at no more than that direction's capacity.
 * The executor (exec_path_route, exec_path_nvswitch) routes such a
 * transfer by the router's GPU rule (route_nvlink: a live direct NVLink,
 * else an NVSwitch both GPUs link to over live NVLinks, else PCIe inside
 * the host) and then
 *   - bundling on (no fault touches an NVLink): a path over an NVSwitch
 *     moves onto a's bundle representative, the NVLink to the lowest-id
 *     NVSwitch a links to, whose capacity is the sum of a's NVSwitch
 *     links; that succeeds when b links to that switch too (onto_bundle);
 *     otherwise the path is striped over the chips;
 *   - bundling off: striped over the chips, every stripe a path of
 *     NVLinks only (exec_path.c keeps the stripes that leave NVLink where
 *     the ECMP path does, and that path is all NVLink), each link at its
 *     own bandwidth x fault factor <= its bandwidth;
 *   - NVLS transfers to and from the switch: a's bundle, or a's NVSwitch
 *     links.
 * So when (1) no NVLink is down nor fails during the run (the rule never
 * falls back to PCIe), (2) every two GPUs of one host share a direct
 * NVLink or an NVSwitch, and b links to a's lowest-id NVSwitch whenever a
 * has two or more NVSwitch links (onto_bundle never falls back to striping
 * across the bundle and its member links at once), the directions a's
 * intra-host transfers can use have capacities adding up to at most
 * out(a) = sum of a's NVLink bandwidths (the bundle counted once, direct
 * NVLinks at theirs). The result is the largest out(a) over the job's
 * GPUs, or 0 (no term) when a condition fails. Cost: O(GPUs x host size
 * x degree) once per sweep. */
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"
#include "topsim/ts_coll.h"
#include "topsim/ts_exec.h"
#include "topsim/ts_faults.h"
#include "topsim/ts_route.h"

/* 1 when an NVLink is down, or could go down, or runs above its bandwidth
 * under o's link state and faults (timed failures included). */
static int nvlink_may_fail(const ts_topo *t, const ts_step_opts *o) {
  if (!o || (!o->state && !o->faults)) return 0;
  ts_route_state *s = NULL;
  if (ts_route_state_new(t, &s)) return 1;
  uint32_t links = ts_topo_link_count(t);
  for (uint32_t l = 0; o->state && l < links; l++)
    ts_route_state_set(s, l, ts_route_link_up(o->state, l),
                       ts_route_link_factor(o->state, l) > 0
                           ? ts_route_link_factor(o->state, l) : 1.0);
  int bad = o->faults && ts_faults_apply(o->faults, t, s, NULL);
  for (uint32_t i = 0; !bad && o->faults && i < o->faults->n; i++)
    if (o->faults->v[i].kind == TS_FAULT_FAIL_AT &&
        ts_route_fail_by_name(s, t, o->faults->v[i].name, NULL))
      bad = 1;
  for (uint32_t l = 0; !bad && l < links; l++)
    if (ts_topo_link(t, l)->kind == TS_LINK_NVLINK &&
        (!ts_route_link_up(s, l) || ts_route_link_factor(s, l) > 1.0))
      bad = 1;
  ts_route_state_free(s);
  return bad;
}

/* 1 when direction dir is an NVLink into an NVSwitch. */
static int nvswitch_dir(const ts_topo *t, uint32_t dir) {
  return ts_topo_link(t, dir >> 1)->kind == TS_LINK_NVLINK &&
         ts_topo_node(t, ts_topo_dir_head(t, dir))->kind == TS_NODE_NVSWITCH;
}

/* 1 when GPU g has an NVLink to node n. */
static int nvlinked(const ts_topo *t, uint32_t g, uint32_t n) {
  const uint32_t *adj = ts_topo_adj(t, g);
  for (uint32_t i = 0; i < ts_topo_degree(t, g); i++)
    if (ts_topo_dir_head(t, adj[i]) == n && ts_topo_link(t, adj[i] >> 1)->kind == TS_LINK_NVLINK)
      return 1;
  return 0;
}

/* a's NVLink capacity out (*out), its bundle switch (*rep: the lowest-id
 * NVSwitch it links to, UINT32_MAX when fewer than two NVSwitch links),
 * and whether it links to an NVLS switch (*nvls). */
static void gpu_nvlinks(const ts_topo *t, uint32_t a, double *out, uint32_t *rep,
                        uint32_t *nvls) {
  const uint32_t *adj = ts_topo_adj(t, a);
  uint32_t nsw = 0, low = UINT32_MAX;
  *out = 0;
  for (uint32_t i = 0; i < ts_topo_degree(t, a); i++) {
    const ts_link *l = ts_topo_link(t, adj[i] >> 1);
    if (l->kind != TS_LINK_NVLINK) continue;
    *out += l->bandwidth;
    if (!nvswitch_dir(t, adj[i])) continue;
    uint32_t sw = ts_topo_dir_head(t, adj[i]);
    nsw++;
    if (sw < low) low = sw;
    if (ts_topo_node(t, sw)->flags & TS_NODE_F_NVLS) *nvls = 1;
  }
  *rep = nsw >= 2 ? low : UINT32_MAX;
}

/* 1 when a's transfers to b stay on NVLink and on a's bundle (conditions
 * (2) above). */
static int pair_ok(const ts_topo *t, uint32_t a, uint32_t rep, uint32_t b) {
  if (nvlinked(t, a, b)) return 1; /* direct NVLink */
  if (rep != UINT32_MAX) return nvlinked(t, b, rep);
  const uint32_t *adj = ts_topo_adj(t, a);
  for (uint32_t i = 0; i < ts_topo_degree(t, a); i++)
    if (nvswitch_dir(t, adj[i]) && nvlinked(t, b, ts_topo_dir_head(t, adj[i])))
      return 1;
  return 0;
}

double ts_sweep_tp_egress(const ts_topo *t, uint32_t gpus, const ts_step_opts *o,
                          uint32_t *nvls) {
  const uint32_t *ids;
  uint32_t ng = ts_topo_gpus(t, &ids);
  *nvls = 0;
  if (gpus < ng) ng = gpus;
  /* free collectives: no time to bound */
  if (!ng || (o && o->free_comm) || nvlink_may_fail(t, o)) return 0;
  double worst = 0;
  /* GPUs are in topology order, a host's GPUs one run after another in
   * the files topsim builds; a host met twice is checked against the GPUs
   * of its run only, so refuse that layout instead */
  uint32_t *first = malloc((size_t)ts_topo_host_count(t) * sizeof *first + 1);
  if (!first) return 0;
  memset(first, 0xff, (size_t)ts_topo_host_count(t) * sizeof *first);
  for (uint32_t lo = 0, hi; lo < ng; lo = hi) {
    int32_t h = ts_topo_node(t, ids[lo])->host;
    if (h < 0 || (uint32_t)h >= ts_topo_host_count(t) || first[h] != UINT32_MAX) {
      free(first);
      return 0;
    }
    first[h] = lo;
    for (hi = lo + 1; hi < ng && ts_topo_node(t, ids[hi])->host == h; hi++) {}
    for (uint32_t i = lo; i < hi; i++) {
      double out;
      uint32_t rep;
      gpu_nvlinks(t, ids[i], &out, &rep, nvls);
      for (uint32_t j = lo; j < hi; j++)
        if (j != i && !pair_ok(t, ids[i], rep, ids[j])) {
          free(first);
          return 0;
        }
      if (out > worst) worst = out;
    }
  }
  free(first);
  return worst;
}

/* Why ts_sweep_tp_startup is a lower bound: the step runner's
 * communicators take NCCL's cost structure of rank 0's GPU generation
 * (exec_colls_init, ts_exec_coll_params) unless o->alpha_ps >= 0 selects
 * the alpha-beta model, and every plan lowered under it delays each
 * transfer without dependencies by the chosen pair's startup (launch,
 * base latency, NVLS latency: coll_plan.c add_startup, coll_ring.c for
 * the closed-form ring), every other transfer waiting for one of those:
 * the least startup over the GPUs' generations, algorithms and protocols
 * is at most the delay before any byte of an instance moves. */
ts_time_ps ts_sweep_tp_startup(const ts_topo *t, uint32_t gpus, const ts_step_opts *o) {
  if (o && (o->alpha_ps >= 0 || o->free_comm)) return 0;
  const uint32_t *ids;
  uint32_t ng = ts_topo_gpus(t, &ids), last = UINT32_MAX;
  ts_time_ps lo = 0;
  for (uint32_t i = 0; i < ng && i < gpus; i++) {
    uint32_t model = ts_topo_node(t, ids[i])->model;
    if (model == last) continue;
    last = model;
    ts_coll_params p;
    ts_coll_params_default(&p);
    ts_coll_params_from_topo(t, ids[i], &p);
    ts_time_ps s = ts_coll_min_startup(&p);
    if (i == 0 || s < lo) lo = s;
  }
  return lo;
}

void ts_sweep_fabric_of(const ts_topo *t, uint32_t gpus, const ts_step_opts *o,
                        ts_sweep_fabric *f) {
  memset(f, 0, sizeof *f);
  f->ingress_bps = ts_sweep_ingress(t, gpus);
  f->host_in_bps = ts_sweep_host_ingress(t, gpus);
  f->tp_out_bps = ts_sweep_tp_egress(t, gpus, o, &f->nvls);
  f->tp_startup_ps = ts_sweep_tp_startup(t, gpus, o);
}
