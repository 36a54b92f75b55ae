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

struct ts_sim {
  ts_time_ps now;
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

/* Next tie-breaking seq; renumbers the queue first when seqs run out, which
 * keeps every queued order and makes room for ~4e9 more. */
static inline uint32_t sim_take_seq(ts_sim *sim) {
  if (sim->next_seq >= sim->seq_limit)
    sim->next_seq = sim_heap_renumber(&sim->heap);
  return sim->next_seq++;
}

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
  if (at < sim->now || !fn) return TS_EUSAGE;
  uint32_t s;
  int rc = sim_alloc_slot(sim, &s);
  if (rc) return rc;
  sim_event *e = &sim->ev[s];
  e->fn = fn;
  e->ctx = ctx;
  e->arg = arg;
  sim_heap_push(&sim->heap, s, at, sim_take_seq(sim));
  sim->st.events_scheduled++;
  if (at > sim->horizon) sim_overrun(sim, 1);
  if (sim->heap.n > sim->st.peak_pending) sim->st.peak_pending = sim->heap.n;
  if (out_id) *out_id = sim_make_id(e->gen, s);
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
  if (s == SIM_HEAP_NONE || at < sim->now) return TS_EUSAGE;
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
