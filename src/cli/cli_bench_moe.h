/* cli_bench_moe.h - `topsim bench --op moe_dispatch|moe_combine`: one
 * DeepEP-style expert-parallel all-to-all from a routing model. */
#ifndef TOPSIM_CLI_BENCH_MOE_H
#define TOPSIM_CLI_BENCH_MOE_H

#include <stdint.h>

#include "topsim/ts_coll_run.h"
#include "topsim/ts_topo.h"

/* Option code of --moe SPEC in `topsim bench` (outside getopt's chars). */
enum { CLI_OPT_MOE = 0x1E00 };

/* Runs the dispatch (combine = 0) or combine of SPEC ("tokens=4096,
 * hidden=7168,topk=8,experts=256,skew=0,groups=4,dtype=fp8"; NULL: these
 * defaults with bf16 and no node limit) over the ranks g[0..n) and prints
 * the table row (or JSON). Returns an exit status. */
int cli_bench_moe(const ts_topo *t, const uint32_t *g, uint32_t n,
                  int combine, const char *spec, ts_coll_run_opts *cr,
                  int json);

#endif
