/* cli_plan_compare.h - `topsim plan --compare`: designs side by side. */
#ifndef TOPSIM_CLI_PLAN_COMPARE_H
#define TOPSIM_CLI_PLAN_COMPARE_H

#include <stdint.h>

#include "topsim/ts_plan.h"
#include "topsim/ts_step.h"

/* Parses a whole `plan` command line into *req: -1 on success, else the
 * exit status (the message is printed). */
typedef int (*cli_plan_parse_fn)(int argc, char **argv, ts_plan_request *req);

/* Plans each design (sets[i]: quoted options, or a YAML file of option:
 * value pairs) on top of the command line's other options, and prints them
 * side by side (text or JSON); with a workload, one step per design with
 * step's options (NULL: defaults). Returns the exit status. */
int cli_plan_compare(int argc, char **argv, const char *const *sets,
                     uint32_t n, int json, const char *workload,
                     const ts_step_opts *step, cli_plan_parse_fn parse);

#endif
