/* fuzz_topo.c - libFuzzer harness for the topology loader: any byte string
 * either loads (then validation and the summary must run clean) or fails
 * with a diagnostic; never a crash, leak, hang or undefined behaviour. The
 * budgets are lowered so a tiny input cannot ask for a huge graph: the
 * fuzzer then explores the refusal paths instead of running out of memory. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int init;
  if (!init) {
    fuzz_small_budgets();
    init = 1;
  }
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_topo_load_buffer((const char *)data, size, "<fuzz>", &t, &d);
  fuzz_check_load(rc, t, &d);
  return 0;
}
