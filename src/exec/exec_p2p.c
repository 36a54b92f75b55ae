/* exec_p2p.c - point-to-point patterns over route + net (see ts_p2p.h).
 *
 * Every run builds its own runtime (ts_exec_create), so runs never
 * share state and a size sweep is a loop of independent, deterministic
 * runs. Paths are routed once per pair per run: O(pairs x path length). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/exec_path.h"
#include "topsim/ts_budget.h"
#include "topsim/ts_exec.h"
#include "topsim/ts_p2p.h"

static int pairs_alloc(ts_p2p_pairs *p, uint32_t count) {
  p->src = malloc((size_t)(count ? count : 1) * sizeof *p->src);
  p->dst = malloc((size_t)(count ? count : 1) * sizeof *p->dst);
  p->count = 0;
  if (p->src && p->dst) return 0;
  ts_p2p_pairs_free(p);
  return TS_ENOMEM;
}

void ts_p2p_pairs_free(ts_p2p_pairs *p) {
  free(p->src);
  free(p->dst);
  p->src = p->dst = NULL;
  p->count = 0;
}

static void add(ts_p2p_pairs *p, uint32_t s, uint32_t d) {
  p->src[p->count] = s;
  p->dst[p->count++] = d;
}

/* xorshift64*: small, deterministic, good enough to shuffle. */
static uint64_t next_rand(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ULL;
}

/* Sattolo's shuffle: a uniformly random single cycle, so nobody sends to
 * itself and every GPU sends and receives exactly once. */
static int permutation(const uint32_t *g, uint32_t n, uint64_t seed,
                       ts_p2p_pairs *p) {
  uint32_t *perm = malloc((size_t)n * sizeof *perm);
  if (!perm) return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++) perm[i] = i;
  uint64_t s = seed ? seed : 0x9E3779B97F4A7C15ULL;
  for (uint32_t i = n - 1; i > 0; i--) {
    uint32_t j = (uint32_t)(next_rand(&s) % i);
    uint32_t tmp = perm[i];
    perm[i] = perm[j];
    perm[j] = tmp;
  }
  for (uint32_t i = 0; i < n; i++) add(p, g[i], g[perm[i]]);
  free(perm);
  return 0;
}

static int check_set(ts_p2p_pattern pattern, uint32_t n, uint32_t k,
                     ts_diag *d) {
  if (pattern == TS_P2P_SENDRECV && n != 2)
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "sendrecv takes exactly 2 "
                       "GPUs (source, destination), got %u", n);
  if (n < 2)
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "a pattern needs at least 2 "
                       "GPUs, the set has %u", n);
  if (pattern == TS_P2P_SHIFT && (k == 0 || k >= n))
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "shift:%u needs 1 <= K < %u "
                       "(the set size)", k, n);
  if (pattern == TS_P2P_INCAST && (k == 0 || n % (k + 1)))
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "incast:%u needs the set "
                       "size (%u) to be a multiple of K+1 = %u", k, n, k + 1);
  if (pattern == TS_P2P_BISECTION && n % 2)
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "bisection needs an even "
                       "number of GPUs, the set has %u", n);
  return 0;
}

int ts_p2p_make_pairs(ts_p2p_pattern pattern, const uint32_t *g, uint32_t n,
                      uint32_t k, uint64_t seed, ts_p2p_pairs *p,
                      ts_diag *d) {
  memset(p, 0, sizeof *p);
  int rc = check_set(pattern, n, k, d);
  if (rc) return rc;
  if (pairs_alloc(p, n)) return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  switch (pattern) {
  case TS_P2P_SENDRECV: add(p, g[0], g[1]); break;
  case TS_P2P_PERMUTATION: rc = permutation(g, n, seed, p); break;
  case TS_P2P_SHIFT:
    for (uint32_t i = 0; i < n; i++) add(p, g[i], g[(i + k) % n]);
    break;
  case TS_P2P_INCAST:
    for (uint32_t i = 0; i < n; i++)
      if (i % (k + 1)) add(p, g[i], g[i - i % (k + 1)]);
    break;
  case TS_P2P_BISECTION:
    for (uint32_t i = 0; i < n; i++) add(p, g[i], g[(i + n / 2) % n]);
    break;
  }
  if (rc) ts_p2p_pairs_free(p);
  return rc;
}

void ts_p2p_opts_default(ts_p2p_opts *o) {
  memset(o, 0, sizeof *o);
  ts_net_config_default(&o->net);
  o->alpha_ps = -1;
}

typedef struct p2p_run {
  ts_sim *sim;
  ts_time_ps first, last;
  uint64_t done;
} p2p_run;

static void on_done(ts_net *net, void *ctx, uint64_t tag) {
  (void)net;
  (void)tag;
  p2p_run *r = ctx;
  ts_time_ps now = ts_sim_now(r->sim);
  if (!r->done || now < r->first) r->first = now;
  if (now > r->last) r->last = now;
  r->done++;
}

/* Bytes on the wire for a send NCCL's channels limit: the path's rate
 * over the channels' cap times the bytes, so the flow model's fair shares
 * see the limit (as coll's protocol efficiency does). */
static uint64_t nccl_wire(const ts_topo *t, const ts_net *net,
                          const ts_p2p_opts *o, uint32_t src, uint32_t dst,
                          uint64_t bytes, const ts_path *paths, uint32_t k) {
  if (o->nccl_ranks < 2) return bytes;
  ts_coll_params prm;
  ts_coll_params_default(&prm);
  exec_coll_params(t, net, src, &prm);
  int same = ts_topo_node(t, src)->host == ts_topo_node(t, dst)->host;
  double cap = ts_coll_p2p_cap(&prm, o->nccl_ranks, same, bytes);
  double rate = exec_path_rate(net, paths, k);
  if (!(cap > 0) || rate <= cap) return bytes;
  return (uint64_t)((double)bytes * rate / cap + 0.5);
}

/* NCCL's p2p pipeline fill (ts_coll_p2p_fill): the first step reaches
 * the sender's FIFO before the receiver reads anything. */
static ts_time_ps nccl_fill(const ts_topo *t, const ts_net *net,
                            const ts_p2p_opts *o, uint32_t src, uint32_t dst,
                            uint64_t bytes) {
  if (o->nccl_ranks < 2) return 0;
  ts_coll_params prm;
  ts_coll_params_default(&prm);
  exec_coll_params(t, net, src, &prm);
  int same = ts_topo_node(t, src)->host == ts_topo_node(t, dst)->host;
  double s = ts_coll_p2p_fill(&prm, o->nccl_ranks, same, bytes);
  return (ts_time_ps)(s * (double)TS_PS_PER_S + 0.5);
}

/* Routes one pair and starts its transfer (split over paths if spraying or
 * crossing NVSwitch chips). */
static int start_pair(const ts_topo *t, ts_route *rt, ts_net *net,
                      const ts_p2p_opts *o, uint32_t src, uint32_t dst,
                      uint64_t flow, uint64_t bytes, ts_path *paths,
                      uint32_t cap, p2p_run *run, ts_diag *d) {
  uint32_t k = 1;
  int rc = exec_path_route(t, net, rt, src, dst, flow, o->spray, paths, cap, &k, d);
  if (rc) return rc;
  ts_time_ps alpha = o->alpha_ps >= 0 ? (ts_time_ps)o->alpha_ps
                                      : exec_path_alpha(t, &paths[0]);
  alpha += nccl_fill(t, net, o, src, dst, bytes);
  rc = exec_path_send(net, paths, k, nccl_wire(t, net, o, src, dst, bytes, paths, k),
                      alpha, on_done, run, flow);
  if (rc)
    ts_diag_set(d, rc, NULL, 0, 0, "cannot send from '%s' to '%s': %s",
                ts_topo_node_name(t, src), ts_topo_node_name(t, dst),
                ts_strerror(rc));
  return rc;
}

static int run_pairs(const ts_topo *t, const ts_p2p_pairs *pairs,
                     uint64_t bytes, const ts_p2p_opts *o, ts_sim *sim,
                     ts_route *rt, ts_net *net, ts_p2p_result *out,
                     ts_diag *d) {
  p2p_run run = {sim, 0, 0, 0};
  /* ECMP still needs room to stripe over NVSwitch chips. */
  uint32_t npaths = o->spray ? o->spray : EXEC_PATH_STRIPES;
  if (npaths > TS_ROUTE_MAX_PATHS) npaths = TS_ROUTE_MAX_PATHS;
  ts_path *paths = malloc((size_t)npaths * sizeof *paths);
  if (!paths) return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  int rc = 0;
  for (uint32_t i = 0; !rc && i < pairs->count; i++)
    rc = start_pair(t, rt, net, o, pairs->src[i], pairs->dst[i], i, bytes,
                    paths, npaths, &run, d);
  free(paths);
  if (!rc) rc = ts_sim_run(sim);
  if (rc == TS_ELIMIT && ts_sim_overrun(sim))
    return ts_budget_refuse_run(d, ts_sim_overrun(sim));
  if (rc) return rc;
  if (run.done != pairs->count)
    return ts_diag_set(d, TS_EINTERNAL, NULL, 0, 0, "%llu of %u transfers "
                       "completed", (unsigned long long)run.done, pairs->count);
  out->time = run.last;
  out->min_time = run.first;
  ts_net_stats_get(net, &out->net);
  ts_sim_stats_get(sim, &out->sim);
  /* payload: with an NCCL channel limit the wire carries more */
  out->bytes = o->nccl_ranks >= 2 ? (uint64_t)pairs->count * bytes
                                  : out->net.bytes_delivered;
  return 0;
}

int ts_p2p_run(const ts_topo *t, const ts_p2p_pairs *pairs, uint64_t bytes,
               const ts_p2p_opts *o, ts_p2p_result *out, ts_diag *d) {
  memset(out, 0, sizeof *out);
  if (o->spray > TS_ROUTE_MAX_PATHS)
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "spray over at most %d paths",
                       TS_ROUTE_MAX_PATHS);
  if (bytes > ts_budget_get()->message_bytes) {
    char what[96];
    snprintf(what, sizeof what, "a message of %llu bytes", (unsigned long long)bytes);
    return ts_budget_refuse(d, TS_BUDGET_MESSAGE_BYTES, NULL, 0, 0, what);
  }
  ts_exec_opts eo = {o->net, o->route, o->state, o->faults};
  ts_exec *x = NULL;
  int rc = ts_exec_create(t, &eo, &x, d);
  if (!rc)
    rc = run_pairs(t, pairs, bytes, o, ts_exec_sim(x), ts_exec_route(x),
                   ts_exec_net(x), out, d);
  ts_exec_free(x);
  return rc;
}
