/* plan_planes.c - the storage and frontend planes of a plan (plan_planes).
 *
 * Each is a plain fat tree, not rail-optimized: every NIC port of the plane
 * is one endpoint (nodes x NICs per node, plus storage servers with one NIC
 * each on the storage plane), sized by the same rules as the backend
 * (topo_clos_size with one rail) on the plan's switch radix and port speed:
 * leaves split down:up in the plane's own ratio (--storage-oversub,
 * --frontend-oversub; 1:1 by default), the fewest tiers (1..3) that size,
 * nodes per SU = the leaf's down ports. Cost: O(radix) per plane. */
#include <string.h>

#include "plan/plan.h"

#define PLAN_ERR(d, ...) ts_diag_set((d), TS_EUSAGE, NULL, 0, 0, __VA_ARGS__)

static int size_plane(const ts_plan_request *q, const char *name,
                      uint64_t endpoints, const uint32_t ratio[2],
                      ts_plan_plane *p, ts_diag *d) {
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "%s", name);
  if (!endpoints) return 0;
  if (endpoints > (1u << 22))
    return PLAN_ERR(d, "%s plane: %llu NIC ports is too many", name,
                    (unsigned long long)endpoints);
  uint32_t a = ratio[0] ? ratio[0] : 1, b = ratio[1] ? ratio[1] : 1;
  if (a + b > q->radix)
    return PLAN_ERR(d, "%s plane: a %u-port leaf cannot split %u:%u", name,
                    q->radix, a, b);
  uint32_t m = q->radix / (a + b);
  topo_clos_in in;
  topo_clos_shape s;
  int rc = TS_EUSAGE;
  for (uint32_t tiers = 1; tiers <= 3 && rc; tiers++) {
    memset(&in, 0, sizeof in);
    in.hosts = (uint32_t)endpoints;
    in.rails = 1;
    in.tiers = tiers;
    in.hosts_per_su = tiers == 1 ? 0 : a * m;
    in.leaf = (topo_switch_spec){q->radix, tiers == 1 ? 0 : a * m,
                                 tiers == 1 ? 0 : b * m};
    in.spine = (topo_switch_spec){q->radix, 0, 0};
    in.core = (topo_switch_spec){q->radix, 0, 0};
    ts_diag_clear(d);
    rc = topo_clos_size(&in, &s, d);
    if (!rc) p->tiers = tiers;
  }
  if (rc)
    return PLAN_ERR(d, "%s plane of %llu NIC ports cannot be built in 3 "
                    "tiers of %u-port switches", name,
                    (unsigned long long)endpoints, q->radix);
  p->endpoints = (uint32_t)endpoints;
  p->leaves = s.leaves;
  p->spines = s.spines;
  p->cores = s.cores;
  p->cables[0] = endpoints;
  p->cables[1] = (uint64_t)s.leaves * s.leaf_up;
  p->cables[2] = (uint64_t)s.spines * s.spine_up;
  p->oversub = s.leaf_up ? (double)s.leaf_down_used / s.leaf_up : 0;
  return 0;
}

int plan_planes(const ts_plan_request *q, ts_plan_result *r, ts_diag *d) {
  uint64_t st = (uint64_t)r->nodes * q->storage_nics +
                (q->storage_nics || q->storage_servers ? q->storage_servers : 0);
  int rc = size_plane(q, "storage", st, q->storage_oversub, &r->planes[0], d);
  if (!rc)
    rc = size_plane(q, "frontend", (uint64_t)r->nodes * q->frontend_nics,
                    q->frontend_oversub, &r->planes[1], d);
  return rc;
}
