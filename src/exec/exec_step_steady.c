/* exec_step_steady.c - a long step's steady phase from two shorter runs
 * (bounded shortcut TS_STEP_STEADY, docs/model.md "Bounded shortcuts").
 *
 * Under 1F1B, interleaved and GPipe schedules the fill and drain
 * of the pipeline, the last gradient reductions and the optimizer cost the
 * same whatever the number of micro-batches M, and each further group of pp
 * micro-batches adds one more period of the steady phase. So every time
 * and byte count of the step is affine in M once M is past the fill:
 * v(M) = v(M2) + (M - M2) (v(M2) - v(M1)) / (M2 - M1). Runs at M1 and
 * M2 = 2 M1 micro-batches (multiples of pp past the warm-up, short_run)
 * give the slope; the shortcut applies only when they cost at most half
 * the full run (M >= 3 M2). Not exact: contention can make later
 * periods differ from early ones; tests/test_exec.c holds it within 1% of
 * the full simulation on contended cases, docs/performance.md gives the
 * errors measured. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

typedef struct steady_plan {
  uint32_t m1, m2, m; /* micro-batch counts: the runs', the step's */
} steady_plan;

static int timed_faults(const ts_faults *f) {
  for (uint32_t i = 0; f && i < f->n; i++)
    if (f->v[i].kind == TS_FAULT_FAIL_AT) return 1;
  return 0;
}

/* Micro-batches of the shorter run: 2 pp (4 at pp 1), a steady phase of
 * pp + 1 micro-batches under 1F1B; under the interleaved schedule the
 * warm-up (Megatron-LM's 2 (pp - 1) + (v - 1) pp chunks) and the drain
 * are longer, so twice the warm-up plus pp, rounded up to pp. 0 for
 * DualPipe (ts_workload_shape's schedule 3), whose phases were not
 * measured against the full run: it runs whole. */
static uint64_t short_run(const ts_workload *w, uint32_t pp) {
  ts_workload_shape sh;
  ts_workload_shape_get(w, &sh);
  if (sh.schedule > 2) return 0;
  uint64_t m1 = pp < 2 ? 4 : 2ull * pp, v = sh.virtual_stages;
  if (sh.schedule == 2 && v > 1) {
    uint64_t warm = (2ull * (pp - 1) + (v - 1) * pp + v - 1) / v;
    uint64_t need = (2 * warm + pp + pp - 1) / pp * pp;
    if (need > m1) m1 = need;
  }
  return m1;
}

/* Whether the shortcut applies (the two runs cost at most half the step:
 * M >= 6 M1), and the two runs' micro-batch counts. A trace needs every
 * slice, and a failure at a set time falls in a different phase of a
 * shorter run. */
static int plan_of(const ts_workload *w, const ts_step_opts *o,
                   steady_plan *p) {
  if (o->exact || !(o->bounded & TS_STEP_STEADY) || o->ntrace_ranks ||
      timed_faults(o->faults))
    return 0;
  uint32_t pp = ts_workload_parallel(w, TS_GROUP_PP);
  p->m = ts_workload_microbatches(w);
  if (!pp || !p->m) return 0;
  uint64_t m1 = short_run(w, pp);
  if (!m1 || m1 * 6 > p->m) return 0;
  p->m1 = (uint32_t)m1;
  p->m2 = (uint32_t)(2 * m1);
  return 1;
}

/* v at p->m on the line through (m1, a) and (m2, b), >= 0 (line_u rounds
 * it for integer counts). */
static double line(const steady_plan *p, double a, double b) {
  double v = b + (b - a) * (double)(p->m - p->m2) / (double)(p->m2 - p->m1);
  return v > 0 ? v : 0;
}

static uint64_t line_u(const steady_plan *p, uint64_t a, uint64_t b) {
  return (uint64_t)llround(line(p, (double)a, (double)b));
}

/* Per rank: breakdown, finish and bytes at p->m; then the step time, the
 * critical rank (the latest finish, ties to the longest compute, as a full
 * run picks it) and every rank's idle time. */
static void ranks_at(const steady_plan *p, const ts_step_result *a,
                     ts_step_result *r) {
  uint32_t n = r->ranks;
  r->step_time = 0;
  r->critical_rank = 0;
  for (uint32_t i = 0; i < n; i++) {
    const ts_step_breakdown *x = &a->rank_breakdown[i];
    ts_step_breakdown *y = &r->rank_breakdown[i];
    y->compute = line_u(p, x->compute, y->compute);
    y->bubble = line_u(p, x->bubble, y->bubble);
    for (int k = 0; k < TS_DIM_COUNT; k++) {
      y->exposed[k] = line_u(p, x->exposed[k], y->exposed[k]);
      size_t j = (size_t)i * TS_DIM_COUNT + k;
      r->rank_bytes[j] = line_u(p, a->rank_bytes[j], r->rank_bytes[j]);
    }
    r->rank_finish[i] = line_u(p, a->rank_finish[i], r->rank_finish[i]);
    ts_time_ps f = r->rank_finish[i];
    const ts_step_breakdown *c = &r->rank_breakdown[r->critical_rank];
    if (f > r->step_time || (f == r->step_time && y->compute > c->compute)) {
      r->step_time = f;
      r->critical_rank = i;
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    ts_step_breakdown *y = &r->rank_breakdown[i];
    ts_time_ps used = y->compute + y->bubble;
    for (int k = 0; k < TS_DIM_COUNT; k++) used += y->exposed[k];
    y->idle = used < r->step_time ? r->step_time - used : 0;
  }
  r->critical = r->rank_breakdown[r->critical_rank];
  for (int k = 0; k < TS_DIM_COUNT; k++) {
    r->bytes_critical[k] =
        r->rank_bytes[(size_t)r->critical_rank * TS_DIM_COUNT + k];
    r->bytes_mean[k] = line(p, a->bytes_mean[k], r->bytes_mean[k]);
    r->cross_node_mean[k] =
        line(p, a->cross_node_mean[k], r->cross_node_mean[k]);
  }
}

/* The busiest links at p->m from both runs' per-direction totals. */
static void links_at(const steady_plan *p, const exec_dir_stat *a,
                     const exec_dir_stat *b, uint32_t nd, ts_step_result *r) {
  r->ntop = 0;
  for (uint32_t d = 0; d < nd; d++) {
    if (!b[d].bytes && !b[d].busy) continue;
    exec_top_add(r, d, line_u(p, a[d].bytes, b[d].bytes),
                 line_u(p, a[d].busy, b[d].busy));
  }
  exec_top_finish(r);
}

/* The simulator's own work: both runs' sums. */
static void counters_add(ts_step_result *r, const ts_step_result *a) {
  r->collectives += a->collectives;
  r->transfers += a->transfers;
  r->wire_bytes += a->wire_bytes;
  r->replayed += a->replayed;
  r->replayed_beside += a->replayed_beside;
  r->replayed_dp += a->replayed_dp;
  r->crossed_kept += a->crossed_kept;
  r->memo_runs += a->memo_runs;
  r->memo_shared += a->memo_shared;
  r->attempts += a->attempts;
  ts_net_stats *n = &r->net;
  const ts_net_stats *x = &a->net;
  n->transfers_started += x->transfers_started;
  n->transfers_finished += x->transfers_finished;
  n->flows_started += x->flows_started;
  n->flows_finished += x->flows_finished;
  n->bytes_sent += x->bytes_sent;
  n->bytes_delivered += x->bytes_delivered;
  n->solves += x->solves;
  n->solves_skipped += x->solves_skipped;
  n->local_solves += x->local_solves;
  n->flows_touched += x->flows_touched;
  if (x->max_flows_touched > n->max_flows_touched)
    n->max_flows_touched = x->max_flows_touched;
  n->rate_changes += x->rate_changes;
  n->chunks_sent += x->chunks_sent;
  n->backpressure_waits += x->backpressure_waits;
  n->reroutes += x->reroutes;
  ts_sim_stats *s = &r->sim;
  s->events_scheduled += a->sim.events_scheduled;
  s->events_processed += a->sim.events_processed;
  s->events_cancelled += a->sim.events_cancelled;
  s->events_rescheduled += a->sim.events_rescheduled;
  if (a->sim.peak_pending > s->peak_pending) s->peak_pending = a->sim.peak_pending;
  s->wall_s += a->sim.wall_s;
  s->events_per_s = s->wall_s > 0 ? (double)s->events_processed / s->wall_s : 0;
}

/* Rates at p->m: the FLOPs of the whole step (w's own) and its tokens
 * (b's per micro-batch, an integer, times m: exact). */
static void rates_at(const steady_plan *p, const ts_workload *w,
                     ts_step_result *r) {
  ts_step_progs f;
  memset(&f, 0, sizeof f);
  f.tokens_per_step = r->tokens_per_step / p->m2 * p->m;
  f.model_flops = ts_work_step_model_flops(w);
  f.hw_flops = ts_work_step_flops(w);
  f.peak_flops = r->peak_flops;
  exec_step_rates(r, &f, r->ranks, p->m);
}

/* Runs the step at n micro-batches, with per-direction totals into dirs. */
static int run_at(const ts_workload *w, const ts_topo *t, const ts_mapping *m,
                  const ts_step_opts *o, uint32_t n, exec_dir_stat *dirs,
                  ts_step_result *out, ts_diag *d) {
  exec_step_req req = {n, dirs};
  ts_step_opts oo = *o;
  oo.horizon = 0; /* a shorter run proves nothing about the horizon */
  return exec_step_full(w, t, m, &oo, &req, out, d);
}

static int horizon_check(const ts_step_opts *o, ts_step_result *out,
                         ts_diag *d) {
  if (!o->horizon || out->step_time <= o->horizon) return 0;
  ts_step_result_free(out);
  out->horizon_passed = 1;
  return ts_diag_set(d, TS_ELIMIT, NULL, 0, 0, "the step passes the horizon "
                     "of %.6f s", ts_ps_to_s(o->horizon));
}

int exec_steady_run(const ts_workload *w, const ts_topo *t, const ts_mapping *m,
                    const ts_step_opts *o, ts_step_result *out, ts_diag *d,
                    int *rc) {
  steady_plan p;
  if (!plan_of(w, o, &p)) return 0;
  uint32_t nd = 2 * ts_topo_link_count(t);
  exec_dir_stat *da = calloc((size_t)nd + 1, sizeof *da);
  exec_dir_stat *db = calloc((size_t)nd + 1, sizeof *db);
  ts_step_result a;
  memset(&a, 0, sizeof a);
  memset(out, 0, sizeof *out);
  *rc = !da || !db ? ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory")
                   : run_at(w, t, m, o, p.m1, da, &a, d);
  if (!*rc) *rc = run_at(w, t, m, o, p.m2, db, out, d);
  if (!*rc) {
    ranks_at(&p, &a, out);
    links_at(&p, da, db, nd, out);
    counters_add(out, &a);
    rates_at(&p, w, out);
    out->steady_from[0] = p.m1;
    out->steady_from[1] = p.m2;
    *rc = horizon_check(o, out, d);
  }
  ts_step_result_free(&a);
  free(da);
  free(db);
  return 1;
}
