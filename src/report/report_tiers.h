/* report_tiers.h - tier-level diagrams (one box per tier group, counted
 * edges, one row per tier), shared by `topsim plan --diagram` and `topsim
 * topo --dot --level tier / --svg`. Builders fill a tdiag; the writers lay
 * it out as DOT or as SVG (computed here: no Graphviz). */
#ifndef TOPSIM_REPORT_TIERS_H
#define TOPSIM_REPORT_TIERS_H

#include <stdint.h>
#include <stdio.h>

#define TD_ROWS 4              /* endpoints, leaf, spine, core */
#define TD_GROUPS_MAX 16u      /* more groups than this in a row: one box */

typedef struct td_box {
  int row;                     /* 0 endpoints .. 3 core */
  char l1[96], l2[96];         /* two label lines */
} td_box;

typedef struct td_edge {
  uint32_t a, b;               /* box indices, a in the lower row */
  uint64_t cables;
} td_edge;

typedef struct tdiag {
  td_box *box;
  td_edge *edge;
  uint32_t nbox, nedge, capbox, capedge;
  int oom;
} tdiag;

/* Appends a box (returns its index) or an edge; on allocation failure set
 * d->oom and return 0 / do nothing. */
uint32_t td_add_box(tdiag *d, int row, const char *l1, const char *l2);
void td_add_edge(tdiag *d, uint32_t a, uint32_t b, uint64_t cables);
void td_free(tdiag *d);

/* Writes d as DOT (svg == 0) or SVG. Returns 0, TS_ENOMEM (d->oom) or
 * TS_EIO. */
int td_write(const tdiag *d, int svg, FILE *out);

#endif
