/* topo_lint.c - warnings for legal but suspicious designs (ts_topo_lint),
 * the second severity of `topsim topo --validate`.
 *
 * A warning never fails validation: each names something a design review
 * would question. Checks and costs (V nodes, E links, P planes):
 *   - backend tier oversubscribed beyond 1:1: traffic leaving a switch of
 *     that tier gets 1/x of the bandwidth entering it, which collectives
 *     spanning the tier feel directly, O(V + E) via ts_topo_stats;
 *   - a tier with more uplink than downlink bandwidth (under 1:1 but not
 *     0): the extra uplinks buy no bandwidth, O(V + E) (same stats);
 *   - uneven uplinks: a switch whose capacity to its upper-tier neighbours
 *     differs between neighbours (e.g. 6 cables to one spine, 4 to
 *     another). ECMP spreads flows evenly over paths, so the thinnest
 *     bundle saturates first; reported once per plane and tier with the
 *     first switch and how many share the problem, O(E log degree).
 * Each warning is positioned at the plane (or the switch's) source mark. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_graph.h"
#include "topsim/ts_topo_check.h"

#define OVERSUB_EPS 1e-9

__attribute__((format(printf, 4, 5)))
static int warn(const ts_topo *t, ts_problems *p, topo_mark m, const char *fmt, ...) {
  if (p->count == p->cap) {
    uint32_t ncap = p->cap ? 2 * p->cap : 16;
    ts_diag *items = realloc(p->items, (size_t)ncap * sizeof *items);
    if (!items) return TS_ENOMEM;
    p->items = items;
    p->cap = ncap;
  }
  char msg[sizeof p->items[0].msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ts_diag_set(&p->items[p->count++], TS_EINVALID, t->source, (int)m.line, (int)m.col,
              "%s", msg);
  return 0;
}

static int lint_oversub(const ts_topo *t, const ts_topo_stats *s, ts_problems *p,
                        uint32_t *added) {
  for (uint32_t pl = 0; pl < s->plane_count; pl++) {
    const ts_plane *plane = &t->planes[pl];
    for (int tier = TS_TIER_LEAF; tier <= TS_TIER_MAX; tier++) {
      const ts_tier_stats *ts = &s->planes[pl].tier[tier];
      const char *tn = ts_tier_name((ts_tier)tier);
      int rc = 0;
      if (ts->up_bw <= 0) continue;
      if (plane->kind == TS_PLANE_BACKEND && ts->oversub > 1 + OVERSUB_EPS)
        rc = warn(t, p, t->plane_marks[pl], "plane '%s' (backend): the %s tier is "
                  "%.3g:1 oversubscribed: traffic leaving a %s gets 1/%.3g of the "
                  "bandwidth entering it", plane->name, tn, ts->oversub, tn, ts->oversub);
      else if (ts->oversub < 1 - OVERSUB_EPS)
        rc = warn(t, p, t->plane_marks[pl], "plane '%s': the %s tier has more uplink "
                  "than downlink bandwidth (%.3g:1, %llu ports up, %llu down): the extra "
                  "uplinks buy no bandwidth", plane->name, tn, ts->oversub,
                  (unsigned long long)ts->ports_up, (unsigned long long)ts->ports_down);
      else continue;
      if (rc) return rc;
      (*added)++;
    }
  }
  return 0;
}

typedef struct up_bw {
  uint32_t peer;
  double bw;
} up_bw;

static int by_peer(const void *a, const void *b) {
  uint32_t x = ((const up_bw *)a)->peer, y = ((const up_bw *)b)->peer;
  return x < y ? -1 : x > y;
}

/* Min and max capacity from switch id to each upper-tier neighbour; 0 when
 * it has fewer than two such neighbours. scratch holds degree entries. */
static void uplink_spread(const ts_topo *t, uint32_t id, up_bw *scratch, double *lo,
                          double *hi) {
  uint32_t n = 0;
  for (uint32_t i = t->adj_off[id]; i < t->adj_off[id + 1]; i++) {
    uint32_t dir = t->adj[i], h = topo_dir_head(t, dir);
    const ts_link *l = &t->links[dir >> 1];
    if (l->kind == TS_LINK_NET && t->nodes[h].kind == TS_NODE_SWITCH &&
        t->nodes[h].tier > t->nodes[id].tier)
      scratch[n++] = (up_bw){h, l->bandwidth};
  }
  *lo = *hi = 0;
  if (n < 2) return;
  qsort(scratch, n, sizeof *scratch, by_peer);
  uint32_t peers = 0;
  for (uint32_t i = 0; i < n;) {
    double sum = 0;
    uint32_t peer = scratch[i].peer;
    for (; i < n && scratch[i].peer == peer; i++) sum += scratch[i].bw;
    if (!peers++ || sum < *lo) *lo = sum;
    if (sum > *hi) *hi = sum;
  }
  if (peers < 2) *lo = *hi = 0;
}

/* first[plane * 4 + tier]: first uneven switch; count: how many. */
static int lint_uneven(const ts_topo *t, ts_problems *p, uint32_t *added) {
  size_t slots = (size_t)t->plane_count * (TS_TIER_MAX + 1) + 1;
  uint32_t *first = malloc(slots * sizeof *first), *count = calloc(slots, sizeof *count);
  uint32_t maxdeg = 1;
  for (uint32_t id = 0; id < t->node_count; id++)
    if (t->adj_off[id + 1] - t->adj_off[id] > maxdeg) maxdeg = t->adj_off[id + 1] - t->adj_off[id];
  up_bw *scratch = malloc((size_t)maxdeg * sizeof *scratch);
  int rc = first && count && scratch ? 0 : TS_ENOMEM;
  for (uint32_t id = 0; !rc && id < t->node_count; id++) {
    const ts_node *n = &t->nodes[id];
    if (n->kind != TS_NODE_SWITCH || n->plane >= t->plane_count || n->tier > TS_TIER_MAX) continue;
    double lo, hi;
    uplink_spread(t, id, scratch, &lo, &hi);
    if (hi <= lo * (1 + OVERSUB_EPS)) continue;
    size_t k = (size_t)n->plane * (TS_TIER_MAX + 1) + n->tier;
    if (!count[k]++) first[k] = id;
  }
  for (size_t k = 0; !rc && k + 1 < slots; k++) {
    if (!count[k]) continue;
    uint32_t id = first[k];
    double lo, hi;
    uplink_spread(t, id, scratch, &lo, &hi);
    rc = warn(t, p, topo_node_mark(t, id), "plane '%s': %u %s switch%s uneven "
              "uplinks (e.g. '%s': %.4g to %.4g GB/s per upper switch); ECMP spreads "
              "flows evenly, so the thinnest bundle saturates first",
              t->planes[t->nodes[id].plane].name, count[k],
              ts_tier_name((ts_tier)t->nodes[id].tier), count[k] == 1 ? " has" : "es have",
              t->names + t->nodes[id].name, lo / 1e9, hi / 1e9);
    if (!rc) (*added)++;
  }
  free(first);
  free(count);
  free(scratch);
  return rc;
}

int ts_topo_lint(const ts_topo *t, ts_problems *out) {
  ts_topo_stats s;
  if (ts_topo_stats_compute(t, &s)) return TS_ENOMEM;
  uint32_t added = 0;
  int rc = lint_oversub(t, &s, out, &added);
  ts_topo_stats_free(&s);
  if (!rc) rc = lint_uneven(t, out, &added);
  return rc ? rc : (int)added;
}
