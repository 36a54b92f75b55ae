/* exec_step_batch.c - back-to-back collectives of one stream run as one
 * (a bounded shortcut: TS_STEP_BATCH in ts_step_opts.bounded, off with
 * exact).
 *
 * ZeRO 2 reduces every micro-batch's gradients in dp_bucket-sized
 * reduce-scatters issued at once (GPT-3 175B at TP 4 PP 8: ~135 buckets of
 * 160 MB per micro-batch, 32 micro-batches), and every ZeRO 1/2 step ends
 * with as many weight all-gathers; NCCL runs them one after the other on
 * the communicator's stream. A batch is such a run: consecutive
 * instructions of a program, collectives of one stream with the same op
 * and flags, no wait on any of them but the last (a wait on an inner one
 * would see it end later; a layer's FSDP prefetch or the ZeRO 3 gathers
 * are waited one by one, so they stay apart). The step runs a batch as
 * one collective of the summed bytes (its algorithm chosen for the mean
 * member size) and holds its completion for `extra` = the members'
 * isolated times minus the batch's own isolated time (exec_step_run.c):
 * on links nothing else uses the stream then ends when the members would
 * have, one after the other. Under contention it differs: each member
 * waits for its slowest ring edge before the next starts, the batch lets
 * every edge run on, so where the slowest edge changes from bucket to
 * bucket the batch ends earlier (a maximum of sums instead of a sum of
 * maxima). That matters where the stream is the step's critical path, so
 * a stream whose collectives' cost-model times add up to more than its
 * rank's compute (it queues all step long) is not batched (GPT-3 175B TP 4
 * CP 4 PP 2 v48 DP 32: -2.5% batched, docs/performance.md).
 * tests/test_exec.c bounds the step's error at 1% under 4:1
 * oversubscription, a failed spine, shared spines and skewed MoE.
 * Members of a group run programs of one stage, so every member finds the
 * same batches. Cost: O(instructions) once per step, plus one plan lookup
 * per collective of each program's batchable streams (the guard). */
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

/* Group kinds whose streams may batch: TP and EP collectives are replayed
 * or folded by instance (quiet windows), PP is point to point. */
static bool batchable(uint32_t g) {
  return g != TS_GROUP_TP && g != TS_GROUP_EP && g != TS_GROUP_PP;
}

/* Batch lengths of p's stream g, or NULL when every collective is alone
 * (*rc TS_ENOMEM on failure). */
static uint16_t *lengths(const ts_step_prog *p, uint32_t g, int *rc) {
  uint32_t n = p->nords[g];
  if (n < 2) return NULL;
  uint8_t *rel = calloc(n, 1);
  uint16_t *len = malloc((size_t)n * sizeof *len);
  if (!rel || !len) {
    free(rel);
    free(len);
    *rc = TS_ENOMEM;
    return NULL;
  }
  for (uint32_t i = 0; i < p->n; i++)
    if (p->ins[i].op == TS_SI_WAIT && p->ins[i].group == g && p->ins[i].ord < n)
      rel[p->ins[i].ord] = 1;
  bool any = false;
  for (uint32_t o = 0; o < n;) {
    uint32_t i = p->ords[g][o], c = 1;
    const ts_step_ins *x = &p->ins[i];
    while (x->kind != TS_COLL_ALL_TO_ALLV && o + c < n && c < UINT16_MAX &&
           !rel[o + c - 1] && p->ords[g][o + c] == i + c) {
      const ts_step_ins *y = &p->ins[i + c];
      if (y->kind != x->kind || y->flags != x->flags) break;
      c++;
    }
    len[o] = (uint16_t)c;
    for (uint32_t t = 1; t < c; t++) len[o + t] = 0;
    any |= c > 1;
    o += c;
  }
  free(rel);
  if (any) return len;
  free(len);
  return NULL;
}

/* Seconds the cost model gives stream g of program p (rank r runs it):
 * the sum of its collectives' predicted times. */
static double stream_load(exec_colls *k, const ts_step_prog *p, uint32_t r,
                          uint32_t g, int *rc) {
  uint32_t id = ts_mapping_rank(k->m, r)->group[g];
  uint32_t n = ts_mapping_group_size(k->m, (ts_group)g);
  const ts_step_ins **ins = malloc((size_t)n * sizeof *ins);
  if (!ins) {
    *rc = TS_ENOMEM;
    return 0;
  }
  double s = 0;
  ts_diag d;
  for (uint32_t o = 0; o < p->nords[g] && !*rc; o++) {
    for (uint32_t i = 0; i < n; i++) ins[i] = &p->ins[p->ords[g][o]];
    exec_plan_ent *e = NULL;
    if (exec_colls_plan(k, (ts_group)g, id, ins, &e, &d)) break;
    s += ts_coll_plan_predicted_s(e->plan);
  }
  free(ins);
  return s;
}

int exec_batch_init(exec_colls *k, const ts_step_opts *o, int fast_on) {
  if (!(o->bounded & TS_STEP_BATCH) || o->exact || !fast_on ||
      !k->sp->nprogs)
    return 0;
  k->bat = calloc((size_t)k->sp->nprogs * TS_GROUP_COUNT, sizeof *k->bat);
  uint8_t *seen = calloc(k->sp->nprogs, 1);
  if (!k->bat || !seen) {
    free(seen);
    return TS_ENOMEM;
  }
  int rc = 0;
  for (uint32_t r = 0; r < ts_mapping_ranks(k->m) && !rc; r++) {
    const ts_step_prog *p = ts_step_progs_rank(k->sp, k->m, r);
    size_t i = (size_t)(p - k->sp->prog);
    if (seen[i]) continue; /* members of a group share their program */
    seen[i] = 1;
    for (uint32_t g = 0; g < TS_GROUP_COUNT && !rc; g++) {
      if (!batchable(g)) continue;
      uint16_t *len = lengths(p, g, &rc);
      /* a saturated stream stays apart (see the head of this file) */
      if (len && stream_load(k, p, r, g, &rc) > ts_ps_to_s(p->compute)) {
        free(len);
        len = NULL;
      }
      k->bat[i * TS_GROUP_COUNT + g] = len;
    }
  }
  free(seen);
  return rc;
}

void exec_batch_free(exec_colls *k) {
  if (!k->bat) return;
  for (size_t i = 0; i < (size_t)k->sp->nprogs * TS_GROUP_COUNT; i++)
    free(k->bat[i]);
  free(k->bat);
  k->bat = NULL;
}

uint32_t exec_batch_len(const exec_colls *k, const ts_step_prog *p,
                        uint32_t g, uint32_t ord) {
  if (!k->bat) return 1;
  const uint16_t *len = k->bat[(size_t)(p - k->sp->prog) * TS_GROUP_COUNT + g];
  return len ? len[ord] : 1;
}

void exec_batch_merge(const ts_step_prog *p, uint32_t g, uint32_t first,
                      uint32_t n, ts_step_ins *out) {
  *out = p->ins[p->ords[g][first]];
  for (uint32_t t = 1; t < n; t++) {
    const ts_step_ins *y = &p->ins[p->ords[g][first + t]];
    out->val += y->val;
    out->sent += y->sent;
    out->cross += y->cross;
  }
  out->count = n;
}
