/* sweep_int.h - helpers shared by the sweep_*.c files. */
#ifndef TOPSIM_SWEEP_INT_H
#define TOPSIM_SWEEP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "topsim/ts_sweep.h"

/* Schedule values as ts_workload_shape spells them. */
enum { SWEEP_GPIPE = 0, SWEEP_1F1B = 1, SWEEP_INTERLEAVED = 2 };
enum { SWEEP_MAX_ORDERS = 120 }; /* 5! */

/* NVLink domain of each of the first n GPUs (topology order) and a memo of
 * TP-group checks keyed by (tp, stride). */
typedef struct sweep_domains {
  int32_t *dom;       /* [rank]: dense domain id, -1 without NVLink */
  uint32_t n, largest;
  uint32_t memo_n;
  uint32_t memo[256][3]; /* tp, stride, inside */
} sweep_domains;

int sweep_domains_init(sweep_domains *s, const ts_topo *t, uint32_t n);
void sweep_domains_free(sweep_domains *s);
/* True when every TP group of m stays inside one NVLink domain (ranks on
 * the first n GPUs in topology order, m->order giving the rank layout). */
bool sweep_tp_inside(sweep_domains *s, const ts_sweep_map *m);
/* Distinct order strings for m's sizes: permutations of the dimensions of
 * size > 1, the size-1 ones appended in the default order. Returns count. */
uint32_t sweep_orders(const ts_sweep_map *m, char out[][24]);
/* Rank stride between TP neighbours under m->order (product of the sizes
 * of dimensions inner to tp). */
uint32_t sweep_tp_stride(const ts_sweep_map *m);

#endif
