/* report_dot_tiers.c - tier-level diagram of a loaded topology
 * (ts_report_tiers; `topsim topo --dot --level tier`, `topsim topo --svg`).
 *
 * Boxes, per network plane (planes without switches are skipped):
 *   NICs   one box: the plane's NICs and the hosts they sit in;
 *   leaf   one box per rail label when the plane's leaves carry at most 16
 *          distinct rails, else one box;
 *   spine  one box per group label when at most 16, else one box per leaf
 *          box the spine serves alone (rail-optimized pods: per rail), else
 *          one box;
 *   core   one box per group label when at most 16, else one box.
 * Edges: network cables (link widths summed) between boxes of different
 * rows. Cost: O(nodes + links) time, O(nodes + boxes^2) memory. */
#include <stdlib.h>
#include <string.h>

#include "report/report_tiers.h"
#include "topsim/ts_report.h"

#define UNSET 0xFFFFFFFFu
#define MIXED 0xFFFFFFFEu

typedef struct tctx {
  const ts_topo *t;
  tdiag d;
  uint32_t *box;               /* node -> box or UNSET */
  uint32_t *serves;            /* spine -> the one leaf box it serves */
} tctx;

/* Distinct non-negative values of rail (which 0) or group among the
 * switches of plane p and tier; stops counting past TD_GROUPS_MAX. */
static uint32_t distinct(const ts_topo *t, uint16_t p, int tier, int which) {
  int32_t seen[TD_GROUPS_MAX + 1];
  uint32_t n = 0;
  for (uint32_t i = 0; i < ts_topo_node_count(t) && n <= TD_GROUPS_MAX; i++) {
    const ts_node *x = ts_topo_node(t, i);
    if (x->kind != TS_NODE_SWITCH || x->plane != p || x->tier != tier) continue;
    int32_t v = which == 0 ? x->rail : x->group;
    uint32_t k = 0;
    while (k < n && seen[k] != v) k++;
    if (k == n) seen[n++] = v;
  }
  return n;
}

/* Which leaf box each spine of plane p connects to (MIXED if several). */
static void spine_serves(tctx *c, uint16_t p) {
  for (uint32_t i = 0; i < ts_topo_link_count(c->t); i++) {
    const ts_link *l = ts_topo_link(c->t, i);
    if (l->kind != TS_LINK_NET || l->plane != p) continue;
    const ts_node *a = ts_topo_node(c->t, l->a), *b = ts_topo_node(c->t, l->b);
    uint32_t spine = l->a, leaf = l->b;
    if (b->tier == TS_TIER_SPINE) spine = l->b, leaf = l->a, a = b;
    if (a->tier != TS_TIER_SPINE || ts_topo_node(c->t, leaf)->tier != TS_TIER_LEAF)
      continue;
    uint32_t lb = c->box[leaf], *s = &c->serves[spine];
    *s = *s == UNSET || *s == lb ? lb : MIXED;
  }
}

/* Boxes of one tier: by label (rail or group), by served leaf box, or one. */
static void tier_boxes(tctx *c, uint16_t p, const char *pname, int tier,
                       const char *what) {
  const ts_topo *t = c->t;
  int which = tier == TS_TIER_LEAF ? 0 : 1;
  int by_label = distinct(t, p, tier, which) <= TD_GROUPS_MAX;
  int by_leaf = !by_label && tier == TS_TIER_SPINE;
  if (by_leaf) spine_serves(c, p);
  uint32_t first = c->d.nbox, count[64] = {0};
  int32_t key[64];
  uint32_t nkeys = 0;
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *x = ts_topo_node(t, i);
    if (x->kind != TS_NODE_SWITCH || x->plane != p || x->tier != tier) continue;
    int32_t k = by_label ? (which ? x->group : x->rail)
                : by_leaf && c->serves[i] < MIXED ? (int32_t)c->serves[i] : -1;
    uint32_t j = 0;
    while (j < nkeys && key[j] != k) j++;
    if (j == nkeys && nkeys < 64) key[nkeys++] = k;
    if (j == 64) j = 63;
    count[j]++;
    c->box[i] = first + j;
  }
  for (uint32_t j = 0; j < nkeys; j++) {
    char a[96], b[96];
    if (nkeys == 1) snprintf(a, sizeof a, "%s %s", pname, what);
    else if (by_label && !which) snprintf(a, sizeof a, "%s rail %d %s", pname,
                                          key[j], what);
    else if (by_label) snprintf(a, sizeof a, "%s group %d %s", pname, key[j],
                                what);
    else snprintf(a, sizeof a, "%.40s %s of %.40s", pname, what,
                  key[j] >= 0 ? c->d.box[key[j]].l1 : "several");
    snprintf(b, sizeof b, "%u switch%s", count[j], count[j] == 1 ? "" : "es");
    td_add_box(&c->d, tier, a, b);
  }
}

static void plane_boxes(tctx *c, uint16_t p) {
  const ts_topo *t = c->t;
  const ts_plane *pl = ts_topo_plane(t, p);
  if (!pl->tiers) return;
  uint32_t nics = 0, hosts = 0;
  int32_t last = TS_NONE;
  uint32_t box = c->d.nbox;
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *x = ts_topo_node(t, i);
    if (x->kind != TS_NODE_NIC || x->plane != p) continue;
    nics++;
    hosts += x->host != last;
    last = x->host;
    c->box[i] = box;
  }
  char a[96], b[96];
  snprintf(a, sizeof a, "%s NICs", pl->name);
  snprintf(b, sizeof b, "%u NICs, %u hosts", nics, hosts);
  td_add_box(&c->d, 0, a, b);
  static const char *const what[4] = {"", "leaves", "spines", "cores"};
  for (int tier = TS_TIER_LEAF; tier <= TS_TIER_CORE && tier <= pl->tiers; tier++)
    tier_boxes(c, p, pl->name, tier, what[tier]);
}

static int edges(tctx *c) {
  uint32_t n = c->d.nbox;
  uint64_t *m = calloc((size_t)n * n + 1, sizeof *m);
  if (!m) return TS_ENOMEM;
  for (uint32_t i = 0; i < ts_topo_link_count(c->t); i++) {
    const ts_link *l = ts_topo_link(c->t, i);
    if (l->kind != TS_LINK_NET) continue;
    uint32_t a = c->box[l->a], b = c->box[l->b];
    if (a == UNSET || b == UNSET || c->d.box[a].row == c->d.box[b].row) continue;
    if (c->d.box[a].row > c->d.box[b].row) { uint32_t x = a; a = b; b = x; }
    m[(size_t)a * n + b] += l->width ? l->width : 1;
  }
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = 0; b < n; b++)
      if (m[(size_t)a * n + b]) td_add_edge(&c->d, a, b, m[(size_t)a * n + b]);
  free(m);
  return c->d.oom ? TS_ENOMEM : 0;
}

int ts_report_tiers(const ts_topo *t, int svg, FILE *out) {
  tctx c = {.t = t};
  uint32_t n = ts_topo_node_count(t);
  c.box = malloc((n ? n : 1) * sizeof *c.box);
  c.serves = malloc((n ? n : 1) * sizeof *c.serves);
  int rc = c.box && c.serves ? 0 : TS_ENOMEM;
  if (!rc) {
    memset(c.box, 0xFF, n * sizeof *c.box);
    memset(c.serves, 0xFF, n * sizeof *c.serves);
    for (uint32_t p = 0; p < ts_topo_plane_count(t); p++)
      plane_boxes(&c, (uint16_t)p);
    rc = edges(&c);
  }
  if (!rc) rc = td_write(&c.d, svg, out);
  td_free(&c.d);
  free(c.box);
  free(c.serves);
  return rc;
}
