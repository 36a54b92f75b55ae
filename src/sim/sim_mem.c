/* sim_mem.c - see sim_mem.h. */
#include <stdlib.h>
#include <sys/mman.h>

#include "sim/sim_mem.h"

#define SIM_LINE ((size_t)64)
#define SIM_HUGE ((size_t)2 << 20)

void *sim_mem_alloc(size_t bytes) {
  size_t align = bytes >= SIM_HUGE ? SIM_HUGE : SIM_LINE;
  bytes = (bytes + align - 1) / align * align; /* aligned_alloc wants this */
  void *p = aligned_alloc(align, bytes);
#ifdef MADV_HUGEPAGE
  if (p && align == SIM_HUGE) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}
