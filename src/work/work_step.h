/* work_step.h - private pieces of the step compiler (ts_step_prog.h).
 *
 * work_step_prog.c  builds a rank's program: the compute stream's
 *                   instructions in pipeline-schedule order, with the
 *                   collectives it issues and the points where it waits.
 * work_step.c       ts_step_compile: one program per (stage, EP index) and
 *                   the facts a run reports.
 * The engine side (rank state machines, rendezvous, plans, trace) lives in
 * src/exec/exec_step_*.c.
 *
 * Invariant: instructions of one program are shared (read-only) by every
 * rank of the same (pipeline stage, EP index); anything rank-specific (group
 * ids, peers, hosts) is resolved from the rank's ts_rank_label at run time. */
#ifndef TOPSIM_WORK_STEP_H
#define TOPSIM_WORK_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "topsim/ts_step_prog.h"
#include "work/work_int.h"

/* Short names inside work for the public instruction set. */
enum {
  SI_COMP = TS_SI_COMP,
  SI_COLL = TS_SI_COLL,
  SI_WAIT = TS_SI_WAIT,
  SI_SEND = TS_SI_SEND,
  SI_RECV = TS_SI_RECV
};
enum { SI_F_COMBINE = TS_SI_F_COMBINE };
typedef ts_step_ins step_ins;
typedef ts_step_prog step_prog;

/* Builds the program of pipeline stage `stage`, EP index `ep_rank`, from
 * the ops of that (stage, EP rank) and the descriptors of one of its ranks.
 * 0 or TS_ENOMEM (p freed). */
int step_prog_build(const work_cfg *c, uint32_t stage, const ts_op *ops,
                    size_t nops, const ts_comm_desc *descs, size_t ndescs,
                    step_prog *p);
void step_prog_free(step_prog *p);

/* Whether an op of kind k belongs to a layer's attention block (else its
 * MLP block): each non-empty block ends (sequence parallel: starts and
 * ends) with the layer's TP collectives. */
bool step_op_is_attn(uint8_t k);

/* Slot of a pipeline message at its receiver. */
static inline uint32_t step_slot(uint32_t dir, uint32_t chunk, uint32_t mb,
                                 uint32_t v, uint32_t m) {
  return (dir * v + chunk) * m + mb;
}

#endif
