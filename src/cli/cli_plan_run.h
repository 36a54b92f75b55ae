/* cli_plan_run.h - step-time prediction for each planned size. */
#ifndef TOPSIM_CLI_PLAN_RUN_H
#define TOPSIM_CLI_PLAN_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "cli/cli_jobs.h"
#include "topsim/ts_faults.h"
#include "topsim/ts_plan.h"
#include "topsim/ts_step.h"
#include "topsim/ts_work.h"

/* One predicted step on a planned size. */
typedef struct cli_plan_row {
  uint32_t sus, gpus, dp;
  int ok;
  double step_s, tokens_s, mfu;
  char why[800];
} cli_plan_row;

/* Plans every SU count in [sus_lo, sus_hi] with req, runs one step of the
 * workload file on each (under faults, NULL for none: names must exist in
 * every size; with step's options, NULL for the defaults, as in every
 * function below; one cli_jobs task per size: --jobs workers or MPI ranks) and
 * prints step time, tokens/s and scaling efficiency: a table, or with plans
 * (the sizes' plans, --json) the sweep's JSON array, each row with its
 * step. Returns 0 (also in worker processes, which print nothing),
 * EX_IOERR when the output failed, or EX_DATAERR when no size could run. */
int cli_plan_predict(const ts_plan_request *req, uint32_t sus_lo,
                     uint32_t sus_hi, const char *workload,
                     ts_faults *faults, const ts_step_opts *step,
                     const cli_jobs_opts *jobs, const ts_plan_result *plans);

/* Emits plan r into memory and loads it back as a topology (*t owned by
 * the caller). 0 or an error with d set. */
int cli_plan_topo(const ts_plan_result *r, ts_topo **t, ts_diag *d);

/* Maps the workload onto every GPU of t (dp fills them, each replica keeps
 * its share of the global batch) and runs one step under faults (NULL:
 * none; resolved here) with step's options (--exact, --bounded; its faults
 * field is replaced by faults). Fills row (row->gpus must be set); 0 or an
 * error with d set. */
int cli_plan_step(const char *workload, const ts_topo *t, ts_faults *faults,
                  const ts_step_opts *step, cli_plan_row *row, ts_diag *d);

/* Plans req (its gpus or nodes) and runs one step of the workload file on
 * it with dp filling the GPUs. Returns 0 with *step_s in seconds, or -1
 * with the reason in why. */
int cli_plan_design_step(const ts_plan_request *req, const char *workload,
                         const ts_step_opts *step, double *step_s, char *why,
                         size_t n);

#endif
