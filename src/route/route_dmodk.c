/* route_dmodk.c - destination positions for D-mod-k routing.
 *
 * D-mod-k (Zahavi et al. 2010; Rodriguez et al. 2009; OpenSM's ftree
 * engine): a switch forwards by destination only, and the uplink taken at
 * the l-th upward decision for destination d is
 *   floor(d / (w_1 x ... x w_{l-1})) mod w_l,
 * w_i being the number of live choices at decision i (route_choose), so
 * destinations below one leaf fan out over all of its uplinks and the next
 * tier spreads the quotient. d is the destination NIC's position in its
 * tree: on each plane, NICs are numbered per rail (a rail-optimized plane
 * is one tree per rail; NICs without a rail label form one tree), leaves
 * in node-id order, a leaf's NICs in its port (adjacency) order. Rail k's
 * NIC of host h thus gets the same d as rail 0's, so rails route as images
 * of each other (what symmetric-rank folding proves, exec_step_fold.c).
 * Cost: O(nodes + links) once per router; 4 bytes per node. */
#include <stdlib.h>

#include "route/route.h"

static bool plane_dmodk(const ts_route *r, uint16_t p) {
  if (r->opts.routing) return r->opts.routing - 1 == TS_ROUTING_DMODK;
  return r->t->planes[p].routing == TS_ROUTING_DMODK;
}

bool route_dmodk_plane(const ts_route *r, uint16_t plane) {
  return plane < r->planes && plane_dmodk(r, plane);
}

int route_dmodk_build(ts_route *r) {
  const ts_topo *t = r->t;
  bool any = false, all_backend = true;
  for (uint16_t p = 0; p < r->planes; p++) {
    if (t->planes[p].kind != TS_PLANE_BACKEND) continue;
    any |= plane_dmodk(r, p);
    all_backend &= plane_dmodk(r, p);
  }
  r->dmodk_backend = any && all_backend;
  if (!any) return 0;
  int32_t rails = 0;
  for (uint32_t i = 0; i < t->node_count; i++)
    if (t->nodes[i].kind == TS_NODE_NIC && t->nodes[i].rail + 1 > rails)
      rails = t->nodes[i].rail + 1;
  size_t groups = (size_t)r->planes * ((size_t)rails + 1);
  uint32_t *next = calloc(groups, sizeof *next);
  r->npos = malloc(((size_t)t->node_count + 1) * sizeof *r->npos);
  if (!next || !r->npos) {
    free(next);
    return TS_ENOMEM;
  }
  for (uint32_t i = 0; i < t->node_count; i++) r->npos[i] = ROUTE_NONE;
  for (uint32_t s = 0; s < t->node_count; s++) {
    if (t->nodes[s].kind != TS_NODE_SWITCH) continue;
    for (uint32_t i = t->adj_off[s]; i < t->adj_off[s + 1]; i++) {
      const ts_node *n = &t->nodes[r->adj_head[i]];
      if (n->kind != TS_NODE_NIC || r->npos[r->adj_head[i]] != ROUTE_NONE ||
          n->plane >= r->planes)
        continue;
      size_t g = (size_t)n->plane * ((size_t)rails + 1) + (size_t)(n->rail + 1);
      r->npos[r->adj_head[i]] = next[g]++;
    }
  }
  free(next);
  return 0;
}
