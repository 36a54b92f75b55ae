/* cli_plan_whatif.h - plan --what-if: counted and simulated blast radius. */
#ifndef TOPSIM_CLI_PLAN_WHATIF_H
#define TOPSIM_CLI_PLAN_WHATIF_H

#include "topsim/ts_faults.h"
#include "topsim/ts_plan.h"
#include "topsim/ts_step.h"

/* Runs the workload on plan r under the user's faults (NULL: none) and
 * with one leaf, spine, core and node-leaf cable failed on top, each step
 * with step's options (NULL: defaults), and prints each slowdown next to
 * the counted impact (text, or JSON when json). Returns 0, EX_DATAERR when
 * the first step cannot run, or EX_IOERR. */
int cli_plan_whatif(const ts_plan_result *r, const char *workload,
                    const ts_faults *faults, const ts_step_opts *step,
                    int json);

#endif
