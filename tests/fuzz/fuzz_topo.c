/* fuzz_topo.c - libFuzzer harness for the topology loader: any byte string
 * either loads (then validation and the summary must run clean) or fails
 * with a diagnostic; never a crash, leak, hang or undefined behaviour. The
 * budgets are lowered so a tiny input cannot ask for a huge graph: the
 * fuzzer then explores the refusal paths instead of running out of memory. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "topsim/ts_budget.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_topo_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int init;
  if (!init) {
    ts_budget b;
    ts_budget_default(&b);
    b.devices = 20000;
    b.links = 40000;
    ts_budget_set(&b);
    init = 1;
  }
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_topo_load_buffer((const char *)data, size, "<fuzz>", &t, &d) == 0) {
    ts_problems p;
    memset(&p, 0, sizeof p);
    ts_topo_validate(t, &p);
    ts_problems_free(&p);
    ts_topo_stats s;
    if (ts_topo_stats_compute(t, &s) == 0) ts_topo_stats_free(&s);
    ts_topo_free(t);
  } else if (!d.msg[0]) {
    __builtin_trap(); /* every refusal says why */
  }
  return 0;
}
