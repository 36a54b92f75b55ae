/* net.c - the link model's common layer: configuration, path checks,
 * per-direction counters, requests, dispatch to the chosen backend.
 *
 * Invariants:
 *   - dirs[d].cap == link bandwidth x factor[link] at all times;
 *   - a request's `pending` counts its flows not yet delivered; the user
 *     callback fires exactly once, when it reaches 0, then the slot is
 *     recycled through the free list;
 *   - bytes_delivered never exceeds bytes_sent; they are equal once every
 *     transfer has completed.
 * Costs: send O(hops) plus the backend's start; set_link_factor O(1) plus
 * the backend's re-rate; stats O(1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_backend.h"

void ts_net_config_default(ts_net_config *c) {
  memset(c, 0, sizeof *c);
  c->fidelity = TS_NET_FLOW;
  c->chunk_bytes = 64u * 1024u;
  c->port_buffer_bytes = 0;
  c->full_solve = 0;
  c->bundle_nvswitch = 1;
}

int net_grow(void **arr, uint32_t *cap, uint32_t need, size_t sz) {
  if (need <= *cap) return 0;
  uint64_t ncap = *cap ? *cap : 64;
  while (ncap < need) ncap *= 2;
  if (ncap > UINT32_MAX - 1) return TS_ENOMEM;
  void *p = realloc(*arr, (size_t)ncap * sz);
  if (!p) return TS_ENOMEM;
  *arr = p;
  *cap = (uint32_t)ncap;
  return 0;
}

/* Saturates at NET_MAX_PS (2^62 ps, 53 days) instead of casting a double
 * past 2^64 (undefined): now + the result cannot wrap while now is within
 * the simulated-time budget, and the engine refuses the event as over it. */
ts_time_ps net_ps_for_bytes(double bytes, double rate) {
  if (bytes <= 0) return 0;
  double x = bytes * 1e12 / rate;
  if (!(x < (double)NET_MAX_PS)) return NET_MAX_PS; /* also NaN, rate 0 */
  double r = nearbyint(x);
  if (fabs(x - r) <= NET_EPS * x) return (ts_time_ps)r;
  return (ts_time_ps)ceil(x);
}

/* GPU g's NVLink to NVSwitch chips: the lowest-id chip's link (the bundle
 * representative, returned) and the number of such links in *n. */
static uint32_t bundle_rep(const ts_topo *t, uint32_t g, uint32_t *n,
                           double *sum) {
  uint32_t rep = UINT32_MAX, rep_sw = UINT32_MAX;
  *n = 0;
  *sum = 0;
  const uint32_t *adj = ts_topo_adj(t, g);
  for (uint32_t i = 0; i < ts_topo_degree(t, g); i++) {
    const ts_link *l = ts_topo_link(t, adj[i] >> 1);
    uint32_t sw = ts_topo_dir_head(t, adj[i]);
    if (l->kind != TS_LINK_NVLINK || ts_topo_node(t, sw)->kind != TS_NODE_NVSWITCH)
      continue;
    (*n)++;
    *sum += l->bandwidth;
    if (sw < rep_sw) rep_sw = sw, rep = adj[i] >> 1;
  }
  return rep;
}

/* Gives each GPU's representative NVSwitch link the sum of its bundle. */
static void net_bundle_nvswitch(ts_net *net) {
  const uint32_t *gpus;
  uint32_t ng = ts_topo_gpus(net->topo, &gpus), n;
  double sum;
  for (uint32_t i = 0; i < ng; i++) {
    uint32_t rep = bundle_rep(net->topo, gpus[i], &n, &sum);
    if (n >= 2) net->link_bw[rep] = sum;
  }
}

uint32_t ts_net_nvswitch_bundle(const ts_net *net, uint32_t gpu) {
  if (!net->cfg.bundle_nvswitch || gpu >= ts_topo_node_count(net->topo) ||
      ts_topo_node(net->topo, gpu)->kind != TS_NODE_GPU)
    return UINT32_MAX;
  uint32_t n;
  double sum;
  uint32_t rep = bundle_rep(net->topo, gpu, &n, &sum);
  if (n < 2) return UINT32_MAX;
  const ts_link *l = ts_topo_link(net->topo, rep);
  return l->a == gpu ? l->b : l->a;
}

static int net_init_dirs(ts_net *net) {
  uint32_t links = ts_topo_link_count(net->topo);
  net->ndirs = 2 * links;
  net->dirs = calloc(net->ndirs ? net->ndirs : 1, sizeof *net->dirs);
  net->factor = malloc((links ? links : 1) * sizeof *net->factor);
  net->link_bw = malloc((links ? links : 1) * sizeof *net->link_bw);
  if (!net->dirs || !net->factor || !net->link_bw) return TS_ENOMEM;
  for (uint32_t l = 0; l < links; l++) {
    const ts_link *lk = ts_topo_link(net->topo, l);
    net->factor[l] = 1.0;
    net->link_bw[l] = lk->bandwidth;
    for (int s = 0; s < 2; s++) net->dirs[2 * l + s].lat = lk->latency;
  }
  if (net->cfg.bundle_nvswitch) net_bundle_nvswitch(net);
  for (uint32_t l = 0; l < links; l++)
    net->dirs[2 * l].cap = net->dirs[2 * l + 1].cap = net->link_bw[l];
  return 0;
}

int ts_net_new(const ts_topo *t, ts_sim *sim, const ts_net_config *cfg,
               ts_net **out) {
  *out = NULL;
  ts_net_config c;
  if (cfg) c = *cfg;
  else ts_net_config_default(&c);
  if (!t || !sim) return TS_EUSAGE;
  if (c.fidelity != TS_NET_FLOW && c.fidelity != TS_NET_CHUNK)
    return TS_EUSAGE;
  if (c.fidelity == TS_NET_CHUNK && c.chunk_bytes == 0) return TS_EUSAGE;
  ts_net *net = calloc(1, sizeof *net);
  if (!net) return TS_ENOMEM;
  net->topo = t;
  net->sim = sim;
  net->cfg = c;
  net->req_free = NET_NONE;
  net->be = c.fidelity == TS_NET_FLOW ? &net_flow_backend : &net_chunk_backend;
  int rc = net_init_dirs(net);
  if (!rc) rc = net->be->init(net);
  if (rc) {
    ts_net_free(net);
    return rc;
  }
  *out = net;
  return 0;
}

void ts_net_free(ts_net *net) {
  if (!net) return;
  if (net->bstate) net->be->fini(net);
  free(net->dirs);
  free(net->factor);
  free(net->link_bw);
  free(net->reqs);
  free(net);
}

/* Tail (source node) of a direction. */
static uint32_t net_dir_tail(const ts_topo *t, uint32_t dir) {
  const ts_link *l = ts_topo_link(t, dir / 2);
  return (dir & 1) ? l->b : l->a;
}

int net_path_check(const ts_net *net, const uint32_t *path, uint32_t hops) {
  if (hops == 0 || !path) return TS_EUSAGE;
  if (hops > TS_NET_MAX_HOPS) return TS_ELIMIT;
  for (uint32_t i = 0; i < hops; i++) {
    if (path[i] >= net->ndirs) return TS_EINVALID;
    if (net->dirs[path[i]].cap <= 0) return TS_EINVALID; /* down */
    if (i > 0 && ts_topo_dir_head(net->topo, path[i - 1]) !=
                     net_dir_tail(net->topo, path[i]))
      return TS_EINVALID;
  }
  return 0;
}

static int net_req_new(ts_net *net, ts_net_done_fn fn, void *ctx,
                       uint64_t tag, uint32_t k, uint32_t *out) {
  uint32_t r = net->req_free;
  if (r == NET_NONE) {
    if (net_grow((void **)&net->reqs, &net->reqs_cap, net->nreqs + 1,
                 sizeof *net->reqs))
      return TS_ENOMEM;
    r = net->nreqs++;
  } else {
    net->req_free = net->reqs[r].pending;
  }
  net->reqs[r] = (net_req){fn, ctx, tag, k};
  *out = r;
  return 0;
}

static void net_req_release(ts_net *net, uint32_t r) {
  net->reqs[r].fn = NULL;
  net->reqs[r].pending = net->req_free;
  net->req_free = r;
}

void net_flow_delivered(ts_net *net, uint32_t req, uint64_t bytes) {
  NET_ASSERT(req < net->nreqs && net->reqs[req].fn, "delivery to a dead request");
  net_req *r = &net->reqs[req];
  net->st.flows_finished++;
  net->st.active_flows--;
  net->st.bytes_delivered += bytes;
  NET_ASSERT(net->st.bytes_delivered <= net->st.bytes_sent,
             "more bytes delivered than sent");
  if (--r->pending) return;
  ts_net_done_fn fn = r->fn;
  void *ctx = r->ctx;
  uint64_t tag = r->tag;
  net_req_release(net, req);
  net->st.transfers_finished++;
  fn(net, ctx, tag);
}

void net_dir_enter(ts_net *net, uint32_t dir) {
  net_dir *d = &net->dirs[dir];
  if (d->active++ == 0) d->busy_since = ts_sim_now(net->sim);
  if (d->active > d->peak_flows) d->peak_flows = d->active;
}

void net_dir_leave(ts_net *net, uint32_t dir) {
  net_dir *d = &net->dirs[dir];
  NET_ASSERT(d->active > 0, "direction left more often than entered");
  if (--d->active == 0) {
    d->idle_at = ts_sim_now(net->sim);
    d->busy_ps += d->idle_at - d->busy_since;
  }
}

/* Byte share of flow i of k: proportional to weights (NULL: even), the
 * rounding remainder going one byte each to the first flows. */
static uint64_t split_part(uint64_t bytes, const double *w, double wsum,
                           uint32_t k, uint32_t i, uint64_t rem) {
  uint64_t part = w ? (uint64_t)((double)bytes * (w[i] / wsum)) : bytes / k;
  return part + (i < rem ? 1 : 0);
}

static int split_weights(const double *w, uint32_t k, uint64_t bytes,
                         double *wsum, uint64_t *rem) {
  *wsum = 0;
  for (uint32_t i = 0; w && i < k; i++) {
    if (!(w[i] > 0)) return TS_EUSAGE;
    *wsum += w[i];
  }
  uint64_t given = 0;
  for (uint32_t i = 0; i < k; i++) given += split_part(bytes, w, *wsum, k, i, 0);
  if (given > bytes) given = bytes; /* float rounding never overshoots far */
  *rem = bytes - given;
  return *rem > k ? TS_EINTERNAL : 0;
}

int ts_net_send_split(ts_net *net, const uint32_t *const *paths,
                      const uint32_t *hops, uint32_t k, uint64_t bytes,
                      ts_time_ps alpha_sw, ts_net_done_fn fn, void *ctx,
                      uint64_t tag) {
  return ts_net_send_weighted(net, paths, hops, NULL, k, bytes, alpha_sw, fn,
                              ctx, tag);
}

/* net_path_check without the contiguity walk (two reads of the link
 * array per hop, a cache miss each on a large fabric): range, hop count
 * and down links only, for paths a router built on this topology. */
static int net_path_live(const ts_net *net, const uint32_t *path,
                         uint32_t hops) {
  if (hops == 0 || !path) return TS_EUSAGE;
  if (hops > TS_NET_MAX_HOPS) return TS_ELIMIT;
  for (uint32_t i = 0; i < hops; i++)
    if (path[i] >= net->ndirs || net->dirs[path[i]].cap <= 0)
      return TS_EINVALID;
  return 0;
}

static int send_paths(ts_net *net, const uint32_t *const *paths,
                      const uint32_t *hops, const double *weights, uint32_t k,
                      uint64_t bytes, ts_time_ps alpha_sw, ts_net_done_fn fn,
                      void *ctx, uint64_t tag, int routed) {
  if (!fn || k == 0 || !paths || !hops) return TS_EUSAGE;
  double wsum;
  uint64_t rem;
  if (split_weights(weights, k, bytes, &wsum, &rem)) return TS_EUSAGE;
  for (uint32_t i = 0; i < k; i++) {
    int rc = routed ? net_path_live(net, paths[i], hops[i])
                    : net_path_check(net, paths[i], hops[i]);
    if (rc) return rc;
  }
  uint64_t total_hops = 0;
  for (uint32_t i = 0; i < k; i++) total_hops += hops[i];
  if (total_hops > UINT32_MAX / 2) return TS_ELIMIT;
  /* Reserve first so that a split never starts half of its flows. */
  if (net->be->reserve(net, k, (uint32_t)total_hops, bytes))
    return TS_ENOMEM;
  uint32_t req;
  if (net_req_new(net, fn, ctx, tag, k, &req)) return TS_ENOMEM;
  for (uint32_t i = 0; i < k; i++) {
    uint64_t part = split_part(bytes, weights, wsum, k, i, rem);
    net->be->start(net, req, paths[i], hops[i], part, alpha_sw);
    net->st.flows_started++;
    net->st.active_flows++;
    net->st.bytes_sent += part;
  }
  net->st.transfers_started++;
  return 0;
}

int ts_net_send_weighted(ts_net *net, const uint32_t *const *paths,
                         const uint32_t *hops, const double *weights,
                         uint32_t k, uint64_t bytes, ts_time_ps alpha_sw,
                         ts_net_done_fn fn, void *ctx, uint64_t tag) {
  return send_paths(net, paths, hops, weights, k, bytes, alpha_sw, fn, ctx,
                    tag, 0);
}

int ts_net_send_routed(ts_net *net, const uint32_t *const *paths,
                       const uint32_t *hops, const double *weights, uint32_t k,
                       uint64_t bytes, ts_time_ps alpha_sw, ts_net_done_fn fn,
                       void *ctx, uint64_t tag) {
  return send_paths(net, paths, hops, weights, k, bytes, alpha_sw, fn, ctx,
                    tag, 1);
}

int ts_net_send(ts_net *net, const uint32_t *path, uint32_t hops,
                uint64_t bytes, ts_time_ps alpha_sw, ts_net_done_fn fn,
                void *ctx, uint64_t tag) {
  return ts_net_send_split(net, &path, &hops, 1, bytes, alpha_sw, fn, ctx,
                           tag);
}

int ts_net_set_link_factor(ts_net *net, uint32_t link, double factor) {
  if (link >= net->ndirs / 2 || !(factor >= 0.0 && factor <= 1.0))
    return TS_EINVALID;
  net->factor[link] = factor;
  for (uint32_t s = 0; s < 2; s++) {
    net->dirs[2 * link + s].cap = net->link_bw[link] * factor;
    net->be->capacity_changed(net, 2 * link + s);
  }
  return 0;
}

int ts_net_set_reroute(ts_net *net, ts_net_reroute_fn fn, void *ctx) {
  if (fn && net->cfg.fidelity != TS_NET_FLOW) return TS_EUSAGE;
  net->reroute = fn;
  net->reroute_ctx = ctx;
  return 0;
}

double ts_net_dir_bandwidth(const ts_net *net, uint32_t dir) {
  return dir < net->ndirs ? net->dirs[dir].cap : 0.0;
}

void ts_net_credit(ts_net *net, uint64_t n, uint64_t bytes) {
  net->st.transfers_started += n;
  net->st.transfers_finished += n;
  net->st.flows_started += n;
  net->st.flows_finished += n;
  net->st.bytes_sent += bytes;
  net->st.bytes_delivered += bytes;
}

ts_time_ps ts_net_ps_for_bytes(double bytes, double rate) {
  return net_ps_for_bytes(bytes, rate);
}

int ts_net_dir_account(ts_net *net, uint32_t dir, uint64_t bytes,
                       ts_time_ps busy, uint32_t peak_flows) {
  if (dir >= net->ndirs) return TS_EINVALID;
  net_dir *d = &net->dirs[dir];
  d->bytes += bytes;
  d->busy_ps += busy;
  if (peak_flows > d->peak_flows) d->peak_flows = peak_flows;
  return 0;
}

uint32_t ts_net_dir_active(const ts_net *net, uint32_t dir) {
  return dir < net->ndirs ? net->dirs[dir].active : 0;
}

int ts_net_dir_stats_get(const ts_net *net, uint32_t dir,
                         ts_net_dir_stats *out) {
  if (dir >= net->ndirs) return TS_EINVALID;
  const net_dir *d = &net->dirs[dir];
  out->bytes = d->bytes;
  out->busy_ps = d->busy_ps;
  if (d->active) out->busy_ps += ts_sim_now(net->sim) - d->busy_since;
  out->peak_flows = d->peak_flows;
  out->idle_at = d->idle_at;
  out->peak_queue_bytes = d->peak_queue;
  return 0;
}

void ts_net_stats_get(const ts_net *net, ts_net_stats *out) { *out = net->st; }

ts_net_fidelity ts_net_fidelity_of(const ts_net *net) {
  return net->cfg.fidelity;
}

int ts_net_stats_print(const ts_net *net, FILE *f) {
  const ts_net_stats *s = &net->st;
  int rc = fprintf(f,
      "fidelity: %s\ntransfers_started: %llu\ntransfers_finished: %llu\n"
      "flows_started: %llu\nflows_finished: %llu\nbytes_sent: %llu\n"
      "bytes_delivered: %llu\nsolves: %llu\nsolves_skipped: %llu\n"
      "flows_touched: %llu\n"
      "max_flows_touched: %llu\nrate_changes: %llu\nchunks_sent: %llu\n"
      "backpressure_waits: %llu\nreroutes: %llu\n",
      net->be->name, (unsigned long long)s->transfers_started,
      (unsigned long long)s->transfers_finished,
      (unsigned long long)s->flows_started,
      (unsigned long long)s->flows_finished,
      (unsigned long long)s->bytes_sent,
      (unsigned long long)s->bytes_delivered, (unsigned long long)s->solves,
      (unsigned long long)s->solves_skipped,
      (unsigned long long)s->flows_touched,
      (unsigned long long)s->max_flows_touched,
      (unsigned long long)s->rate_changes,
      (unsigned long long)s->chunks_sent,
      (unsigned long long)s->backpressure_waits,
      (unsigned long long)s->reroutes);
  return rc < 0 ? TS_EIO : 0;
}
