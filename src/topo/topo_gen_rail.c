/* topo_gen_rail.c - the rail-optimized Clos generator
 * (topo_gen_rail_optimized).
 *
 * Shape comes from topo_clos_size; this file only instantiates it:
 *   leaves  "<plane>/leaf-su<S>-r<R>"  id leaf0  + S*rails + R
 *   spines  "<plane>/spine-g<G>-<J>"   id spine0 + G*spines_per_group + J
 *           "<plane>/spine-p<P>-r<R>-<J>" instead when pods > 1 (G =
 *           P*rails + R; one-pod names stay as they were)
 *   cores   "<plane>/core-g<K>-<J>"    id core0  + K*cores_per_group + J
 * Invariants: a NIC's leaf has the NIC's rail and SU; every leaf reaches
 * each spine of its group (all spines with two tiers, the group of its pod
 * and rail with three) with the same cable count; spine J of every spine
 * group reaches every core of core group floor(J*K/spines_per_group).
 * NIC placement: hosts are the distinct host labels of the plane's NICs in
 * id order (NICs of one host are contiguous); a NIC's rail is its rail label
 * or else its index among its host's NICs on the plane; its SU is its su
 * label or else host_ordinal / hosts_per_su. Missing labels are filled in.
 * Cost: O(nodes) to find the NICs, O(switches + links) to build; scratch
 * memory O(NICs + leaves), freed before returning. */
#include <stdint.h>
#include <stdlib.h>

#include "topo/topo_gen.h"
#include "topo/topo_gen_util.h"

typedef struct rail_ctx {
  ts_topo *t;
  uint16_t plane;
  const topo_rail_spec *spec;
  ts_diag *d;
  const char *pname;
  uint32_t *nics, n;   /* NIC ids on the plane, id order */
  uint32_t *host_ord;  /* per NIC: ordinal of its host among the plane's */
  uint32_t *rail;      /* per NIC: its rail */
  topo_clos_in in;
  topo_clos_shape sh;
  uint32_t leaf0, spine0, core0;
} rail_ctx;

/* Host ordinal and rail of NIC i; fills in.hosts and in.rails. */
static int rail_scan(rail_ctx *c) {
  int32_t prev = TS_NONE;
  uint32_t local = 0;
  c->in.hosts = c->in.rails = 0;
  for (uint32_t i = 0; i < c->n; i++) {
    const ts_node *nd = &c->t->nodes[c->nics[i]];
    if (nd->host < 0 || nd->host < prev)
      return topo_gen_fail(c->t, c->plane, c->d, TS_ESCHEMA,
                           "NIC '%s' has host %d: NICs of plane '%s' must "
                           "carry host labels in host order",
                           c->t->names + nd->name, (int)nd->host, c->pname);
    local = nd->host == prev ? local + 1 : 0;
    c->in.hosts += nd->host != prev;
    prev = nd->host;
    c->host_ord[i] = c->in.hosts - 1;
    c->rail[i] = nd->rail >= 0 ? (uint32_t)nd->rail : local;
    if (c->rail[i] > INT16_MAX)
      return topo_gen_fail(c->t, c->plane, c->d, TS_ESCHEMA,
                           "host %d has over %d NICs on plane '%s'",
                           (int)nd->host, INT16_MAX, c->pname);
    if (c->rail[i] + 1 > c->in.rails) c->in.rails = c->rail[i] + 1;
  }
  return 0;
}

static int rail_size(rail_ctx *c) {
  int rc = topo_clos_size(&c->in, &c->sh, c->d);
  if (rc) return topo_gen_place(c->t, c->plane, c->d, rc);
  c->t->planes[c->plane].tiers = (uint8_t)c->in.tiers;
  return 0;
}

static void rail_add_switches(rail_ctx *c) {
  const topo_clos_shape *s = &c->sh;
  ts_node p = topo_gen_switch(TS_NODE_SWITCH, TS_TIER_LEAF, c->plane,
                              c->in.leaf.radix);
  c->leaf0 = c->t->node_count;
  for (uint32_t su = 0; su < s->sus; su++)
    for (uint32_t r = 0; r < c->in.rails; r++) {
      p.su = (int32_t)su;
      p.rail = (int16_t)r;
      topo_add_node(c->t, &p, "%s/leaf-su%u-r%u", c->pname, su, r);
    }
  p = topo_gen_switch(TS_NODE_SWITCH, TS_TIER_SPINE, c->plane,
                      c->in.spine.radix);
  c->spine0 = c->t->node_count;
  for (uint32_t g = 0; g < s->spine_groups; g++)
    for (uint32_t j = 0; j < s->spines_per_group; j++) {
      p.group = (int32_t)g;
      if (s->pods > 1)
        topo_add_node(c->t, &p, "%s/spine-p%u-r%u-%u", c->pname,
                      g / c->in.rails, g % c->in.rails, j);
      else
        topo_add_node(c->t, &p, "%s/spine-g%u-%u", c->pname, g, j);
    }
  p = topo_gen_switch(TS_NODE_SWITCH, TS_TIER_CORE, c->plane,
                      c->in.core.radix);
  c->core0 = c->t->node_count;
  for (uint32_t k = 0; k < s->core_groups; k++)
    for (uint32_t j = 0; j < s->cores_per_group; j++) {
      p.group = (int32_t)k;
      topo_add_node(c->t, &p, "%s/core-g%u-%u", c->pname, k, j);
    }
}

/* SU of NIC i (label, else by host order); TS_ESCHEMA if out of range. */
static int rail_su(rail_ctx *c, uint32_t i, uint32_t *su) {
  const ts_node *nd = &c->t->nodes[c->nics[i]];
  uint32_t per_su = c->in.hosts_per_su ? c->in.hosts_per_su : c->in.hosts;
  *su = nd->su >= 0 ? (uint32_t)nd->su : c->host_ord[i] / per_su;
  if (*su < c->sh.sus) return 0;
  return topo_gen_fail(c->t, c->plane, c->d, TS_ESCHEMA,
                       "NIC '%s' is labelled SU %u but plane '%s' has %u SUs "
                       "of %u hosts", c->t->names + nd->name, *su, c->pname,
                       c->sh.sus, per_su);
}

/* Links every NIC to its leaf; no leaf may get more NICs than sized for. */
static int rail_link_nics(rail_ctx *c, uint32_t *fill) {
  for (uint32_t i = 0; i < c->n; i++) {
    uint32_t su, nic = c->nics[i];
    int rc = rail_su(c, i, &su);
    if (rc) return rc;
    uint32_t leaf = su * c->in.rails + c->rail[i];
    if (++fill[leaf] > c->sh.leaf_down_used)
      return topo_gen_fail(c->t, c->plane, c->d, TS_ESCHEMA,
                           "leaf su%u-r%u of plane '%s' gets more than the %u "
                           "NICs it was sized for (at NIC '%s')", su,
                           c->rail[i], c->pname, c->sh.leaf_down_used,
                           c->t->names + c->t->nodes[nic].name);
    c->t->nodes[nic].su = (int32_t)su;
    c->t->nodes[nic].rail = (int16_t)c->rail[i];
    topo_gen_bundle(c->t, nic, c->leaf0 + leaf, TS_LINK_NET, 1,
                    topo_gen_nic_bw(c->t, nic, c->spec->link_bw),
                    c->spec->link_latency, c->plane);
  }
  return 0;
}

/* Leaf (su, r) to each spine of its group: with three tiers, group
 * pod * rails + r where pod = su / sus_per_pod (group r with one pod). */
static void rail_link_spines(rail_ctx *c) {
  const topo_clos_shape *s = &c->sh;
  uint32_t rails = c->in.rails;
  for (uint32_t leaf = 0; leaf < s->leaves; leaf++) {
    uint32_t su = leaf / rails, r = leaf % rails;
    uint32_t g = c->in.tiers == 3 ? su / s->sus_per_pod * rails + r : 0;
    for (uint32_t j = 0; j < s->spines_per_group; j++)
      topo_gen_bundle(c->t, c->leaf0 + leaf,
                      c->spine0 + g * s->spines_per_group + j, TS_LINK_NET,
                      s->leaf_spine_links, c->spec->link_bw,
                      c->spec->link_latency, c->plane);
  }
}

/* Spine j of every spine group to every core of core group j*K/spg. */
static void rail_link_cores(rail_ctx *c) {
  const topo_clos_shape *s = &c->sh;
  for (uint32_t sp = 0; sp < s->spines && s->cores; sp++) {
    uint32_t j = sp % s->spines_per_group;
    uint32_t k =
        (uint32_t)((uint64_t)j * s->core_groups / s->spines_per_group);
    uint32_t first = c->core0 + k * s->cores_per_group;
    for (uint32_t x = 0; x < s->cores_per_group; x++)
      topo_gen_bundle(c->t, c->spine0 + sp, first + x, TS_LINK_NET,
                      s->spine_core_links, c->spec->link_bw,
                      c->spec->link_latency, c->plane);
  }
}

static int rail_build(rail_ctx *c) {
  int rc = rail_scan(c);
  if (!rc) rc = rail_size(c);
  if (rc) return rc;
  uint32_t *fill = calloc((size_t)c->sh.leaves, sizeof *fill);
  if (!fill) return topo_gen_fail(c->t, c->plane, c->d, TS_ENOMEM,
                                  "out of memory sizing plane '%s'", c->pname);
  rail_add_switches(c);
  rc = rail_link_nics(c, fill);
  free(fill);
  if (rc) return rc;
  rail_link_spines(c);
  rail_link_cores(c);
  return topo_gen_oom(c->t, c->plane, c->d);
}

int topo_gen_rail_optimized(ts_topo *t, uint16_t plane,
                            const topo_rail_spec *spec, ts_diag *d) {
  int rc = topo_gen_check_plane(t, plane, d);
  if (rc) return rc;
  rail_ctx c = {.t = t, .plane = plane, .spec = spec, .d = d,
                .pname = t->planes[plane].name, .in = spec->clos};
  c.nics = topo_gen_collect(t, TS_NODE_NIC, plane, &c.n);
  c.host_ord = malloc(((size_t)c.n + 1) * sizeof *c.host_ord);
  c.rail = malloc(((size_t)c.n + 1) * sizeof *c.rail);
  if (!c.nics || !c.host_ord || !c.rail)
    rc = topo_gen_fail(t, plane, d, TS_ENOMEM,
                       "out of memory scanning plane '%s'", c.pname);
  else if (c.n == 0)
    rc = topo_gen_fail(t, plane, d, TS_ESCHEMA,
                       "plane '%s' has no NICs to connect", c.pname);
  else
    rc = rail_build(&c);
  free(c.nics);
  free(c.host_ord);
  free(c.rail);
  return rc;
}
