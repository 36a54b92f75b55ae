/* sweep_run.c - one simulated step per mapping, ranking and the Pareto
 * front. A mapping's row depends only on (workload file, overrides,
 * topology, options), never on which process ran it or what ran before,
 * so any split of the job list over workers gives the same rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

void ts_sweep_simulate(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                       uint32_t gpus, const ts_step_opts *o, ts_sweep_row *row) {
  uint32_t index = row->index;
  memset(row, 0, sizeof *row);
  row->index = index;
  row->map = *m;
  ts_diag d;
  ts_diag_clear(&d);
  ts_mapping *map = NULL;
  ts_step_result r;
  memset(&r, 0, sizeof r);
  int rc = ts_sweep_apply(w, m, gpus, &d);
  if (!rc) rc = ts_work_map(w, t, &map, &d);
  if (!rc) rc = ts_step_run(w, t, map, o, &r, &d);
  if (rc) {
    row->status = rc;
    snprintf(row->error, sizeof row->error, "%.511s", d.msg[0] ? d.msg : ts_strerror(rc));
  } else {
    row->step_s = (double)r.step_time / 1e12;
    row->tokens_s = r.tokens_per_s;
    row->mfu = r.mfu;
    row->compute_s = (double)r.critical.compute / 1e12;
    row->bubble_s = (double)r.critical.bubble / 1e12;
    for (int k = 0; k < TS_DIM_COUNT; k++)
      row->exposed_s[k] = (double)r.critical.exposed[k] / 1e12;
  }
  ts_step_result_free(&r);
  ts_mapping_free(map);
}

static ts_sweep_sort sort_by;

static int cmp_rows(const void *pa, const void *pb) {
  const ts_sweep_row *a = pa, *b = pb;
  if ((a->status != 0) != (b->status != 0)) return a->status ? 1 : -1;
  if (!a->status) {
    double x = 0, y = 0;
    switch (sort_by) {
    case TS_SORT_TOKENS: x = b->tokens_s, y = a->tokens_s; break;
    case TS_SORT_STEP: x = a->step_s, y = b->step_s; break;
    case TS_SORT_MEMORY: x = (double)a->map.mem_bytes, y = (double)b->map.mem_bytes; break;
    }
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return a->index < b->index ? -1 : a->index > b->index;
}

void ts_sweep_rank(ts_sweep_row *rows, uint32_t n, ts_sweep_sort by) {
  sort_by = by; /* qsort has no context argument in C11 */
  qsort(rows, n, sizeof *rows, cmp_rows);
}

void ts_sweep_pareto(const ts_sweep_row *rows, uint32_t n, uint8_t *front) {
  for (uint32_t i = 0; i < n; i++) {
    front[i] = rows[i].status == 0;
    for (uint32_t j = 0; front[i] && j < n; j++) {
      if (j == i || rows[j].status) continue;
      const ts_sweep_row *a = &rows[j], *b = &rows[i];
      int ge = a->tokens_s >= b->tokens_s && a->map.mem_bytes <= b->map.mem_bytes;
      int gt = a->tokens_s > b->tokens_s || a->map.mem_bytes < b->map.mem_bytes;
      /* equal points: the earlier index stays on the front */
      if (ge && (gt || j < i)) front[i] = 0;
    }
  }
}
