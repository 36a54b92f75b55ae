/* net_flow.c - flow fidelity: max-min fair fluid flows, solved
 * incrementally (docs/model.md, "Flow fidelity").
 *
 * A flow waits alpha_sw, then is ACTIVE on every direction of its path at
 * one rate until its bytes drain, then spends the sum of its hop latencies
 * in flight (TAIL) before delivery. Rates are max-min fair: progressive
 * filling, as in SimGrid's maxmin solver (learned from, not copied).
 *
 * Invariants:
 *   - every ACTIVE flow sits in the intrusive list of each direction of its
 *     path (one `member` per hop, allocated contiguously from a pool with
 *     one free list per path length);
 *   - an ACTIVE flow's bytes left at time t are left - rate*(t - t_last):
 *     state is settled lazily, only when its rate changes or it drains;
 *   - an ACTIVE flow with rate > 0 has exactly one pending drain event, at
 *     t_last + ceil(left / rate), rescheduled in place when the rate changes;
 *   - a direction is dirty iff some flow entered, left or its capacity
 *     changed since the last solve; while any is dirty one resolve event is
 *     pending at the current time, so simultaneous changes share one solve.
 *
 *   - after each solve every rated flow remembers its bottleneck direction,
 *     and each direction counts the flows it bottlenecks (nbn) and the
 *     least level it gave them; a batch of departures that frees no
 *     remembered bottleneck leaves the rates max-min fair and costs no
 *     solve (flow_dirty_level, O(dirty directions));
 *   - a batch made only of departures re-rates only flows rated at least
 *     the least departed rate and the least dirty bottleneck's level D
 *     (flow_floor): slower flows keep their rates, and so do flows rated
 *     D whose bottleneck is clean (ties: s->tie);
 *   - such a batch starts from the flows bottlenecked at a dirty direction
 *     and adds held flows only when they lose their bottleneck
 *     (flow_local); each direction keeps the exact fixed-point sum of its
 *     flows' rates (load, flow_set_rate) and the list of the flows it
 *     bottlenecks (bhead).
 *
 * Costs: start O(hops); drain O(hops); a solve touches only the connected
 * component (flows linked through shared directions) of the dirty
 * directions: O(F_c * hops + D_c log D_c) for F_c flows over D_c
 * directions; after departures O(A * hops + D_A log D_A) for the A flows
 * whose bottleneck moved (and those they push off theirs) over the D_A
 * directions they cross, plus a walk of the directions that froze them.
 * Unrelated flows cost nothing. Upgrade path: solve in parallel, or
 * replay whole collectives that run alone (exec_step_run.c does it for
 * TP groups). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_backend.h"

enum { FLOW_FREE, FLOW_WAIT, FLOW_ACTIVE, FLOW_TAIL };

typedef struct flow {
  double left;          /* bytes left at t_last */
  double rate;          /* bytes/s now */
  double new_rate;      /* solver scratch */
  ts_time_ps t_last;
  ts_time_ps tail_lat;  /* sum of hop latencies */
  ts_event_id ev;       /* WAIT: start event; ACTIVE: drain event */
  uint64_t bytes;
  uint32_t req;
  uint32_t m0;          /* first member; next free flow when FREE */
  uint32_t hops;
  uint32_t mark;        /* == solve stamp: in the component */
  uint32_t frozen;      /* == solve stamp: rate fixed this solve */
  uint32_t bneck;       /* direction that fixed the rate at the last
                           solve; NET_NONE before the first and once off
                           its directions */
  uint32_t nbneck;      /* solver scratch: bottleneck this filling */
  uint32_t bprev, bnext; /* list of the flows bneck bottlenecks */
  int64_t fx;           /* rate in fixed point (flow_fx), as summed into
                           each direction's load */
  uint64_t moved;       /* bytes credited to an earlier path (reroutes) */
  uint8_t state;
} flow;

typedef struct member {
  uint32_t flow, dir;
  uint32_t prev, next;  /* direction's list; next = next free block */
} member;

typedef struct fdir {
  uint32_t head;        /* first member crossing it */
  uint32_t mark;        /* == solve stamp: in the component */
  uint32_t nun;         /* solver: unfrozen flows */
  uint32_t nbn;         /* active flows whose bneck is this direction */
  uint32_t bhead;       /* first of them (flow ids, bprev / bnext) */
  double blevel;        /* least rate it gave those flows (a lower bound
                           while nbn > 0) */
  double rem;           /* solver: capacity not yet given out */
  uint8_t dirty;
} fdir;

/* flow_local's scratch per direction, apart from fdir so that the other
 * solves keep their cache footprint. */
typedef struct fdir_local {
  double lvl;           /* share it gave the flows it froze this filling,
                           or -1 */
  double amax;          /* fastest re-rated flow on it */
  int64_t aload;        /* the re-rated flows' part of its load */
  uint32_t abn;         /* re-rated flows it bottlenecked */
} fdir_local;

/* A slot of the filling's heap: a direction and its key, a lower bound of
 * its share rem / nun (flow_fill). */
typedef struct heap_ent {
  double key;
  uint32_t dir;
} heap_ent;

typedef struct flow_state {
  flow *flows;
  uint32_t nflows, flows_cap, flow_free;
  member *mem;
  uint32_t nmem, mem_cap;
  uint32_t mem_free[TS_NET_MAX_HOPS + 1]; /* per block length */
  fdir *dirs;
  int64_t *load;        /* per direction: sum of its flows' fx, exact
                           whatever the order of arrivals, departures and
                           rate changes (flow_set_rate) */
  fdir_local *dx;       /* per direction: flow_local's scratch */
  int in_local;         /* flow_fill runs for flow_local (fills dx) */
  uint32_t *dirty, ndirty, dirty_cap;
  uint32_t *cdirs, ncdirs, cdirs_cap;  /* component scratch */
  uint32_t *cflows, ncflows, cflows_cap;
  heap_ent *heap;                      /* capacity: ndirs */
  uint32_t nheap;
  uint32_t stamp;
  int resolve_pending;
  int dirty_hard;       /* a flow entered or a capacity changed */
  double level;         /* least rate of the flows that left since the
                           last resolve; INFINITY when none did */
  double tie;           /* this solve: flows rated up to tie whose
                           bottleneck is clean keep their rates (-1: none) */
} flow_state;

static flow_state *fs_of(ts_net *net) { return net->bstate; }

/* ---- pools ---------------------------------------------------------- */

static int flow_reserve(ts_net *net, uint32_t flows, uint32_t hops,
                        uint64_t bytes) {
  flow_state *s = fs_of(net);
  if (net_grow((void **)&s->flows, &s->flows_cap, s->nflows + flows,
               sizeof *s->flows) ||
      net_grow((void **)&s->mem, &s->mem_cap, s->nmem + hops,
               sizeof *s->mem))
    return TS_ENOMEM;
  return 0;
}

static uint32_t flow_alloc(flow_state *s) {
  uint32_t f = s->flow_free;
  if (f != NET_NONE) {
    s->flow_free = s->flows[f].m0;
    return f;
  }
  NET_ASSERT(s->nflows < s->flows_cap, "flow pool not reserved");
  return s->nflows++;
}

static uint32_t mem_alloc(flow_state *s, uint32_t hops) {
  uint32_t m = s->mem_free[hops];
  if (m != NET_NONE) {
    s->mem_free[hops] = s->mem[m].next;
    return m;
  }
  NET_ASSERT(s->nmem + hops <= s->mem_cap, "member pool not reserved");
  m = s->nmem;
  s->nmem += hops;
  return m;
}

static void mem_release(flow_state *s, uint32_t m, uint32_t hops) {
  s->mem[m].next = s->mem_free[hops];
  s->mem_free[hops] = m;
}

/* ---- min-heap of directions by (key, id) -----------------------------
 *
 * Each slot holds its direction's key beside the id, so a sift reads one
 * contiguous array instead of the direction records (a fill pushes ~65
 * directions on the GPT-3 CP + ZeRO 2 steps and sifts ~36M times). The
 * order (key, id) is total, so the minimum, and with it every pop of the
 * filling, does not depend on the heap's layout: the same directions pop
 * in the same order as with any other correct heap. */

static int hent_less(const heap_ent *a, const heap_ent *b) {
  if (a->key != b->key) return a->key < b->key;
  return a->dir < b->dir;
}

static void heap_down(flow_state *s, uint32_t i) {
  heap_ent *h = s->heap, x = h[i];
  uint32_t n = s->nheap;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && hent_less(&h[c + 1], &h[c])) c++;
    if (!hent_less(&h[c], &x)) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

/* Orders heap[0..nheap) at once: O(n), against O(n log n) for n pushes. */
static void heap_build(flow_state *s) {
  for (uint32_t i = s->nheap / 2; i-- > 0;) heap_down(s, i);
}

/* ---- dirty directions and the batched resolve ------------------------ */

static void flow_resolve_ev(ts_sim *sim, void *ctx, uint64_t arg);

static void flow_mark_dirty(ts_net *net, uint32_t dir) {
  flow_state *s = fs_of(net);
  if (!s->dirs[dir].dirty) {
    if (net_grow((void **)&s->dirty, &s->dirty_cap, s->ndirty + 1,
                 sizeof *s->dirty) == 0) {
      s->dirs[dir].dirty = 1;
      s->dirty[s->ndirty++] = dir;
    } else {
      NET_ASSERT(0, "out of memory growing the dirty list");
    }
  }
  if (!s->resolve_pending) {
    int rc = ts_sim_schedule(net->sim, ts_sim_now(net->sim), flow_resolve_ev,
                             net, 0, NULL);
    NET_ASSERT(rc == 0, "engine refused the resolve event");
    s->resolve_pending = 1;
  }
}

/* Rates in fixed point, 2^-20 byte/s: a direction's load is then an
 * exact integer sum, kept incrementally at no drift, and the capacity
 * that flows held at their rates leave (flow_local) is the same number
 * whatever the order they came and went in. Directions up to 2^42 byte/s
 * (4.4 TB/s) are covered without overflow; faster ones are walked
 * (FX_MAX_CAP). */
#define FX_ONE 1048576.0
#define FX_MAX_CAP 4398046511104.0

static int64_t flow_fx(double rate) { return (int64_t)(rate * FX_ONE); }

/* f's rate is now `rate`: moves the difference onto its directions. */
static void flow_set_rate(flow_state *s, flow *f, double rate) {
  int64_t fx = rate > 0 && rate < FX_MAX_CAP ? flow_fx(rate) : 0;
  if (fx != f->fx)
    for (uint32_t h = 0; h < f->hops; h++)
      s->load[s->mem[f->m0 + h].dir] += fx - f->fx;
  f->fx = fx;
  f->rate = rate;
}

/* Brings f's bytes left to now at its current rate. */
static void flow_settle(ts_net *net, flow *f) {
  ts_time_ps now = ts_sim_now(net->sim);
  f->left -= f->rate * (double)(now - f->t_last) * 1e-12;
  f->t_last = now;
}

/* Walks direction d's flows: those rated at least `floor` join the
 * component (their new directions queued in cdirs) unless rated at most
 * s->tie with a clean bottleneck (flow_floor); the others keep their
 * rates, which come off d's capacity. Leaves d's capacity left and
 * component flow count in rem / nun for flow_fill. */
static int flow_collect_dir(ts_net *net, uint32_t d, double floor) {
  flow_state *s = fs_of(net);
  uint32_t st = s->stamp, nun = 0;
  double fixed = 0;
  for (uint32_t m = s->dirs[d].head; m != NET_NONE; m = s->mem[m].next) {
    flow *f = &s->flows[s->mem[m].flow];
    if (f->rate < floor ||
        (f->rate <= s->tie && f->bneck != NET_NONE &&
         !s->dirs[f->bneck].dirty)) {
      fixed += f->rate;
      continue;
    }
    nun++;
    if (f->mark == st) continue;
    f->mark = st;
    if (net_grow((void **)&s->cflows, &s->cflows_cap, s->ncflows + 1,
                 sizeof *s->cflows))
      return TS_ENOMEM;
    s->cflows[s->ncflows++] = s->mem[m].flow;
    for (uint32_t h = 0; h < f->hops; h++) {
      uint32_t e = s->mem[f->m0 + h].dir;
      if (s->dirs[e].mark == st) continue;
      s->dirs[e].mark = st;
      s->cdirs[s->ncdirs++] = e;
    }
  }
  s->dirs[d].nun = nun;
  s->dirs[d].rem = net->dirs[d].cap - fixed;
  return 0;
}

/* Collects the component of the dirty directions (or of every busy
 * direction under full_solve) into cdirs / cflows, linked only through
 * flows rated at least `floor` (0: every flow). */
static int flow_collect(ts_net *net, double floor) {
  flow_state *s = fs_of(net);
  uint32_t st = ++s->stamp;
  s->ncdirs = s->ncflows = 0;
  if (net->cfg.full_solve) {
    for (uint32_t d = 0; d < net->ndirs; d++)
      if (s->dirs[d].head != NET_NONE) {
        s->dirs[d].mark = st;
        s->cdirs[s->ncdirs++] = d;
      }
  } else {
    for (uint32_t i = 0; i < s->ndirty; i++) {
      uint32_t d = s->dirty[i];
      if (s->dirs[d].mark != st && s->dirs[d].head != NET_NONE) {
        s->dirs[d].mark = st;
        s->cdirs[s->ncdirs++] = d;
      }
    }
  }
  for (uint32_t i = 0; i < s->ncdirs; i++)
    if (flow_collect_dir(net, s->cdirs[i], floor)) return TS_ENOMEM;
  for (uint32_t i = 0; i < s->ndirty; i++) s->dirs[s->dirty[i]].dirty = 0;
  s->ndirty = 0;
  return 0;
}

/* f leaves the list, count and level of its bottleneck. */
static void flow_clear_bneck(flow_state *s, flow *f) {
  if (f->bneck == NET_NONE) return;
  fdir *fd = &s->dirs[f->bneck];
  fd->nbn--;
  if (f->bprev != NET_NONE) s->flows[f->bprev].bnext = f->bnext;
  else fd->bhead = f->bnext;
  if (f->bnext != NET_NONE) s->flows[f->bnext].bprev = f->bprev;
  f->bneck = NET_NONE;
}

/* Direction d fixed f's rate at `level`: keeps the bottleneck lists and
 * counts and each direction's least level (conservative: a lower bound of
 * the rates of the flows it bottlenecks, reset when the last of them
 * leaves). */
static void flow_set_bneck(flow_state *s, flow *f, uint32_t d, double level) {
  fdir *fd = &s->dirs[d];
  if (f->bneck == d) { /* same list: only the level can move */
    if (level < fd->blevel) fd->blevel = level;
    return;
  }
  flow_clear_bneck(s, f);
  if (fd->nbn++ == 0 || level < fd->blevel) fd->blevel = level;
  uint32_t fi = (uint32_t)(f - s->flows);
  f->bneck = d;
  f->bprev = NET_NONE;
  f->bnext = fd->bhead;
  if (fd->bhead != NET_NONE) s->flows[fd->bhead].bprev = fi;
  fd->bhead = fi;
}

/* A flow that no other collected flow shares a direction with gets what
 * progressive filling would give it without the heap: the least capacity
 * left on its path (the first of its directions to pop, least (key, id)),
 * which is its bottleneck. Its directions leave the filling (nun 0). Same
 * arithmetic as the heap path (share = rem / 1), so the same bits; a ring
 * step's flows, each alone on its links, skip the heap entirely.
 * full_solve keeps every flow on the heap path (the reference). */
static void flow_fill_alone(flow_state *s, uint32_t fi) {
  flow *f = &s->flows[fi];
  uint32_t b = NET_NONE;
  for (uint32_t h = 0; h < f->hops; h++) {
    uint32_t d = s->mem[f->m0 + h].dir;
    if (s->dirs[d].nun != 1) return;
    if (b == NET_NONE || s->dirs[d].rem < s->dirs[b].rem ||
        (s->dirs[d].rem == s->dirs[b].rem && d < b))
      b = d;
  }
  double rem = s->dirs[b].rem;
  f->frozen = s->stamp;
  f->new_rate = rem > 0 ? rem : 0;
  f->nbneck = b;
  for (uint32_t h = 0; h < f->hops; h++) {
    uint32_t d = s->mem[f->m0 + h].dir;
    s->dirs[d].nun = 0;
    s->dirs[d].rem -= f->new_rate;
    if (s->in_local && f->new_rate > s->dx[d].amax) s->dx[d].amax = f->new_rate;
  }
  if (s->in_local) s->dx[b].lvl = f->new_rate;
}

/* The filling's heap. A direction that one unfrozen flow f alone crosses
 * (nun 1; 20.6M of the 30.7M directions pushed on the GPT-3 CP + ZeRO 2
 * step of docs/performance.md) offers its capacity left, max(rem, 0),
 * until f freezes (pushed at rem < 0, it would be re-keyed to 0 at the
 * top, which changes nothing else, so it is pushed at 0) and pops as a
 * no-op (nun 0) once f is frozen. Of f's such directions only the least
 * (offer, id) can therefore pop while f is unfrozen: it alone is pushed.
 * Leaving out entries that could only pop as no-ops changes no pop that
 * does something (same keys, same order), so the same directions freeze
 * the same flows at the same shares. full_solve pushes every direction
 * (the reference). */
static void fill_push(ts_net *net) {
  flow_state *s = fs_of(net);
  uint32_t st = s->stamp;
  int prune = !net->cfg.full_solve;
  for (uint32_t i = 0; i < s->ncdirs; i++) {
    uint32_t d = s->cdirs[i];
    fdir *fd = &s->dirs[d];
    if (!fd->nun || (prune && fd->nun == 1))
      continue; /* nun 0: only kept flows, nothing to share */
    s->heap[s->nheap++] = (heap_ent){fd->rem / fd->nun, d};
  }
  for (uint32_t i = 0; prune && i < s->ncflows; i++) {
    const flow *f = &s->flows[s->cflows[i]];
    if (f->frozen == st) continue;
    heap_ent b = {0, NET_NONE};
    for (uint32_t h = 0; h < f->hops; h++) {
      uint32_t d = s->mem[f->m0 + h].dir;
      const fdir *fd = &s->dirs[d];
      if (fd->nun != 1) continue;
      heap_ent e = {fd->rem > 0 ? fd->rem : 0, d};
      if (b.dir == NET_NONE || hent_less(&e, &b)) b = e;
    }
    if (b.dir != NET_NONE) s->heap[s->nheap++] = b;
  }
  heap_build(s);
}

/* Progressive filling over the collected component: the direction with
 * the smallest fair share rem/nun is the bottleneck; its unfrozen flows
 * get that share, are frozen and note it as their bottleneck (nbneck,
 * which flow_resolve_ev keeps once the filling stands); that
 * lowers rem and nun on every direction they cross; repeat.
 * Shares only grow as filling proceeds (s <= rem/nun implies
 * (rem-s)/(nun-1) >= rem/nun), so the heap is lazy: a key is a lower
 * bound of its direction's share and is refreshed only when it reaches
 * the top. Cost O(F_c * hops + D_c log D_c) plus one sift per refresh. */
static void flow_fill(ts_net *net) {
  flow_state *s = fs_of(net);
  uint32_t st = s->stamp;
  s->nheap = 0;
  for (uint32_t i = 0; !net->cfg.full_solve && i < s->ncflows; i++)
    flow_fill_alone(s, s->cflows[i]);
  fill_push(net);
  while (s->nheap) {
    uint32_t d = s->heap[0].dir;
    fdir *fd = &s->dirs[d];
    double share = fd->nun ? (fd->rem > 0 ? fd->rem : 0) / fd->nun : 0;
    if (fd->nun && share > s->heap[0].key) { /* stale lower bound: re-key */
      s->heap[0].key = share;
      heap_down(s, 0);
      continue;
    }
    s->heap[0] = s->heap[--s->nheap];
    if (s->nheap) heap_down(s, 0);
    if (!fd->nun) continue;
    if (s->in_local) s->dx[d].lvl = share;
    for (uint32_t m = fd->head; m != NET_NONE; m = s->mem[m].next) {
      flow *f = &s->flows[s->mem[m].flow];
      if (f->frozen == st || f->mark != st) continue; /* done or kept */
      f->frozen = st;
      f->new_rate = share;
      f->nbneck = d;
      for (uint32_t h = 0; h < f->hops; h++) {
        uint32_t e = s->mem[f->m0 + h].dir;
        fdir *fe = &s->dirs[e];
        fe->rem -= share;
        fe->nun--;
        if (s->in_local && share > s->dx[e].amax) s->dx[e].amax = share;
      }
    }
    NET_ASSERT(fd->nun == 0, "bottleneck kept unfrozen flows");
  }
}

/* After a batch made only of departures: the least level of a dirty
 * direction that is still some flow's bottleneck (INFINITY: none is), the
 * lowest rate the batch can move. By the bottleneck characterisation
 * (Bertsekas & Gallager), rates are max-min fair iff every flow has a
 * bottleneck, a saturated direction on which no flow is faster. A
 * direction nobody entered or left and whose capacity did not change keeps
 * that property, so with no dirty bottleneck left the rates stand and the
 * solve is skipped. A flow crossing a dirty direction whose bottleneck is
 * dirty too is on the list of that bottleneck, so counting each
 * direction's bottlenecked flows (nbn) answers in O(dirty directions).
 * Any other batch (arrivals, capacity changes, full_solve): 0. */
static double flow_dirty_level(const ts_net *net) {
  const flow_state *s = net->bstate;
  if (s->dirty_hard || net->cfg.full_solve) return 0;
  double lv = INFINITY;
  for (uint32_t i = 0; i < s->ndirty; i++) {
    const fdir *fd = &s->dirs[s->dirty[i]];
    if (fd->nbn && fd->blevel < lv) lv = fd->blevel;
  }
  return lv;
}

/* Rates below which flows provably keep their rates in this solve. After
 * a batch made only of departures whose least rate is L, the progressive
 * filling of the new flow set runs exactly as the last one did below
 * level L: a direction saturating below L carried no departed flow (it
 * would have frozen that flow below its rate), so its load is the same at
 * every level below L. Every flow rated below L therefore keeps its rate
 * and those flows are the filling's prefix; the rest is the filling of the
 * remaining capacity, which flow_collect splits further into components
 * linked only through flows rated L or more. The floor sits NET_EPS below
 * L so that float noise never fixes a flow rated L.
 * The least level D of a dirty bottleneck (flow_dirty_level, D >= L) is a
 * second such bound: below D every direction that saturates in the old
 * filling is clean (same flows, same load) and a dirty direction that
 * bottlenecks nobody left only lost load, so the filling below D is the
 * old one. D is a level the solver gave; a flow kept its old rate when
 * within NET_EPS of it, hence the 2 NET_EPS margin. The floor is the
 * higher bound. At level D itself only clean directions saturate (a dirty
 * one carries less than before, which did not saturate it below its own
 * level), exactly those that did before, so a flow rated D whose
 * bottleneck is clean keeps its rate too (s->tie, set beside the floor):
 * in a symmetric all-to-all many destinations share the departing flow's
 * level. Any other batch (arrivals, capacity changes, full_solve): 0,
 * every flow. */
static double flow_floor(const ts_net *net, double dlevel) {
  const flow_state *s = net->bstate;
  if (s->dirty_hard || net->cfg.full_solve || !isfinite(s->level)) return 0;
  return fmax(s->level * (1 - NET_EPS), dlevel * (1 - 2 * NET_EPS));
}

/* ---- localized re-rating after departures ---------------------------
 *
 * After a batch made only of departures, most of the component that
 * flow_collect gathers keeps its rates: in a skewed all-to-all a departure
 * from one source's egress re-rates that source's flows, while every
 * other flow above the floor is collected only because it shares a
 * destination with them. flow_local starts from the flows whose
 * bottleneck the batch touched (a dirty direction; the others have a
 * clean, unchanged bottleneck or sit below the floor), re-rates them by
 * progressive filling with every other flow's rate held fixed, and then
 * checks the bottleneck characterisation (Bertsekas & Gallager: rates are
 * max-min fair iff every flow has a saturated direction on which no flow
 * is faster) on every direction the re-rated flows cross:
 *   - a held flow faster than the share a direction gave the re-rated
 *     flows it froze there must come down: it joins the set;
 *   - a held flow whose bottleneck is such a direction keeps it only if
 *     the direction is still saturated and no re-rated flow there is
 *     faster; otherwise every held flow bottlenecked there joins.
 * Held flows elsewhere keep a bottleneck nobody touched. When no flow
 * joins, every flow has a bottleneck, so the rates are the unique max-min
 * rates (within NET_EPS, as everywhere in this file); after LOCAL_ROUNDS
 * rounds that still add flows the caller falls back to flow_collect. */
enum { LOCAL_ROUNDS = 8 };

static int local_add(flow_state *s, uint32_t fi) {
  if (net_grow((void **)&s->cflows, &s->cflows_cap, s->ncflows + 1,
               sizeof *s->cflows))
    return TS_ENOMEM;
  s->flows[fi].mark = s->stamp;
  s->cflows[s->ncflows++] = fi;
  return 0;
}

/* New stamp on the set in cflows; the directions they cross into cdirs,
 * each with the capacity the held flows leave (rem: its exact load less
 * the re-rated flows' part), its count of re-rated flows (nun) and of
 * those it bottlenecked so far (abn). O(re-rated flows x hops); only a
 * direction faster than FX_MAX_CAP is walked. */
static void local_prepare(ts_net *net) {
  flow_state *s = fs_of(net);
  uint32_t st = ++s->stamp;
  s->ncdirs = 0;
  for (uint32_t i = 0; i < s->ncflows; i++) {
    flow *f = &s->flows[s->cflows[i]];
    f->mark = st;
    for (uint32_t h = 0; h < f->hops; h++) {
      uint32_t e = s->mem[f->m0 + h].dir;
      fdir *fe = &s->dirs[e];
      if (fe->mark != st) {
        fe->mark = st;
        fe->nun = s->dx[e].abn = 0;
        s->dx[e].aload = 0;
        s->cdirs[s->ncdirs++] = e;
      }
      fe->nun++;
      s->dx[e].aload += f->fx;
      s->dx[e].abn += f->bneck == e;
    }
  }
  for (uint32_t i = 0; i < s->ncdirs; i++) {
    uint32_t d = s->cdirs[i];
    fdir *fd = &s->dirs[d];
    double cap = net->dirs[d].cap, fixed = 0;
    if (cap < FX_MAX_CAP) {
      fixed = (double)(s->load[d] - s->dx[d].aload) / FX_ONE;
    } else {
      for (uint32_t m = fd->head; m != NET_NONE; m = s->mem[m].next) {
        const flow *f = &s->flows[s->mem[m].flow];
        if (f->mark != st) fixed += f->rate;
      }
    }
    fd->rem = cap - fixed;
    s->dx[d].lvl = -1;
    s->dx[d].amax = 0;
  }
}

/* The check after a filling (see above), from what local_prepare and
 * flow_fill left on each direction: a direction is walked only when it
 * froze re-rated flows (held flows faster than its share?) or when it
 * bottlenecks held flows and may have lost them (no longer saturated, or
 * a re-rated flow above its least level). Held flows that fail join
 * cflows marked, unrated, for the next round. */
static int local_check(ts_net *net) {
  flow_state *s = fs_of(net);
  uint32_t st = s->stamp, n = s->ncdirs;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t d = s->cdirs[i];
    const fdir *fd = &s->dirs[d];
    const fdir_local *lx = &s->dx[d];
    double cap = net->dirs[d].cap;
    int held_bn = fd->nbn > lx->abn;
    int maybe_lost = held_bn && (fd->rem > 4 * NET_EPS * cap ||
                                 lx->amax > fd->blevel * (1 + NET_EPS));
    if (lx->lvl < 0 && !maybe_lost) continue;
    double hmax = 0, hbmin = INFINITY;
    for (uint32_t m = fd->head; m != NET_NONE; m = s->mem[m].next) {
      const flow *f = &s->flows[s->mem[m].flow];
      if (f->mark == st) continue;
      if (f->rate > hmax) hmax = f->rate;
      if (f->bneck == d && f->rate < hbmin) hbmin = f->rate;
    }
    int slow = lx->lvl >= 0 && hmax > lx->lvl * (1 + 2 * NET_EPS);
    int lost = hbmin != INFINITY &&
               (fd->rem > 4 * NET_EPS * cap ||
                lx->amax > hbmin * (1 + 2 * NET_EPS));
    if (!slow && !lost) continue;
    for (uint32_t m = fd->head; m != NET_NONE; m = s->mem[m].next) {
      uint32_t fi = s->mem[m].flow;
      const flow *f = &s->flows[fi];
      if (f->mark == st) continue; /* re-rated, or joined this round */
      if ((slow && f->rate > lx->lvl * (1 + 2 * NET_EPS)) ||
          (lost && f->bneck == d))
        if (local_add(s, fi)) return TS_ENOMEM;
    }
  }
  return 0;
}

/* Re-rates after a batch of departures by the localized filling: 0 with
 * cflows rated (frozen at the current stamp), 1 when it gave up (nothing
 * changed but scratch: run flow_collect), TS_ENOMEM. */
static int flow_local(ts_net *net, double floor) {
  flow_state *s = fs_of(net);
  ++s->stamp;
  s->ncflows = 0;
  for (uint32_t i = 0; i < s->ndirty; i++) {
    uint32_t d = s->dirty[i];
    for (uint32_t fi = s->dirs[d].bhead; fi != NET_NONE;
         fi = s->flows[fi].bnext) {
      const flow *f = &s->flows[fi];
      if (f->rate < floor || f->mark == s->stamp) continue;
      if (local_add(s, fi)) return TS_ENOMEM;
    }
  }
  int limit = net->cfg.local_rounds > 0 ? net->cfg.local_rounds
                                        : LOCAL_ROUNDS;
  for (int round = 0; s->ncflows; round++) {
    if (round == limit) return 1;
    local_prepare(net);
    s->in_local = 1;
    flow_fill(net);
    s->in_local = 0;
    uint32_t before = s->ncflows;
    int rc = local_check(net);
    if (rc) return rc;
    if (s->ncflows == before) return 0;
  }
  return 0;
}

static void flow_drain_ev(ts_sim *sim, void *ctx, uint64_t arg);

/* Gives flow fi its solved rate; settles and moves its drain event only
 * if the rate really changed. */
static void flow_apply(ts_net *net, uint32_t fi) {
  flow_state *s = fs_of(net);
  flow *f = &s->flows[fi];
  NET_ASSERT(f->frozen == s->stamp, "component flow left unrated");
  double old = f->rate, nr = f->new_rate;
  if (fabs(nr - old) <= NET_EPS * fmax(nr, old)) return;
  flow_settle(net, f);
  flow_set_rate(s, f, nr);
  net->st.rate_changes++;
  if (nr <= 0) {
    if (f->ev) ts_sim_cancel(net->sim, f->ev);
    f->ev = TS_SIM_NO_EVENT;
    return;
  }
  ts_time_ps at = ts_sim_now(net->sim) + net_ps_for_bytes(f->left, nr);
  int rc = f->ev ? ts_sim_reschedule(net->sim, f->ev, at)
                 : ts_sim_schedule(net->sim, at, flow_drain_ev, net, fi,
                                   &f->ev);
  NET_ASSERT(rc == 0, "engine refused a drain event");
}

static void flow_resolve_ev(ts_sim *sim, void *ctx, uint64_t arg) {
  ts_net *net = ctx;
  flow_state *s = fs_of(net);
  s->resolve_pending = 0;
  double dlevel = flow_dirty_level(net);
  if (dlevel == INFINITY) { /* departures only, no bottleneck freed */
    for (uint32_t i = 0; i < s->ndirty; i++) s->dirs[s->dirty[i]].dirty = 0;
    s->ndirty = 0;
    s->level = INFINITY;
    net->st.solves_skipped++;
    return;
  }
  double floor = flow_floor(net, dlevel);
  s->tie = floor > 0 ? dlevel * (1 + 2 * NET_EPS) : -1;
  s->dirty_hard = 0;
  s->level = INFINITY;
  int rc = floor > 0 && !net->cfg.no_local ? flow_local(net, floor) : 1;
  NET_ASSERT(rc >= 0, "out of memory re-rating flows");
  if (rc == 0) {
    for (uint32_t i = 0; i < s->ndirty; i++) s->dirs[s->dirty[i]].dirty = 0;
    s->ndirty = 0;
    net->st.local_solves++;
  } else {
    NET_ASSERT(flow_collect(net, floor) == 0,
               "out of memory collecting a component");
    if (s->ncflows) flow_fill(net);
  }
  if (s->ncflows == 0) return;
  for (uint32_t i = 0; i < s->ncflows; i++) {
    flow *f = &s->flows[s->cflows[i]];
    flow_set_bneck(s, f, f->nbneck, f->new_rate);
  }
  for (uint32_t i = 0; i < s->ncflows; i++) flow_apply(net, s->cflows[i]);
  net->st.solves++;
  net->st.flows_touched += s->ncflows;
  if (s->ncflows > net->st.max_flows_touched)
    net->st.max_flows_touched = s->ncflows;
}

/* ---- flow life cycle -------------------------------------------------- */

static void flow_deliver_ev(ts_sim *sim, void *ctx, uint64_t arg) {
  ts_net *net = ctx;
  flow_state *s = fs_of(net);
  uint32_t fi = (uint32_t)arg;
  flow *f = &s->flows[fi];
  uint32_t req = f->req;
  uint64_t bytes = f->bytes;
  f->state = FLOW_FREE;
  f->m0 = s->flow_free;
  s->flow_free = fi;
  net_flow_delivered(net, req, bytes); /* may start flows: f is stale */
}

/* Bytes drained: the flow leaves its directions; delivery follows after
 * the path's latency. */
static void flow_finish(ts_net *net, uint32_t fi) {
  flow_state *s = fs_of(net);
  flow *f = &s->flows[fi];
  if (f->bytes && f->rate < s->level) s->level = f->rate;
  flow_clear_bneck(s, f);
  for (uint32_t h = 0; f->bytes && h < f->hops; h++) {
    member *m = &s->mem[f->m0 + h];
    s->load[m->dir] -= f->fx; /* its rate leaves (flow_set_rate) */
    if (m->prev != NET_NONE) s->mem[m->prev].next = m->next;
    else s->dirs[m->dir].head = m->next;
    if (m->next != NET_NONE) s->mem[m->next].prev = m->prev;
    net->dirs[m->dir].bytes += f->bytes - f->moved;
    net_dir_leave(net, m->dir);
    flow_mark_dirty(net, m->dir);
  }
  f->fx = 0;
  f->rate = 0;
  mem_release(s, f->m0, f->hops);
  f->state = FLOW_TAIL;
  f->ev = TS_SIM_NO_EVENT;
  if (f->tail_lat == 0) {
    flow_deliver_ev(net->sim, net, fi);
    return;
  }
  int rc = ts_sim_schedule_in(net->sim, f->tail_lat, flow_deliver_ev, net,
                              fi, NULL);
  NET_ASSERT(rc == 0, "engine refused a delivery event");
}

static void flow_drain_ev(ts_sim *sim, void *ctx, uint64_t arg) {
  ts_net *net = ctx;
  flow *f = &fs_of(net)->flows[arg];
  f->ev = TS_SIM_NO_EVENT;
  flow_settle(net, f);
  /* Byte conservation: the drain time was rounded up to whole ps, so at
   * most one ps worth of bytes (plus NET_EPS noise) is overshot. */
  double slack = NET_EPS * (double)f->bytes + f->rate * 1e-12 + 1e-6;
  NET_ASSERT(fabs(f->left) <= slack, "flow drained with bytes left");
  f->left = 0;
  flow_finish(net, (uint32_t)arg);
}

static int flow_path_down(const ts_net *net, const flow *f);
static void flow_new_path(ts_net *net, uint32_t fi);
static void flow_link(ts_net *net, uint32_t fi);

static void flow_activate(ts_net *net, uint32_t fi) {
  flow_state *s = fs_of(net);
  flow *f = &s->flows[fi];
  f->state = FLOW_ACTIVE;
  f->ev = TS_SIM_NO_EVENT;
  f->t_last = ts_sim_now(net->sim);
  f->rate = 0;
  if (f->bytes == 0) { /* nothing to share: straight to the latency tail */
    flow_finish(net, fi);
    return;
  }
  if (net->reroute && flow_path_down(net, f)) flow_new_path(net, fi);
  flow_link(net, fi);
}

/* Puts flow fi in the list of every direction of its path. */
static void flow_link(ts_net *net, uint32_t fi) {
  flow_state *s = fs_of(net);
  flow *f = &s->flows[fi];
  for (uint32_t h = 0; h < f->hops; h++) {
    uint32_t mi = f->m0 + h;
    member *m = &s->mem[mi];
    fdir *d = &s->dirs[m->dir];
    m->prev = NET_NONE;
    m->next = d->head;
    if (d->head != NET_NONE) s->mem[d->head].prev = mi;
    d->head = mi;
    net_dir_enter(net, m->dir);
    flow_mark_dirty(net, m->dir);
  }
  s->dirty_hard = 1;
}

/* ---- rerouting around links that went down (ts_net_set_reroute) ------- */

/* 1 if some direction of f's path has no capacity (its link is down). */
static int flow_path_down(const ts_net *net, const flow *f) {
  const flow_state *s = net->bstate;
  for (uint32_t h = 0; h < f->hops; h++)
    if (net->factor[s->mem[f->m0 + h].dir >> 1] <= 0.0) return 1;
  return 0;
}

/* Asks the hook for a live path between f's ends and moves f onto it (f is
 * in no direction list). Without one f keeps its path and stalls there
 * until the link returns, as it would without a hook. */
static void flow_new_path(ts_net *net, uint32_t fi) {
  flow_state *s = fs_of(net);
  flow *f = &s->flows[fi];
  uint32_t path[TS_NET_MAX_HOPS];
  uint32_t src = ts_topo_dir_head(net->topo, s->mem[f->m0].dir ^ 1u);
  uint32_t dst = ts_topo_dir_head(net->topo, s->mem[f->m0 + f->hops - 1].dir);
  uint32_t hops = net->reroute(net->reroute_ctx, src, dst, fi, path);
  if (hops == 0 || hops > TS_NET_MAX_HOPS ||
      net_path_check(net, path, hops) != 0)
    return;
  NET_ASSERT(flow_reserve(net, 0, hops, 0) == 0, "out of memory rerouting");
  mem_release(s, f->m0, f->hops);
  f = &s->flows[fi];
  f->m0 = mem_alloc(s, hops);
  f->hops = hops;
  f->tail_lat = 0;
  for (uint32_t h = 0; h < hops; h++) {
    s->mem[f->m0 + h] = (member){fi, path[h], NET_NONE, NET_NONE};
    f->tail_lat += net->dirs[path[h]].lat;
  }
  net->st.reroutes++;
}

/* Takes an active flow off its directions, crediting them the bytes it has
 * carried so far, with its drain event cancelled and bytes settled. */
static void flow_unlink(ts_net *net, uint32_t fi) {
  flow_state *s = fs_of(net);
  flow *f = &s->flows[fi];
  flow_settle(net, f);
  if (f->ev != TS_SIM_NO_EVENT) ts_sim_cancel(net->sim, f->ev);
  f->ev = TS_SIM_NO_EVENT;
  uint64_t done = f->bytes - (uint64_t)llround(f->left > 0 ? f->left : 0);
  flow_set_rate(s, f, 0);
  flow_clear_bneck(s, f);
  for (uint32_t h = 0; h < f->hops; h++) {
    member *m = &s->mem[f->m0 + h];
    if (m->prev != NET_NONE) s->mem[m->prev].next = m->next;
    else s->dirs[m->dir].head = m->next;
    if (m->next != NET_NONE) s->mem[m->next].prev = m->prev;
    net->dirs[m->dir].bytes += done - f->moved;
    net_dir_leave(net, m->dir);
    flow_mark_dirty(net, m->dir);
  }
  f->moved = done;
}

/* Link went down: every active flow crossing it moves to a path the hook
 * gives (bytes left carried over, rates re-solved). O(flows on the link x
 * hops) plus one route each. */
static void flow_link_down(ts_net *net, uint32_t link) {
  flow_state *s = fs_of(net);
  uint32_t n = 0;
  for (uint32_t side = 0; side < 2; side++)
    for (uint32_t m = s->dirs[2 * link + side].head; m != NET_NONE;
         m = s->mem[m].next)
      n++;
  if (!n) return;
  uint32_t *fl = malloc(n * sizeof *fl);
  NET_ASSERT(fl != NULL, "out of memory rerouting");
  n = 0;
  for (uint32_t side = 0; side < 2; side++)
    for (uint32_t m = s->dirs[2 * link + side].head; m != NET_NONE;
         m = s->mem[m].next)
      fl[n++] = s->mem[m].flow;
  for (uint32_t i = 0; i < n; i++) {
    if (s->flows[fl[i]].state != FLOW_ACTIVE || !flow_path_down(net, &s->flows[fl[i]]))
      continue;  /* a flow on both directions is moved once */
    flow_unlink(net, fl[i]);
    flow_new_path(net, fl[i]);
    flow_link(net, fl[i]);
  }
  free(fl);
}

static void flow_start_ev(ts_sim *sim, void *ctx, uint64_t arg) {
  flow_activate(ctx, (uint32_t)arg);
}

static void flow_start(ts_net *net, uint32_t req, const uint32_t *path,
                       uint32_t hops, uint64_t bytes, ts_time_ps alpha) {
  flow_state *s = fs_of(net);
  uint32_t fi = flow_alloc(s);
  flow *f = &s->flows[fi];
  memset(f, 0, sizeof *f);
  f->left = (double)bytes;
  f->bytes = bytes;
  f->req = req;
  f->hops = hops;
  f->m0 = mem_alloc(s, hops);
  f->bneck = NET_NONE;
  f->state = FLOW_WAIT;
  for (uint32_t h = 0; h < hops; h++) {
    s->mem[f->m0 + h] = (member){fi, path[h], NET_NONE, NET_NONE};
    f->tail_lat += net->dirs[path[h]].lat;
  }
  if (alpha == 0) {
    flow_activate(net, fi);
    return;
  }
  int rc = ts_sim_schedule_in(net->sim, alpha, flow_start_ev, net, fi, &f->ev);
  NET_ASSERT(rc == 0, "engine refused a start event");
}

static void flow_capacity_changed(ts_net *net, uint32_t dir) {
  flow_mark_dirty(net, dir);
  fs_of(net)->dirty_hard = 1;
  if (net->reroute && (dir & 1u) && net->factor[dir >> 1] <= 0.0)
    flow_link_down(net, dir >> 1);
}

/* ---- setup ------------------------------------------------------------ */

static int flow_init(ts_net *net) {
  flow_state *s = calloc(1, sizeof *s);
  if (!s) return TS_ENOMEM;
  net->bstate = s;
  s->flow_free = NET_NONE;
  s->level = INFINITY;
  for (uint32_t i = 0; i <= TS_NET_MAX_HOPS; i++) s->mem_free[i] = NET_NONE;
  size_t nd = net->ndirs ? net->ndirs : 1;
  s->dirs = calloc(nd, sizeof *s->dirs);
  s->load = calloc(nd, sizeof *s->load);
  s->dx = calloc(nd, sizeof *s->dx);
  s->cdirs = malloc(nd * sizeof *s->cdirs);
  s->heap = malloc(nd * sizeof *s->heap);
  if (!s->dirs || !s->load || !s->dx || !s->cdirs || !s->heap)
    return TS_ENOMEM;
  for (uint32_t d = 0; d < net->ndirs; d++) {
    s->dirs[d].head = NET_NONE;
    s->dirs[d].bhead = NET_NONE;
  }
  return 0;
}

static void flow_fini(ts_net *net) {
  flow_state *s = fs_of(net);
  free(s->flows);
  free(s->mem);
  free(s->dirs);
  free(s->load);
  free(s->dx);
  free(s->dirty);
  free(s->cdirs);
  free(s->cflows);
  free(s->heap);
  free(s);
  net->bstate = NULL;
}

const net_backend net_flow_backend = {
    "flow", flow_init, flow_fini, flow_reserve, flow_start,
    flow_capacity_changed,
};

int ts_net_dir_rates(const ts_net *net, uint32_t dir, double *sum,
                     double *max) {
  *sum = *max = 0;
  if (net->be != &net_flow_backend || dir >= net->ndirs) return TS_EUSAGE;
  const flow_state *s = net->bstate;
  if (s->dirs[dir].dirty) return 1; /* a solve is due: rates are stale */
  for (uint32_t m = s->dirs[dir].head; m != NET_NONE; m = s->mem[m].next) {
    double r = s->flows[s->mem[m].flow].rate;
    *sum += r;
    if (r > *max) *max = r;
  }
  return 0;
}
