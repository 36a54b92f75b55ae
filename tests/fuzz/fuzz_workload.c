/* fuzz_workload.c - libFuzzer harness for the workload loader: parse, then
 * (when it loads) validate, memory model, op and program generation checks
 * that need no topology. Never a crash, leak or undefined behaviour; every
 * refusal carries a message. Budgets lowered as in fuzz_topo.c. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "topsim/ts_budget.h"
#include "topsim/ts_work.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int init;
  if (!init) {
    ts_budget b;
    ts_budget_default(&b);
    b.descriptors = 100000;
    ts_budget_set(&b);
    init = 1;
  }
  ts_workload *w = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_workload_load_buffer((const char *)data, size, "<fuzz>", &w, &d)) {
    if (!d.msg[0]) __builtin_trap(); /* every refusal says why */
    return 0;
  }
  uint32_t pp = ts_workload_parallel(w, TS_GROUP_PP);
  for (uint32_t s = 0; s < pp && s < 4; s++) {
    ts_mem_breakdown m;
    if (ts_work_memory(w, s, &m) == 0 && m.total < m.weights) __builtin_trap();
  }
  (void)ts_work_step_model_flops(w);
  ts_op *ops = NULL;
  size_t nops = 0;
  if (ts_work_ops(w, NULL, 0, 0, &ops, &nops) == 0) free(ops);
  ts_workload_free(w);
  return 0;
}
