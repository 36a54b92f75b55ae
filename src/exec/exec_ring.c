/* exec_ring.c - a step ring (ts_coll_ring) run in closed form when that is
 * exactly what the full simulation would do.
 *
 * Why it is exact. Under the conditions below every transfer of the ring
 * is, from activation to drain, the only flow on every direction of its
 * path. The flow model then rates it at the least capacity of its path
 * (flow_fill_alone: rem = cap - 0), drains it at activation +
 * ts_net_ps_for_bytes(wire, rate) and delivers it the sum of its hop
 * latencies later. The executor sends a transfer when its last dependency
 * is delivered (after its reduction timer, if any) and the network
 * activates it alpha later. So the delivery time of every transfer follows
 * a max-plus recurrence over (step, member, chunk), evaluated here in plan
 * order with the same integer arithmetic: no events, no flows, no plan.
 * Each direction's busy time is the sum of its flows' drain intervals
 * (they never overlap), its bytes their wire bytes, its peak one flow.
 *
 * Conditions, all checked; when one fails nothing has been changed and
 * the caller runs the full simulation (ts_coll_run, and --exact, always
 * can):
 *   - the runtime is idle: no live plan, no pending event, no active flow,
 *     no recorded error, flow fidelity: nothing else can reach a link
 *     while the ring runs (a concurrent collective, a timed failure);
 *   - every ring edge (member to next member, per channel) routes on one
 *     path, and no direction is crossed by two edges: a direction only
 *     ever carries one edge's sequence of transfers;
 *   - each edge's transfers, in plan order, activate strictly after every
 *     earlier one of the edge has drained (checked while computing; a
 *     violation falls back): they never share the wire.
 * A ring over a 4:1 oversubscribed fabric, two channels over one NIC, or a
 * ring whose steps overtake each other (NCCL's 8 steps in flight on unequal
 * paths) fails a check and is simulated in full.
 *
 * Costs: O(C n hops) routing, O(C steps n k) arithmetic, memory
 * O(C n hops + dirs + (W+1) n k) instead of the plan's O(C steps n k). */
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

/* Ring arrays larger than this (times per in-flight step) fall back: the
 * full simulation would need far more anyway. */
#define RING_MAX_TIMES (1u << 26)

typedef struct ring_edge {
  ts_path path;
  double rate;            /* least capacity of the path */
  ts_time_ps tail;        /* sum of hop latencies */
  ts_time_ps last_end;    /* latest drain so far (valid when used) */
  ts_time_ps busy;
  uint64_t bytes;
  uint64_t memo_wire;     /* last wire bytes drained and their duration: */
  ts_time_ps memo_ps;     /* most steps repeat a segment size */
  int used;
} ring_edge;

typedef struct ring_tmp {
  int *m;                 /* [ch * n + pos]: ring order of every channel */
  ring_edge *e;           /* [ch * n + pos]: edge m[pos] -> m[pos + 1] */
  uint32_t *owner;        /* [dir]: edge crossing it, or UINT32_MAX */
  ts_time_ps *t;          /* [(s mod W+1) * n * k + pos * k + j]: delivery */
} ring_tmp;

static void tmp_free(ring_tmp *T) {
  free(T->m);
  free(T->e);
  free(T->owner);
  free(T->t);
}

/* Nothing else can touch a link while the ring runs. Events already due
 * now run first (a runtime built over degraded links holds the network's
 * re-rate of them, with no flow to rate): the plan's own start event would
 * come after them. */
static int idle(ts_exec *x) {
  if (x->runs || x->err ||
      ts_sim_run_until(x->sim, ts_sim_now(x->sim)) != 0)
    return 0;
  ts_net_stats ns;
  ts_net_stats_get(x->net, &ns);
  return !x->runs && !x->err && !x->recording &&
         ts_sim_pending(x->sim) == 0 && ns.active_flows == 0 &&
         ts_net_fidelity_of(x->net) == TS_NET_FLOW;
}

/* Routes every edge of every channel; 0, or 1 when an edge has no single
 * path, a down link on it, or shares a direction with another edge. */
static int route_edges(ts_exec *x, const ts_coll_ring *r, ring_tmp *T) {
  uint32_t n = (uint32_t)ts_coll_comm_size(r->comm);
  uint32_t ndirs = 2 * ts_topo_link_count(x->t);
  for (uint32_t d = 0; d < ndirs; d++) T->owner[d] = UINT32_MAX;
  for (uint32_t ch = 0; ch < r->channels; ch++) {
    int *m = T->m + (size_t)ch * n;
    ts_coll_ring_members(r, ch, m);
    for (uint32_t i = 0; i < n; i++) {
      uint32_t id = ch * n + i, k = 0;
      ring_edge *e = &T->e[id];
      ts_coll_xfer xf;
      ts_diag d;
      ts_coll_ring_xfer(r, m, ch, 0, i, 0, &xf);
      if (exec_xfer_paths(x, &xf, &k, &d) || k != 1) return 1;
      memset(e, 0, sizeof *e);
      e->path = x->paths[0];
      e->rate = 0;
      for (uint32_t h = 0; h < e->path.len; h++) {
        uint32_t dir = e->path.dir[h];
        double cap = ts_net_dir_bandwidth(x->net, dir);
        if (dir >= ndirs || T->owner[dir] != UINT32_MAX) return 1;
        T->owner[dir] = id;
        if (h == 0 || cap < e->rate) e->rate = cap;
        e->tail += ts_topo_link(x->t, dir >> 1)->latency;
      }
      if (!(e->rate > 0) || e->path.len == 0) return 1;
    }
  }
  return 0;
}

static ts_time_ps tmax(ts_time_ps a, ts_time_ps b) { return a > b ? a : b; }

/* The recurrence of one channel; 0, or 1 when two transfers of an edge
 * would overlap on the wire or time runs past the flow model's range. */
static int run_channel(ts_exec *x, const ts_coll_ring *r, ring_tmp *T,
                       uint32_t ch, double hbm_bw, ts_time_ps *end,
                       uint64_t *wire) {
  uint32_t n = (uint32_t)ts_coll_comm_size(r->comm);
  uint32_t k = r->chunks, W = r->window, S = W + 1;
  size_t plane = (size_t)n * k;
  const int *m = T->m + (size_t)ch * n;
  ts_time_ps now = ts_sim_now(x->sim);
  for (uint32_t s = 0; s < r->steps; s++) {
    ts_time_ps *cur = T->t + (size_t)(s % S) * plane;
    const ts_time_ps *prev = T->t + (size_t)((s + S - 1) % S) * plane;
    const ts_time_ps *own = T->t + (size_t)((s + 1) % S) * plane; /* s - W */
    for (uint32_t i = 0; i < n; i++) {
      ring_edge *e = &T->e[ch * n + i];
      uint32_t from = (i + n - 1) % n;
      for (uint32_t j = 0; j < k; j++) {
        ts_coll_xfer xf;
        ts_coll_ring_xfer(r, m, ch, s, i, j, &xf);
        ts_time_ps ready = now;
        if (s > 0) ready = tmax(ready, prev[(size_t)from * k + j]);
        if (s >= W) ready = tmax(ready, own[(size_t)i * k + j]);
        if (j > 0) ready = tmax(ready, cur[(size_t)i * k + j - 1]);
        if (xf.reduce_bytes && hbm_bw > 0)
          ready += (ts_time_ps)((double)xf.reduce_bytes / hbm_bw * 1e12 + 0.5);
        ts_time_ps ta = ready + xf.alpha, td = ta;
        if (xf.wire_bytes) {
          if (e->used && ta <= e->last_end) return 1;
          if (xf.wire_bytes != e->memo_wire) {
            e->memo_wire = xf.wire_bytes;
            e->memo_ps = ts_net_ps_for_bytes((double)xf.wire_bytes, e->rate);
          }
          td = ta + e->memo_ps;
          e->used = 1;
          e->last_end = td;
          e->busy += td - ta;
          e->bytes += xf.wire_bytes;
        }
        if (td >= (ts_time_ps)1 << 62) return 1;
        cur[(size_t)i * k + j] = td + e->tail;
        *end = tmax(*end, td + e->tail);
        *wire += xf.wire_bytes;
      }
    }
  }
  return 0;
}

int exec_ring_closed(ts_exec *x, const ts_coll_ring *r, double hbm_bw,
                     ts_time_ps *end, ts_diag *d) {
  uint32_t n = (uint32_t)ts_coll_comm_size(r->comm), C = r->channels;
  if (!idle(x) || n < 2 || r->steps == 0 || r->chunks == 0 ||
      (uint64_t)n * (r->window + 1) * r->chunks > RING_MAX_TIMES ||
      (uint64_t)n * C > RING_MAX_TIMES)
    return 1;
  ring_tmp T = {0};
  T.m = malloc((size_t)n * C * sizeof *T.m);
  T.e = malloc((size_t)n * C * sizeof *T.e);
  T.owner = malloc(((size_t)2 * ts_topo_link_count(x->t) + 1) * sizeof *T.owner);
  T.t = malloc((size_t)n * (r->window + 1) * r->chunks * sizeof *T.t);
  if (!T.m || !T.e || !T.owner || !T.t) {
    tmp_free(&T);
    return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory for a step ring");
  }
  ts_time_ps last = ts_sim_now(x->sim);
  uint64_t wire = 0;
  int rc = route_edges(x, r, &T);
  for (uint32_t ch = 0; !rc && ch < C; ch++)
    rc = run_channel(x, r, &T, ch, hbm_bw, &last, &wire);
  if (!rc) { /* exact: account as the flows would have */
    for (size_t id = 0; id < (size_t)n * C; id++) {
      const ring_edge *e = &T.e[id];
      for (uint32_t h = 0; e->used && h < e->path.len; h++)
        ts_net_dir_account(x->net, e->path.dir[h], e->bytes, e->busy, 1);
    }
    uint64_t xfers = (uint64_t)C * r->steps * n * r->chunks;
    x->transfers += xfers;
    x->wire_bytes += wire;
    ts_net_credit(x->net, xfers, wire);
    *end = last;
  }
  tmp_free(&T);
  return rc;
}
