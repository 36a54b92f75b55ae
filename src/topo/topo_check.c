/* topo_check.c - structural validation of a built topology
 * (ts_topo_validate).
 *
 * Every check runs to completion and appends one ts_diag per problem, each
 * carrying the source file and the culprit node's mark, so a user fixes
 * everything in one pass. Checks and costs (V nodes, E links, P planes,
 * H hosts):
 *   - switch radix: ports used <= radix, O(V + E);
 *   - plane connectivity: union-find over each switched plane's links, the
 *     NICs of one host joined (a host bridges its NICs through PCIe, which
 *     keeps a one-tier rail-only plane, 8 separate rail networks, valid),
 *     O(P * (V + E + H)). Scale-up planes are skipped: NVLink domains are
 *     islands by design (one per node or rack);
 *   - NIC cabling: a NIC on a switched plane has a network link, and a
 *     rail-labelled NIC reaches a leaf of its own rail when it is cabled to
 *     rail-labelled leaves at all, O(V + E);
 *   - GPU reachability over in-node, scale-up and backend links, O(V + E).
 *     Union-find lets a path transit a GPU, so two islands bridged only by a
 *     GPU count as joined. That is deliberate: NCCL relays through a GPU's
 *     memory (PXN), so such GPUs do reach each other. A transit-free check
 *     is pairwise (not an equivalence) and would cost O(G^2); upgrade path
 *     if routing ever forbids GPU relays: union-find over non-GPU links, then
 *     test that one component touches every GPU. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_uf.h"
#include "topsim/ts_topo_check.h"

typedef struct check_ctx {
  const ts_topo *t;
  ts_problems *out;
  int rc;          /* TS_ENOMEM once an append failed */
  uint32_t added;
} check_ctx;

static const char *nm(const ts_topo *t, uint32_t id) {
  return t->names + t->nodes[id].name;
}

/* Appends a problem positioned at node id. Failure is sticky in c->rc. */
__attribute__((format(printf, 3, 4)))
static void problem(check_ctx *c, uint32_t id, const char *fmt, ...) {
  ts_problems *p = c->out;
  if (c->rc) return;
  if (p->count == p->cap) {
    uint32_t ncap = p->cap ? p->cap * 2 : 16;
    ts_diag *items = realloc(p->items, (size_t)ncap * sizeof *items);
    if (!items) {
      c->rc = TS_ENOMEM;
      return;
    }
    p->items = items;
    p->cap = ncap;
  }
  char msg[sizeof p->items[0].msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  topo_mark m = topo_node_mark(c->t, id);
  ts_diag_set(&p->items[p->count++], TS_EINVALID, c->t->source, (int)m.line,
              (int)m.col, "%s", msg);
  c->added++;
}

static void check_radix(check_ctx *c) {
  const ts_topo *t = c->t;
  for (uint32_t id = 0; id < t->node_count; id++) {
    const ts_node *n = &t->nodes[id];
    if (!topo_is_switch(n) || n->radix == 0) continue;
    uint32_t used = topo_ports_used(t, id);
    if (used > n->radix)
      problem(c, id, "switch '%s' uses %u ports but its radix is %u",
              nm(t, id), used, n->radix);
  }
}

/* has_sw[p] = plane p holds at least one switch. */
static bool *switched_planes(const ts_topo *t) {
  bool *has_sw = calloc((size_t)t->plane_count + 1, sizeof *has_sw);
  if (!has_sw) return NULL;
  for (uint32_t id = 0; id < t->node_count; id++) {
    const ts_node *n = &t->nodes[id];
    if (topo_is_switch(n) && n->plane < t->plane_count) has_sw[n->plane] = true;
  }
  return has_sw;
}

static uint32_t host_span(const ts_topo *t) {
  int32_t max = -1;
  for (uint32_t id = 0; id < t->node_count; id++)
    if (t->nodes[id].host > max) max = t->nodes[id].host;
  return (uint32_t)(max + 1);
}

/* Scratch for the per-plane connectivity pass. */
typedef struct plane_scratch {
  topo_plane_csr g;   /* nodes and links by plane */
  uint32_t *touched;  /* nodes a plane pass set up, to reset afterwards */
  uint32_t ntouched;
  topo_uf uf;
  uint8_t *member;    /* per node: touches the plane */
  uint32_t *host_nic; /* per host: first member NIC on the plane */
  uint32_t hosts;
} plane_scratch;

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Marks a node as part of this plane's pass (once). */
static void touch(plane_scratch *s, uint32_t id) {
  if (s->member[id]) return;
  s->member[id] = 1;
  s->touched[s->ntouched++] = id;
}

/* Joins the plane's links, its switches and each host's NICs. Only the
 * plane's own nodes and links are visited (s->g), so the pass over all
 * planes is O(V + E + P); the scratch is reset the same way (plane_reset). */
static void plane_join(const ts_topo *t, plane_scratch *s, uint16_t p) {
  const topo_plane_csr *g = &s->g;
  for (uint32_t k = g->link_off[p]; k < g->link_off[p + 1]; k++) {
    const ts_link *l = &t->links[g->links[k]];
    touch(s, l->a);
    touch(s, l->b);
    topo_uf_union(&s->uf, l->a, l->b);
  }
  for (uint32_t k = g->node_off[p]; k < g->node_off[p + 1]; k++) {
    uint32_t id = g->nodes[k];
    const ts_node *n = &t->nodes[id];
    if (topo_is_switch(n)) touch(s, id);
    if (n->kind != TS_NODE_NIC || !s->member[id] || n->host < 0) continue;
    uint32_t *first = &s->host_nic[n->host];
    if (*first == TOPO_BAD_ID) *first = id;
    else topo_uf_union(&s->uf, *first, id);
  }
}

/* Undoes plane_join on exactly the nodes and hosts it set. */
static void plane_reset(const ts_topo *t, plane_scratch *s) {
  for (uint32_t i = 0; i < s->ntouched; i++) {
    uint32_t id = s->touched[i];
    s->member[id] = 0;
    s->uf.parent[id] = id;
    s->uf.size[id] = 1;
    if (t->nodes[id].host >= 0) s->host_nic[t->nodes[id].host] = TOPO_BAD_ID;
  }
  s->ntouched = 0;
}

static void check_plane_connected(check_ctx *c, plane_scratch *s, uint16_t p) {
  const ts_topo *t = c->t;
  plane_join(t, s, p);
  uint32_t first = TOPO_BAD_ID, other = TOPO_BAD_ID, parts = 0;
  /* Members in id order (the touched list is not), as the messages name
   * the first and the first unreachable one. */
  qsort(s->touched, s->ntouched, sizeof *s->touched, cmp_u32);
  for (uint32_t k = 0; k < s->ntouched; k++) {
    uint32_t id = s->touched[k];
    if (topo_uf_find(&s->uf, id) == id) parts++;
    if (first == TOPO_BAD_ID) first = id;
    else if (other == TOPO_BAD_ID &&
             topo_uf_find(&s->uf, id) != topo_uf_find(&s->uf, first))
      other = id;
  }
  if (parts > 1)
    problem(c, other,
            "plane '%s' falls into %u disconnected parts (e.g. '%s' cannot "
            "reach '%s')", t->planes[p].name, parts, nm(t, first),
            nm(t, other));
}

static void check_planes(check_ctx *c, const bool *has_sw) {
  const ts_topo *t = c->t;
  plane_scratch s;
  s.hosts = host_span(t);
  s.member = malloc((size_t)t->node_count + 1);
  s.host_nic = malloc(((size_t)s.hosts + 1) * sizeof *s.host_nic);
  s.touched = malloc(((size_t)t->node_count + 1) * sizeof *s.touched);
  s.ntouched = 0;
  if (!s.member || !s.host_nic || !s.touched || topo_plane_csr_build(t, &s.g) ||
      topo_uf_init(&s.uf, t->node_count)) {
    topo_plane_csr_free(&s.g);
    free(s.touched);
    free(s.member);
    free(s.host_nic);
    c->rc = TS_ENOMEM;
    return;
  }
  for (uint32_t i = 0; i < t->node_count; i++) {
    s.uf.parent[i] = i;
    s.uf.size[i] = 1;
  }
  memset(s.member, 0, (size_t)t->node_count);
  memset(s.host_nic, 0xff, (size_t)s.hosts * sizeof *s.host_nic);
  for (uint32_t p = 0; p < t->plane_count; p++)
    if (has_sw[p] && t->planes[p].kind != TS_PLANE_SCALE_UP) {
      check_plane_connected(c, &s, (uint16_t)p);
      plane_reset(t, &s);
    }
  topo_uf_free(&s.uf);
  topo_plane_csr_free(&s.g);
  free(s.touched);
  free(s.member);
  free(s.host_nic);
}

static void check_nic(check_ctx *c, uint32_t id) {
  const ts_topo *t = c->t;
  const ts_node *n = &t->nodes[id];
  bool has_net = false, on_rail = false;
  uint32_t wrong = TOPO_BAD_ID;
  for (uint32_t i = t->adj_off[id]; i < t->adj_off[id + 1]; i++) {
    uint32_t dir = t->adj[i];
    if (t->links[dir >> 1].kind != TS_LINK_NET) continue;
    has_net = true;
    uint32_t h = topo_dir_head(t, dir);
    const ts_node *hn = &t->nodes[h];
    if (hn->kind != TS_NODE_SWITCH || hn->tier != TS_TIER_LEAF || hn->rail < 0)
      continue;
    if (hn->rail == n->rail) on_rail = true;
    else if (wrong == TOPO_BAD_ID) wrong = h;
  }
  if (!has_net)
    problem(c, id, "NIC '%s' on plane '%s' has no network link", nm(t, id),
            t->planes[n->plane].name);
  else if (n->rail >= 0 && !on_rail && wrong != TOPO_BAD_ID)
    problem(c, id, "NIC '%s' (rail %d) is cabled to leaf '%s' of rail %d",
            nm(t, id), n->rail, nm(t, wrong), t->nodes[wrong].rail);
}

static void check_nics(check_ctx *c, const bool *has_sw) {
  const ts_topo *t = c->t;
  for (uint32_t id = 0; id < t->node_count; id++) {
    const ts_node *n = &t->nodes[id];
    if (n->kind == TS_NODE_NIC && n->plane < t->plane_count &&
        has_sw[n->plane])
      check_nic(c, id);
  }
}

static void check_gpu_reach(check_ctx *c) {
  const ts_topo *t = c->t;
  if (t->gpu_count < 2) return;
  topo_uf u;
  uint8_t *seen = calloc((size_t)t->node_count + 1, 1);
  if (!seen || topo_uf_init(&u, t->node_count)) {
    free(seen);
    c->rc = TS_ENOMEM;
    return;
  }
  for (uint32_t l = 0; l < t->link_count; l++)
    if (topo_link_is_compute(t, &t->links[l]))
      topo_uf_union(&u, t->links[l].a, t->links[l].b);
  uint32_t g0 = t->gpus[0];
  seen[topo_uf_find(&u, g0)] = 1;
  for (uint32_t i = 1; i < t->gpu_count; i++) {
    uint32_t r = topo_uf_find(&u, t->gpus[i]);
    if (seen[r]) continue;
    seen[r] = 1;
    problem(c, t->gpus[i], "GPU '%s' cannot reach GPU '%s'", nm(t, g0),
            nm(t, t->gpus[i]));
  }
  topo_uf_free(&u);
  free(seen);
}

int ts_topo_validate(const ts_topo *t, ts_problems *out) {
  check_ctx c = {t, out, 0, 0};
  bool *has_sw = switched_planes(t);
  if (!has_sw) return TS_ENOMEM;
  check_radix(&c);
  check_planes(&c, has_sw);
  check_nics(&c, has_sw);
  check_gpu_reach(&c);
  free(has_sw);
  return c.rc ? c.rc : (int)c.added;
}

void ts_problems_free(ts_problems *p) {
  if (!p) return;
  free(p->items);
  p->items = NULL;
  p->count = p->cap = 0;
}
