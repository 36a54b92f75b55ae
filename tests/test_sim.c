/* test_sim.c - the event engine: ordering, cancel, pool reuse, run control,
 * stats and determinism. Traces record (time, arg) of every fired event and
 * are compared against the order the contract promises: by time, then by
 * insertion (schedule or reschedule) order. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_engine.h"
#include "sim/sim_heap.h"
#include "topsim/ts_sim.h"

#define TRACE_MAX 200000

typedef struct trace {
  size_t n;
  ts_time_ps time[TRACE_MAX];
  uint64_t arg[TRACE_MAX];
} trace;

static trace tr_a, tr_b;

static void record(ts_sim *sim, void *ctx, uint64_t arg) {
  trace *t = ctx;
  assert_true(t->n < TRACE_MAX);
  t->time[t->n] = ts_sim_now(sim);
  t->arg[t->n] = arg;
  t->n++;
}

static uint64_t xorshift64(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

static ts_sim *new_sim(void) {
  ts_sim *sim = NULL;
  assert_int_equal(ts_sim_new(&sim), 0);
  assert_non_null(sim);
  return sim;
}

/* 1000 events at one time, interleaved with later and earlier ones, fire in
 * insertion order within each time. */
static void equal_times_fire_in_insertion_order(void **state) {
  ts_sim *sim = new_sim();
  memset(&tr_a, 0, sizeof tr_a);
  for (uint64_t i = 0; i < 3000; i++) {
    ts_time_ps at = i % 3 == 0 ? 500 : i % 3 == 1 ? 900 : 100;
    assert_int_equal(ts_sim_schedule(sim, at, record, &tr_a, i, NULL), 0);
  }
  assert_int_equal(ts_sim_run(sim), 0);
  assert_int_equal(tr_a.n, 3000);
  for (size_t k = 0; k < 3000; k++) {
    uint64_t group = k / 1000; /* 100s (i%3==2), then 500s, then 900s */
    uint64_t want = (k % 1000) * 3 + (group == 0 ? 2 : group == 1 ? 0 : 1);
    assert_int_equal(tr_a.arg[k], want);
    assert_int_equal(tr_a.time[k], group == 0 ? 100 : group == 1 ? 500 : 900);
  }
  assert_int_equal(ts_sim_now(sim), 900);
  ts_sim_free(sim);
}

/* Random times (few distinct values, so many ties) inserted out of order pop
 * sorted by time and, within a time, by insertion index (= arg). */
static void random_times_pop_sorted(void **state) {
  ts_sim *sim = new_sim();
  memset(&tr_a, 0, sizeof tr_a);
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  for (uint64_t i = 0; i < 50000; i++) {
    ts_time_ps at = xorshift64(&seed) % 5000;
    assert_int_equal(ts_sim_schedule(sim, at, record, &tr_a, i, NULL), 0);
  }
  assert_int_equal(ts_sim_pending(sim), 50000);
  assert_int_equal(ts_sim_run(sim), 0);
  assert_int_equal(tr_a.n, 50000);
  for (size_t k = 1; k < tr_a.n; k++) {
    assert_true(tr_a.time[k - 1] <= tr_a.time[k]);
    if (tr_a.time[k - 1] == tr_a.time[k])
      assert_true(tr_a.arg[k - 1] < tr_a.arg[k]);
  }
  ts_sim_free(sim);
}

/* The private heap keeps its invariants through random push/pop/remove/
 * update, including removal of the root, the last entry and middle ones. */
static void heap_invariants_hold(void **state) {
  sim_heap h;
  sim_heap_init(&h);
  assert_int_equal(sim_heap_grow(&h, 64), 0);
  assert_int_equal(sim_heap_grow(&h, 4096), 0); /* growth copies keys */
  uint64_t seed = 42;
  uint32_t seq = 0;
  for (uint32_t s = 0; s < 2000; s++)
    sim_heap_push(&h, s, xorshift64(&seed) % 100, seq++);
  assert_true(sim_heap_verify(&h));
  sim_heap_remove(&h, h.e[0].slot);         /* root */
  sim_heap_remove(&h, h.e[h.n - 1].slot);   /* last */
  sim_heap_remove(&h, h.e[h.n / 2].slot);   /* middle */
  assert_true(sim_heap_verify(&h));
  assert_int_equal(h.n, 1997);
  for (int round = 0; round < 20000; round++) {
    uint64_t r = xorshift64(&seed);
    uint32_t s = (uint32_t)(r >> 20) % 4096;
    if (!sim_heap_queued(&h, s)) {
      sim_heap_push(&h, s, r % 1000, seq++);
    } else if (r & 1) {
      sim_heap_remove(&h, s);
    } else {
      sim_heap_update(&h, s, (r >> 8) % 1000, seq++);
    }
    if (round % 1000 == 0) assert_true(sim_heap_verify(&h));
  }
  assert_true(sim_heap_verify(&h));
  sim_entry prev = {0, 0, 0};
  while (h.n) {
    sim_entry k = h.e[0];
    assert_true(prev.time < k.time ||
                (prev.time == k.time && prev.seq <= k.seq));
    prev = k;
    uint32_t s = sim_heap_pop(&h);
    assert_false(sim_heap_queued(&h, s));
  }
  assert_true(sim_heap_verify(&h));
  sim_heap_fini(&h);
}

/* Cancelling the earliest, the latest and a middle event removes exactly
 * those from the trace. */
static void cancel_root_last_middle(void **state) {
  ts_sim *sim = new_sim();
  memset(&tr_a, 0, sizeof tr_a);
  ts_event_id id[100];
  for (uint64_t i = 0; i < 100; i++)
    assert_int_equal(
        ts_sim_schedule(sim, 1000 - 10 * i, record, &tr_a, i, &id[i]), 0);
  assert_int_equal(ts_sim_cancel(sim, id[99]), 0); /* earliest: the root */
  assert_int_equal(ts_sim_cancel(sim, id[0]), 0);  /* latest */
  assert_int_equal(ts_sim_cancel(sim, id[50]), 0); /* middle */
  assert_int_equal(ts_sim_pending(sim), 97);
  assert_int_equal(ts_sim_run(sim), 0);
  assert_int_equal(tr_a.n, 97);
  uint64_t want = 98;
  for (size_t k = 0; k < tr_a.n; k++, want--) {
    if (want == 50) want--;
    assert_int_equal(tr_a.arg[k], want);
    assert_int_equal(tr_a.time[k], 1000 - 10 * want);
  }
  ts_sim_free(sim);
}

/* A cancelled slot is reused by the next schedule; the old id is rejected
 * and cannot cancel the new event. Fired ids and bogus ids are rejected. */
static void stale_ids_rejected_after_reuse(void **state) {
  ts_sim *sim = new_sim();
  memset(&tr_a, 0, sizeof tr_a);
  ts_event_id a, b, c;
  assert_int_equal(ts_sim_schedule(sim, 10, record, &tr_a, 1, &a), 0);
  assert_int_equal(ts_sim_cancel(sim, a), 0);
  assert_int_equal(ts_sim_schedule(sim, 20, record, &tr_a, 2, &b), 0);
  assert_int_equal((uint32_t)a, (uint32_t)b); /* same slot, LIFO free list */
  assert_true(a != b);
  assert_int_equal(ts_sim_cancel(sim, a), TS_EUSAGE);
  assert_int_equal(ts_sim_reschedule(sim, a, 30), TS_EUSAGE);
  assert_int_equal(ts_sim_cancel(sim, TS_SIM_NO_EVENT), TS_EUSAGE);
  assert_int_equal(ts_sim_cancel(sim, ((uint64_t)1 << 32) | 123456), TS_EUSAGE);
  assert_int_equal(ts_sim_schedule(sim, 30, record, &tr_a, 3, &c), 0);
  assert_int_equal(ts_sim_run(sim), 0);
  assert_int_equal(tr_a.n, 2);
  assert_int_equal(tr_a.arg[0], 2);
  assert_int_equal(tr_a.arg[1], 3);
  assert_int_equal(ts_sim_cancel(sim, b), TS_EUSAGE); /* fired */
  assert_int_equal(ts_sim_cancel(sim, c), TS_EUSAGE);
  ts_sim_stats st;
  ts_sim_stats_get(sim, &st);
  assert_int_equal(st.events_cancelled, 1);
  ts_sim_free(sim);
}

/* Ids issued before the pool grows stay valid after it grows many times. */
static void ids_survive_pool_growth(void **state) {
  ts_sim *sim = new_sim();
  memset(&tr_a, 0, sizeof tr_a);
  static ts_event_id id[20000];
  for (uint64_t i = 0; i < 20000; i++)
    assert_int_equal(ts_sim_schedule(sim, i, record, &tr_a, i, &id[i]), 0);
  for (uint64_t i = 0; i < 20000; i += 2)
    assert_int_equal(ts_sim_cancel(sim, id[i]), 0);
  assert_int_equal(ts_sim_run(sim), 0);
  assert_int_equal(tr_a.n, 10000);
  for (size_t k = 0; k < tr_a.n; k++) assert_int_equal(tr_a.arg[k], 2 * k + 1);
  ts_sim_free(sim);
}

/* Chain: each event at t schedules one at t (now) and, for even args, one at
 * t + 7. An event scheduled at now fires after events already due at now. */
typedef struct chain {
  trace *tr;
  uint64_t left;
} chain;

static void chain_fn(ts_sim *sim, void *ctx, uint64_t arg) {
  chain *c = ctx;
  record(sim, c->tr, arg);
  if (c->left == 0) return;
  c->left--;
  assert_int_equal(ts_sim_schedule_in(sim, 0, chain_fn, c, arg + 100, NULL),
                   0);
  if (arg % 2 == 0)
    assert_int_equal(ts_sim_schedule_in(sim, 7, chain_fn, c, arg + 1, NULL),
                     0);
  assert_int_equal(ts_sim_schedule(sim, ts_sim_now(sim) - 1, chain_fn, c, 0,
                                   NULL),
                   ts_sim_now(sim) ? TS_EUSAGE : 0);
}

static void events_schedule_events(void **state) {
  ts_sim *sim = new_sim();
  memset(&tr_a, 0, sizeof tr_a);
  chain c = {&tr_a, 3};
  assert_int_equal(ts_sim_schedule(sim, 5, chain_fn, &c, 0, NULL), 0);
  assert_int_equal(ts_sim_schedule(sim, 5, chain_fn, &c, 1000, NULL), 0);
  assert_int_equal(ts_sim_run(sim), 0);
  /* t=5: 0 (sched 100@5, 1@12), 1000 (sched 1100@5, 1001@12), 100 (sched
   * 200@5, 101@12), 1100 and 200 (budget spent); t=12: 1, 1001, 101. */
  static const uint64_t want_arg[] = {0, 1000, 100, 1100, 200, 1, 1001, 101};
  static const ts_time_ps want_t[] = {5, 5, 5, 5, 5, 12, 12, 12};
  assert_int_equal(tr_a.n, 8);
  for (size_t k = 0; k < 8; k++) {
    assert_int_equal(tr_a.arg[k], want_arg[k]);
    assert_int_equal(tr_a.time[k], want_t[k]);
  }
  ts_sim_free(sim);
}

static void stop_at_arg(ts_sim *sim, void *ctx, uint64_t arg) {
  record(sim, ctx, arg);
  if (arg == 99) ts_sim_stop(sim);
}

/* run_until fires events at or before t, leaves the clock at t and resumes;
 * ts_sim_stop ends a run early with the clock at the stopping event. */
static void run_until_and_stop(void **state) {
  ts_sim *sim = new_sim();
  memset(&tr_a, 0, sizeof tr_a);
  for (uint64_t i = 1; i <= 5; i++)
    assert_int_equal(ts_sim_schedule(sim, 10 * i, record, &tr_a, i, NULL), 0);
  assert_int_equal(ts_sim_run_until(sim, 20), 0);
  assert_int_equal(tr_a.n, 2);
  assert_int_equal(ts_sim_now(sim), 20);
  assert_int_equal(ts_sim_pending(sim), 3);
  assert_int_equal(ts_sim_run_until(sim, 25), 0);
  assert_int_equal(tr_a.n, 2);
  assert_int_equal(ts_sim_now(sim), 25);
  assert_int_equal(ts_sim_run_until(sim, 24), TS_EUSAGE);
  assert_int_equal(ts_sim_schedule(sim, 24, record, &tr_a, 0, NULL),
                   TS_EUSAGE);
  assert_int_equal(ts_sim_schedule(sim, 25, stop_at_arg, &tr_a, 99, NULL), 0);
  ts_sim_stop(sim); /* outside a run: no effect on the next run */
  assert_int_equal(ts_sim_run_until(sim, 1000), 0);
  assert_int_equal(tr_a.n, 3);
  assert_int_equal(ts_sim_now(sim), 25); /* stopped: clock not advanced */
  assert_int_equal(ts_sim_run(sim), 0);
  assert_int_equal(tr_a.n, 6);
  assert_int_equal(tr_a.time[5], 50);
  assert_int_equal(ts_sim_now(sim), 50); /* run leaves the last event time */
  assert_int_equal(ts_sim_run_until(sim, 60), 0); /* empty: clock moves */
  assert_int_equal(ts_sim_now(sim), 60);
  ts_sim_free(sim);
}

static void noop(ts_sim *sim, void *ctx, uint64_t arg) {}

static void reenter(ts_sim *sim, void *ctx, uint64_t arg) {
  *(int *)ctx = ts_sim_run(sim);
}

static void count_ev(ts_sim *sim, void *ctx, uint64_t arg) { (*(int *)ctx)++; }

/* Budgets of a run: an event due after the horizon stops the run before it
 * fires (the events before it fire), TS_ELIMIT, overrun 1; more events than
 * the limit stop it after the (limit+1)-th, overrun 2. */
static void limits(void **state) {
  ts_sim *sim = new_sim();
  int fired = 0;
  ts_sim_set_limits(sim, 1000, UINT64_MAX);
  assert_int_equal(ts_sim_schedule(sim, 10, count_ev, &fired, 0, NULL), 0);
  assert_int_equal(ts_sim_schedule(sim, 1000, count_ev, &fired, 0, NULL), 0);
  assert_int_equal(ts_sim_overrun(sim), 0);
  assert_int_equal(ts_sim_schedule(sim, 1001, count_ev, &fired, 0, NULL), 0);
  assert_int_equal(ts_sim_overrun(sim), 1);
  assert_int_equal(ts_sim_run(sim), TS_ELIMIT);
  assert_int_equal(fired, 0); /* stopped at once: the horizon is already passed */
  ts_sim_free(sim);
  sim = new_sim();
  fired = 0;
  ts_sim_set_limits(sim, UINT64_MAX, 3);
  for (int i = 0; i < 10; i++)
    assert_int_equal(ts_sim_schedule(sim, (ts_time_ps)i, count_ev, &fired, 0, NULL), 0);
  assert_int_equal(ts_sim_run(sim), TS_ELIMIT);
  assert_int_equal(fired, 4);
  assert_int_equal(ts_sim_overrun(sim), 2);
  ts_sim_free(sim);
}

/* Argument errors leave the engine unchanged. */
static void usage_errors(void **state) {
  ts_sim *sim = new_sim();
  ts_event_id id = 77;
  assert_int_equal(ts_sim_schedule(sim, 5, NULL, NULL, 0, &id), TS_EUSAGE);
  assert_int_equal(id, 77);
  assert_int_equal(ts_sim_schedule(sim, 100, noop, NULL, 0, &id), 0);
  assert_int_equal(ts_sim_run_until(sim, 50), 0);
  assert_int_equal(ts_sim_schedule_in(sim, UINT64_MAX - 10, noop, NULL, 0,
                                      NULL),
                   TS_ELIMIT);
  assert_int_equal(ts_sim_reschedule(sim, id, 49), TS_EUSAGE);
  assert_int_equal(ts_sim_reschedule(sim, id, 60), 0);
  assert_int_equal(ts_sim_reserve(sim, (uint64_t)1 << 40), TS_ELIMIT);
  assert_int_equal(ts_sim_reserve(sim, 1000), 0);
  int rc = 1;
  assert_int_equal(ts_sim_schedule(sim, 70, reenter, &rc, 0, NULL), 0);
  assert_int_equal(ts_sim_run(sim), 0);
  assert_int_equal(rc, TS_EUSAGE);
  assert_int_equal(ts_sim_now(sim), 70);
  assert_int_equal(ts_sim_pending(sim), 0);
  ts_sim_free(sim);
  ts_sim_free(NULL);
}

/* Reschedule moves an event and re-ties it as if inserted now. */
static void reschedule_reorders(void **state) {
  ts_sim *sim = new_sim();
  memset(&tr_a, 0, sizeof tr_a);
  ts_event_id a, b;
  assert_int_equal(ts_sim_schedule(sim, 10, record, &tr_a, 1, &a), 0);
  assert_int_equal(ts_sim_schedule(sim, 30, record, &tr_a, 2, &b), 0);
  assert_int_equal(ts_sim_schedule(sim, 20, record, &tr_a, 3, NULL), 0);
  assert_int_equal(ts_sim_reschedule(sim, a, 20), 0); /* after 3 at 20 */
  assert_int_equal(ts_sim_reschedule(sim, b, 5), 0);  /* first */
  assert_int_equal(ts_sim_run(sim), 0);
  static const uint64_t want[] = {2, 3, 1};
  assert_int_equal(tr_a.n, 3);
  for (size_t k = 0; k < 3; k++) assert_int_equal(tr_a.arg[k], want[k]);
  assert_int_equal(ts_sim_cancel(sim, a), TS_EUSAGE);
  ts_sim_free(sim);
}

/* Exact counters: 10 scheduled, 3 cancelled, 1 rescheduled, 7 processed,
 * peak 10; a run_until leaves 2 pending. */
static void stats_are_exact(void **state) {
  ts_sim *sim = new_sim();
  ts_event_id id[10];
  for (uint64_t i = 0; i < 10; i++)
    assert_int_equal(ts_sim_schedule(sim, i * 10, noop, NULL, i, &id[i]), 0);
  for (int i = 0; i < 3; i++) assert_int_equal(ts_sim_cancel(sim, id[i]), 0);
  assert_int_equal(ts_sim_reschedule(sim, id[3], 35), 0);
  assert_int_equal(ts_sim_run_until(sim, 75), 0);
  ts_sim_stats st;
  ts_sim_stats_get(sim, &st);
  assert_int_equal(st.events_scheduled, 10);
  assert_int_equal(st.events_cancelled, 3);
  assert_int_equal(st.events_rescheduled, 1);
  assert_int_equal(st.events_processed, 5);
  assert_int_equal(st.pending, 2);
  assert_int_equal(st.peak_pending, 10);
  assert_int_equal(st.now, 75);
  assert_true(st.wall_s >= 0);
  assert_int_equal(ts_sim_run(sim), 0);
  ts_sim_stats_get(sim, &st);
  assert_int_equal(st.events_processed, 7);
  assert_int_equal(st.pending, 0);

  FILE *f = tmpfile();
  assert_non_null(f);
  assert_int_equal(ts_sim_stats_print(sim, f), 0);
  rewind(f);
  char buf[1024];
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  buf[len] = '\0';
  fclose(f);
  assert_non_null(strstr(buf, "sim.events_processed: 7\n"));
  assert_non_null(strstr(buf, "sim.events_cancelled: 3\n"));
  assert_non_null(strstr(buf, "sim.peak_pending: 10\n"));
  assert_non_null(strstr(buf, "sim.now_ps: 90\n"));
  ts_sim_free(sim);
}

/* A model that schedules, cancels and reschedules from callbacks, driven by
 * its own xorshift state; used twice to check runs are identical. */
typedef struct churn {
  trace *tr;
  uint64_t rng;
  uint64_t budget;
  ts_event_id recent[64];
} churn;

static void churn_fn(ts_sim *sim, void *ctx, uint64_t arg) {
  churn *c = ctx;
  record(sim, c->tr, arg);
  if (c->budget == 0) return;
  c->budget--;
  uint64_t r = xorshift64(&c->rng);
  int n = 1 + (int)(r % 3);
  for (int k = 0; k < n; k++) {
    uint64_t d = (xorshift64(&c->rng) % 4) * 250; /* many ties */
    ts_event_id *slot = &c->recent[xorshift64(&c->rng) % 64];
    assert_int_equal(ts_sim_schedule_in(sim, d, churn_fn, c, r + k, slot), 0);
  }
  ts_event_id victim = c->recent[(r >> 32) % 64];
  if (r & 0x100) {
    (void)ts_sim_cancel(sim, victim); /* may be stale: that is fine */
  } else if (r & 0x200) {
    (void)ts_sim_reschedule(sim, victim, ts_sim_now(sim) + (r >> 50));
  }
}

static void run_churn(trace *tr, uint32_t seq_limit) {
  memset(tr, 0, sizeof *tr);
  ts_sim *sim = new_sim();
  if (seq_limit) sim_set_seq_limit(sim, seq_limit);
  churn c = {.tr = tr, .rng = 0x1234567u, .budget = 50000};
  for (uint64_t i = 0; i < 100; i++)
    assert_int_equal(ts_sim_schedule(sim, i % 7, churn_fn, &c, i, NULL), 0);
  assert_int_equal(ts_sim_run(sim), 0);
  ts_sim_free(sim);
}

static void identical_runs_identical_traces(void **state) {
  run_churn(&tr_a, 0);
  run_churn(&tr_b, 0);
  assert_true(tr_a.n > 50000);
  assert_int_equal(tr_a.n, tr_b.n);
  assert_memory_equal(tr_a.time, tr_b.time, tr_a.n * sizeof tr_a.time[0]);
  assert_memory_equal(tr_a.arg, tr_b.arg, tr_a.n * sizeof tr_a.arg[0]);
  for (size_t k = 1; k < tr_a.n; k++)
    assert_true(tr_a.time[k - 1] <= tr_a.time[k]);
}

/* Renumbering the 32-bit tie-break seqs (forced at seq 40000 here, with up to
 * ~30000 events queued, so several times in the run's 100018 schedules;
 * every ~4e9 in real runs) changes nothing: the trace equals a run that
 * never renumbers. */
static void seq_renumbering_keeps_order(void **state) {
  run_churn(&tr_a, 0);
  run_churn(&tr_b, 40000);
  assert_int_equal(tr_a.n, tr_b.n);
  assert_memory_equal(tr_a.time, tr_b.time, tr_a.n * sizeof tr_a.time[0]);
  assert_memory_equal(tr_a.arg, tr_b.arg, tr_a.n * sizeof tr_a.arg[0]);

  sim_heap h; /* and directly: seqs near the limit become 0..n-1 in order */
  sim_heap_init(&h);
  assert_int_equal(sim_heap_grow(&h, 16), 0);
  for (uint32_t s = 0; s < 10; s++)
    sim_heap_push(&h, s, s % 3, UINT32_MAX - 20 + s);
  assert_int_equal(sim_heap_renumber(&h), 10);
  assert_true(sim_heap_verify(&h));
  static const uint32_t want[] = {0, 3, 6, 9, 1, 4, 7, 2, 5, 8};
  for (uint32_t k = 0; k < 10; k++) {
    assert_int_equal(h.e[0].seq, k);
    assert_int_equal(sim_heap_pop(&h), want[k]);
  }
  sim_heap_fini(&h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(equal_times_fire_in_insertion_order),
      cmocka_unit_test(random_times_pop_sorted),
      cmocka_unit_test(heap_invariants_hold),
      cmocka_unit_test(cancel_root_last_middle),
      cmocka_unit_test(stale_ids_rejected_after_reuse),
      cmocka_unit_test(ids_survive_pool_growth),
      cmocka_unit_test(events_schedule_events),
      cmocka_unit_test(run_until_and_stop),
      cmocka_unit_test(usage_errors),
      cmocka_unit_test(limits),
      cmocka_unit_test(reschedule_reorders),
      cmocka_unit_test(stats_are_exact),
      cmocka_unit_test(identical_runs_identical_traces),
      cmocka_unit_test(seq_renumbering_keeps_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
