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

#include "fuzz_common.h"

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
    fuzz_small_budgets();
    snprintf(scratch, sizeof scratch, "/tmp/topsim-fuzz-xml-%ld.xml",
             (long)getpid());
  }
  if (write_scratch(data, size)) return 0;
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_topo_load_nccl_xml(scratch, 1, NULL, &t, &d);
  fuzz_check_load(rc, t, &d);
  return 0;
}
