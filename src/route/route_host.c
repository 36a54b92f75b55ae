/* route_host.c - per-node tables and the walks inside a host or NVLink
 * domain.
 *
 * Tables (route_tables_build, O(nodes + links) plus O(h^2 x planes) per host
 * of h devices, once per router):
 *   host_off/host_nodes  CSR of each host's nodes in id order;
 *   gpu_nic              the GPU's NIC on every plane (ROUTE_NONE if its
 *                        host has none there). Rule: the NICs on the plane
 *                        whose PCIe parent (first PCIe/C2C neighbour that is
 *                        a PCIe switch or CPU) is the GPU's, taken at the
 *                        GPU's rank among GPUs with that parent; else the
 *                        plane's NICs in the GPU's NUMA domain at its rank
 *                        there; else the host's NICs on the plane at its rank
 *                        in the host; ranks modulo the count (DGX: GPU i <->
 *                        NIC i on the compute plane);
 *   aux                  GPU -> ordinal; NIC -> lowest GPU that maps to it
 *                        (the PXN proxy), or ROUTE_NONE.
 * Failover (route_live_nic, only when the GPU's own NIC is unusable under
 * the link state: its fabric link, its leaf or the NIC itself is down):
 *   the host's usable NIC on the plane in the GPU's NUMA domain first, then
 *   any, nearest rail first (cyclic distance in rail or local index, ties
 *   to the lower index), as NCCL falls back to a non-local NIC. O(devices of
 *   the host x NIC degree) per call, paid only by routes of affected GPUs.
 * Walks:
 *   route_nvlink     direct NVLink, else an NVSwitch both GPUs link to (any
 *                    host: NVL72 domains): O(deg a + deg b) with stamps;
 *   route_host_path  BFS over PCIe, C2C and socket links, transiting only
 *                    PCIe switches and CPUs: in a PCIe tree under a socket
 *                    chain the shortest path is the walk up to the lowest
 *                    common switch or CPU, across the sockets, and down.
 *                    O(devices of the host), at most ROUTE_HOST_MAX. */
#include <stdlib.h>
#include <string.h>

#include "route/route.h"

static bool pcie_kind(uint8_t k) {
  return k == TS_LINK_PCIE || k == TS_LINK_C2C;
}

/* First PCIe/C2C neighbour of n that is a PCIe switch or CPU. */
static uint32_t pcie_parent(const ts_topo *t, uint32_t n) {
  for (uint32_t i = t->adj_off[n]; i < t->adj_off[n + 1]; i++) {
    uint32_t dir = t->adj[i], h = topo_dir_head(t, dir);
    uint8_t k = t->nodes[h].kind;
    if (pcie_kind(t->links[dir >> 1].kind) &&
        (k == TS_NODE_PCIE_SW || k == TS_NODE_CPU))
      return h;
  }
  return ROUTE_NONE;
}

static int build_hosts(ts_route *r) {
  const ts_topo *t = r->t;
  uint32_t hosts = 0;
  for (uint32_t i = 0; i < t->node_count; i++)
    if (t->nodes[i].host >= 0 && (uint32_t)t->nodes[i].host + 1 > hosts)
      hosts = (uint32_t)t->nodes[i].host + 1;
  r->hosts = hosts;
  r->host_off = calloc((size_t)hosts + 1, sizeof *r->host_off);
  r->host_nodes = malloc(((size_t)t->node_count + 1) * sizeof *r->host_nodes);
  if (!r->host_off || !r->host_nodes) return TS_ENOMEM;
  for (uint32_t i = 0; i < t->node_count; i++)
    if (t->nodes[i].host >= 0) r->host_off[t->nodes[i].host + 1]++;
  for (uint32_t h = 0; h < hosts; h++) r->host_off[h + 1] += r->host_off[h];
  uint32_t *fill = malloc(((size_t)hosts + 1) * sizeof *fill);
  if (!fill) return TS_ENOMEM;
  memcpy(fill, r->host_off, (size_t)hosts * sizeof *fill);
  for (uint32_t i = 0; i < t->node_count; i++)
    if (t->nodes[i].host >= 0) r->host_nodes[fill[t->nodes[i].host]++] = i;
  free(fill);
  return 0;
}

/* Per host: each device's PCIe parent, and each GPU's rank among GPUs
 * sharing its parent / NUMA domain / host. */
typedef struct host_scan {
  const uint32_t *ids;
  uint32_t n;
  uint32_t parent[ROUTE_HOST_MAX];
} host_scan;

static uint32_t gpu_rank(const ts_topo *t, const host_scan *h, uint32_t k,
                         int how) {
  uint32_t rank = 0;
  const ts_node *g = &t->nodes[h->ids[k]];
  for (uint32_t j = 0; j < k; j++) {
    const ts_node *o = &t->nodes[h->ids[j]];
    if (o->kind != TS_NODE_GPU) continue;
    rank += how == 0 ? h->parent[j] == h->parent[k]
            : how == 1 ? o->numa == g->numa : 1;
  }
  return rank;
}

/* The NICs on plane p matching GPU k by `how` (0 parent, 1 NUMA, 2 host),
 * picked at the GPU's rank; ROUTE_NONE when none match. */
static uint32_t match_nic(const ts_topo *t, const host_scan *h, uint32_t k,
                          uint16_t p, int how) {
  const ts_node *g = &t->nodes[h->ids[k]];
  uint32_t count = 0, seen = 0, rank = gpu_rank(t, h, k, how);
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t j = 0; j < h->n; j++) {
      const ts_node *o = &t->nodes[h->ids[j]];
      if (o->kind != TS_NODE_NIC || o->plane != p) continue;
      bool ok = how == 0   ? h->parent[j] == h->parent[k] &&
                               h->parent[k] != ROUTE_NONE
                : how == 1 ? g->numa >= 0 && o->numa == g->numa
                           : true;
      if (!ok) continue;
      if (pass == 0) count++;
      else if (seen++ == rank % count) return h->ids[j];
    }
  return ROUTE_NONE;
}

static void build_host(ts_route *r, uint32_t host) {
  const ts_topo *t = r->t;
  host_scan h;
  h.ids = r->host_nodes + r->host_off[host];
  h.n = r->host_off[host + 1] - r->host_off[host];
  if (h.n > ROUTE_HOST_MAX) h.n = ROUTE_HOST_MAX; /* rest get no NIC */
  for (uint32_t k = 0; k < h.n; k++) h.parent[k] = pcie_parent(t, h.ids[k]);
  for (uint32_t k = 0; k < h.n; k++) {
    uint32_t g = h.ids[k];
    if (t->nodes[g].kind != TS_NODE_GPU) continue;
    for (uint16_t p = 0; p < r->planes; p++) {
      uint32_t nic = ROUTE_NONE;
      for (int how = 0; how < 3 && nic == ROUTE_NONE; how++)
        nic = match_nic(t, &h, k, p, how);
      r->gpu_nic[(size_t)r->aux[g] * r->planes + p] = nic;
      if (nic != ROUTE_NONE && r->aux[nic] == ROUTE_NONE) r->aux[nic] = g;
    }
  }
}

int route_tables_build(ts_route *r) {
  const ts_topo *t = r->t;
  r->aux = malloc(((size_t)t->node_count + 1) * sizeof *r->aux);
  r->stamp = calloc((size_t)t->node_count + 1, sizeof *r->stamp);
  r->gpu_nic = malloc(((size_t)t->gpu_count * r->planes + 1) *
                      sizeof *r->gpu_nic);
  if (!r->aux || !r->stamp || !r->gpu_nic || build_hosts(r)) return TS_ENOMEM;
  r->max_deg = 1;
  r->bfs_cap = 1;
  for (uint32_t i = 0; i < t->node_count; i++) {
    uint32_t deg = t->adj_off[i + 1] - t->adj_off[i];
    if (deg > r->max_deg) r->max_deg = deg;
    r->bfs_cap += t->nodes[i].kind == TS_NODE_SWITCH;
    r->aux[i] = ROUTE_NONE;
  }
  r->cand = malloc((size_t)r->max_deg * 4 * sizeof *r->cand);
  r->bfs_node = malloc((size_t)r->bfs_cap * sizeof *r->bfs_node);
  r->bfs_from = malloc((size_t)r->bfs_cap * sizeof *r->bfs_from);
  r->adj_head = malloc(((size_t)t->link_count * 2 + 1) * sizeof *r->adj_head);
  r->nclass = malloc(((size_t)t->node_count + 1) * sizeof *r->nclass);
  r->down_dir = malloc(((size_t)t->node_count + 1) * sizeof *r->down_dir);
  if (!r->cand || !r->bfs_node || !r->bfs_from || !r->adj_head ||
      !r->nclass || !r->down_dir)
    return TS_ENOMEM;
  for (uint32_t i = 0; i < t->adj_off[t->node_count]; i++)
    r->adj_head[i] = topo_dir_head(t, t->adj[i]);
  for (uint32_t i = 0; i < t->node_count; i++)
    r->nclass[i] = route_class(t->nodes[i].kind, t->nodes[i].tier,
                               t->nodes[i].plane);
  for (uint32_t g = 0; g < t->gpu_count; g++) r->aux[t->gpus[g]] = g;
  for (size_t i = 0; i < (size_t)t->gpu_count * r->planes; i++)
    r->gpu_nic[i] = ROUTE_NONE;
  for (uint32_t h = 0; h < r->hosts; h++) build_host(r, h);
  return route_dmodk_build(r);
}

void route_tables_free(ts_route *r) {
  free(r->aux);
  free(r->stamp);
  free(r->gpu_nic);
  free(r->host_off);
  free(r->host_nodes);
  free(r->cand);
  free(r->bfs_node);
  free(r->bfs_from);
  free(r->adj_head);
  free(r->nclass);
  free(r->down_dir);
  free(r->npos);
}

uint32_t route_host_nic(const ts_route *r, int32_t host, uint16_t plane,
                        int16_t rail, int16_t local) {
  if (host < 0 || (uint32_t)host >= r->hosts) return ROUTE_NONE;
  for (uint32_t i = r->host_off[host]; i < r->host_off[host + 1]; i++) {
    const ts_node *n = &r->t->nodes[r->host_nodes[i]];
    if (n->kind == TS_NODE_NIC && n->plane == plane &&
        (rail >= 0 ? n->rail == rail : n->local == local))
      return r->host_nodes[i];
  }
  return ROUTE_NONE;
}

/* ---- NIC failover ---- */

/* A NIC can carry traffic: a live link into a switch of its plane, and a
 * live PCIe/C2C link to its host when it has any. O(NIC degree). */
bool route_nic_usable(const ts_route *r, uint32_t nic) {
  const ts_topo *t = r->t;
  bool fabric = false, host = false, has_host = false;
  uint32_t want = route_class(TS_NODE_SWITCH, 0, t->nodes[nic].plane);
  for (uint32_t i = t->adj_off[nic]; i < t->adj_off[nic + 1]; i++) {
    uint32_t link = t->adj[i] >> 1;
    bool live = route_live(r, link);
    if ((r->nclass[r->adj_head[i]] & ROUTE_CLASS_PLANE_KIND) == want)
      fabric |= live;
    else if (pcie_kind(t->links[link].kind)) {
      has_host = true;
      host |= live;
    }
  }
  return fabric && (host || !has_host);
}

/* Index of a NIC for rail distances: its rail when labelled, else local. */
static int32_t nic_index(const ts_node *n) {
  return n->rail >= 0 ? n->rail : n->local;
}

/* Cyclic distance between indices a and b among `count` NICs. */
static uint32_t ring_dist(int32_t a, int32_t b, uint32_t count) {
  uint32_t d = (uint32_t)(a > b ? a - b : b - a);
  return count && d > count - d ? count - d : d;
}

/* Usable NIC of host h on plane p nearest to `home` (see the file header),
 * or ROUTE_NONE. */
static uint32_t nearest_nic(const ts_route *r, uint32_t gpu, uint32_t home) {
  const ts_topo *t = r->t;
  const ts_node *g = &t->nodes[gpu], *hn = &t->nodes[home];
  uint32_t lo = r->host_off[g->host], hi = r->host_off[g->host + 1];
  uint32_t count = 0, best = ROUTE_NONE;
  uint64_t best_key = UINT64_MAX;
  for (uint32_t i = lo; i < hi; i++) {
    const ts_node *n = &t->nodes[r->host_nodes[i]];
    count += n->kind == TS_NODE_NIC && n->plane == hn->plane;
  }
  for (uint32_t i = lo; i < hi; i++) {
    uint32_t id = r->host_nodes[i];
    const ts_node *n = &t->nodes[id];
    if (n->kind != TS_NODE_NIC || n->plane != hn->plane ||
        !route_nic_usable(r, id))
      continue;
    uint64_t key = (uint64_t)(g->numa < 0 || n->numa != g->numa) << 40 |
                   (uint64_t)ring_dist(nic_index(n), nic_index(hn), count)
                       << 20 |
                   (uint64_t)(uint32_t)nic_index(n);
    if (key < best_key) {
      best_key = key;
      best = id;
    }
  }
  return best;
}

uint32_t route_live_nic(const ts_route *r, uint32_t gpu, uint16_t plane) {
  uint32_t home = r->gpu_nic[(size_t)r->aux[gpu] * r->planes + plane];
  if (home == ROUTE_NONE || !r->state || route_nic_usable(r, home))
    return home;
  return nearest_nic(r, gpu, home);
}

/* ---- NVLink ---- */

/* Live NVLink directions a -> b into buf; returns the count. */
static uint32_t nvl_dirs(const ts_route *r, uint32_t a, uint32_t b,
                         uint32_t *buf) {
  const ts_topo *t = r->t;
  uint32_t n = 0;
  for (uint32_t i = t->adj_off[a]; i < t->adj_off[a + 1]; i++) {
    uint32_t dir = t->adj[i];
    if (r->adj_head[i] == b && t->links[dir >> 1].kind == TS_LINK_NVLINK &&
        route_live(r, dir >> 1))
      buf[n++] = dir;
  }
  return n;
}

/* Stamps b's live NVSwitch neighbours, then lists a's live directions into
 * a stamped switch (a GPU reaches an NVSwitch only over NVLink). Returns
 * the count. Reads the compact arrays only. */
static uint32_t nvl_switch_dirs(ts_route *r, uint32_t a, uint32_t b,
                                uint32_t *buf) {
  const ts_topo *t = r->t;
  uint32_t gen = route_new_gen(r), n = 0;
  for (uint32_t i = t->adj_off[b]; i < t->adj_off[b + 1]; i++) {
    uint32_t h = r->adj_head[i];
    if ((r->nclass[h] & 0xFu) == TS_NODE_NVSWITCH &&
        route_live(r, t->adj[i] >> 1))
      r->stamp[h] = gen;
  }
  for (uint32_t i = t->adj_off[a]; i < t->adj_off[a + 1]; i++)
    if (r->stamp[r->adj_head[i]] == gen && route_live(r, t->adj[i] >> 1))
      buf[n++] = t->adj[i];
  return n;
}

int route_nvlink(route_walk *w, uint32_t a, uint32_t b) {
  ts_route *r = w->r;
  uint32_t *buf = r->cand, n = nvl_dirs(r, a, b, buf);
  if (n) return route_append(w, buf[route_choose(&w->pick, n)]) ? -1 : 1;
  n = nvl_switch_dirs(r, a, b, buf);
  if (!n) return 0;
  uint32_t up = buf[route_choose(&w->pick, n)];
  uint32_t sw = topo_dir_head(w->t, up);
  n = nvl_dirs(r, sw, b, buf);   /* nonempty: sw was stamped from b */
  if (!n) return 0;
  uint32_t down = buf[route_choose(&w->pick, n)];
  if (route_append(w, up) || route_append(w, down)) return TS_EINVALID;
  return 1;
}

/* ---- PCIe ---- */

/* A PCIe switch or CPU (by class), which traffic may pass through. */
static bool host_transit(uint32_t c) {
  return (c & 0xFu) == TS_NODE_PCIE_SW || (c & 0xFu) == TS_NODE_CPU;
}

static bool host_link(uint8_t k) {
  return k == TS_LINK_PCIE || k == TS_LINK_C2C || k == TS_LINK_CPU;
}

/* The live direction from CPU u to its root-complex P2P node
 * (TS_NODE_F_ROOT_COMPLEX), or UINT32_MAX. O(degree of u). */
static uint32_t root_complex_dir(const route_walk *w, uint32_t u) {
  const ts_topo *t = w->t;
  if (t->nodes[u].kind != TS_NODE_CPU) return UINT32_MAX;
  for (uint32_t i = t->adj_off[u]; i < t->adj_off[u + 1]; i++)
    if ((t->nodes[w->r->adj_head[i]].flags & TS_NODE_F_ROOT_COMPLEX) &&
        route_live(w->r, t->adj[i] >> 1))
      return t->adj[i];
  return UINT32_MAX;
}

/* Appends queue entry q's path (from the BFS tree) in source order. A path
 * that passes through a CPU with a root-complex P2P node goes out to it and
 * back there, so every such flow crosses that one shared link. */
static int host_emit(route_walk *w, const uint32_t *qdir, const uint32_t *qfrom,
                     uint32_t q) {
  uint32_t rev[TS_ROUTE_MAX_HOPS], n = 0;
  for (; q != 0; q = qfrom[q]) {
    if (n == TS_ROUTE_MAX_HOPS)
      return route_fail(w, "in-host path is over %d hops", TS_ROUTE_MAX_HOPS);
    rev[n++] = qdir[q];
  }
  while (n) {
    uint32_t d = rev[--n];
    if (route_append(w, d)) return TS_EINVALID;
    uint32_t rc = n ? root_complex_dir(w, ts_topo_dir_head(w->t, d)) : UINT32_MAX;
    if (rc != UINT32_MAX && (route_append(w, rc) || route_append(w, rc ^ 1u)))
      return TS_EINVALID;
  }
  return 0;
}

int route_host_path(route_walk *w, uint32_t a, uint32_t b) {
  ts_route *r = w->r;
  const ts_topo *t = w->t;
  uint32_t node[ROUTE_HOST_MAX], qdir[ROUTE_HOST_MAX], qfrom[ROUTE_HOST_MAX];
  uint32_t gen = route_new_gen(r), n = 1;
  node[0] = a;
  r->stamp[a] = gen;
  for (uint32_t q = 0; q < n; q++) {
    uint32_t u = node[q];
    if (q > 0 && !host_transit(r->nclass[u])) continue;
    for (uint32_t i = t->adj_off[u]; i < t->adj_off[u + 1]; i++) {
      uint32_t dir = t->adj[i], h = r->adj_head[i];
      if (r->stamp[h] == gen || (h != b && !host_transit(r->nclass[h])) ||
          !host_link(t->links[dir >> 1].kind) || !route_live(r, dir >> 1))
        continue;
      if (n == ROUTE_HOST_MAX)
        return route_fail(w, "host of '%s' has over %d PCIe devices",
                          t->names + t->nodes[a].name, ROUTE_HOST_MAX);
      r->stamp[h] = gen;
      node[n] = h;
      qdir[n] = dir;
      qfrom[n] = q;
      if (h == b) return host_emit(w, qdir, qfrom, n);
      n++;
    }
  }
  return route_fail(w, "no live PCIe path from '%s' to '%s'",
                    t->names + t->nodes[a].name, t->names + t->nodes[b].name);
}
