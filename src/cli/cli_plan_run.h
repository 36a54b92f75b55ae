/* cli_plan_run.h - step-time prediction for each planned size. */
#ifndef TOPSIM_CLI_PLAN_RUN_H
#define TOPSIM_CLI_PLAN_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "topsim/ts_plan.h"
#include "topsim/ts_work.h"

/* Plans every SU count in [sus_lo, sus_hi] with req, runs one step of the
 * workload file on each and prints step time, tokens/s and scaling
 * efficiency. Returns 0, or EX_DATAERR when no size could run. */
int cli_plan_predict(const ts_plan_request *req, uint32_t sus_lo,
                     uint32_t sus_hi, const char *workload);

/* Plans req (its gpus or nodes) and runs one step of the workload file on
 * it with dp filling the GPUs. Returns 0 with *step_s in seconds, or -1
 * with the reason in why. */
int cli_plan_step(const ts_plan_request *req, const char *workload,
                  double *step_s, char *why, size_t n);

#endif
