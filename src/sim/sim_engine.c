/* sim_engine.c - the event loop: pool of events, clock, run/stop, stats.
 *
 * Layout: ev[0..cap) is the event pool (callback, ctx, arg, generation); free
 * slots are chained through next_free. Pending events live in the heap
 * (sim_heap.c) keyed by (time, seq), where seq counts schedule and
 * reschedule calls, so equal times fire in insertion order. seq is 32-bit;
 * when it runs out the queue is renumbered in order (O(n log n) once per
 * ~4e9 schedules), so ties stay exact over any run length.
 *
 * Invariants:
 *   - a slot is pending iff sim_heap_queued(heap, slot); otherwise it is on
 *     the free list; free + pending == cap;
 *   - ev[s].gen is never 0; an id (gen << 32 | s) is live iff s is pending
 *     and ev[s].gen == gen. Freeing a slot bumps its generation, which
 *     makes every id issued for it stale;
 *   - every pending key has time >= now; now never decreases.
 *
 * Deferred scheduling (ts_sim_defer_begin): an event B that a timer E would
 * have scheduled when firing is pushed at once, at its own due time, with
 * a provisional seq, and recorded with E's key (t_E, s_E), s_E being the
 * seq E itself would have taken now. E's moment is emulated, not skipped:
 * before the loop pops an entry whose key is above (t_E, s_E) (or leaves a
 * run_until past t_E) B gets a fresh seq, so every seq is handed out in the
 * same order as with E (records in key order, siblings in creation order)
 * and every tie resolves as it would have. B cannot pop first: its due time
 * is t_E or later, and at t_E its provisional seq exceeds s_E. The records
 * form a small binary heap; the loop compares its top with the event
 * heap's once per event. Creator seqs are kept scaled, 4 s + 2, so that a
 * renumbering can place each between the queued entries' (at 4 rank).
 *
 * Costs: schedule O(log n) plus, when the pool is full, an O(cap) doubling
 * (amortized O(1)); cancel and reschedule O(log n); one event of a run
 * O(log n): pop, free the slot (so the callback can reuse it while hot),
 * call. ts_sim_now/pending O(1). The pool never shrinks: its size is the peak
 * of pending events, which is what a run needs again. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim_assert.h"
#include "sim/sim_engine.h"
#include "sim/sim_heap.h"
#include "sim/sim_mem.h"
#include "topsim/ts_sim.h"

#define SIM_MAX_PENDING (UINT32_C(1) << 31)
#define SIM_FIRST_CAP 256u

typedef struct sim_event {
  ts_sim_fn fn;
  void *ctx;
  uint64_t arg;
  uint32_t gen;       /* generation of the slot's current (or next) id */
  uint32_t next_free; /* free-list link while free */
} sim_event;

/* A deferred event waiting for its creator's moment. */
typedef struct sim_prov {
  ts_time_ps ct;   /* creator's time */
  int64_t cs;      /* creator's seq, scaled (4 s + 2) */
  uint64_t ord;    /* creation order: siblings keep it */
  ts_event_id id;  /* the event */
  uint32_t seq;    /* its provisional seq (another: moved by someone) */
} sim_prov;

struct ts_sim {
  ts_time_ps now;
  bool defer;         /* inside ts_sim_defer_begin/_end */
  ts_time_ps def_t;   /* the bracket's creator key */
  int64_t def_s;
  sim_prov *prov;     /* binary min-heap by (ct, cs, ord) */
  uint32_t nprov, capprov;
  uint64_t prov_ord;
  uint32_t next_seq;  /* seq of the next schedule or reschedule */
  uint32_t seq_limit; /* renumber queued seqs when next_seq reaches this */
  sim_heap heap;
  sim_event *ev;
  uint32_t cap;
  uint32_t free_head; /* SIM_HEAP_NONE when the pool is full */
  bool running;
  bool stop;
  int overrun;          /* 0, or which limit stopped the run (1 time, 2 events) */
  ts_time_ps horizon;   /* events due later stop the run */
  uint64_t max_events;  /* events_processed beyond this stops the run */
  ts_sim_stats st; /* pending, now and events_per_s filled on read */
};

static inline ts_event_id sim_make_id(uint32_t gen, uint32_t slot) {
  return (uint64_t)gen << 32 | slot;
}

/* Slot of a live id, or SIM_HEAP_NONE if the id is stale or bogus. */
static inline uint32_t sim_live_slot(const ts_sim *sim, ts_event_id id) {
  uint32_t s = (uint32_t)id;
  uint32_t gen = (uint32_t)(id >> 32);
  if (gen == 0 || !sim_heap_queued(&sim->heap, s) || sim->ev[s].gen != gen)
    return SIM_HEAP_NONE;
  return s;
}

static double sim_clock_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Grows the pool and the heap to cap slots, chaining the new ones. */
static int sim_grow(ts_sim *sim, uint32_t cap) {
  if (cap <= sim->cap) return TS_OK;
  sim_event *ev = sim_mem_alloc((size_t)cap * sizeof *ev);
  if (!ev) return TS_ENOMEM;
  if (sim_heap_grow(&sim->heap, cap)) {
    free(ev);
    return TS_ENOMEM;
  }
  if (sim->cap) memcpy(ev, sim->ev, (size_t)sim->cap * sizeof *ev);
  free(sim->ev);
  sim->ev = ev;
  for (uint32_t s = sim->cap; s < cap; s++) {
    ev[s] = (sim_event){.gen = 1, .next_free = s + 1};
  }
  ev[cap - 1].next_free = sim->free_head;
  sim->free_head = sim->cap;
  sim->cap = cap;
  return TS_OK;
}

int ts_sim_new(ts_sim **out) {
  *out = NULL;
  ts_sim *sim = calloc(1, sizeof *sim);
  if (!sim) return TS_ENOMEM;
  sim_heap_init(&sim->heap);
  sim->free_head = SIM_HEAP_NONE;
  sim->seq_limit = SIM_SEQ_LIMIT;
  sim->horizon = UINT64_MAX;
  sim->max_events = UINT64_MAX;
  if (sim_grow(sim, SIM_FIRST_CAP)) {
    ts_sim_free(sim);
    return TS_ENOMEM;
  }
  *out = sim;
  return TS_OK;
}

void ts_sim_free(ts_sim *sim) {
  if (!sim) return;
  SIM_ASSERT(!sim->running, "ts_sim_free called from a callback");
  sim_heap_fini(&sim->heap);
  free(sim->ev);
  free(sim->prov);
  free(sim);
}

int ts_sim_reserve(ts_sim *sim, uint64_t n) {
  if (n >= SIM_MAX_PENDING) return TS_ELIMIT;
  return sim_grow(sim, (uint32_t)n);
}

/* Takes a free slot, growing the pool by doubling when none is left. */
static int sim_alloc_slot(ts_sim *sim, uint32_t *out) {
  if (sim->free_head == SIM_HEAP_NONE) {
    if (sim->cap >= SIM_MAX_PENDING) return TS_ELIMIT;
    int rc = sim_grow(sim, sim->cap * 2);
    if (rc) return rc;
  }
  uint32_t s = sim->free_head;
  sim->free_head = sim->ev[s].next_free;
  *out = s;
  return TS_OK;
}

/* Returns slot s to the free list; every id issued for it becomes stale. */
static inline void sim_free_slot(ts_sim *sim, uint32_t s) {
  sim_event *e = &sim->ev[s];
  e->gen = e->gen == UINT32_MAX ? 1 : e->gen + 1;
  e->next_free = sim->free_head;
  sim->free_head = s;
}

/* ---- deferred events (see the top of this file) ---------------------- */

static inline int64_t prov_key(uint32_t seq) { return 4 * (int64_t)seq + 2; }

static inline bool prov_less(const sim_prov *a, const sim_prov *b) {
  if (a->ct != b->ct) return a->ct < b->ct;
  if (a->cs != b->cs) return a->cs < b->cs;
  return a->ord < b->ord;
}

static void prov_sift_down(ts_sim *sim, uint32_t i) {
  sim_prov *v = sim->prov, x = v[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= sim->nprov) break;
    if (c + 1 < sim->nprov && prov_less(&v[c + 1], &v[c])) c++;
    if (!prov_less(&v[c], &x)) break;
    v[i] = v[c];
    i = c;
  }
  v[i] = x;
}

static int entry_key_cmp(const void *a, const void *b) {
  const sim_entry *x = a, *y = b;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Entries of sorted[0..n) whose key is below creator key (ct, cs). */
static int64_t prov_rank(const sim_entry *sorted, uint32_t n, ts_time_ps ct,
                         int64_t cs) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const sim_entry *x = &sorted[mid];
    if (x->time < ct || (x->time == ct && prov_key(x->seq) < cs)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Renumbers the queue (seqs 0..n-1 in key order) and maps each record's
 * creator key, and the bracket's, between the entries it sits between, and
 * each record's provisional seq to its event's new one. Monotone, so the
 * record heap stays ordered. O((records + n) log n), once per ~4e9 seqs
 * (aborts without memory for a copy of the queue). Returns the next free
 * seq. */
static uint32_t sim_renumber(ts_sim *sim) {
  uint32_t n0 = sim->heap.n;
  sim_entry *sorted = malloc(((size_t)n0 + 1) * sizeof *sorted);
  SIM_ASSERT(sorted != NULL, "out of memory renumbering deferred events");
  memcpy(sorted, sim->heap.e, (size_t)n0 * sizeof *sorted);
  qsort(sorted, n0, sizeof *sorted, entry_key_cmp);
  for (uint32_t i = 0; i < sim->nprov; i++) {
    sim_prov *p = &sim->prov[i];
    p->cs = 4 * prov_rank(sorted, n0, p->ct, p->cs);
    uint32_t s = sim_live_slot(sim, p->id);
    if (s == SIM_HEAP_NONE || sim->heap.e[sim->heap.pos[s]].seq != p->seq)
      p->seq = UINT32_MAX; /* gone or moved: stays so (new seqs < n) */
  }
  if (sim->defer) sim->def_s = 4 * prov_rank(sorted, n0, sim->def_t, sim->def_s);
  free(sorted);
  uint32_t n = sim_heap_renumber(&sim->heap);
  for (uint32_t i = 0; i < sim->nprov; i++) {
    sim_prov *p = &sim->prov[i];
    uint32_t s = sim_live_slot(sim, p->id);
    if (s != SIM_HEAP_NONE && p->seq != UINT32_MAX)
      p->seq = sim->heap.e[sim->heap.pos[s]].seq;
  }
  return n;
}

/* Next tie-breaking seq; renumbers the queue first when seqs run out, which
 * keeps every queued order and makes room for ~4e9 more. */
static inline uint32_t sim_take_seq(ts_sim *sim) {
  if (sim->next_seq >= sim->seq_limit) {
    sim->next_seq = sim->nprov || sim->defer ? sim_renumber(sim)
                                             : sim_heap_renumber(&sim->heap);
  }
  return sim->next_seq++;
}

/* Records deferred event id, pushed with provisional seq `seq`. */
static int prov_add(ts_sim *sim, ts_event_id id, uint32_t seq) {
  if (sim->nprov == sim->capprov) {
    uint32_t cap = sim->capprov ? 2 * sim->capprov : 64;
    sim_prov *v = realloc(sim->prov, (size_t)cap * sizeof *v);
    if (!v) return TS_ENOMEM;
    sim->prov = v;
    sim->capprov = cap;
  }
  sim_prov x = {sim->def_t, sim->def_s, sim->prov_ord++, id, seq};
  uint32_t i = sim->nprov++;
  while (i > 0 && prov_less(&x, &sim->prov[(i - 1) / 2])) {
    sim->prov[i] = sim->prov[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  sim->prov[i] = x;
  return TS_OK;
}

/* The creator of the first record fires: its event gets the seq it would
 * have had (unless it is gone or was moved by someone). */
static void prov_fire_first(ts_sim *sim) {
  sim_prov p = sim->prov[0];
  sim->prov[0] = sim->prov[--sim->nprov];
  if (sim->nprov) prov_sift_down(sim, 0);
  uint32_t s = sim_live_slot(sim, p.id);
  if (s == SIM_HEAP_NONE) return;
  const sim_entry *x = &sim->heap.e[sim->heap.pos[s]];
  if (x->seq != p.seq) return;
  ts_time_ps at = x->time;
  uint32_t seq = sim_take_seq(sim); /* may renumber: x moves */
  sim_heap_update(&sim->heap, s, at, seq);
}

/* Fires every creator whose moment precedes the event heap's top (all up
 * to time `limit` inclusive when the heap has nothing due by then). */
static void prov_fire_due(ts_sim *sim, ts_time_ps limit) {
  while (sim->nprov) {
    const sim_prov *p = &sim->prov[0];
    const sim_entry *top = sim->heap.n ? &sim->heap.e[0] : NULL;
    bool due = top && top->time <= limit
                   ? p->ct < top->time ||
                         (p->ct == top->time && p->cs < prov_key(top->seq))
                   : p->ct <= limit;
    if (!due) return;
    prov_fire_first(sim);
  }
}

int ts_sim_defer_begin(ts_sim *sim, ts_time_ps at) {
  if (sim->defer || at < sim->now) return TS_EUSAGE;
  sim->def_t = at;
  sim->def_s = prov_key(sim_take_seq(sim)); /* the seq E would have had */
  sim->defer = true;
  return TS_OK;
}

void ts_sim_defer_end(ts_sim *sim) { sim->defer = false; }

void sim_set_seq_limit(ts_sim *sim, uint32_t limit) {
  SIM_ASSERT(limit >= 1, "seq limit must be positive");
  sim->seq_limit = limit;
}

/* A limit is hit: remember which and stop the run after this callback. */
static void sim_overrun(ts_sim *sim, int which) {
  if (!sim->overrun) sim->overrun = which;
  sim->stop = true;
}

void ts_sim_set_limits(ts_sim *sim, ts_time_ps horizon, uint64_t max_events) {
  sim->horizon = horizon;
  sim->max_events = max_events;
}

int ts_sim_overrun(const ts_sim *sim) { return sim->overrun; }

int ts_sim_schedule(ts_sim *sim, ts_time_ps at, ts_sim_fn fn, void *ctx,
                    uint64_t arg, ts_event_id *out_id) {
  if (at < sim->now || !fn || (sim->defer && at < sim->def_t))
    return TS_EUSAGE;
  uint32_t s;
  int rc = sim_alloc_slot(sim, &s);
  if (rc) return rc;
  sim_event *e = &sim->ev[s];
  e->fn = fn;
  e->ctx = ctx;
  e->arg = arg;
  uint32_t seq = sim_take_seq(sim);
  ts_event_id id = sim_make_id(e->gen, s);
  if (sim->defer && prov_add(sim, id, seq)) {
    sim_free_slot(sim, s);
    return TS_ENOMEM;
  }
  sim_heap_push(&sim->heap, s, at, seq);
  sim->st.events_scheduled++;
  if (at > sim->horizon) sim_overrun(sim, 1);
  if (sim->heap.n > sim->st.peak_pending) sim->st.peak_pending = sim->heap.n;
  if (out_id) *out_id = id;
  return TS_OK;
}

int ts_sim_schedule_in(ts_sim *sim, ts_time_ps delay, ts_sim_fn fn, void *ctx,
                       uint64_t arg, ts_event_id *out_id) {
  if (delay > UINT64_MAX - sim->now) return TS_ELIMIT;
  return ts_sim_schedule(sim, sim->now + delay, fn, ctx, arg, out_id);
}

int ts_sim_cancel(ts_sim *sim, ts_event_id id) {
  uint32_t s = sim_live_slot(sim, id);
  if (s == SIM_HEAP_NONE) return TS_EUSAGE;
  sim_heap_remove(&sim->heap, s);
  sim_free_slot(sim, s);
  sim->st.events_cancelled++;
  return TS_OK;
}

int ts_sim_reschedule(ts_sim *sim, ts_event_id id, ts_time_ps at) {
  uint32_t s = sim_live_slot(sim, id);
  if (s == SIM_HEAP_NONE || at < sim->now || sim->defer) return TS_EUSAGE;
  sim_heap_update(&sim->heap, s, at, sim_take_seq(sim));
  sim->st.events_rescheduled++;
  if (at > sim->horizon) sim_overrun(sim, 1);
  return TS_OK;
}

ts_time_ps ts_sim_now(const ts_sim *sim) { return sim->now; }

uint64_t ts_sim_pending(const ts_sim *sim) { return sim->heap.n; }

void ts_sim_stop(ts_sim *sim) {
  if (sim->running) sim->stop = true;
}

/* The event loop: fires events due at or before limit until the heap is
 * empty or a callback stops the run. Returns true if it was stopped. */
static bool sim_loop(ts_sim *sim, ts_time_ps limit) {
  sim_heap *h = &sim->heap;
  while (!sim->stop && h->n > 0) {
    if (sim->nprov) prov_fire_due(sim, limit);
    ts_time_ps t = h->e[0].time;
    if (t > limit) break;
    SIM_DASSERT(t >= sim->now, "event due before the clock");
    uint32_t s = sim_heap_pop(h);
    sim_event *e = &sim->ev[s];
    ts_sim_fn fn = e->fn;
    void *ctx = e->ctx;
    uint64_t arg = e->arg;
    sim_free_slot(sim, s); /* before the call: ev may move if fn schedules */
    if (h->n > 0) __builtin_prefetch(&sim->ev[h->e[0].slot]); /* next event */
    sim->now = t;
    if (++sim->st.events_processed > sim->max_events) sim_overrun(sim, 2);
    fn(sim, ctx, arg);
  }
  return sim->stop;
}

static int sim_run_to(ts_sim *sim, ts_time_ps limit, bool advance) {
  if (sim->running) return TS_EUSAGE;
  sim->running = true;
  sim->stop = sim->overrun != 0;
  double t0 = sim_clock_s();
  bool stopped = sim_loop(sim, limit);
  /* creators due by the limit fire now, as they would have; a run to the
   * end leaves none (their events popped after them) */
  if (!stopped && sim->nprov) prov_fire_due(sim, limit);
  sim->st.wall_s += sim_clock_s() - t0;
  sim->running = false;
  sim->stop = false;
  if (advance && !stopped) sim->now = limit;
  return sim->overrun ? TS_ELIMIT : TS_OK;
}

int ts_sim_run(ts_sim *sim) { return sim_run_to(sim, UINT64_MAX, false); }

int ts_sim_run_until(ts_sim *sim, ts_time_ps t) {
  if (t < sim->now) return TS_EUSAGE;
  return sim_run_to(sim, t, true);
}

void ts_sim_stats_get(const ts_sim *sim, ts_sim_stats *out) {
  *out = sim->st;
  out->pending = sim->heap.n;
  out->now = sim->now;
  out->events_per_s =
      out->wall_s > 0 ? (double)out->events_processed / out->wall_s : 0.0;
}

int ts_sim_stats_print(const ts_sim *sim, FILE *f) {
  ts_sim_stats st;
  ts_sim_stats_get(sim, &st);
  int rc = fprintf(f,
                   "sim.events_scheduled: %" PRIu64 "\n"
                   "sim.events_processed: %" PRIu64 "\n"
                   "sim.events_cancelled: %" PRIu64 "\n"
                   "sim.events_rescheduled: %" PRIu64 "\n"
                   "sim.pending: %" PRIu64 "\n"
                   "sim.peak_pending: %" PRIu64 "\n"
                   "sim.now_ps: %" PRIu64 "\n"
                   "sim.wall_s: %.6f\n"
                   "sim.events_per_s: %.0f\n",
                   st.events_scheduled, st.events_processed,
                   st.events_cancelled, st.events_rescheduled, st.pending,
                   st.peak_pending, st.now, st.wall_s,
                   st.events_per_s);
  if (rc < 0 || fflush(f) != 0 || ferror(f)) return TS_EIO;
  return TS_OK;
}
