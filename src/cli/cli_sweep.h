/* cli_sweep.h - pieces of `topsim sweep` shared between its files. */
#ifndef TOPSIM_CLI_SWEEP_H
#define TOPSIM_CLI_SWEEP_H

#include <stdio.h>

#include "topsim/ts_sweep.h"

/* Writes every ranked row of every topology as one JSON document (sets[i]
 * gives topology i's counts; its rows are the next sets[i].n of rows).
 * Returns 0, EX_IOERR or EX_OSERR. */
int cli_sweep_json(const ts_sweep_row *rows, const ts_sweep_set *sets,
                   const char *const *names, uint32_t ntopo,
                   const char *workload, int dry_run, int exhaustive,
                   FILE *f);

#endif
