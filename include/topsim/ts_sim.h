/* ts_sim.h - the discrete-event engine every model of topsim sits on.
 *
 * An engine holds a clock and a set of pending events; each event is a
 * callback (fn, ctx, arg) due at an absolute simulated time. ts_sim_run pops
 * events in (time, insertion order) and calls them; a callback may schedule,
 * reschedule or cancel events and may stop the run. The engine knows nothing
 * about networks or workloads: models keep their own state behind ctx.
 *
 * Time is integer picoseconds (ts_time_ps, see ts_units.h). Integers make
 * runs bit-for-bit reproducible (no rounding drift when adding many small
 * delays), and picoseconds resolve one byte at 1.6 TB/s (0.625 ns) and the
 * sub-nanosecond hop latencies of a switch. uint64_t picoseconds reach
 * 2^64 ps ~ 1.8e7 s ~ 213 days of simulated time, far beyond one training
 * step; scheduling past that returns TS_ELIMIT instead of wrapping.
 *
 * Ordering is total and deterministic: events due at the same time fire in
 * the order they were scheduled (or last rescheduled), so two runs of the same
 * model produce the same trace.
 *
 * Event ids are integer handles (slot index + generation counter), not
 * pointers: an id stays meaningful however the engine's pool grows, and using
 * an id whose event already fired or was cancelled is caught (TS_EUSAGE)
 * instead of touching a recycled event. A slot's generation wraps after 2^32
 * reuses, so a stale id held that long could alias a live event.
 *
 * Memory: events come from a pool owned by the engine that grows by doubling
 * and is reused through a free list, so a steady-state run does no malloc.
 * Nothing the engine hands out needs freeing by the caller except the engine
 * itself (ts_sim_free). ctx pointers are borrowed, never freed by the engine.
 *
 * Not thread-safe: one engine per thread. */
#ifndef TOPSIM_TS_SIM_H
#define TOPSIM_TS_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "topsim/ts_error.h"
#include "topsim/ts_units.h"

typedef struct ts_sim ts_sim;

/* Handle of a scheduled event; 0 (TS_SIM_NO_EVENT) is never a valid id. */
typedef uint64_t ts_event_id;
#define TS_SIM_NO_EVENT ((ts_event_id)0)

/* Event callback: runs at ts_sim_now(sim) == the time it was due. Its own id
 * is already stale when it runs (cancelling it returns TS_EUSAGE). */
typedef void (*ts_sim_fn)(ts_sim *sim, void *ctx, uint64_t arg);

/* Counters since ts_sim_new. Wall time covers only the time spent inside
 * ts_sim_run / ts_sim_run_until (CLOCK_MONOTONIC). */
typedef struct ts_sim_stats {
  uint64_t events_scheduled;   /* successful schedule calls */
  uint64_t events_processed;   /* callbacks run */
  uint64_t events_cancelled;   /* successful cancel calls */
  uint64_t events_rescheduled; /* successful reschedule calls */
  uint64_t pending;            /* events waiting now */
  uint64_t peak_pending;       /* maximum of pending ever seen */
  ts_time_ps now;              /* simulated clock */
  double wall_s;               /* wall seconds spent running events */
  double events_per_s;         /* events_processed / wall_s (0 if no wall) */
} ts_sim_stats;

/* Creates an empty engine at time 0 into *out; TS_ENOMEM (and *out = NULL)
 * on allocation failure. The caller frees it with ts_sim_free. */
int ts_sim_new(ts_sim **out);

/* Frees the engine and all pending events (their callbacks never run; ctx
 * objects are not touched). NULL is a no-op. Never call from a callback. */
void ts_sim_free(ts_sim *sim);

/* Pre-sizes the pool for n pending events so the run never grows it;
 * TS_ENOMEM on failure (engine unchanged), TS_ELIMIT if n >= 2^31. */
int ts_sim_reserve(ts_sim *sim, uint64_t n);

/* Schedules fn(sim, ctx, arg) at absolute time at; stores the id in *out_id
 * if out_id is non-NULL. TS_EUSAGE if at < now or fn is NULL, TS_ELIMIT if
 * 2^31 events are pending, TS_ENOMEM if the pool cannot grow; on error
 * nothing is scheduled and *out_id is left untouched. O(log n). */
int ts_sim_schedule(ts_sim *sim, ts_time_ps at, ts_sim_fn fn, void *ctx,
                    uint64_t arg, ts_event_id *out_id);

/* As ts_sim_schedule at now + delay; TS_ELIMIT if that overflows ts_time_ps. */
int ts_sim_schedule_in(ts_sim *sim, ts_time_ps delay, ts_sim_fn fn, void *ctx,
                       uint64_t arg, ts_event_id *out_id);

/* Removes a pending event so it never fires; its id becomes stale.
 * TS_EUSAGE if id is stale (already fired or cancelled) or never issued.
 * O(log n). */
int ts_sim_cancel(ts_sim *sim, ts_event_id id);

/* Moves a pending event to time at, keeping its id and callback; it then ties
 * with other events as if scheduled now. TS_EUSAGE if id is stale or
 * at < now. O(log n); cheaper than cancel + schedule (no pool traffic). */
int ts_sim_reschedule(ts_sim *sim, ts_event_id id, ts_time_ps at);

/* The simulated clock: the due time of the running (or last run) event, or
 * the limit a completed ts_sim_run_until reached. */
ts_time_ps ts_sim_now(const ts_sim *sim);

/* Number of events waiting to fire. */
uint64_t ts_sim_pending(const ts_sim *sim);

/* Runs events until none is pending or a callback calls ts_sim_stop; the
 * clock stays at the last event's time. TS_EUSAGE if called from a callback
 * (the engine is not re-entrant); TS_ELIMIT if a limit of
 * ts_sim_set_limits stopped it; 0 otherwise. */
int ts_sim_run(ts_sim *sim);

/* Runs every event due at or before t (including those scheduled by them),
 * then sets the clock to t, unless ts_sim_stop ended the run first (then the
 * clock stays at the last event). Resume with another run or run_until.
 * TS_EUSAGE if t < now or called from a callback; 0 otherwise. */
int ts_sim_run_until(ts_sim *sim, ts_time_ps t);

/* Asks the current run to return after the running callback; a no-op when no
 * run is in progress (the next run starts unstopped). */
void ts_sim_stop(ts_sim *sim);

/* Budgets of a run (ts_budget.h): an event due after `horizon` or more than
 * `max_events` processed makes the engine stop at once (the event is kept,
 * so callers never see a refusal they cannot handle) and ts_sim_run /
 * run_until return TS_ELIMIT. Both default to unlimited (UINT64_MAX). */
void ts_sim_set_limits(ts_sim *sim, ts_time_ps horizon, uint64_t max_events);

/* Which limit ended the last run: 0 none, 1 horizon, 2 events. */
int ts_sim_overrun(const ts_sim *sim);

/* Copies the counters into *out. */
void ts_sim_stats_get(const ts_sim *sim, ts_sim_stats *out);

/* Prints the counters as "name: value" lines to f (for the CLI's --stats);
 * TS_EIO if a write fails, 0 otherwise. */
int ts_sim_stats_print(const ts_sim *sim, FILE *f);

#endif
