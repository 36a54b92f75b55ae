/* topo_gen_fattree.c - the k-ary three-tier fat tree (topo_gen_fat_tree).
 *
 * k pods of k/2 edge (leaf tier) and k/2 aggregation (spine tier) switches
 * plus (k/2)^2 cores, all of radix k: 5k^2/4 switches, k^3/4 host ports.
 *   edge  "<plane>/edge-p<P>-<I>"  id edge0 + P*h + I   (h = k/2)
 *   agg   "<plane>/agg-p<P>-<I>"   id agg0  + P*h + I
 *   core  "<plane>/core-<J>"       id core0 + J, group J / h
 * Invariants: edge I of pod P links to every agg of pod P; agg I of every
 * pod links to cores I*h .. I*h+h-1; every switch uses at most k ports
 * (h down + h up, cores k down). The plane's NICs fill edge down ports in
 * id order, h per edge, pods in order. All cables are single (width 1).
 * Cost: O(nodes) to find the NICs plus O(k^3) links; scratch O(NICs). */
#include <stdlib.h>

#include "topo/topo_gen.h"
#include "topo/topo_gen_util.h"

/* Keeps 5k^2/4 switches and k^3/4 ports well inside uint32 and memory. */
#define FAT_TREE_MAX_K 1024u

typedef struct ft_ctx {
  ts_topo *t;
  uint16_t plane;
  const topo_fat_tree_spec *s;
  const char *pname;
  uint32_t h;                /* k/2 */
  uint32_t edge0, agg0, core0;
} ft_ctx;

static int ft_check(const ft_ctx *c, uint32_t nics, ts_diag *d) {
  uint32_t k = c->s->k;
  if (k < 2 || k % 2 || k > FAT_TREE_MAX_K)
    return topo_gen_fail(c->t, c->plane, d, TS_ESCHEMA,
                         "plane '%s': fat tree k must be even, 2..%u, not %u",
                         c->pname, FAT_TREE_MAX_K, k);
  uint32_t cap = k * k * k / 4;
  if (nics > cap)
    return topo_gen_fail(c->t, c->plane, d, TS_ESCHEMA,
                         "plane '%s': %u NICs exceed the %u host ports of a "
                         "k=%u fat tree by %u", c->pname, nics, cap, k,
                         nics - cap);
  return 0;
}

static void ft_add_pods(ft_ctx *c) {
  ts_node p = topo_gen_switch(TS_NODE_SWITCH, TS_TIER_LEAF, c->plane, c->s->k);
  c->edge0 = c->t->node_count;
  for (uint32_t pod = 0; pod < c->s->k; pod++)
    for (uint32_t i = 0; i < c->h; i++) {
      p.group = (int32_t)pod;
      topo_add_node(c->t, &p, "%s/edge-p%u-%u", c->pname, pod, i);
    }
  p.tier = TS_TIER_SPINE;
  c->agg0 = c->t->node_count;
  for (uint32_t pod = 0; pod < c->s->k; pod++)
    for (uint32_t i = 0; i < c->h; i++) {
      p.group = (int32_t)pod;
      topo_add_node(c->t, &p, "%s/agg-p%u-%u", c->pname, pod, i);
    }
}

static void ft_add_cores(ft_ctx *c) {
  ts_node p = topo_gen_switch(TS_NODE_SWITCH, TS_TIER_CORE, c->plane, c->s->k);
  c->core0 = c->t->node_count;
  for (uint32_t j = 0; j < c->h * c->h; j++) {
    p.group = (int32_t)(j / c->h);
    topo_add_node(c->t, &p, "%s/core-%u", c->pname, j);
  }
}

static void ft_link(ft_ctx *c, const uint32_t *nics, uint32_t n) {
  const topo_fat_tree_spec *s = c->s;
  for (uint32_t i = 0; i < n; i++)
    topo_gen_bundle(c->t, nics[i], c->edge0 + i / c->h, TS_LINK_NET, 1,
                    topo_gen_nic_bw(c->t, nics[i], s->link_bw),
                    s->link_latency, c->plane);
  for (uint32_t pod = 0; pod < s->k; pod++)
    for (uint32_t e = 0; e < c->h; e++)
      for (uint32_t a = 0; a < c->h; a++)
        topo_gen_bundle(c->t, c->edge0 + pod * c->h + e,
                        c->agg0 + pod * c->h + a, TS_LINK_NET, 1, s->link_bw,
                        s->link_latency, c->plane);
  for (uint32_t pod = 0; pod < s->k; pod++)
    for (uint32_t a = 0; a < c->h; a++)
      for (uint32_t j = 0; j < c->h; j++)
        topo_gen_bundle(c->t, c->agg0 + pod * c->h + a, c->core0 + a * c->h + j,
                        TS_LINK_NET, 1, s->link_bw, s->link_latency, c->plane);
}

int topo_gen_fat_tree(ts_topo *t, uint16_t plane, const topo_fat_tree_spec *s,
                      ts_diag *d) {
  int rc = topo_gen_check_plane(t, plane, d);
  if (rc) return rc;
  ft_ctx c = {.t = t, .plane = plane, .s = s, .pname = t->planes[plane].name,
              .h = s->k / 2};
  uint32_t n;
  uint32_t *nics = topo_gen_collect(t, TS_NODE_NIC, plane, &n);
  if (!nics)
    return topo_gen_fail(t, plane, d, TS_ENOMEM,
                         "out of memory scanning plane '%s'", c.pname);
  rc = ft_check(&c, n, d);
  if (!rc) {
    ft_add_pods(&c);
    ft_add_cores(&c);
    ft_link(&c, nics, n);
    t->planes[plane].tiers = 3;
    rc = topo_gen_oom(t, plane, d);
  }
  free(nics);
  return rc;
}
