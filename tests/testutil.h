/* testutil.h - helpers shared by the cmocka tests. */
#ifndef TOPSIM_TESTUTIL_H
#define TOPSIM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "topsim/ts_topo.h"
#include "topsim/ts_work.h"

/* Absolute path of a file under the source tree (static buffer per call
 * slot; up to 4 live at once). */
const char *tu_path(const char *rel);

/* Loads a topology under the source tree; fails the test (printing the
 * diagnostic) if it does not load. */
ts_topo *tu_load(const char *rel);

/* Loads YAML text from a string; returns the error code, *out set on 0. */
int tu_load_text(const char *yaml, ts_topo **out, ts_diag *d);

/* Counts nodes of a kind (and tier, or -1 for any tier). */
uint32_t tu_count(const ts_topo *t, ts_node_kind kind, int tier);

/* Sets workload key k to value v (ts_workload_override); fails the test,
 * printing the diagnostic, if it is refused. */
void tu_set(ts_workload *w, const char *k, const char *v);

#endif
