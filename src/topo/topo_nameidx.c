/* topo_nameidx.c - sorted name -> index tables (topo_nameidx.h). */
#include <stdlib.h>
#include <string.h>

#include "topo/topo_nameidx.h"

static int ent_cmp(const void *a, const void *b) {
  const topo_name_ent *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c) return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

void topo_nameidx_build(topo_nameidx *x, topo_name_ent *e, uint32_t n) {
  if (n > 1) qsort(e, n, sizeof *e, ent_cmp);
  x->e = e;
  x->n = n;
}

int64_t topo_nameidx_find(const topo_nameidx *x, const char *name) {
  uint32_t lo = 0, hi = x->n; /* first entry with e.name >= name */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (strcmp(x->e[mid].name, name) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < x->n && strcmp(x->e[lo].name, name) == 0 ? (int64_t)x->e[lo].index : -1;
}

void topo_nameidx_free(topo_nameidx *x) {
  free(x->e);
  x->e = NULL;
  x->n = 0;
}
