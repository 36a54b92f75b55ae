/* sim_mem.h - large, aligned blocks for the engine's arrays.
 *
 * The heap entries and the event pool are hit at random once they outgrow
 * the caches, so on top of cache misses each access risks a TLB miss (and
 * under virtualization a two-level page walk). Blocks of 2 MiB and more are
 * therefore 2 MiB-aligned and advised as transparent huge pages where the
 * kernel offers them (madvise mode); smaller ones are cache-line aligned.
 * Cost: one allocation; the hint is best effort and never fails the call. */
#ifndef TOPSIM_SIM_MEM_H
#define TOPSIM_SIM_MEM_H

#include <stddef.h>

/* A block of at least bytes, 64-byte aligned (2 MiB when large); NULL on
 * failure. Free with free(). */
void *sim_mem_alloc(size_t bytes);

#endif
