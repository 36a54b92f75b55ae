/* ts_coll_op.h - the one enum of collective operations, shared by the
 * workload's communication descriptors (ts_work.h), the lowering
 * (ts_coll.h) and the engine side (ts_exec.h, ts_step.h traces). It sits in
 * its own header so that `work` names operations without depending on the
 * collective layer. */
#ifndef TOPSIM_TS_COLL_OP_H
#define TOPSIM_TS_COLL_OP_H

typedef enum ts_coll_op {
  TS_COLL_ALL_REDUCE,
  TS_COLL_ALL_GATHER,
  TS_COLL_REDUCE_SCATTER,
  TS_COLL_BROADCAST,
  TS_COLL_REDUCE,
  TS_COLL_ALL_TO_ALL,
  TS_COLL_ALL_TO_ALLV,
  TS_COLL_SEND_RECV,  /* point to point (a pipeline send) */
  TS_COLL_OP_COUNT
} ts_coll_op;

/* "all_reduce", "all_gather", ... (nccl-tests spelling), "?" out of range.
 * Defined by the collective layer (src/coll). */
const char *ts_coll_op_name(ts_coll_op op);

#endif
