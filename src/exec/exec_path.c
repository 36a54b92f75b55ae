/* exec_path.c - path sets for point-to-point and collective transfers
 * (see exec_path.h). */
#include <stdbool.h>
#include <string.h>

#include "exec/exec_path.h"

static bool crosses_nvswitch(const ts_topo *t, const ts_path *p) {
  for (uint32_t i = 0; i < p->len; i++)
    if (ts_topo_node(t, ts_topo_dir_head(t, p->dir[i]))->kind == TS_NODE_NVSWITCH)
      return true;
  return false;
}

/* True when a and b take the same non-NVLink directions in the same order. */
static bool same_outside_nvlink(const ts_topo *t, const ts_path *a,
                                const ts_path *b) {
  uint32_t i = 0, j = 0;
  for (;;) {
    while (i < a->len && ts_topo_link(t, a->dir[i] >> 1)->kind == TS_LINK_NVLINK) i++;
    while (j < b->len && ts_topo_link(t, b->dir[j] >> 1)->kind == TS_LINK_NVLINK) j++;
    if (i == a->len || j == b->len) return i == a->len && j == b->len;
    if (a->dir[i++] != b->dir[j++]) return false;
  }
}

/* Replaces the ECMP path in paths[0] by its NVSwitch stripes. */
static int stripe(const ts_topo *t, ts_route *rt, uint32_t src, uint32_t dst,
                  uint64_t flow, ts_path *paths, uint32_t cap, uint32_t *k,
                  ts_diag *d) {
  *k = 1;
  if (cap < 2 || !crosses_nvswitch(t, &paths[0])) return 0;
  ts_path ecmp = paths[0];
  uint32_t n = 0;
  int rc = ts_route_paths(rt, src, dst, flow, cap, paths, &n, d);
  if (rc) return rc;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n; i++)
    if (same_outside_nvlink(t, &ecmp, &paths[i])) paths[kept++] = paths[i];
  if (kept == 0) paths[kept++] = ecmp; /* defensive: the set holds ecmp */
  *k = kept;
  return 0;
}

/* Direction from node a to node b over an NVLink, or UINT32_MAX. */
static uint32_t nvlink_dir(const ts_topo *t, uint32_t a, uint32_t b) {
  const uint32_t *adj = ts_topo_adj(t, a);
  for (uint32_t i = 0; i < ts_topo_degree(t, a); i++)
    if (ts_topo_dir_head(t, adj[i]) == b &&
        ts_topo_link(t, adj[i] >> 1)->kind == TS_LINK_NVLINK)
      return adj[i];
  return UINT32_MAX;
}

/* Moves every GPU -> NVSwitch -> GPU hop pair onto the sender's bundle
 * chip; returns 0 if the path crossed an NVSwitch it could not move. */
static int onto_bundle(const ts_topo *t, const ts_net *net, ts_path *p) {
  for (uint32_t i = 0; i + 1 < p->len; i++) {
    uint32_t sw = ts_topo_dir_head(t, p->dir[i]);
    if (ts_topo_node(t, sw)->kind != TS_NODE_NVSWITCH) continue;
    uint32_t a = ts_route_dir_tail(t, p->dir[i]);
    uint32_t b = ts_topo_dir_head(t, p->dir[i + 1]);
    uint32_t rep = ts_net_nvswitch_bundle(net, a);
    if (rep == UINT32_MAX) return 0;
    uint32_t up = nvlink_dir(t, a, rep), down = nvlink_dir(t, rep, b);
    if (up == UINT32_MAX || down == UINT32_MAX) return 0;
    p->dir[i] = up;
    p->dir[++i] = down;
  }
  return 1;
}

int exec_path_bundle_ok(const ts_topo *t, const ts_route_state *state) {
  for (uint32_t l = 0; state && l < ts_topo_link_count(t); l++)
    if (ts_topo_link(t, l)->kind == TS_LINK_NVLINK &&
        (!ts_route_link_up(state, l) || ts_route_link_factor(state, l) != 1.0))
      return 0;
  return 1;
}

int exec_path_route(const ts_topo *t, const ts_net *net, ts_route *rt,
                    uint32_t src, uint32_t dst, uint64_t flow, uint32_t spray,
                    ts_path *paths, uint32_t cap, uint32_t *k, ts_diag *d) {
  if (spray) return ts_route_paths(rt, src, dst, flow, spray < cap ? spray : cap,
                                   paths, k, d);
  int rc = ts_route_path(rt, src, dst, flow, paths, d);
  *k = 1;
  if (!rc && crosses_nvswitch(t, &paths[0]) && onto_bundle(t, net, &paths[0]))
    return 0;
  /* The router enumerates its first choice fastest, and the NVSwitch hop
   * comes first on the path, so a small cap covers every chip. */
  uint32_t stripes = cap < EXEC_NVSWITCH_STRIPES ? cap : EXEC_NVSWITCH_STRIPES;
  return rc ? rc : stripe(t, rt, src, dst, flow, paths, stripes, k, d);
}

uint32_t exec_path_nvswitch(const ts_topo *t, const ts_net *net, uint32_t gpu,
                            uint32_t switch_node, int to_gpu, ts_path *paths,
                            uint32_t cap) {
  uint32_t rep = ts_net_nvswitch_bundle(net, gpu);
  uint32_t dir = rep == UINT32_MAX ? UINT32_MAX : nvlink_dir(t, gpu, rep);
  if (dir != UINT32_MAX && cap) { /* the bundle stands for every chip */
    paths[0].len = 1;
    paths[0].dir[0] = to_gpu ? dir ^ 1u : dir;
    return 1;
  }
  int32_t host = ts_topo_node(t, switch_node)->host;
  const uint32_t *adj = ts_topo_adj(t, gpu);
  uint32_t n = 0;
  for (uint32_t i = 0; i < ts_topo_degree(t, gpu) && n < cap; i++) {
    const ts_node *sw = ts_topo_node(t, ts_topo_dir_head(t, adj[i]));
    if (sw->kind != TS_NODE_NVSWITCH || sw->host != host) continue;
    paths[n].len = 1;
    paths[n++].dir[0] = to_gpu ? adj[i] ^ 1u : adj[i];
  }
  return n;
}

static double path_bottleneck(const ts_net *net, const ts_path *p) {
  double b = 0;
  for (uint32_t i = 0; i < p->len; i++) {
    double c = ts_net_dir_bandwidth(net, p->dir[i]);
    if (i == 0 || c < b) b = c;
  }
  return b > 0 ? b : 1.0; /* a down link: any weight, the send will fail */
}

int exec_path_send(ts_net *net, const ts_path *paths, uint32_t k,
                   uint64_t bytes, ts_time_ps alpha, ts_net_done_fn fn,
                   void *ctx, uint64_t tag) {
  if (k == 1) {
    const uint32_t *dir = paths[0].dir;
    return ts_net_send_routed(net, &dir, &paths[0].len, NULL, 1, bytes, alpha,
                              fn, ctx, tag);
  }
  const uint32_t *dirs[EXEC_PATH_STRIPES];
  uint32_t hops[EXEC_PATH_STRIPES];
  double w[EXEC_PATH_STRIPES];
  if (k > EXEC_PATH_STRIPES) k = EXEC_PATH_STRIPES;
  int uneven = 0;
  for (uint32_t i = 0; i < k; i++) {
    dirs[i] = paths[i].dir;
    hops[i] = paths[i].len;
    w[i] = path_bottleneck(net, &paths[i]);
    uneven |= w[i] != w[0];
  }
  /* Stripes share bytes by their bottleneck (DGX H100 runs 5, 4, 4 and 5
   * NVLinks to its four chips), so alone they all finish together. */
  return ts_net_send_routed(net, dirs, hops, uneven ? w : NULL, k, bytes,
                            alpha, fn, ctx, tag);
}

double exec_path_rate(const ts_net *net, const ts_path *paths, uint32_t k) {
  double r = 0;
  for (uint32_t i = 0; i < k; i++) r += path_bottleneck(net, &paths[i]);
  return r;
}

ts_time_ps exec_path_alpha(const ts_topo *t, const ts_path *p) {
  ts_time_ps a = 0;
  for (uint32_t i = 0; i < p->len; i++) {
    const ts_link *l = ts_topo_link(t, p->dir[i] >> 1);
    if (l->plane == TS_NO_PLANE) continue;
    const ts_plane *pl = ts_topo_plane(t, l->plane);
    if (pl->sw_overhead > a) a = pl->sw_overhead;
  }
  return a;
}
