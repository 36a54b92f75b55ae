/* exec_step_trace.c - what `topsim run --trace` writes: slices of the
 * chosen ranks' streams and utilization samples of the busiest links.
 *
 * Slices go to a growable array (amortised O(1) per slice). Link busy time
 * is sampled for every direction (cumulative busy_ps), since the busiest
 * links are only known at the end; at most 64 samples are held: when full,
 * every other one is dropped and the interval doubles (cumulative values
 * make that exact). Cost per sample O(directions); memory 64 x directions
 * x 8 bytes, skipped past 16M entries (counters then carry the step
 * average only). */
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

#define TRACE_SAMPLES 64u
#define TRACE_MAX_ENTRIES (16u << 20)

int exec_trace_init(exec_trace *T, const ts_step_opts *o, uint32_t ranks,
                    uint32_t ndirs, ts_time_ps interval) {
  memset(T, 0, sizeof *T);
  if (!o->ntrace_ranks) return 0;
  T->on = calloc(ranks ? ranks : 1, 1);
  if (!T->on) return TS_ENOMEM;
  for (uint32_t i = 0; i < o->ntrace_ranks; i++)
    if (o->trace_ranks[i] < ranks) T->on[o->trace_ranks[i]] = 1;
  T->ndirs = ndirs;
  T->interval = interval ? interval : TS_PS_PER_US;
  if ((uint64_t)ndirs * TRACE_SAMPLES > TRACE_MAX_ENTRIES) return 0;
  T->t = malloc(TRACE_SAMPLES * sizeof *T->t);
  T->busy = malloc((size_t)ndirs * TRACE_SAMPLES * sizeof *T->busy);
  if (!T->t || !T->busy) return TS_ENOMEM;
  T->cap_samples = TRACE_SAMPLES;
  return 0;
}

void exec_trace_free(exec_trace *T) {
  free(T->on);
  free(T->v);
  free(T->t);
  free(T->busy);
  memset(T, 0, sizeof *T);
}

void exec_trace_add(exec_trace *T, uint32_t rank, uint8_t stream,
                    uint8_t kind, uint16_t chunk, int32_t layer,
                    int32_t micro, ts_time_ps start, ts_time_ps dur) {
  if (!T->on || !T->on[rank] || T->fail) return;
  if (T->n == T->cap) {
    uint64_t cap = T->cap ? 2 * T->cap : 1024;
    ts_step_slice *v = realloc(T->v, cap * sizeof *v);
    if (!v) {
      T->fail = 1;
      return;
    }
    T->v = v;
    T->cap = cap;
  }
  T->v[T->n++] = (ts_step_slice){rank, stream, kind, chunk, layer, micro,
                                 start, dur};
}

/* Keeps samples 1, 3, 5, ... (each the end of a doubled interval). */
static void halve(exec_trace *T) {
  uint32_t keep = 0;
  for (uint32_t s = 1; s < T->nsamples; s += 2, keep++) {
    T->t[keep] = T->t[s];
    memmove(&T->busy[(size_t)keep * T->ndirs], &T->busy[(size_t)s * T->ndirs],
            (size_t)T->ndirs * sizeof *T->busy);
  }
  T->nsamples = keep;
  T->interval *= 2;
}

void exec_trace_sample(exec_trace *T, const ts_net *net, ts_time_ps now) {
  if (!T->cap_samples) return;
  if (T->nsamples == T->cap_samples) halve(T);
  ts_time_ps *row = &T->busy[(size_t)T->nsamples * T->ndirs];
  for (uint32_t d = 0; d < T->ndirs; d++) {
    ts_net_dir_stats st;
    row[d] = ts_net_dir_stats_get(net, d, &st) ? 0 : st.busy_ps;
  }
  T->t[T->nsamples++] = now;
}

/* Counters: busy fraction of each top link over each sample interval, or
 * one sample at the end holding the step average when not sampled. */
static int counters(exec_trace *T, ts_step_result *r) {
  uint32_t n = T->cap_samples ? T->nsamples : 1;
  r->counters = calloc(n + 1, sizeof *r->counters);
  if (!r->counters) return TS_ENOMEM;
  r->ncounters = n;
  for (uint32_t s = 0; s < n; s++) {
    ts_step_counter *c = &r->counters[s];
    if (!T->cap_samples) {
      c->t = 0;
      for (uint32_t k = 0; k < r->ntop; k++) c->util[k] = r->top[k].utilization;
      continue;
    }
    ts_time_ps t0 = s ? T->t[s - 1] : 0, t1 = T->t[s];
    c->t = t0;
    for (uint32_t k = 0; k < r->ntop && t1 > t0; k++) {
      uint32_t d = r->top[k].dir;
      ts_time_ps b0 = s ? T->busy[(size_t)(s - 1) * T->ndirs + d] : 0;
      ts_time_ps b1 = T->busy[(size_t)s * T->ndirs + d];
      c->util[k] = (double)(b1 - b0) / (double)(t1 - t0);
    }
  }
  return 0;
}

int exec_trace_finish(exec_trace *T, ts_step_result *r) {
  if (!T->on) return 0;
  if (T->fail) return TS_ENOMEM;
  r->slices = T->v;
  r->nslices = T->n;
  T->v = NULL;
  T->n = T->cap = 0;
  return counters(T, r);
}
