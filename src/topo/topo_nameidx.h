/* topo_nameidx.h - a sorted name -> index table for the loader's lookups by
 * name (planes, templates, GPU models), so a file with many of each loads in
 * O(n log n) instead of a linear scan per reference.
 *
 * Build O(n log n) (qsort by name, then index: stable for duplicates); find
 * O(log n) returns the smallest index with that name. Names are borrowed,
 * not copied: they must outlive the table. */
#ifndef TOPSIM_TOPO_NAMEIDX_H
#define TOPSIM_TOPO_NAMEIDX_H

#include <stdint.h>

typedef struct topo_name_ent {
  const char *name;
  uint32_t index;
} topo_name_ent;

typedef struct topo_nameidx {
  topo_name_ent *e;
  uint32_t n;
} topo_nameidx;

/* Sorts the n entries of e (taken over: freed by topo_nameidx_free). */
void topo_nameidx_build(topo_nameidx *x, topo_name_ent *e, uint32_t n);
/* Smallest index named `name`, or -1. */
int64_t topo_nameidx_find(const topo_nameidx *x, const char *name);
/* Frees the table (safe on a zeroed one). */
void topo_nameidx_free(topo_nameidx *x);

#endif
