/* fuzz_common.h - what the topology harnesses share (header-only: each
 * harness is one executable). */
#ifndef TOPSIM_FUZZ_COMMON_H
#define TOPSIM_FUZZ_COMMON_H

#include <string.h>

#include "topsim/ts_budget.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_topo_check.h"

/* Lowers the device and link budgets so a tiny input cannot ask for a
 * huge graph: the fuzzer explores the refusal paths instead of running
 * out of memory. */
static inline void fuzz_small_budgets(void) {
  ts_budget b;
  ts_budget_default(&b);
  b.devices = 20000;
  b.links = 40000;
  ts_budget_set(&b);
}

/* After a load that returned rc: a topology must validate and summarise
 * cleanly (then it is freed); a refusal must say why. */
static inline void fuzz_check_load(int rc, ts_topo *t, const ts_diag *d) {
  if (rc == 0) {
    ts_problems p;
    memset(&p, 0, sizeof p);
    ts_topo_validate(t, &p);
    ts_problems_free(&p);
    ts_topo_stats s;
    if (ts_topo_stats_compute(t, &s) == 0) ts_topo_stats_free(&s);
    ts_topo_free(t);
  } else if (!d->msg[0]) {
    __builtin_trap(); /* every refusal says why */
  }
}

#endif
