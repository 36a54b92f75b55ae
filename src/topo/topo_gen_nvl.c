/* topo_gen_nvl.c - rack-scale NVLink domains (topo_gen_nvlink_domain).
 *
 * All GPUs of the topology, in id order, split into consecutive domains of
 * gpus_per_domain; domain D gets `switches` NVSwitch chips
 * "<plane>/nvsw-d<D>-<I>" (group = D, rack = the first GPU's rack, radix switch_radix), and every
 * GPU of D links to every chip of D with one NVLINK bundle of
 * links_per_switch lanes. Invariant: a chip uses gpus_per_domain *
 * links_per_switch ports, never more than switch_radix (0 = unlimited).
 * Cost: O(nodes) to find the GPUs, O(GPUs * switches) links; scratch
 * O(GPUs). */
#include <stdlib.h>

#include "topo/topo_gen.h"
#include "topo/topo_gen_util.h"

/* Refuse chip counts that would only exhaust memory. */
#define NVL_MAX_SWITCHES (1u << 24)

static int nvl_check(const ts_topo *t, uint16_t plane, const topo_nvl_spec *s,
                     uint32_t gpus, ts_diag *d) {
  const char *pn = t->planes[plane].name;
  if (!s->gpus_per_domain || !s->switches || !s->links_per_switch)
    return topo_gen_fail(t, plane, d, TS_ESCHEMA,
                         "plane '%s': gpus_per_domain (%u), switches (%u) and "
                         "links_per_switch (%u) must all be positive", pn,
                         s->gpus_per_domain, s->switches, s->links_per_switch);
  if (!gpus || gpus % s->gpus_per_domain)
    return topo_gen_fail(t, plane, d, TS_ESCHEMA,
                         "plane '%s': %u GPUs do not fill domains of %u "
                         "(%u left over)", pn, gpus, s->gpus_per_domain,
                         gpus ? gpus % s->gpus_per_domain : 0);
  if ((uint64_t)gpus / s->gpus_per_domain * s->switches > NVL_MAX_SWITCHES)
    return topo_gen_fail(t, plane, d, TS_ESCHEMA,
                         "plane '%s': %u domains x %u NVSwitches is over the "
                         "%u-switch limit", pn, gpus / s->gpus_per_domain,
                         s->switches, NVL_MAX_SWITCHES);
  uint64_t ports = (uint64_t)s->gpus_per_domain * s->links_per_switch;
  if (s->links_per_switch > UINT16_MAX ||
      (s->switch_radix && ports > s->switch_radix))
    return topo_gen_fail(t, plane, d, TS_ESCHEMA,
                         "plane '%s': %u GPUs x %u links need %llu ports per "
                         "NVSwitch, over its radix %u", pn, s->gpus_per_domain,
                         s->links_per_switch, (unsigned long long)ports,
                         s->switch_radix);
  return 0;
}

static void nvl_build(ts_topo *t, uint16_t plane, const topo_nvl_spec *s,
                      const uint32_t *gpus, uint32_t n) {
  const char *pn = t->planes[plane].name;
  ts_node p = topo_gen_switch(TS_NODE_NVSWITCH, TS_TIER_NONE, plane,
                              s->switch_radix);
  for (uint32_t dom = 0; dom < n / s->gpus_per_domain; dom++) {
    uint32_t sw0 = t->node_count;
    p.group = (int32_t)dom;
    p.flags = s->nvls ? TS_NODE_F_NVLS : 0;
    /* The chips live in the rack of the GPUs they join, not a new label. */
    p.rack = t->nodes[gpus[dom * s->gpus_per_domain]].rack;
    for (uint32_t i = 0; i < s->switches; i++)
      topo_add_node(t, &p, "%s/nvsw-d%u-%u", pn, dom, i);
    for (uint32_t g = 0; g < s->gpus_per_domain; g++)
      for (uint32_t i = 0; i < s->switches; i++)
        topo_gen_bundle(t, gpus[dom * s->gpus_per_domain + g], sw0 + i,
                        TS_LINK_NVLINK, s->links_per_switch, s->link_bw,
                        s->link_latency, plane);
  }
}

int topo_gen_nvlink_domain(ts_topo *t, uint16_t plane, const topo_nvl_spec *s,
                           ts_diag *d) {
  int rc = topo_gen_check_plane(t, plane, d);
  if (rc) return rc;
  uint32_t n;
  uint32_t *gpus = topo_gen_collect(t, TS_NODE_GPU, TS_NO_PLANE, &n);
  if (!gpus)
    return topo_gen_fail(t, plane, d, TS_ENOMEM,
                         "out of memory scanning plane '%s'",
                         t->planes[plane].name);
  rc = nvl_check(t, plane, s, n, d);
  if (!rc) {
    nvl_build(t, plane, s, gpus, n);
    t->planes[plane].tiers = 1;
    rc = topo_gen_oom(t, plane, d);
  }
  free(gpus);
  return rc;
}
