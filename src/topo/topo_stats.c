/* topo_stats.c - computed properties of a topology (ts_topo_stats_compute):
 * counts, per-plane tier port/bandwidth budgets, oversubscription, tier-cut
 * bisection, scale-up domain size and a hop histogram.
 *
 * Conventions:
 *   - a link's bandwidth is the whole link (all `width` lanes or cables) in
 *     one direction; ports count `width`;
 *   - a switch's tier is its label; a switch without one (an NVSwitch chip)
 *     counts as tier 1, a single crossbar stage;
 *   - for a switch of tier k, a link is "down" when its other end is not a
 *     switch (NIC, GPU) or a switch of a lower tier, "up" toward a higher
 *     tier; links inside one tier count as neither (their ports are used);
 *   - bisection of a plane = min over tier boundaries of the capacity
 *     crossing it, halved. Boundaries: endpoints->tier 1 (sum of the
 *     endpoint links), then tier k->k+1 (tier k's up bandwidth) for every k
 *     below the top; the top tier is a full crossbar and no boundary.
 * ts_topo_stats_scaled takes per-link bandwidth factors (a what-if: 0 for a
 * failed link) and scales every bandwidth figure; counts, ports and hops
 * stay as built.
 * Costs: O(V + E + P) for plane stats (nodes and links grouped by plane), O(V log V) for distinct labels,
 * O(V + E) for the scale-up union-find and the hop BFS. */
#include <stdlib.h>
#include <string.h>

#include "topo/topo_uf.h"
#include "topsim/ts_topo_check.h"

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Distinct non-negative rack (su == false) or SU labels. -1 on ENOMEM. */
static int64_t count_distinct(const ts_topo *t, bool su) {
  int32_t *v = malloc(((size_t)t->node_count + 1) * sizeof *v);
  if (!v) return -1;
  uint32_t n = 0;
  for (uint32_t id = 0; id < t->node_count; id++) {
    int32_t x = su ? t->nodes[id].su : t->nodes[id].rack;
    if (x >= 0) v[n++] = x;
  }
  qsort(v, n, sizeof *v, cmp_i32);
  int64_t distinct = 0;
  for (uint32_t i = 0; i < n; i++) distinct += i == 0 || v[i] != v[i - 1];
  free(v);
  return distinct;
}

static void count_kinds(const ts_topo *t, ts_topo_stats *s) {
  int32_t max_host = -1;
  for (uint32_t id = 0; id < t->node_count; id++) {
    const ts_node *n = &t->nodes[id];
    if (n->kind < TS_NODE_KIND_COUNT) s->nodes_by_kind[n->kind]++;
    if (n->host > max_host) max_host = n->host;
  }
  for (uint32_t l = 0; l < t->link_count; l++)
    if (t->links[l].kind < TS_LINK_KIND_COUNT)
      s->links_by_kind[t->links[l].kind]++;
  s->gpus = t->gpu_count;
  s->hosts = (uint32_t)(max_host + 1);
}

static uint32_t eff_tier(const ts_node *n) {
  return n->tier ? n->tier : TS_TIER_LEAF;
}

/* Switch and NIC counts, ports total/free and NIC port bandwidth. */
static void plane_nodes(const ts_topo *t, const topo_plane_csr *g, uint16_t p,
                        ts_plane_stats *ps) {
  for (uint32_t j = g->node_off[p]; j < g->node_off[p + 1]; j++) {
    uint32_t id = g->nodes[j];
    const ts_node *n = &t->nodes[id];
    if (n->kind == TS_NODE_NIC) {
      ps->nics++;
      ps->nic_bw += t->port_bw[id];
    }
    if (!topo_is_switch(n) || eff_tier(n) > TS_TIER_MAX) continue;
    uint32_t k = eff_tier(n), used = topo_ports_used(t, id);
    ts_tier_stats *ts = &ps->tier[k];
    ps->switches++;
    ts->switches++;
    ts->ports_total += n->radix ? n->radix : used;
    ts->ports_free += n->radix > used ? n->radix - used : 0;
    if (k > ps->tiers) ps->tiers = k;
  }
}

/* Link l's bandwidth under the per-link factors (NULL: nominal). */
static double link_bw(const ts_topo *t, const double *factor, uint32_t l) {
  return t->links[l].bandwidth * (factor ? factor[l] : 1.0);
}

/* Books one side of link l (bandwidth bw): `me` is a switch, `other` the
 * far end. */
static void book_side(const ts_topo *t, ts_plane_stats *ps, uint32_t me,
                      uint32_t other, const ts_link *l, double bw) {
  const ts_node *a = &t->nodes[me], *b = &t->nodes[other];
  if (!topo_is_switch(a) || eff_tier(a) > TS_TIER_MAX) return;
  ts_tier_stats *ts = &ps->tier[eff_tier(a)];
  bool down = !topo_is_switch(b) || eff_tier(b) < eff_tier(a);
  bool up = topo_is_switch(b) && eff_tier(b) > eff_tier(a);
  if (down) {
    ts->ports_down += l->width;
    ts->down_bw += bw;
  } else if (up) {
    ts->ports_up += l->width;
    ts->up_bw += bw;
  }
}

/* Tier budgets from the plane's links; returns the endpoint->tier-1
 * boundary capacity (links with exactly one switch end). */
static double plane_links(const ts_topo *t, const topo_plane_csr *g,
                          const double *factor, uint16_t p, ts_plane_stats *ps) {
  double edge_bw = 0;
  for (uint32_t k = g->link_off[p]; k < g->link_off[p + 1]; k++) {
    uint32_t i = g->links[k];
    const ts_link *l = &t->links[i];
    double bw = link_bw(t, factor, i);
    ps->links++;
    book_side(t, ps, l->a, l->b, l, bw);
    book_side(t, ps, l->b, l->a, l, bw);
    bool sa = topo_is_switch(&t->nodes[l->a]);
    bool sb = topo_is_switch(&t->nodes[l->b]);
    if (sa != sb) edge_bw += bw;
    uint32_t nic = sa ? l->b : l->a;
    if (sa != sb && t->nodes[nic].kind == TS_NODE_NIC && t->port_bw[nic] == 0)
      ps->nic_bw += bw; /* no port speed given: use the cable */
  }
  return edge_bw;
}

static void plane_stats(const ts_topo *t, const topo_plane_csr *g,
                        const double *factor, uint16_t p, ts_plane_stats *ps) {
  plane_nodes(t, g, p, ps);
  double cut = plane_links(t, g, factor, p, ps);
  for (uint32_t k = 1; k <= ps->tiers; k++) {
    ts_tier_stats *ts = &ps->tier[k];
    ts->oversub = ts->up_bw > 0 ? ts->down_bw / ts->up_bw : 0;
    if (k < ps->tiers && ts->up_bw < cut) cut = ts->up_bw;
  }
  ps->bisection_bw = ps->tiers ? cut / 2 : 0;
}

static int scale_up_domain(const ts_topo *t, ts_topo_stats *s) {
  topo_uf u;
  uint32_t *count = calloc((size_t)t->node_count + 1, sizeof *count);
  if (!count || topo_uf_init(&u, t->node_count)) {
    free(count);
    return TS_ENOMEM;
  }
  for (uint32_t l = 0; l < t->link_count; l++)
    if (t->links[l].kind == TS_LINK_NVLINK)
      topo_uf_union(&u, t->links[l].a, t->links[l].b);
  for (uint32_t i = 0; i < t->gpu_count; i++) {
    uint32_t c = ++count[topo_uf_find(&u, t->gpus[i])];
    if (c > s->scale_up_domain) s->scale_up_domain = c;
  }
  topo_uf_free(&u);
  free(count);
  return 0;
}

/* BFS from the first GPU over compute links; GPUs other than the source
 * are reached but never expanded (a path does not transit a GPU). */
static int hop_histogram(const ts_topo *t, ts_topo_stats *s) {
  if (!t->gpu_count) return 0;
  uint32_t *dist = malloc(((size_t)t->node_count + 1) * sizeof *dist);
  uint32_t *queue = malloc(((size_t)t->node_count + 1) * sizeof *queue);
  if (!dist || !queue) {
    free(dist);
    free(queue);
    return TS_ENOMEM;
  }
  memset(dist, 0xff, (size_t)t->node_count * sizeof *dist);
  uint32_t head = 0, tail = 0, src = t->gpus[0];
  dist[src] = 0;
  queue[tail++] = src;
  while (head < tail) {
    uint32_t u = queue[head++];
    if (u != src && t->nodes[u].kind == TS_NODE_GPU) continue;
    for (uint32_t i = t->adj_off[u]; i < t->adj_off[u + 1]; i++) {
      uint32_t dir = t->adj[i], h = topo_dir_head(t, dir);
      if (dist[h] != UINT32_MAX ||
          !topo_link_is_compute(t, &t->links[dir >> 1]))
        continue;
      dist[h] = dist[u] + 1;
      queue[tail++] = h;
    }
  }
  for (uint32_t i = 0; i < t->gpu_count; i++) {
    uint32_t d = dist[t->gpus[i]];
    if (d == UINT32_MAX) continue;
    s->hop_hist[d < 15 ? d : 15]++;
    if (d > s->max_hops) s->max_hops = d;
  }
  free(dist);
  free(queue);
  return 0;
}

int ts_topo_stats_compute(const ts_topo *t, ts_topo_stats *out) {
  return ts_topo_stats_scaled(t, NULL, out);
}

int ts_topo_stats_scaled(const ts_topo *t, const double *link_factor,
                         ts_topo_stats *out) {
  memset(out, 0, sizeof *out);
  count_kinds(t, out);
  int64_t racks = count_distinct(t, false), sus = count_distinct(t, true);
  out->planes = calloc((size_t)t->plane_count + 1, sizeof *out->planes);
  topo_plane_csr g;
  if (racks < 0 || sus < 0 || !out->planes || topo_plane_csr_build(t, &g)) goto oom;
  out->racks = (uint32_t)racks;
  out->sus = (uint32_t)sus;
  out->plane_count = t->plane_count;
  for (uint32_t p = 0; p < t->plane_count; p++) {
    plane_stats(t, &g, link_factor, (uint16_t)p, &out->planes[p]);
    if (t->planes[p].kind == TS_PLANE_BACKEND)
      out->bisection_bw += out->planes[p].bisection_bw;
  }
  topo_plane_csr_free(&g);
  if (scale_up_domain(t, out) || hop_histogram(t, out)) goto oom;
  return 0;
oom:
  ts_topo_stats_free(out);
  return TS_ENOMEM;
}

void ts_topo_stats_free(ts_topo_stats *s) {
  if (!s) return;
  free(s->planes);
  s->planes = NULL;
  s->plane_count = 0;
}
