/* cli_sweep_json.c - `topsim sweep --json`: every row with every setting
 * spelled out by name, the same keys whatever the parallelism. */
#include <jansson.h>
#include <stdlib.h>
#include <sysexits.h>

#include "cli/cli_sweep.h"

static json_t *row_json(const ts_sweep_row *r, uint32_t rank, int front,
                        int dry_run) {
  const ts_sweep_map *m = &r->map;
  json_t *ex = json_object();
  static const char *const dims[TS_DIM_COUNT] = {"tp", "cp", "ep", "pp", "dp"};
  for (int k = 0; k < TS_DIM_COUNT; k++)
    json_object_set_new(ex, dims[k], json_real(r->exposed_s[k]));
  return json_pack(
      "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:s, s:I, s:b, s:s, s:s, "
      "s:f, s:f, s:f, s:I, s:f, s:o, s:f, s:f, s:b, s:o}",
      "rank", (json_int_t)rank, "tp", (json_int_t)m->tp, "cp", (json_int_t)m->cp,
      "pp", (json_int_t)m->pp, "virtual_stages", (json_int_t)m->vp,
      "dp", (json_int_t)m->dp, "ep", (json_int_t)m->ep,
      "micro_batch", (json_int_t)m->mb, "schedule", ts_schedule_name(m->schedule),
      "recompute", ts_recompute_name(m->recompute), "zero_stage",
      (json_int_t)m->zero, "distributed_optimizer", m->zero == 1, "order",
      m->order, "status", dry_run ? "not_run" : r->bounded ? "bounded" : r->status ? "failed" : "ok",
      "step_time_s", r->step_s,
      "tokens_per_s", r->tokens_s, "mfu", r->mfu, "memory_per_gpu_bytes",
      (json_int_t)m->mem_bytes, "compute_s", r->compute_s, "exposed_s", ex,
      "bubble_s", r->bubble_s, "step_lower_bound_s", r->bound_s, "pareto", front,
      "error", r->status ? json_string(r->error) : json_null());
}

static json_t *sweep_json(const ts_sweep_row *rows, const ts_sweep_set *z,
                          const char *name, int dry_run, int exhaustive) {
  json_t *pr = json_object(), *arr = json_array();
  uint32_t ok = 0, bounded = 0, memo = 0;
  for (int p = 0; p < TS_PRUNE_COUNT; p++)
    json_object_set_new(pr, ts_sweep_prune_name((ts_sweep_prune)p),
                        json_integer((json_int_t)z->pruned[p]));
  uint8_t *front = calloc((size_t)z->n + 1, 1);
  if (front && !dry_run) ts_sweep_pareto(rows, z->n, front);
  for (uint32_t k = 0; k < z->n; k++) {
    ok += !dry_run && !rows[k].status && !rows[k].bounded;
    bounded += !dry_run && rows[k].bounded;
    memo += !dry_run && !rows[k].bounded && rows[k].memo;
    json_array_append_new(arr, row_json(&rows[k], k + 1, front && front[k], dry_run));
  }
  free(front);
  return json_pack("{s:s, s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:b, s:o}",
                   "topology", name, "gpus", (json_int_t)z->gpus, "hbm_bytes",
                   (json_int_t)z->hbm_bytes, "candidates",
                   (json_int_t)z->candidates, "valid", (json_int_t)z->n,
                   "pruned", pr, "simulated", (json_int_t)ok,
                   "simulated_copied", (json_int_t)memo, "bounded",
                   (json_int_t)bounded, "failed",
                   (json_int_t)(dry_run ? 0 : z->n - ok - bounded),
                   "exhaustive", exhaustive, "rows", arr);
}

int cli_sweep_json(const ts_sweep_row *rows, const ts_sweep_set *sets,
                   const char *const *names, uint32_t ntopo,
                   const char *workload, int dry_run, int exhaustive,
                   FILE *f) {
  json_t *arr = json_array();
  uint32_t off = 0;
  for (uint32_t i = 0; i < ntopo; i++) {
    json_array_append_new(arr, sweep_json(rows + off, &sets[i], names[i], dry_run, exhaustive));
    off += sets[i].n;
  }
  json_t *root = json_pack("{s:s, s:o}", "workload", workload, "sweeps", arr);
  if (!root) return EX_OSERR;
  int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  fputc('\n', f);
  json_decref(root);
  return rc || ferror(f) ? EX_IOERR : 0;
}
