/* work_step.h - private pieces of the step model (ts_step.h).
 *
 * work_step_prog.c  builds a rank's program: the compute stream's
 *                   instructions in pipeline-schedule order, with the
 *                   collectives it issues and the points where it waits.
 * work_step_coll.c  communicators, cached plans, coll params from the
 *                   topology, all-to-all matrices.
 * work_step_run.c   the engine side: rank state machines, rendezvous per
 *                   (group, sequence number), pipeline messages, results.
 * work_step_trace.c trace slices and busiest-link utilization samples.
 *
 * Invariant: instructions of one program are shared (read-only) by every
 * rank of the same (pipeline stage, EP index); anything rank-specific (group
 * ids, peers, hosts) is resolved from the rank's ts_rank_label at run time. */
#ifndef TOPSIM_WORK_STEP_H
#define TOPSIM_WORK_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "topsim/ts_coll.h"
#include "topsim/ts_coll_exec.h"
#include "topsim/ts_step.h"
#include "work/work_int.h"

enum {
  SI_COMP, /* compute segment: val ps */
  SI_COLL, /* issue a collective on stream `group` (ordinal ord) */
  SI_WAIT, /* wait until collective `ord` of stream `group` completed */
  SI_SEND, /* pipeline send to stage `peer`, receiver slot ord */
  SI_RECV  /* wait for pipeline message in own slot ord */
};

enum { SI_F_COMBINE = 1 }; /* all-to-all in the combine orientation */

typedef struct step_ins {
  uint8_t op;     /* SI_* */
  uint8_t group;  /* ts_group of COLL/WAIT */
  uint8_t kind;   /* COLL: ts_coll_op; COMP: ts_phase; SEND/RECV: 0 fwd 1 bwd */
  uint8_t flags;  /* SI_F_* */
  uint16_t chunk;
  uint16_t peer;  /* SEND: destination pipeline stage */
  int32_t layer;
  int32_t micro;
  uint32_t ord;
  uint64_t val;   /* COMP: ps; COLL/SEND: bytes (ts_coll size) */
  uint64_t sent;  /* COLL/SEND: bytes this rank sends (ts_work_comm) */
  uint64_t cross; /* COLL: part of sent leaving the host */
} step_ins;

typedef struct step_prog {
  step_ins *ins;
  uint32_t n, cap;
  uint32_t *ords[TS_GROUP_COUNT]; /* ordinal -> instruction index */
  uint32_t nords[TS_GROUP_COUNT], capords[TS_GROUP_COUNT];
  ts_time_ps compute;             /* sum of COMP */
  int fail;
} step_prog;

/* Builds the program of pipeline stage `stage`, EP index `ep_rank`, from
 * the ops of that (stage, EP rank) and the descriptors of one of its ranks.
 * 0 or TS_ENOMEM (p freed). */
int step_prog_build(const work_cfg *c, uint32_t stage, const ts_op *ops,
                    size_t nops, const ts_comm_desc *descs, size_t ndescs,
                    step_prog *p);
void step_prog_free(step_prog *p);

/* Slot of a pipeline message at its receiver. */
static inline uint32_t step_slot(uint32_t dir, uint32_t chunk, uint32_t mb,
                                 uint32_t v, uint32_t m) {
  return (dir * v + chunk) * m + mb;
}

/* ---- collectives (work_step_coll.c) ---- */

typedef struct step_plan_ent {
  uint8_t op;
  uint8_t flags;
  uint64_t bytes, sent;
  ts_coll_plan *plan;
  struct step_plan_ent *next;
} step_plan_ent;

typedef struct step_group {
  ts_coll_comm *comm;
  step_plan_ent *plans;
  uint32_t arrived;
  uint8_t op;
} step_group;

typedef struct step_colls {
  const ts_topo *t;
  const ts_mapping *m;
  const work_cfg *c;
  ts_coll_params params;
  uint32_t compact_min;
  step_group *groups[TS_GROUP_COUNT]; /* [group id] */
  ts_coll_plan **pp_plan;              /* [rank * 2 + dir] */
  double *ep_share;                    /* [ep index] */
} step_colls;

int step_colls_init(step_colls *k, const ts_topo *t, const ts_mapping *m,
                    const work_cfg *c, uint32_t compact_min);
void step_colls_free(step_colls *k);
/* Plan for the collective `in` issued by every member of group (g, id);
 * `ins_of` gives member i's instruction (all-to-all rows). 0 or an error
 * with d set. */
int step_colls_plan(step_colls *k, ts_group g, uint32_t id,
                    const step_ins *const *member_ins, ts_coll_plan **out,
                    ts_diag *d);
/* Plan of a pipeline send from rank r in direction dir (0 fwd, 1 bwd) to
 * rank peer. */
int step_colls_pp_plan(step_colls *k, uint32_t r, uint32_t dir,
                       uint32_t peer, uint64_t bytes, ts_coll_plan **out,
                       ts_diag *d);

static inline ts_step_dim step_dim_of(uint32_t g) {
  switch (g) {
  case TS_GROUP_TP: return TS_DIM_TP;
  case TS_GROUP_CP: return TS_DIM_CP;
  case TS_GROUP_EP: return TS_DIM_EP;
  case TS_GROUP_PP: return TS_DIM_PP;
  default: return TS_DIM_DP;
  }
}

#endif

/* ---- trace (work_step_trace.c) ---- */

typedef struct step_trace {
  uint8_t *on;                 /* per rank: record its slices */
  ts_step_slice *v;
  uint64_t n, cap;
  uint32_t ndirs, cap_samples, nsamples;
  ts_time_ps interval;         /* between samples; doubles when full */
  ts_time_ps *t;               /* [sample] */
  ts_time_ps *busy;            /* [sample * ndirs + dir], cumulative */
  int fail;
} step_trace;

/* Prepares recording for opts' trace ranks; samples every direction's busy
 * time every `interval` (doubled whenever 64 samples are held) unless that
 * would take more than 16M entries. 0 or TS_ENOMEM. */
int step_trace_init(step_trace *T, const ts_step_opts *o, uint32_t ranks,
                    uint32_t ndirs, ts_time_ps interval);
void step_trace_add(step_trace *T, uint32_t rank, uint8_t stream,
                    uint8_t kind, uint16_t chunk, int32_t layer,
                    int32_t micro, ts_time_ps start, ts_time_ps dur);
void step_trace_sample(step_trace *T, const ts_net *net, ts_time_ps now);
/* Moves slices into r and turns samples of r->top links into counters. */
int step_trace_finish(step_trace *T, ts_step_result *r);
void step_trace_free(step_trace *T);
