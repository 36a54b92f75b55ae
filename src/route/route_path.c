/* route_path.c - the public router: endpoints, planes, rail policy, ECMP
 * and spray (ts_route_path, ts_route_paths).
 *
 * A GPU-to-GPU route tries, in order: NVLink (direct or one NVSwitch, any
 * host), PCIe inside one host, then a backend plane on which both GPUs have
 * a NIC (a decision point when there are several: multi-plane backends).
 * With PXN the source leaves from its host's NIC on the destination NIC's
 * rail (rails unlabelled: the same local NIC index), first hopping over
 * NVLink to that NIC's own GPU when it is not the source; if the two GPUs
 * share no NVLink the source reaches that NIC over PCIe instead. A GPU
 * whose own NIC is unusable (its cable, leaf or the NIC itself down) sends
 * and receives through the host's nearest usable NIC (route_host.c); rails
 * of everyone else are unchanged. A route
 * with a NIC endpoint uses that NIC's plane; a GPU endpoint joins it
 * through its NIC on that plane (over PCIe), or directly over PCIe when the
 * NIC is in its own host.
 *
 * Decision points: ECMP takes hash(src, dst, flow, decision number) mod n,
 * a splitmix64 mix, so each decision is independent and uniform. On a
 * plane routed D-mod-k (route_dmodk.c) the offset is instead the next
 * mixed-radix digit of the destination NIC's position (the plane choice:
 * of the destination host index), whatever the source and flow. Spray path
 * i takes digit i of a mixed-radix count (first decision fastest), offset
 * per decision by the same hash: the first min(cap, product of radices)
 * numbers give distinct combinations on a symmetric fabric; duplicates
 * (possible once failures make branches uneven) are dropped.
 * Cost per route: the walks' (route_host.c, route_fabric.c); spray k paths
 * costs k routes plus O(k^2 x hops) to drop duplicates. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route/route.h"

static uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint32_t route_choose(route_pick *k, uint32_t n) {
  uint64_t h = mix64(k->hash + ++k->level * 0xD6E8FEB86659FD93ull);
  if (n <= 1) return 0;
  uint64_t off = h % n;
  if (k->dmodk) {   /* next mixed-radix digit of the destination position */
    off = (k->dpos / k->dprod) % n;
    k->dprod = k->dprod > UINT64_MAX / n ? UINT64_MAX : k->dprod * n;
  }
  if (!k->spray) return (uint32_t)off;
  uint64_t digit = (k->index / k->prod) % n;
  k->prod = k->prod > UINT64_MAX / n ? UINT64_MAX : k->prod * n;
  return (uint32_t)((digit + off) % n);
}

int route_append(route_walk *w, uint32_t dir) {
  if (w->p->len == TS_ROUTE_MAX_HOPS)
    return route_fail(w, "path is over %d hops", TS_ROUTE_MAX_HOPS);
  w->p->dir[w->p->len++] = dir;
  return 0;
}

int route_fail(route_walk *w, const char *fmt, ...) {
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  const ts_topo *t = w->t;
  return ts_diag_set(w->d, TS_EINVALID, NULL, 0, 0,
                     "no route from '%s' to '%s': %s",
                     t->names + t->nodes[w->src].name,
                     t->names + t->nodes[w->dst].name, why);
}

uint32_t route_new_gen(ts_route *r) {
  if (++r->gen == 0) {
    memset(r->stamp, 0, (size_t)r->t->node_count * sizeof *r->stamp);
    r->gen = 1;
  }
  return r->gen;
}

uint32_t ts_route_dir_tail(const ts_topo *t, uint32_t dir) {
  return route_tail(t, dir);
}

/* ---- router lifetime ---- */

int ts_route_new(const ts_topo *t, const ts_route_opts *opts,
                 const ts_route_state *state, ts_route **out, ts_diag *d) {
  *out = NULL;
  ts_route *r = calloc(1, sizeof *r);
  if (!r) return TS_ENOMEM;
  r->t = t;
  r->planes = t->plane_count;
  if (opts) r->opts = *opts;
  int rc = ts_route_set_state(r, state, d);
  if (!rc && route_tables_build(r))
    rc = ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory building the "
                     "router");
  if (rc) {
    ts_route_free(r);
    return rc;
  }
  *out = r;
  return 0;
}

void ts_route_free(ts_route *r) {
  if (!r) return;
  route_tables_free(r);
  free(r);
}

int ts_route_set_state(ts_route *r, const ts_route_state *state, ts_diag *d) {
  if (state && state->link_count != r->t->link_count)
    return ts_diag_set(d, TS_EINVALID, NULL, 0, 0, "link state has %u links "
                       "but the topology %u", state->link_count,
                       r->t->link_count);
  r->state = state;
  return 0;
}

/* ---- routes ---- */

static const char *nm(const ts_topo *t, uint32_t id) {
  return t->names + t->nodes[id].name;
}

static uint32_t gpu_nic(const ts_route *r, uint32_t gpu, uint16_t plane) {
  return r->gpu_nic[(size_t)r->aux[gpu] * r->planes + plane];
}

/* GPU -> its sending NIC: PXN hop over NVLink to the NIC's GPU when the NIC
 * is not the GPU's own, then PCIe (without PXN: PCIe only, as GPUDirect
 * RDMA to a non-local NIC goes). */
static int route_leave(route_walk *w, uint32_t gpu, uint32_t nic) {
  uint32_t proxy = w->r->aux[nic];
  uint16_t plane = w->t->nodes[nic].plane;
  if (!w->r->opts.no_pxn && proxy != ROUTE_NONE && proxy != gpu &&
      gpu_nic(w->r, gpu, plane) != nic) {
    int rc = route_nvlink(w, gpu, proxy);
    if (rc < 0) return rc;
    if (rc) return route_host_path(w, proxy, nic);
  }
  return route_host_path(w, gpu, nic);
}

/* Backend plane for two GPUs on different hosts (a decision point): both
 * hosts have a NIC there (`live`: a usable one, after failover). */
static bool backend_ok(const route_walk *w, uint16_t p, bool live) {
  if (w->t->planes[p].kind != TS_PLANE_BACKEND) return false;
  if (!live)
    return gpu_nic(w->r, w->src, p) != ROUTE_NONE &&
           gpu_nic(w->r, w->dst, p) != ROUTE_NONE;
  return route_live_nic(w->r, w->src, p) != ROUTE_NONE &&
         route_live_nic(w->r, w->dst, p) != ROUTE_NONE;
}

/* Names the GPU whose host has NICs on the backend but none usable. */
static int route_cut_off(route_walk *w) {
  uint32_t g = w->src;
  for (uint16_t p = 0; p < w->r->planes; p++)
    if (backend_ok(w, p, false) && route_live_nic(w->r, w->src, p) != ROUTE_NONE)
      g = w->dst;
  return route_fail(w, "'%s' is cut off from the fabric: every NIC of its "
                    "host on the backend is down", nm(w->t, g));
}

static int route_backend(route_walk *w, uint16_t *plane) {
  uint32_t n = 0, any = 0;
  for (uint16_t p = 0; p < w->r->planes; p++) {
    n += backend_ok(w, p, true);
    any += backend_ok(w, p, false);
  }
  if (!n && any) return route_cut_off(w);
  if (!n) return route_fail(w, "no NVLink and no backend plane joins them");
  /* D-mod-k everywhere: the plane is a digit of the destination host. */
  w->pick.dmodk = w->r->dmodk_backend;
  w->pick.dpos = (uint64_t)w->t->nodes[w->dst].host;
  w->pick.dprod = 1;
  uint32_t k = route_choose(&w->pick, n);
  for (uint16_t p = 0; p < w->r->planes; p++)
    if (backend_ok(w, p, true) && k-- == 0) *plane = p;
  return 0;
}

static int route_gpus(route_walk *w) {
  const ts_topo *t = w->t;
  int32_t hs = t->nodes[w->src].host, hd = t->nodes[w->dst].host;
  int rc = route_nvlink(w, w->src, w->dst);
  if (rc) return rc < 0 ? rc : 0;
  if (hs >= 0 && hs == hd) return route_host_path(w, w->src, w->dst);
  uint16_t p = 0;
  if ((rc = route_backend(w, &p))) return rc;
  uint32_t nic_t = route_live_nic(w->r, w->dst, p);
  uint32_t nic_s = route_live_nic(w->r, w->src, p);
  if (!w->r->opts.no_pxn) {
    const ts_node *n = &t->nodes[nic_t];
    uint32_t x = route_host_nic(w->r, hs, p, n->rail, n->local);
    if (x != ROUTE_NONE && (!w->r->state || route_nic_usable(w->r, x)))
      nic_s = x;
  }
  if ((rc = route_leave(w, w->src, nic_s))) return rc;
  if ((rc = route_fabric(w, nic_s, nic_t))) return rc;
  return route_host_path(w, nic_t, w->dst);
}

/* The NIC standing for endpoint e on plane p, or ROUTE_NONE. */
static uint32_t route_nic_of(const ts_route *r, uint32_t e, uint16_t p) {
  if (r->t->nodes[e].kind == TS_NODE_NIC)
    return r->t->nodes[e].plane == p ? e : ROUTE_NONE;
  return route_live_nic(r, e, p);
}

/* At least one endpoint is a NIC: use its plane. */
static int route_via_nic(route_walk *w) {
  const ts_topo *t = w->t;
  const ts_node *s = &t->nodes[w->src], *d = &t->nodes[w->dst];
  uint16_t p = d->kind == TS_NODE_NIC ? d->plane : s->plane;
  uint32_t nic_s = route_nic_of(w->r, w->src, p);
  uint32_t nic_t = route_nic_of(w->r, w->dst, p);
  if (nic_s == ROUTE_NONE || nic_t == ROUTE_NONE || p >= t->plane_count)
    return route_fail(w, "'%s' has no NIC on plane '%s'",
                      nm(t, nic_s == ROUTE_NONE ? w->src : w->dst),
                      p < t->plane_count ? t->planes[p].name : "(none)");
  if (s->host >= 0 && s->host == d->host && s->kind != d->kind)
    return route_host_path(w, w->src, w->dst);
  int rc = 0;
  if (nic_s != w->src) rc = route_host_path(w, w->src, nic_s);
  if (!rc) rc = route_fabric(w, nic_s, nic_t);
  if (!rc && nic_t != w->dst) rc = route_host_path(w, nic_t, w->dst);
  return rc;
}

static int route_one(route_walk *w) {
  const ts_topo *t = w->t;
  w->p->len = 0;
  if (w->src >= t->node_count || w->dst >= t->node_count)
    return ts_diag_set(w->d, TS_EINVALID, NULL, 0, 0, "node id %u is past "
                       "the %u nodes", w->src >= t->node_count ? w->src : w->dst,
                       t->node_count);
  uint8_t ks = t->nodes[w->src].kind, kd = t->nodes[w->dst].kind;
  if ((ks != TS_NODE_GPU && ks != TS_NODE_NIC) ||
      (kd != TS_NODE_GPU && kd != TS_NODE_NIC))
    return route_fail(w, "endpoints must be GPUs or NICs, not %s and %s",
                      ts_node_kind_name(ks), ts_node_kind_name(kd));
  if (w->src == w->dst) return 0;
  return ks == TS_NODE_GPU && kd == TS_NODE_GPU ? route_gpus(w)
                                                 : route_via_nic(w);
}

static void walk_init(route_walk *w, ts_route *r, uint32_t src, uint32_t dst,
                      uint64_t flow, ts_path *out, ts_diag *d) {
  memset(w, 0, sizeof *w);
  w->r = r;
  w->t = r->t;
  w->src = src;
  w->dst = dst;
  w->d = d;
  w->p = out;
  w->pick.hash = mix64(mix64(mix64(src) ^ dst) ^ flow);
  w->pick.prod = 1;
}

int ts_route_path(ts_route *r, uint32_t src, uint32_t dst, uint64_t flow,
                  ts_path *out, ts_diag *d) {
  route_walk w;
  walk_init(&w, r, src, dst, flow, out, d);
  int rc = route_one(&w);
  if (rc) out->len = 0;
  return rc;
}

static bool same_path(const ts_path *a, const ts_path *b) {
  return a->len == b->len && !memcmp(a->dir, b->dir, a->len * sizeof *a->dir);
}

int ts_route_paths(ts_route *r, uint32_t src, uint32_t dst, uint64_t flow,
                   uint32_t max_paths, ts_path *out, uint32_t *count,
                   ts_diag *d) {
  *count = 0;
  uint32_t cap = max_paths < TS_ROUTE_MAX_PATHS ? max_paths : TS_ROUTE_MAX_PATHS;
  if (!cap)
    return ts_diag_set(d, TS_EINVALID, NULL, 0, 0, "max_paths is 0");
  route_walk w;
  uint64_t total = 1;
  uint32_t n = 0;
  for (uint64_t i = 0; i < total && i < cap; i++) {
    walk_init(&w, r, src, dst, flow, &out[n], d);
    w.pick.spray = true;
    w.pick.index = i;
    int rc = route_one(&w);
    if (rc) return rc;
    if (i == 0) total = w.pick.prod;
    bool dup = false;
    for (uint32_t j = 0; j < n && !dup; j++) dup = same_path(&out[j], &out[n]);
    n += !dup;
  }
  *count = n;
  return 0;
}
