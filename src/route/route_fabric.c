/* route_fabric.c - NIC to NIC across one network plane (route_fabric).
 *
 * Up-down routing on a tiered Clos. Assumptions, all true of the
 * rail_optimized and fat_tree generators and of tier-labelled hand-written
 * planes: every switch carries a tier (leaf 1, spine 2, core 3); "up" means
 * a live network link of the plane to a switch of a higher tier; a NIC hangs
 * off one switch (its leaf); any two leaves are joined by an up-down path
 * of at most three tiers; in a Clos, switches of one tier are
 * interchangeable (any uplink is as good as any other until proven dead
 * end). Names are never parsed: only tiers and adjacency are used.
 *
 * Walk from source leaf la to destination leaf lb:
 *   0. la == lb: turn at the leaf.
 *   1. Stamp S = the switches with a live link down to lb (lb's spines).
 *      Live uplinks of la into S: pick one (ECMP), go down to lb.
 *   2. Else pick an uplink of la to a spine y, an uplink of y to a core c,
 *      and c's live link into S (scan of c's adjacency), then down to lb.
 *      A pick that dead-ends (y without such a core, c without a link into
 *      S, after failures) is dropped and the choice redone over the rest,
 *      so ECMP rehashes over survivors and never walks a dead link
 *      (D-mod-k: the next digit of the destination position over them).
 * Cost: O(deg lb + deg la) for steps 0-1, plus O(deg y + deg c) per pick in
 * step 2: O(radix) per route on a healthy fabric, O(radix^3) worst case
 * after heavy failures, never unbounded (every loop drops a candidate).
 * In a generated rail fabric the cores' adjacency realises the "spine group
 * of the destination" rule: c links to one spine of each group, and S is
 * exactly lb's group.
 *
 * Hand-written ("explicit") planes whose shape is not up-down fall back to
 * a BFS over that plane's live switch links only: O(switches + links of the
 * plane) per route, first shortest path in adjacency order (no ECMP). A
 * generated plane that the up-down walk cannot cross is unreachable. */
#include <string.h>

#include "route/route.h"

typedef struct fab {
  route_walk *w;
  ts_route *r;
  const ts_topo *t;
  uint16_t plane;
  uint32_t want;      /* class bits of a switch of the plane */
  uint32_t lb;
  uint32_t gen;       /* stamp marking S */
  uint32_t *c[4];     /* candidate buffers, max_deg each */
} fab;

/* Adjacency entry i (of the current node) is a live link into a switch of
 * the plane. Only switches of a plane carry network links of that plane,
 * so the head's class says it all; reads the compact arrays only. */
static bool fab_ok(const fab *f, uint32_t i) {
  uint32_t c = f->r->nclass[f->r->adj_head[i]];
  return (c & ROUTE_CLASS_PLANE_KIND) == f->want &&
         route_live(f->r, f->t->adj[i] >> 1);
}

/* Live uplinks of x (to a higher tier) into buf; stamped heads only if
 * `in_s`. With s non-NULL, also the stamped ones into s (count in *ns). */
static uint32_t fab_up2(const fab *f, uint32_t x, bool in_s, uint32_t *buf,
                        uint32_t *s, uint32_t *ns) {
  const ts_topo *t = f->t;
  const ts_route *r = f->r;
  uint32_t n = 0, tier = ROUTE_CLASS_TIER(r->nclass[x]);
  for (uint32_t i = t->adj_off[x]; i < t->adj_off[x + 1]; i++) {
    uint32_t h = r->adj_head[i];
    bool stamped = r->stamp[h] == f->gen;
    if (in_s ? !stamped : ROUTE_CLASS_TIER(r->nclass[h]) <= tier) continue;
    if (!fab_ok(f, i)) continue;
    buf[n++] = t->adj[i];
    if (s && stamped) s[(*ns)++] = t->adj[i];
  }
  return n;
}

static uint32_t fab_up(const fab *f, uint32_t x, bool in_s, uint32_t *buf) {
  return fab_up2(f, x, in_s, buf, NULL, NULL);
}

/* Stamps S: switches above lb with a live link down to it, and records
 * that link (the first live one when cables to one switch are split over
 * several links; generators bundle them into one). */
static void fab_mark(fab *f) {
  const ts_topo *t = f->t;
  const ts_route *r = f->r;
  uint32_t tier = ROUTE_CLASS_TIER(r->nclass[f->lb]);
  f->gen = route_new_gen(f->r);
  for (uint32_t i = t->adj_off[f->lb]; i < t->adj_off[f->lb + 1]; i++) {
    uint32_t h = r->adj_head[i];
    if (ROUTE_CLASS_TIER(r->nclass[h]) > tier && r->stamp[h] != f->gen &&
        fab_ok(f, i)) {
      f->r->stamp[h] = f->gen;
      f->r->down_dir[h] = t->adj[i] ^ 1u;
    }
  }
}

/* Appends ups[0..n) then the link from the last head down to lb. */
static int fab_finish(fab *f, const uint32_t *ups, uint32_t n) {
  uint32_t down = f->r->down_dir[topo_dir_head(f->t, ups[n - 1])];
  for (uint32_t i = 0; i < n; i++)
    if (route_append(f->w, ups[i])) return TS_EINVALID;
  return route_append(f->w, down) ? TS_EINVALID : 1;
}

/* Step 1: turn one tier up, over one of the ns uplinks of la into S. */
static int fab_two(fab *f, const uint32_t *s, uint32_t ns) {
  uint32_t up = s[route_choose(&f->w->pick, ns)];
  return fab_finish(f, &up, 1);
}

/* Step 2 from spine y: a core with a live link into S. */
static int fab_core(fab *f, uint32_t d1) {
  uint32_t y = topo_dir_head(f->t, d1);
  uint32_t *cu = f->c[1], nc = fab_up(f, y, false, cu);
  while (nc) {
    uint32_t j = route_choose(&f->w->pick, nc);
    uint32_t c = topo_dir_head(f->t, cu[j]);
    uint32_t nd = fab_up(f, c, true, f->c[2]);
    if (nd) {
      uint32_t ups[3] = {d1, cu[j], f->c[2][route_choose(&f->w->pick, nd)]};
      return fab_finish(f, ups, 3);
    }
    cu[j] = cu[--nc];
  }
  return 0;
}

/* Step 2: turn two tiers up, over one of la's nu uplinks. */
static int fab_three(fab *f, uint32_t *up, uint32_t nu) {
  while (nu) {
    uint32_t i = route_choose(&f->w->pick, nu);
    int rc = fab_core(f, up[i]);
    if (rc) return rc;
    up[i] = up[--nu];
  }
  return 0;
}

/* Fallback for explicit planes: BFS over the plane's live switch links. */
static int fab_bfs(fab *f, uint32_t la) {
  ts_route *r = f->r;
  const ts_topo *t = f->t;
  uint32_t gen = route_new_gen(r), n = 1;
  r->bfs_node[0] = ROUTE_NONE;   /* entry q holds the direction into it */
  r->stamp[la] = gen;
  for (uint32_t q = 0; q < n; q++) {
    uint32_t u = q ? topo_dir_head(t, r->bfs_node[q]) : la;
    for (uint32_t i = t->adj_off[u]; i < t->adj_off[u + 1]; i++) {
      uint32_t dir = t->adj[i], h = r->adj_head[i];
      if (!fab_ok(f, i) || r->stamp[h] == gen || n == r->bfs_cap) continue;
      r->stamp[h] = gen;
      r->bfs_node[n] = dir;
      r->bfs_from[n] = q;
      if (h == f->lb) {
        uint32_t rev[TS_ROUTE_MAX_HOPS], k = 0;
        for (uint32_t e = n; e; e = r->bfs_from[e]) {
          if (k == TS_ROUTE_MAX_HOPS)
            return route_fail(f->w, "plane path is over %d hops",
                              TS_ROUTE_MAX_HOPS);
          rev[k++] = r->bfs_node[e];
        }
        while (k)
          if (route_append(f->w, rev[--k])) return TS_EINVALID;
        return 1;
      }
      n++;
    }
  }
  return 0;
}

/* Live links from NIC x into a switch of its plane, into buf. */
static uint32_t fab_nic(const fab *f, uint32_t x, uint32_t *buf) {
  const ts_topo *t = f->t;
  uint32_t n = 0;
  for (uint32_t i = t->adj_off[x]; i < t->adj_off[x + 1]; i++)
    if (fab_ok(f, i)) buf[n++] = t->adj[i];
  return n;
}

static const char *name_of(const ts_topo *t, uint32_t id) {
  return t->names + t->nodes[id].name;
}

int route_fabric(route_walk *w, uint32_t nic_a, uint32_t nic_b) {
  const ts_topo *t = w->t;
  fab f = {.w = w, .r = w->r, .t = t, .plane = t->nodes[nic_a].plane};
  f.want = route_class(TS_NODE_SWITCH, 0, f.plane);
  w->pick.dmodk = route_dmodk_plane(w->r, f.plane);
  if (w->pick.dmodk) {
    w->pick.dpos = w->r->npos[nic_b] == ROUTE_NONE ? 0 : w->r->npos[nic_b];
    w->pick.dprod = 1;
  }
  for (int i = 0; i < 4; i++) f.c[i] = w->r->cand + (size_t)i * w->r->max_deg;
  uint32_t na = fab_nic(&f, nic_a, f.c[0]);
  if (!na) return route_fail(w, "NIC '%s' has no live link", name_of(t, nic_a));
  uint32_t ua = f.c[0][route_choose(&w->pick, na)];
  uint32_t nb = fab_nic(&f, nic_b, f.c[0]);
  if (!nb) return route_fail(w, "NIC '%s' has no live link", name_of(t, nic_b));
  uint32_t ub = f.c[0][route_choose(&w->pick, nb)];
  uint32_t la = topo_dir_head(t, ua);
  f.lb = topo_dir_head(t, ub);
  if (route_append(w, ua)) return TS_EINVALID;
  int rc = 1;
  if (la != f.lb) {
    fab_mark(&f);
    uint32_t ns = 0, nu = fab_up2(&f, la, false, f.c[0], f.c[3], &ns);
    rc = ns ? fab_two(&f, f.c[3], ns) : fab_three(&f, f.c[0], nu);
    if (!rc && strcmp(t->planes[f.plane].generator, "explicit") == 0)
      rc = fab_bfs(&f, la);
  }
  if (rc < 0) return rc;
  if (!rc)
    return route_fail(w, "no live up-down path on plane '%s' from '%s' to "
                      "'%s'", t->planes[f.plane].name, name_of(t, la),
                      name_of(t, f.lb));
  return route_append(w, ub ^ 1u) ? TS_EINVALID : 0;
}
