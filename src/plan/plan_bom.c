/* plan_bom.c - what a sized shape costs and delivers: ports per tier,
 * cables and transceivers, tier-cut bisection, worst-case switch hops and
 * the impact of one switch failing.
 *
 * Every port runs at the plan's one port speed, so bandwidths are cable
 * counts times that speed. Invariants the numbers rely on (they hold for
 * topo_clos_size shapes and the rail_optimized generator):
 *   - every leaf, also in a partial SU, has leaf_up uplinks: cables
 *     leaf-spine = leaves * leaf_up, spine-core = spines * spine_up;
 *   - tier cuts: B0 = NIC cables, B1 = leaf uplinks, B2 = spine uplinks;
 *     bisection = min(B0 .. B(tiers-1)) / 2 (the top tier is a crossbar),
 *     the definition of ts_topo_stats_compute;
 *   - failures take the worst switch of a tier: a full leaf, a spine of the
 *     largest group, a core of core group 0 (the largest).
 * Cost: O(spines_per_group) for the core-group count, else O(1). */
#include "plan/plan.h"

static uint64_t cut(const ts_plan_result *r, uint64_t b0, uint64_t b1,
                    uint64_t b2) {
  uint64_t m = b0;
  if (r->tiers >= 2 && b1 < m) m = b1;
  if (r->tiers >= 3 && b2 < m) m = b2;
  return m;
}

static double bisect(const ts_plan_result *r, uint64_t b0, uint64_t b1,
                     uint64_t b2) {
  return (double)cut(r, b0, b1, b2) * r->port_speed / 2;
}

/* GPUs served by one NIC (rail) of a node, at least 1. */
static uint32_t gpus_per_rail(const ts_plan_result *r) {
  uint32_t g = (r->gpus_per_node + r->rails - 1) / r->rails;
  return g ? g : 1;
}

static void ports(const ts_plan_request *q, const topo_clos_shape *s,
                  ts_plan_result *r) {
  ts_plan_tier *lf = &r->tier[TS_PLAN_LEAF], *sp = &r->tier[TS_PLAN_SPINE],
               *co = &r->tier[TS_PLAN_CORE];
  lf->switches = s->leaves;
  sp->switches = s->spines;
  co->switches = s->cores;
  if (r->tiers == 1) {
    lf->down = q->radix - q->reserved_ports;
    lf->up = 0;
  }
  if (r->tiers == 2) sp->down = q->radix, sp->up = 0;
  co->down = r->tiers == 3 ? q->radix : 0;
  lf->ports_down = (uint64_t)r->nodes * r->rails;
  lf->ports_up = (uint64_t)s->leaves * s->leaf_up;
  lf->ports_reserved = (uint64_t)s->leaves * q->reserved_ports;
  sp->ports_down = lf->ports_up;
  sp->ports_up = (uint64_t)s->spines * s->spine_up;
  co->ports_down = sp->ports_up;
  for (int i = 0; i < 3; i++) {
    ts_plan_tier *t = &r->tier[i];
    t->ports_free = (uint64_t)t->switches * t->radix - t->ports_down -
                    t->ports_up - t->ports_reserved;
    t->oversub = t->ports_up ? (double)t->ports_down / (double)t->ports_up : 0;
  }
}

static void cables(const ts_plan_request *q, ts_plan_result *r) {
  for (int i = 0; i < 3; i++) {
    r->cables[i] = i == 0 ? r->tier[0].ports_down : r->tier[i - 1].ports_up;
    r->transceivers[i] = r->cables[i] * q->transceivers_per_cable;
    if (i == 0 && q->copper_node_leaf) r->transceivers[i] = 0;
    r->transceivers_total += r->transceivers[i];
  }
  uint64_t b0 = r->cables[0], b1 = r->cables[1], b2 = r->cables[2];
  r->bisection_bw = bisect(r, b0, b1, b2);
  r->bisection_bw_eff = r->bisection_bw * r->efficiency;
}

/* Rail-aligned pairs (PXN) stay on one rail: one leaf inside an SU, leaf-
 * spine-leaf across SUs (spines of a rail group serve that rail). Any pair
 * with per-rail spine groups climbs to a core; one tier has no path
 * between rails at all (0). */
static void hops(ts_plan_result *r) {
  r->hops_rail = r->sus > 1 ? 3 : 1;
  if (r->tiers == 1) r->hops_any = r->rails > 1 ? 0 : 1;
  if (r->tiers == 2) r->hops_any = 3;
  if (r->tiers == 3) r->hops_any = r->spine_groups > 1 ? 5 : 3;
}

static void fail_leaf(const topo_clos_shape *s, ts_plan_result *r) {
  ts_plan_failure *f = &r->fail[TS_PLAN_LEAF];
  f->nodes_hit = s->leaf_down_used;
  f->uplink_loss = 1.0 / r->rails;
  if (r->rails > 1) f->gpus_slowed = f->nodes_hit * gpus_per_rail(r);
  else f->gpus_cut_off = f->nodes_hit * r->gpus_per_node;
  f->bisection_after = bisect(r, r->cables[0] - s->leaf_down_used,
                              r->cables[1] - s->leaf_up, r->cables[2]);
}

static void fail_spine(const topo_clos_shape *s, ts_plan_result *r) {
  ts_plan_failure *f = &r->fail[TS_PLAN_SPINE];
  if (r->tiers < 2) return;
  f->switches_hit = s->leaves / s->spine_groups;
  f->uplink_loss = 1.0 / s->spines_per_group;
  /* A spine of a (pod, rail) group serves that group's leaves only: the
   * rail's GPUs of the nodes under them (one group: every GPU). */
  uint32_t gpus = s->spine_groups > 1
                      ? f->switches_hit * s->leaf_down_used * gpus_per_rail(r)
                      : r->gpus;
  if (gpus > r->gpus) gpus = r->gpus;
  if (s->spines_per_group > 1) f->gpus_slowed = gpus;
  else if (s->sus > 1 || r->rails > 1) f->gpus_cut_off = gpus;
  f->bisection_after = bisect(
      r, r->cables[0],
      r->cables[1] - (uint64_t)f->switches_hit * s->leaf_spine_links,
      r->cables[2] - s->spine_up);
}

static void fail_core(const topo_clos_shape *s, ts_plan_result *r) {
  ts_plan_failure *f = &r->fail[TS_PLAN_CORE];
  if (r->tiers < 3 || !s->cores) return;
  uint32_t in_group0 = 0;
  for (uint32_t j = 0; j < s->spines_per_group; j++)
    in_group0 += (uint64_t)j * s->core_groups / s->spines_per_group == 0;
  f->switches_hit = in_group0 * s->spine_groups;
  f->uplink_loss = 1.0 / s->cores_per_group;
  f->gpus_slowed = r->gpus; /* cross-rail traffic only; see docs */
  f->bisection_after = bisect(
      r, r->cables[0], r->cables[1],
      r->cables[2] - (uint64_t)f->switches_hit * s->spine_core_links);
}

static void partial_su_note(const topo_clos_shape *s, ts_plan_result *r) {
  if (r->last_su_nodes == r->nodes_per_su) return;
  if (s->sus == 1)
    plan_note(r, "partial SU: %u of %u nodes; all %u leaves installed, each "
              "with %u uplinks (scaled to the nodes present)", r->nodes,
              r->nodes_per_su, s->leaves, s->leaf_up);
  else
    plan_note(r, "partial SU: last SU has %u of %u nodes; its %u leaves and "
              "all their leaf-spine cables (%u per leaf) are installed",
              r->last_su_nodes, r->nodes_per_su, r->rails, s->leaf_up);
}

void plan_bom(const ts_plan_request *q, const topo_clos_shape *s,
              ts_plan_result *r) {
  r->sus = s->sus;
  r->last_su_nodes = r->nodes - (s->sus - 1) * r->nodes_per_su;
  r->spine_groups = s->spine_groups;
  r->spines_per_group = s->spines_per_group;
  r->leaf_spine_links = s->leaf_spine_links;
  r->core_groups = s->core_groups;
  r->cores_per_group = s->cores_per_group;
  r->spine_core_links = s->spine_core_links;
  ports(q, s, r);
  cables(q, r);
  hops(r);
  fail_leaf(s, r);
  fail_spine(s, r);
  fail_core(s, r);
  if (r->tiers > 1) partial_su_note(s, r);
}
