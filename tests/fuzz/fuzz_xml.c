/* fuzz_xml.c - libFuzzer harness for the NCCL topology XML importer
 * (topo_xml.c through ts_topo_load_nccl_xml): any byte string either
 * imports as one server (then validation and the summary must run clean)
 * or is refused with a diagnostic; never a crash, leak, hang or undefined
 * behaviour. The importer reads a path, so each input goes through one
 * scratch file of this process. Budgets are lowered as in fuzz_topo. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topsim/ts_budget.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_topo_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];

static int write_scratch(const uint8_t *data, size_t size) {
  FILE *f = fopen(scratch, "wb");
  if (!f) return -1;
  size_t n = fwrite(data, 1, size, f);
  return fclose(f) || n != size ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!scratch[0]) {
    ts_budget b;
    ts_budget_default(&b);
    b.devices = 20000;
    b.links = 40000;
    ts_budget_set(&b);
    snprintf(scratch, sizeof scratch, "/tmp/topsim-fuzz-xml-%ld.xml",
             (long)getpid());
  }
  if (write_scratch(data, size)) return 0;
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_topo_load_nccl_xml(scratch, 1, NULL, &t, &d) == 0) {
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
