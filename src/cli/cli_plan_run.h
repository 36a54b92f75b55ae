/* cli_plan_run.h - step-time prediction for each planned size. */
#ifndef TOPSIM_CLI_PLAN_RUN_H
#define TOPSIM_CLI_PLAN_RUN_H

#include <stdint.h>

#include "cli/cli_jobs.h"
#include "topsim/ts_plan.h"
#include "topsim/ts_work.h"

/* Plans every SU count in [sus_lo, sus_hi] with req, runs one step of the
 * workload file on each (one cli_jobs task per size: --jobs workers or MPI
 * ranks) and prints step time, tokens/s and scaling efficiency. Returns 0
 * (also in worker processes, which print nothing), or EX_DATAERR when no
 * size could run. */
int cli_plan_predict(const ts_plan_request *req, uint32_t sus_lo,
                     uint32_t sus_hi, const char *workload,
                     const cli_jobs_opts *jobs);

#endif
