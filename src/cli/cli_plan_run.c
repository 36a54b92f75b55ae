/* cli_plan_run.c - `topsim plan --sus A..B --workload FILE`: the planner's
 * question "what does one more SU buy me". For each SU count the plan is
 * emitted as a topology (in memory), loaded, the workload mapped onto all
 * its GPUs (data parallelism grows with the size: dp = GPUs / (tp cp pp))
 * and one step run. Weak scaling: every data-parallel replica keeps the
 * file's share of the global batch, so the global batch grows with dp
 * (what one more SU buys at constant per-replica work).
 * Scaling efficiency = tokens/s per GPU relative to the smallest size that
 * ran. Sizes the workload cannot use (dp not whole, batch not divisible,
 * memory) are listed with the reason instead of a time. Sizes run as
 * cli_jobs tasks (size_row is plain data), so --jobs and MPI apply. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli_plan_run.h"
#include "topsim/ts_report_plan.h"
#include "topsim/ts_step.h"

typedef cli_plan_row size_row;

int cli_plan_topo(const ts_plan_result *r, ts_topo **t, ts_diag *d) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  int rc = ts_plan_emit_yaml(r, f);
  if (fclose(f) || rc) rc = ts_diag_set(d, TS_EIO, NULL, 0, 0, "cannot emit the plan");
  if (!rc) rc = ts_topo_load_buffer(buf, len, "<plan>", t, d);
  free(buf);
  return rc;
}

int cli_plan_step(const char *workload, const ts_topo *t, ts_faults *faults,
                  const ts_step_opts *step, cli_plan_row *row, ts_diag *d) {
  ts_workload *w = NULL;
  ts_mapping *m = NULL;
  ts_step_result res;
  memset(&res, 0, sizeof res);
  int rc = ts_workload_load_file(workload, &w, d);
  uint32_t tp = 1, cp = 1, pp = 1;
  if (!rc) {
    tp = ts_workload_parallel(w, TS_GROUP_TP);
    cp = ts_workload_parallel(w, TS_GROUP_CP);
    pp = ts_workload_parallel(w, TS_GROUP_PP);
  }
  if (!rc && row->gpus % (tp * cp * pp))
    rc = ts_diag_set(d, TS_EINVALID, NULL, 0, 0, "%u GPUs are not a multiple of "
                     "tp x cp x pp = %u", row->gpus, tp * cp * pp);
  char dp[32], gpus[32], gb[32];
  row->dp = row->gpus / (tp * cp * pp);
  uint32_t dp_file = rc ? 1 : ts_workload_parallel(w, TS_GROUP_DP);
  uint32_t per_replica = rc ? 1 : ts_workload_global_batch(w) / dp_file;
  snprintf(dp, sizeof dp, "%u", row->dp);
  snprintf(gpus, sizeof gpus, "%u", row->gpus);
  snprintf(gb, sizeof gb, "%llu", (unsigned long long)per_replica * row->dp);
  if (!rc) rc = ts_workload_override(w, "dp", dp, d);
  if (!rc) rc = ts_workload_override(w, "global_batch", gb, d);
  if (!rc) rc = ts_workload_override(w, "gpus", gpus, d);
  if (!rc) rc = ts_work_map(w, t, &m, d);
  ts_step_opts o;
  if (step) o = *step;
  else ts_step_opts_default(&o);
  o.faults = faults;
  if (!rc && faults) rc = ts_faults_resolve(faults, t, d);
  if (!rc) rc = ts_step_run(w, t, m, &o, &res, d);
  if (!rc) {
    row->ok = 1;
    row->step_s = (double)res.step_time / 1e12;
    row->tokens_s = res.tokens_per_s;
    row->mfu = res.mfu;
  }
  ts_step_result_free(&res);
  ts_mapping_free(m);
  ts_workload_free(w);
  return rc;
}

static void run_size(const ts_plan_request *req, const char *workload,
                     ts_faults *faults, const ts_step_opts *step,
                     size_row *row) {
  ts_plan_result r;
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_plan_compute(req, &r, &d);
  if (!rc) {
    row->gpus = r.gpus;
    rc = cli_plan_topo(&r, &t, &d);
    ts_plan_free(&r);
  }
  if (!rc) rc = cli_plan_step(workload, t, faults, step, row, &d);
  if (rc) snprintf(row->why, sizeof row->why, "%s", d.msg);
  ts_topo_free(t);
}

static void print_rows(const size_row *rows, uint32_t n) {
  double base = 0;
  printf("%4s %7s %5s %12s %14s %14s %7s %10s\n", "SUs", "GPUs", "dp",
         "step (s)", "tokens/s", "tokens/s/GPU", "MFU", "scaling");
  for (uint32_t i = 0; i < n; i++) {
    const size_row *r = &rows[i];
    if (!r->ok) {
      printf("%4u %7u %5s  n/a: %s\n", r->sus, r->gpus, "-", r->why);
      continue;
    }
    double per = r->tokens_s / r->gpus;
    if (base == 0) base = per;
    printf("%4u %7u %5u %12.4f %14.0f %14.1f %6.1f%% %9.1f%%\n", r->sus,
           r->gpus, r->dp, r->step_s, r->tokens_s, per, 100 * r->mfu,
           100 * per / base);
  }
}

typedef struct size_ctx {
  const ts_plan_request *req;
  uint32_t sus_lo;
  const char *workload;
  ts_faults *faults;
  const ts_step_opts *step;
} size_ctx;

static void size_task(uint32_t task, void *ctx, void *out) {
  const size_ctx *c = ctx;
  size_row *row = out;
  ts_plan_request req = *c->req;
  memset(row, 0, sizeof *row);
  row->sus = c->sus_lo + task;
  req.nodes = row->sus * req.nodes_per_su;
  req.gpus = 0;
  run_size(&req, c->workload, c->faults, c->step, row);
}

static void size_fail(uint32_t task, void *ctx, void *out, const char *why) {
  const size_ctx *c = ctx;
  size_row *row = out;
  memset(row, 0, sizeof *row);
  row->sus = c->sus_lo + task;
  snprintf(row->why, sizeof row->why, "%s", why);
}

/* The sweep's JSON array with each size's step (--json). 0 or EX_IOERR. */
static int json_rows(const ts_plan_result *plans, const size_row *rows,
                     uint32_t n, const char *workload) {
  ts_plan_step_row *s = calloc(n, sizeof *s);
  if (!s) return EX_OSERR;
  for (uint32_t i = 0; i < n; i++)
    s[i] = (ts_plan_step_row){rows[i].ok, rows[i].dp, rows[i].step_s,
                              rows[i].tokens_s, rows[i].mfu, rows[i].why};
  int rc = ts_report_plan_sweep_steps(plans, s, n, workload, stdout);
  free(s);
  return rc ? EX_IOERR : 0;
}

int cli_plan_predict(const ts_plan_request *req, uint32_t sus_lo,
                     uint32_t sus_hi, const char *workload,
                     ts_faults *faults, const ts_step_opts *step,
                     const cli_jobs_opts *jobs, const ts_plan_result *plans) {
  uint32_t n = sus_hi - sus_lo + 1;
  size_row *rows = calloc(n, sizeof *rows);
  if (!rows) return EX_OSERR;
  size_ctx c = {req, sus_lo, workload, faults, step};
  cli_jobs_opts o = *jobs;
  o.what = "plan";
  fflush(stdout); /* the plan table is out before workers fork */
  int role = cli_jobs_run(n, sizeof *rows, size_task, size_fail, &c, &o, rows);
  if (role != CLI_JOBS_ROOT || !cli_jobs_is_root()) {
    free(rows);
    return role < 0 ? EX_OSERR : 0;
  }
  uint32_t ran = 0;
  for (uint32_t i = 0; i < n; i++) ran += (uint32_t)rows[i].ok;
  int st = 0;
  if (plans) {
    st = json_rows(plans, rows, n, workload);
  } else {
    printf("workload %s, weak scaling (each data-parallel replica keeps its "
           "share of the global batch), one step per size\n", workload);
    print_rows(rows, n);
  }
  free(rows);
  return st ? st : ran ? 0 : EX_DATAERR;
}

int cli_plan_design_step(const ts_plan_request *req, const char *workload,
                         const ts_step_opts *step, double *step_s, char *why,
                         size_t n) {
  size_row row;
  memset(&row, 0, sizeof row);
  run_size(req, workload, NULL, step, &row);
  *step_s = row.ok ? row.step_s : 0;
  if (!row.ok) snprintf(why, n, "%s", row.why);
  return row.ok ? 0 : -1;
}
