/* ts_sweep.h - every parallel mapping of a workload on a topology:
 * enumeration, pruning with a count per reason, one simulated step per
 * surviving mapping (the same ts_step_run as `topsim run`), ranking, the
 * Pareto front of tokens/s against memory per GPU, and the writers (text
 * table, CSV, JSON, SVG).
 *
 * A mapping sets tp, cp, pp, virtual stages, dp (= GPUs / (tp cp pp)), ep,
 * micro-batch size, schedule, recomputation, ZeRO stage and the order
 * string. Keys not varied keep the workload file's value. Canonical forms
 * keep two mappings from meaning the same run: pp 1 runs 1f1b only, only
 * interleaved has virtual stages > 1, ZeRO is 0 when the gradient group has
 * one rank, and order strings differ in the dimensions of size > 1.
 *
 * Cost: enumeration O(candidates) integer checks plus O(pp) memory model
 * calls for those passing them; memory O(valid mappings). Simulation costs
 * what ts_step_run costs per mapping. The module keeps no global state, so
 * forked or MPI workers may run any subset of mappings in any order and
 * get the same rows (ts_sweep_row is plain data: it crosses pipes as
 * bytes). */
#ifndef TOPSIM_TS_SWEEP_H
#define TOPSIM_TS_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "topsim/ts_error.h"
#include "topsim/ts_step.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_units.h"
#include "topsim/ts_work.h"

/* Keys of --vary and --fix. */
typedef enum ts_sweep_key {
  TS_SWEEP_TP,
  TS_SWEEP_CP,
  TS_SWEEP_PP,
  TS_SWEEP_VP,        /* virtual stages (interleaved schedule) */
  TS_SWEEP_DP,        /* derived: GPUs / (tp cp pp); fixing it filters */
  TS_SWEEP_EP,
  TS_SWEEP_MB,        /* micro-batch size */
  TS_SWEEP_SCHEDULE,
  TS_SWEEP_RECOMPUTE,
  TS_SWEEP_ZERO,      /* ZeRO stage; 1 = Megatron's distributed optimizer */
  TS_SWEEP_ORDER,
  TS_SWEEP_KEY_COUNT
} ts_sweep_key;

/* Why a candidate cannot run, first failed check wins. */
typedef enum ts_sweep_prune {
  TS_PRUNE_GPUS,       /* a fixed tp, cp or pp does not divide the GPUs */
  TS_PRUNE_TP_HEADS,   /* heads or kv_heads not divisible by tp */
  TS_PRUNE_TP_DOMAIN,  /* a TP group leaves its NVLink (scale-up) domain */
  TS_PRUNE_CP_SEQ,     /* seq_len not divisible by cp */
  TS_PRUNE_PP_LAYERS,  /* layers not divisible by pp (x virtual stages) */
  TS_PRUNE_BATCH,      /* global_batch not divisible by micro_batch * dp */
  TS_PRUNE_INTERLEAVE, /* interleaved: micro-batches not divisible by pp */
  TS_PRUNE_EP,         /* experts not divisible by ep */
  TS_PRUNE_MEMORY,     /* a stage needs more than the GPU's HBM */
  TS_PRUNE_OTHER,      /* refused by ts_work_validate for another reason */
  TS_PRUNE_COUNT
} ts_sweep_prune;

typedef struct ts_sweep_spec {
  uint32_t gpus;        /* 0: every GPU of the topology */
  uint32_t vary;        /* bit (1u << key) per varied key */
  int64_t fix[TS_SWEEP_KEY_COUNT]; /* -1: not fixed; schedule/recompute as
                                      their enum value; order: see fix_order */
  char fix_order[32];   /* fixed order string when fix[ORDER] >= 0 */
  int allow_cross_node_tp;
} ts_sweep_spec;

/* One mapping. Plain data. */
typedef struct ts_sweep_map {
  uint32_t tp, cp, pp, vp, dp, ep, mb;
  uint8_t schedule, recompute, zero, topo; /* topo: index into the topologies */
  char order[24];
  uint64_t mem_bytes;   /* largest per-GPU memory over stages */
} ts_sweep_map;

typedef struct ts_sweep_set {
  ts_sweep_map *maps;   /* valid mappings, enumeration order */
  uint32_t n;
  uint32_t gpus;        /* GPUs each mapping uses */
  uint64_t candidates;  /* enumerated before pruning */
  uint64_t pruned[TS_PRUNE_COUNT];
  char example[TS_PRUNE_COUNT][384]; /* first message per reason */
  uint64_t hbm_bytes;   /* smallest HBM among the GPUs used */
  char min_memory[200]; /* smallest need among memory-pruned, or "" */
} ts_sweep_set;

/* One simulated mapping. status 0: simulated; else the ts error code and
 * error says why (the sweep goes on). Plain data. */
typedef struct ts_sweep_row {
  ts_sweep_map map;
  uint32_t index;       /* position in the job list (tie breaker) */
  int32_t status;
  int32_t bounded;      /* 1: not simulated: its bound proved it could
                           not reach the table (or the Pareto front);
                           only bound_s is set */
  int32_t memo;         /* 1: copied from a mapping with the same key */
  double bound_s;       /* lower bound on step_s (ts_sweep_bound) */
  double guess_s;       /* simulation order (ts_sweep_guess_quick) */
  uint64_t key[2];      /* ts_sweep_bound's simulation key */
  double step_s, tokens_s, mfu;
  double compute_s, bubble_s, exposed_s[TS_DIM_COUNT];
  char error[512];
} ts_sweep_row;

typedef enum ts_sweep_sort { TS_SORT_TOKENS, TS_SORT_STEP, TS_SORT_MEMORY } ts_sweep_sort;

/* Sets spec to vary every key except the order string, none fixed. */
void ts_sweep_spec_default(ts_sweep_spec *s);
/* Key by name ("tp", "vp" or "virtual_stages", "mb" or "micro_batch",
 * "zero" or "zero_stage", ...): 0, or -1 when unknown. */
int ts_sweep_key_parse(const char *name, ts_sweep_key *k);
const char *ts_sweep_key_name(ts_sweep_key k);
const char *ts_sweep_prune_name(ts_sweep_prune p);
/* Parses VALUE of --fix KEY=VALUE into s (checks type and range, not
 * divisibility). 0, or TS_EUSAGE with a message. */
int ts_sweep_spec_fix(ts_sweep_spec *s, ts_sweep_key k, const char *value,
                      ts_diag *d);

/* Enumerates the mappings of w on t allowed by spec and prunes those that
 * cannot run. w is used as scratch (overrides) and left at the last
 * candidate tried: reload or re-apply before other use. Returns 0 (also
 * when nothing survives: out->n = 0), TS_EINVALID when spec.gpus exceeds
 * the topology, or TS_ENOMEM. Free with ts_sweep_set_free. */
int ts_sweep_enumerate(ts_workload *w, const ts_topo *t,
                       const ts_sweep_spec *spec, ts_sweep_set *out,
                       ts_diag *d);
void ts_sweep_set_free(ts_sweep_set *s);

/* Writes the mapping's keys into w (tp, cp, pp, dp, ep, micro_batch,
 * schedule, virtual_stages, recompute, zero_stage, order, gpus). */
int ts_sweep_apply(ts_workload *w, const ts_sweep_map *m, uint32_t gpus,
                   ts_diag *d);
/* Maps and runs one step of mapping m: fills *row, errors included (never
 * fails). With o->horizon > 0, a step that passes it is not finished: the
 * row is bounded with bound_s = the horizon (a proof step_s > bound_s). */
void ts_sweep_simulate(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                       uint32_t gpus, const ts_step_opts *o, ts_sweep_row *row);

/* Largest capacity of the link directions entering one of the first gpus
 * GPUs (topology order), NVSwitch bundles counted twice as an upper bound
 * of what the network model lets in: ts_step_bound_params.ingress_bps. */
double ts_sweep_ingress(const ts_topo *t, uint32_t gpus);
/* Largest capacity of the link directions entering one host (topology
 * host label) from outside it, over the hosts of the first gpus GPUs,
 * NVSwitch links counted twice as in ts_sweep_ingress:
 * ts_step_bound_params.host_in_bps. 0 when a GPU has no host label (or out
 * of memory): no host term. */
double ts_sweep_host_ingress(const ts_topo *t, uint32_t gpus);
/* Largest sum of the NVLink bandwidths of one of the first gpus GPUs
 * (NVSwitch bundle counted once): at least the capacity of the link
 * directions a transfer to another GPU of its host can leave it by, under
 * o's link state and faults (NULL: healthy). 0 (no TP egress term) where
 * that cannot be shown: an NVLink down or failing during the run, two GPUs
 * of a host without a shared NVSwitch or direct NVLink, a host whose GPUs
 * are not consecutive, a GPU without a host label (src/sweep/sweep_fabric.c
 * proves it). *nvls: 1 when such a GPU links to an NVLS-capable NVSwitch:
 * ts_step_bound_params.tp_out_bps and tp_nvls. */
double ts_sweep_tp_egress(const ts_topo *t, uint32_t gpus, const ts_step_opts *o,
                          uint32_t *nvls);

/* The least once-per-operation latency (ts_coll_min_startup) of the
 * collectives ts_step_run would run on the first gpus GPUs under o (NULL:
 * defaults): NCCL's cost structure of each GPU's generation, 0 with
 * o->alpha_ps >= 0 or o->free_comm. ts_step_bound_params.tp_startup_ps. */
ts_time_ps ts_sweep_tp_startup(const ts_topo *t, uint32_t gpus, const ts_step_opts *o);

/* What the step bounds may assume about the fabric of one topology. */
typedef struct ts_sweep_fabric {
  double ingress_bps;  /* ts_sweep_ingress; 0: collectives free */
  double host_in_bps;  /* ts_sweep_host_ingress; 0: no host terms */
  double tp_out_bps;   /* ts_sweep_tp_egress; 0: no TP egress term */
  uint32_t nvls;       /* its *nvls */
  ts_time_ps tp_startup_ps; /* ts_sweep_tp_startup */
} ts_sweep_fabric;

/* All of them for the first gpus GPUs of t under o (NULL: healthy). */
void ts_sweep_fabric_of(const ts_topo *t, uint32_t gpus, const ts_step_opts *o,
                        ts_sweep_fabric *f);
/* Maps and compiles mapping m and sets *out to a lower bound on the step
 * time ts_sweep_simulate would give under the faults f was made for (the
 * larger of ts_step_bound, with the host terms when f->host_in_bps > 0 and
 * the TP egress term when f->tp_out_bps > 0, and ts_work_step_bound_volume)
 * and key[] to a hash of
 * everything that decides that simulation (compiled programs, reported
 * facts, rank layout): equal keys, equal simulated rows. 0 or the error
 * of mapping or compiling (d says why). */
int ts_sweep_bound(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                   uint32_t gpus, const ts_sweep_fabric *f, ts_time_ps *out,
                   uint64_t key[2], ts_diag *d);

/* A cheaper, weaker lower bound than ts_sweep_bound from per-stage
 * compute, blocking TP collectives and ZeRO 3 weight all-gathers under f
 * (as ts_sweep_bound; all 0: compute alone)
 * (ts_work_step_bound_quick), 0 where it does not apply
 * (mixed GPU models, DualPipe, MoE, a mapping that does not validate).
 * Returns 0; *out is the bound. */
int ts_sweep_bound_quick(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                         uint32_t gpus, const ts_sweep_fabric *f, ts_time_ps *out,
                         ts_diag *d);
/* ts_sweep_bound_quick into *out, and into *guess that bound plus the
 * host volume term (ts_work_step_bound_volume): not a bound, an estimate
 * of the step for the order in which the sweep simulates (traffic the
 * bound can only take the larger of, a ZeRO 2 reduce-scatter every
 * micro-batch, mostly adds to the step). Returns 0. */
int ts_sweep_guess_quick(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                         uint32_t gpus, const ts_sweep_fabric *f, ts_time_ps *out,
                         ts_time_ps *guess, ts_diag *d);

/* Sorts rows: simulated first, best first by `by`, ties by index. */
void ts_sweep_rank(ts_sweep_row *rows, uint32_t n, ts_sweep_sort by);
/* front[i] = 1 when simulated row i is not dominated (another row has at
 * least its tokens/s with at most its memory, one strictly better). */
void ts_sweep_pareto(const ts_sweep_row *rows, uint32_t n, uint8_t *front);

/* "tp8 cp1 pp16 v1 dp8 ep1 mb1 1f1b full z0" (+ order when not default). */
void ts_sweep_map_label(const ts_sweep_map *m, char *buf, size_t len);

/* Writers. Each returns 0 or TS_EIO. ranked rows as from ts_sweep_rank. */
int ts_sweep_write_table(const ts_sweep_row *rows, uint32_t n, uint32_t top,
                         FILE *f);
int ts_sweep_write_csv(const ts_sweep_row *rows, uint32_t n,
                       const char *const *topo_names, FILE *f);
/* SVG scatter of tokens/s (y) against memory per GPU (x), one <circle
 * class="point"> per simulated row, the Pareto front joined and labelled. */
int ts_sweep_write_svg(const ts_sweep_row *rows, uint32_t n, const char *title,
                       FILE *f);

#endif
