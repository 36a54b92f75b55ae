/* ts_step_prog.h - one training step compiled into per-rank programs: the
 * interface between `work`, which compiles a mapped workload (ts_work.h)
 * into programs and depends on the topology only, and `exec`, which runs
 * them on the engine (ts_step.h).
 *
 * A program is the compute stream of one rank in pipeline-schedule order:
 * compute segments, the collectives it issues on its communication streams
 * (one per group kind), the points where it waits for them, and pipeline
 * sends and receives. Programs are shared (read-only) by every rank of the
 * same (pipeline stage, EP index); anything rank-specific (group ids,
 * peers, hosts) is resolved from the rank's ts_rank_label when run.
 * docs/model.md ("Step model") describes schedules, streams and overlap.
 *
 * Cost: O(programs x program length), a program holding O(micro-batches x
 * layers on its stage) instructions. Ownership: ts_step_compile fills a
 * caller-owned struct whose arrays ts_step_progs_free releases. */
#ifndef TOPSIM_TS_STEP_PROG_H
#define TOPSIM_TS_STEP_PROG_H

#include <stdint.h>

#include "topsim/ts_coll_op.h"
#include "topsim/ts_error.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_units.h"
#include "topsim/ts_work.h"

/* Instruction opcodes. */
enum {
  TS_SI_COMP, /* compute segment: val ps */
  TS_SI_COLL, /* issue a collective on stream `group` (ordinal ord) */
  TS_SI_WAIT, /* wait until collective `ord` of stream `group` completed */
  TS_SI_SEND, /* pipeline send to stage `peer`, receiver slot ord */
  TS_SI_RECV  /* wait for pipeline message in own slot ord */
};

enum { TS_SI_F_COMBINE = 1 }; /* all-to-all in the combine orientation */

typedef struct ts_step_ins {
  uint8_t op;     /* TS_SI_* */
  uint8_t group;  /* ts_group of COLL/WAIT */
  uint8_t kind;   /* COLL: ts_coll_op; COMP: ts_phase; SEND/RECV: 0 fwd 1 bwd */
  uint8_t flags;  /* TS_SI_F_* */
  uint16_t chunk;
  uint16_t peer;  /* SEND: destination pipeline stage */
  int32_t layer;
  int32_t micro;
  uint32_t ord;
  uint32_t count; /* COLL: collectives merged into this one (exec's
                     batches of back-to-back collectives); 0 or 1: one */
  uint64_t val;   /* COMP: ps; COLL/SEND: bytes (ts_coll size) */
  uint64_t sent;  /* COLL/SEND: bytes this rank sends (ts_work_comm) */
  uint64_t cross; /* COLL: part of sent leaving the host */
} ts_step_ins;

typedef struct ts_step_prog {
  ts_step_ins *ins;
  uint32_t n, cap;
  uint32_t *ords[TS_GROUP_COUNT]; /* collective ordinal -> instruction index */
  uint32_t nords[TS_GROUP_COUNT], capords[TS_GROUP_COUNT];
  ts_time_ps compute;             /* sum of COMP */
  int fail;
} ts_step_prog;

/* A compiled step: programs and the facts a run reports. */
typedef struct ts_step_progs {
  ts_step_prog *prog;     /* [stage * ep + ep index] */
  uint32_t nprogs;
  uint32_t ranks, pp, ep;
  uint32_t chunks;        /* model chunks (virtual stages) per rank */
  uint32_t microbatches;  /* per pipeline per step */
  double *ep_share;       /* [ep index]: share of routed tokens it
                             receives (MoE), 0 for dense models */
  double tokens_per_step;
  double model_flops;     /* ts_work_step_model_flops */
  double hw_flops;        /* ts_work_step_flops (with recompute) */
  double peak_flops;      /* per GPU: bf16, or fp8 for fp8 models */
} ts_step_progs;

/* Compiles one step of w mapped by m on t into *out. TS_EINVALID (the
 * mapping was made for another layout), TS_ENOMEM; d says why, and *out
 * is left zeroed. */
int ts_step_compile(const ts_workload *w, const ts_topo *t,
                    const ts_mapping *m, ts_step_progs *out, ts_diag *d);

/* ts_step_compile as if the global batch held `microbatches` micro-batches
 * per pipeline (0: the workload's own); everything else as in w. */
int ts_step_compile_mb(const ts_workload *w, const ts_topo *t,
                       const ts_mapping *m, uint32_t microbatches,
                       ts_step_progs *out, ts_diag *d);

/* Program rank r runs (r < out->ranks of the mapping it was compiled
 * for). */
const ts_step_prog *ts_step_progs_rank(const ts_step_progs *p,
                                       const ts_mapping *m, uint32_t r);

/* Frees the arrays of *p (zeroed or NULL is fine). */
void ts_step_progs_free(ts_step_progs *p);

/* What ts_step_bound may assume about the fabric: group_size[g] is the
 * size of every group of kind g; ingress_bps is at least the capacity of
 * all link directions entering any one GPU (0: collectives cost nothing);
 * host_in_bps at least that of all link directions entering (and, links
 * having one bandwidth per direction, leaving) any one host, and
 * host_members[g] at least the members any group of kind g has on one
 * host (either 0: no host term); host_gpus the ranks on one host (0:
 * unknown; ts_work_step_bound_volume only). */
typedef struct ts_step_bound_params {
  uint32_t group_size[TS_GROUP_COUNT];
  double ingress_bps;
  double host_in_bps;
  uint32_t host_members[TS_GROUP_COUNT];
  uint32_t host_gpus;
  uint32_t host_flags; /* TS_HOST_* facts of the layout (ts_work.h), 0:
                          none assumed (no host fluid terms) */
  double tp_out_bps;   /* at least the capacity of the link directions out
                          of any GPU that a transfer between two GPUs of one
                          host can use (ts_sweep_fabric_of); with
                          TS_HOST_TP_WHOLE it bounds the TP collectives by
                          what a member must send. 0: no such term */
  uint32_t tp_nvls;    /* 1: a group inside one host may run NVLS (the
                          switch reduces: a member sends less) */
  ts_time_ps tp_startup_ps; /* with tp_out_bps: at most the once-per-
                          operation latency before any transfer of a
                          collective starts (ts_coll_min_startup) */
} ts_step_bound_params;

/* A lower bound on the step time ts_step_run gives for these programs
 * under any faults, stragglers, fidelity and contention: compute segments
 * at their time, collectives at bytes a member must receive / ingress,
 * sends free, in program order with the pipeline's dependencies, and the
 * bytes that must cross one host's links in release-date order
 * (src/work/work_bound.c proves it). 0 with *out set, TS_ENOMEM, or
 * TS_EINTERNAL (a receive no program sends to). */
int ts_step_bound(const ts_step_progs *p, const ts_step_bound_params *bp,
                  ts_time_ps *out);

/* A weaker lower bound than ts_step_bound with neither mapping nor
 * programs, from the ops of one micro-batch per stage on GPU model gpu:
 * per-stage compute (plus blocking TP collectives and ZeRO 3 weight
 * all-gathers at bp's ingress and host terms; group_size is not read: the
 * workload gives it) x micro-batches, the schedule's fill and drain along
 * chunk 0, the optimizer. 0 with *out set (0 when the schedule or model is
 * not covered: DualPipe, MoE), TS_ENOMEM, or the error of ts_work_ops. */
int ts_work_step_bound_quick(const ts_workload *w, const ts_gpu_model *gpu,
                             const ts_step_bound_params *bp, ts_time_ps *out);

/* A lower bound on the step time from the DP traffic (ZeRO gradient
 * reduce-scatters or all-reduces, weight all-gathers) and the CP K/V
 * collectives (counted from the ops on GPU model gpu) that must cross one
 * host's links during the step: bytes / bp->host_in_bps (docs/model.md
 * "Step lower bound"); 0 when it does not apply (bp's host terms unknown,
 * FSDP/HSDP, every group inside a host). ts_work_step_bound_quick
 * includes it; ts_step_bound does not (the sweep takes the larger). */
ts_time_ps ts_work_step_bound_volume(const ts_workload *w, const ts_gpu_model *gpu,
                                     const ts_step_bound_params *bp);

#endif
