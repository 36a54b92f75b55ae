/* exec_coll.c - running collective plans on the engine (ts_exec.h).
 *
 * Each started plan gets a run: a pending-dependency counter per transfer
 * and a successor list (CSR, built once from the plan's backward deps). A
 * transfer becomes ready when its counter reaches zero; a join completes at
 * once, a reduction first waits reduce_bytes / hbm_bw on a timer, then the
 * transfer is routed and its wire bytes sent. Completion decrements the
 * successors; the plan completes when every transfer has. Ready transfers
 * are started in index order, so runs are deterministic.
 *
 * Invariant: run->left counts transfers not yet completed (plus one while
 * the initial transfers are being started); a transfer decrements it only
 * after releasing its successors, so nested completions never reach zero
 * first; a run is freed exactly once, right before its callback. Costs: O(xfers + deps) to start a
 * plan, one route + one send per transfer, O(successors) per completion.
 * A plan of one independent transfer (a pipeline send) can skip all that:
 * exec_coll_send1 posts it at once, with no run and no start event. */
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/exec_path.h"

typedef struct exec_run exec_run;

struct exec_run {
  ts_exec *x;
  const ts_coll_plan *plan;
  double hbm_bw;
  ts_coll_done_fn fn;
  void *ctx;
  uint64_t tag;
  uint32_t left;           /* transfers not completed */
  uint32_t *pending;       /* per transfer: unfinished deps */
  uint32_t *succ_off, *succ; /* successors (CSR) */
  exec_run *prev, *next;
  uint32_t *unposted;      /* caller's count of transfers still to post,
                              or NULL (exec_coll_start_counted) */
};

int exec_coll_init(ts_exec *x) {
  x->paths = malloc(EXEC_PATH_STRIPES * sizeof *x->paths);
  if (!x->paths) return TS_ENOMEM;
  /* The cache is an optimisation: without memory for it, route every time. */
  x->cache = exec_cache_new();
  return 0;
}

void exec_cache_reset(ts_exec *x) { exec_cache_clear(x->cache); }

static void run_free(exec_run *r) {
  free(r->pending);
  free(r->succ_off);
  free(r->succ);
  free(r);
}

static void run_unlink(exec_run *r) {
  if (r->prev) r->prev->next = r->next;
  else r->x->runs = r->next;
  if (r->next) r->next->prev = r->prev;
}

void exec_coll_fini(ts_exec *x) {
  while (x->runs) {
    exec_run *r = x->runs;
    run_unlink(r);
    run_free(r);
  }
  free(x->paths);
  free(x->rec);
  exec_cache_free(x->cache);
}

uint64_t ts_exec_transfers(const ts_exec *x) { return x->transfers; }
uint64_t ts_exec_wire_bytes(const ts_exec *x) { return x->wire_bytes; }

int ts_exec_status(const ts_exec *x, ts_diag *d) {
  if (x->err && d) *d = x->diag;
  return x->err;
}

/* Builds pending counts and the successor CSR from the backward deps. */
static int run_index(exec_run *r) {
  uint32_t n = ts_coll_plan_count(r->plan);
  const ts_coll_xfer *xf = ts_coll_plan_xfers(r->plan);
  const uint32_t *deps = ts_coll_plan_deps(r->plan);
  r->pending = calloc(n + 1, sizeof *r->pending);
  r->succ_off = calloc(n + 2, sizeof *r->succ_off);
  uint32_t ndeps = 0;
  for (uint32_t i = 0; i < n; i++) ndeps += xf[i].ndeps;
  r->succ = malloc(((size_t)ndeps + 1) * sizeof *r->succ);
  if (!r->pending || !r->succ_off || !r->succ) return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    r->pending[i] = xf[i].ndeps;
    for (uint32_t k = 0; k < xf[i].ndeps; k++) r->succ_off[deps[xf[i].dep_first + k] + 2]++;
  }
  for (uint32_t i = 0; i < n; i++) r->succ_off[i + 2] += r->succ_off[i + 1];
  for (uint32_t i = 0; i < n; i++) /* i ascending: successor lists sorted */
    for (uint32_t k = 0; k < xf[i].ndeps; k++)
      r->succ[r->succ_off[deps[xf[i].dep_first + k] + 1]++] = i;
  return 0;
}

static void xfer_start(exec_run *r, uint32_t i);

static void run_finish(exec_run *r) {
  run_unlink(r);
  ts_coll_done_fn fn = r->fn;
  void *ctx = r->ctx;
  uint64_t tag = r->tag;
  run_free(r);
  fn(ctx, tag);
}

/* Transfer i completed: release its successors, maybe the whole plan. */
static void xfer_done(exec_run *r, uint32_t i) {
  for (uint32_t k = r->succ_off[i]; k < r->succ_off[i + 1]; k++)
    if (--r->pending[r->succ[k]] == 0) xfer_start(r, r->succ[k]);
  if (--r->left == 0) run_finish(r);
}

static void on_net_done(ts_net *net, void *ctx, uint64_t tag) {
  (void)net;
  xfer_done(ctx, (uint32_t)tag);
}

static void fail(exec_run *r, int code, const ts_diag *d) {
  ts_exec *x = r->x;
  if (!x->err) {
    x->err = code;
    x->diag = *d;
  }
  ts_sim_stop(x->sim);
}

/* Hop latencies of a path (the network model charges them once per send). */
static ts_time_ps path_latency(const ts_topo *t, const ts_path *p) {
  ts_time_ps lat = 0;
  for (uint32_t i = 0; i < p->len; i++) lat += ts_topo_link(t, p->dir[i] >> 1)->latency;
  return lat;
}

/* Path set of one transfer: NVLS hops to/from a switch, else a route. */
int exec_xfer_paths(ts_exec *x, const ts_coll_xfer *xf, uint32_t *k,
                    ts_diag *d) {
  if (xf->src_rank < 0 || xf->dst_rank < 0) {
    int to_gpu = xf->src_rank < 0;
    uint32_t gpu = (uint32_t)(to_gpu ? xf->dst : xf->src);
    uint32_t sw = (uint32_t)(to_gpu ? xf->src : xf->dst);
    *k = exec_path_nvswitch(x->t, x->net, gpu, sw, to_gpu, x->paths,
                            EXEC_PATH_STRIPES);
    if (*k) {
      x->path_lat = path_latency(x->t, &x->paths[0]);
      return 0;
    }
    return ts_diag_set(d, TS_EINVALID, NULL, 0, 0, "GPU '%s' has no NVLink to "
                       "switch '%s'", ts_topo_node_name(x->t, gpu),
                       ts_topo_node_name(x->t, sw));
  }
  /* ECMP hashes the connection (pair and channel), like a queue pair. */
  uint32_t src = (uint32_t)xf->src, dst = (uint32_t)xf->dst;
  uint64_t flow = ((uint64_t)src * 0x9E3779B97F4A7C15ULL) ^
                  ((uint64_t)dst * 0xC2B2AE3D27D4EB4FULL) ^ xf->channel;
  if (exec_cache_get(x->cache, src, dst, xf->channel, &x->paths[0],
                     &x->path_lat)) {
    *k = 1;
    return 0;
  }
  int rc = exec_path_route(x->t, x->net, x->rt, src, dst, flow, 0, x->paths,
                           EXEC_PATH_STRIPES, k, d);
  if (rc) return rc;
  x->path_lat = path_latency(x->t, &x->paths[0]);
  if (*k == 1)
    exec_cache_put(x->cache, src, dst, xf->channel, &x->paths[0], x->path_lat);
  return 0;
}

/* Latency charged on top of the network's one path latency: a compact
 * transfer stands for `steps` sends, each crossing the path, so it pays the
 * path latency steps - 1 more times (the plan's alpha already holds the
 * steps' protocol latencies). Then a compact ring equals the step ring's
 * 2(p-1)(alpha + hops + S/(pB)) on dedicated links. The latency is the
 * one exec_xfer_paths summed (kept in the route cache) over the route as
 * routed; a folded run then sends it over orbit representatives
 * (x->dir_rep), which the fold proved alike in latency hop by hop
 * (exec_step_fold.c same_dir), so the sum is the same. */
ts_time_ps exec_xfer_alpha(const ts_exec *x, const ts_coll_xfer *xf) {
  if (!(xf->flags & TS_COLL_XFER_COMPACT) || xf->steps <= 1) return xf->alpha;
  return xf->alpha + (ts_time_ps)(xf->steps - 1) * x->path_lat;
}

/* Remembers the directions of the path set just sent (isolated runs of
 * exec_step_fast.c need a plan's footprint). */
static void record(ts_exec *x, uint32_t k) {
  for (uint32_t p = 0; p < k; p++) {
    uint32_t len = x->paths[p].len;
    if (x->nrec + len > x->caprec) {
      uint32_t cap = x->caprec ? x->caprec : 256;
      while (cap < x->nrec + len) cap *= 2;
      uint32_t *v = realloc(x->rec, (size_t)cap * sizeof *v);
      if (!v) {
        x->rec_fail = 1;
        return;
      }
      x->rec = v;
      x->caprec = cap;
    }
    memcpy(x->rec + x->nrec, x->paths[p].dir, len * sizeof *x->rec);
    x->nrec += len;
  }
}

/* A transfer would be active on direction dd inside a quiet replay's
 * window: the run is void. Without resv_key the engine stops at once;
 * with it the run goes on (inexactly) to collect every crossed replay, so
 * that the next attempt runs all of them live, until EXEC_CROSSED_MAX.
 * A replay of a kind in x->cross_keep stands instead (bounded), counted. */
static void cross(ts_exec *x, uint32_t dd) {
  uint64_t k = x->resv_key ? x->resv_key[dd] : 0;
  if (x->resv_key && k >> 60 < 32 && (x->cross_keep >> (k >> 60) & 1)) {
    x->crossed_kept++;
    return;
  }
  x->violated = 1;
  if (!x->resv_key) {
    ts_sim_stop(x->sim);
    return;
  }
  for (uint32_t i = x->ncrossed; i > 0 && i + 8 > x->ncrossed; i--)
    if (x->crossed[i - 1] == k) return; /* the same window, just seen */
  if (x->ncrossed == x->capcrossed) {
    uint32_t cap = x->capcrossed ? 2 * x->capcrossed : 64;
    uint64_t *v = cap <= EXEC_CROSSED_MAX
                      ? realloc(x->crossed, cap * sizeof *v) : NULL;
    if (!v) {
      x->crossed_full = 1; /* the caller gives replays up */
      ts_sim_stop(x->sim);
      return;
    }
    x->crossed = v;
    x->capcrossed = cap;
  }
  x->crossed[x->ncrossed++] = k;
  if (k >> 60 < 32 && (x->crossed_stop >> (k >> 60) & 1)) {
    x->crossed_stop_hit = 1;
    ts_sim_stop(x->sim);
  }
}

/* Routes and sends one transfer now; fn(ctx, tag) on delivery. 0 or an
 * error with d set. */
static int xfer_post(ts_exec *x, const ts_coll_xfer *xf, ts_net_done_fn fn,
                     void *ctx, uint64_t tag, ts_diag *d) {
  d->msg[0] = '\0'; /* cleared in full only on error: this runs per transfer */
  uint32_t k = 0;
  int rc = exec_xfer_paths(x, xf, &k, d);
  /* Folded with live TP groups: the network holds one representative per
   * orbit of directions (exec_step_fold.c). */
  for (uint32_t p = 0; !rc && x->dir_rep && p < k; p++)
    for (uint32_t h = 0; h < x->paths[p].len; h++)
      if (x->dir_rep[x->paths[p].dir[h]] != UINT32_MAX)
        x->paths[p].dir[h] = x->dir_rep[x->paths[p].dir[h]];
  ts_time_ps alpha = rc ? 0 : exec_xfer_alpha(x, xf);
  /* Quiet-window replays: this transfer's flows become active at
   * now + alpha; crossing a replayed window voids the run. */
  ts_time_ps act = ts_sim_now(x->sim) + alpha;
  for (uint32_t p = 0; !rc && x->resv && p < k; p++)
    for (uint32_t h = 0; h < x->paths[p].len; h++) {
      uint32_t dd = x->paths[p].dir[h];
      if (act < x->resv[dd]) cross(x, dd);
      if (act + 1 > x->pend[dd]) x->pend[dd] = act + 1;
    }
  if (!rc) rc = exec_path_send(x->net, x->paths, k, xf->wire_bytes, alpha,
                               fn, ctx, tag);
  if (rc) {
    if (!d->msg[0])
      ts_diag_set(d, rc, NULL, 0, 0, "cannot send from '%s' to '%s': %s",
                  ts_topo_node_name(x->t, (uint32_t)xf->src),
                  ts_topo_node_name(x->t, (uint32_t)xf->dst), ts_strerror(rc));
    return rc;
  }
  x->transfers++;
  x->wire_bytes += xf->wire_bytes;
  if (x->recording) record(x, k);
  return 0;
}

static void xfer_send(exec_run *r, uint32_t i) {
  ts_diag d;
  if (r->unposted) --*r->unposted;
  int rc = xfer_post(r->x, &ts_coll_plan_xfers(r->plan)[i], on_net_done, r,
                     i, &d);
  if (rc) fail(r, rc, &d);
}

static void on_reduced(ts_sim *sim, void *ctx, uint64_t i) {
  (void)sim;
  xfer_send(ctx, (uint32_t)i);
}

static void xfer_start(exec_run *r, uint32_t i) {
  const ts_coll_xfer *xf = &ts_coll_plan_xfers(r->plan)[i];
  if (xf->flags & TS_COLL_XFER_JOIN) {
    xfer_done(r, i);
    return;
  }
  if (xf->reduce_bytes && r->hbm_bw > 0) {
    ts_time_ps wait = (ts_time_ps)((double)xf->reduce_bytes / r->hbm_bw * 1e12 + 0.5);
    if (ts_sim_schedule_in(r->x->sim, wait, on_reduced, r, i, NULL) == 0) return;
    ts_diag d;
    ts_diag_set(&d, TS_ENOMEM, NULL, 0, 0, "out of memory scheduling a reduction");
    fail(r, TS_ENOMEM, &d);
    return;
  }
  xfer_send(r, i);
}

/* Starts every transfer without dependencies, in index order. */
static void on_start(ts_sim *sim, void *ctx, uint64_t arg) {
  (void)sim;
  (void)arg;
  exec_run *r = ctx;
  uint32_t n = ts_coll_plan_count(r->plan);
  if (n == 0) {
    run_finish(r);
    return;
  }
  /* Hold the run open while starting: joins may complete synchronously
   * and must not finish (and free) it under this loop. */
  r->left++;
  for (uint32_t i = 0; i < n && r->x->err == 0; i++)
    if (ts_coll_plan_xfers(r->plan)[i].ndeps == 0) xfer_start(r, i);
  if (--r->left == 0) run_finish(r);
}

int ts_exec_coll_start(ts_exec *x, const ts_coll_plan *plan, double hbm_bw,
                       ts_coll_done_fn fn, void *ctx, uint64_t tag) {
  return exec_coll_start_counted(x, plan, hbm_bw, fn, ctx, tag, NULL);
}

int exec_coll_start_counted(ts_exec *x, const ts_coll_plan *plan,
                            double hbm_bw, ts_coll_done_fn fn, void *ctx,
                            uint64_t tag, uint32_t *unposted) {
  exec_run *r = calloc(1, sizeof *r);
  if (!r) return TS_ENOMEM;
  *r = (exec_run){x, plan, hbm_bw, fn, ctx, tag, ts_coll_plan_count(plan),
                  NULL, NULL, NULL, NULL, x->runs, unposted};
  if (unposted) { /* every transfer but joins posts once */
    const ts_coll_xfer *xf = ts_coll_plan_xfers(plan);
    *unposted = 0;
    for (uint32_t i = 0; i < r->left; i++)
      *unposted += !(xf[i].flags & TS_COLL_XFER_JOIN);
  }
  if (run_index(r) ||
      ts_sim_schedule_in(x->sim, 0, on_start, r, 0, NULL)) {
    run_free(r);
    return TS_ENOMEM;
  }
  if (x->runs) x->runs->prev = r;
  x->runs = r;
  return 0;
}

bool exec_coll_single(const ts_coll_plan *plan, double hbm_bw) {
  if (ts_coll_plan_count(plan) != 1) return false;
  const ts_coll_xfer *xf = ts_coll_plan_xfers(plan);
  return xf->ndeps == 0 && !(xf->flags & TS_COLL_XFER_JOIN) &&
         !(xf->reduce_bytes && hbm_bw > 0);
}

int exec_coll_send1(ts_exec *x, const ts_coll_plan *plan, ts_net_done_fn fn,
                    void *ctx, uint64_t tag, ts_diag *d) {
  return xfer_post(x, ts_coll_plan_xfers(plan), fn, ctx, tag, d);
}
