/* ts_work.h - training workloads: format, parallel mapping, memory fit,
 * compute model and per-rank communication volumes.
 *
 * A ts_workload is a model + training recipe + parallel layout read from a
 * YAML file (docs/workload-format.md). ts_work_map places its ranks on the
 * GPUs of a ts_topo and refuses layouts that cannot run. From a workload
 * (and a mapping where placement matters) the module derives:
 *   - memory per GPU per pipeline stage (weights, grads, optimizer state,
 *     activations; Korthikanti et al. 2022);
 *   - the operations of one micro-batch with FLOPs, HBM bytes and a roofline
 *     time;
 *   - the collectives one rank takes part in during a step, as descriptors
 *     the collective layer will execute, with the bytes each rank sends.
 * Nothing here simulates the network: descriptors carry sizes, not times.
 *
 * Errors: TS_ESCHEMA for bad workload input (file:line:column in the diag),
 * TS_EINVALID for a layout that cannot work on the topology, TS_ENOMEM. */
#ifndef TOPSIM_TS_WORK_H
#define TOPSIM_TS_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "topsim/ts_coll_op.h"
#include "topsim/ts_error.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_units.h"

typedef struct ts_workload ts_workload;
typedef struct ts_mapping ts_mapping;

/* Process groups a rank belongs to. DP is the dense data-parallel group
 * (ranks holding the same dense weight shard and the same CP slice); the
 * gradient groups are the ones gradients are reduced over: dense weights
 * over DP x CP, expert weights over (DP / EP) x CP. */
typedef enum ts_group {
  TS_GROUP_TP,
  TS_GROUP_CP,
  TS_GROUP_EP,
  TS_GROUP_DP,
  TS_GROUP_PP,
  TS_GROUP_GRAD,        /* dense gradients: DP x CP */
  TS_GROUP_EXPERT_GRAD, /* expert gradients: (DP / EP) x CP */
  TS_GROUP_SHARD,       /* HSDP: consecutive shard_group members of GRAD */
  TS_GROUP_REPLICA,     /* HSDP: same shard index across shard groups */
  TS_GROUP_COUNT
} ts_group;

/* Where a rank sits: topology labels and its place in every group. */
typedef struct ts_rank_label {
  uint32_t gpu;                     /* topology node id */
  int32_t host, rack, su;           /* topology labels (TS_NONE if absent) */
  int32_t numa;
  int32_t nvl_domain;               /* dense id of its NVLink domain */
  int32_t nic;                      /* backend NIC node id or TS_NONE */
  int32_t rail;                     /* that NIC's rail or TS_NONE */
  uint32_t group[TS_GROUP_COUNT];   /* group id (0 .. groups-1) */
  uint32_t index[TS_GROUP_COUNT];   /* rank within that group */
} ts_rank_label;

/* Bytes per GPU. buffers: transient working tensors at the peak (gathered
 * sequence-parallel input, pipeline receive buffers, ZeRO-3 gathered
 * layers, MoE dispatch/combine buffers). total = the sum of the five. */
typedef struct ts_mem_breakdown {
  uint64_t weights, grads, optimizer, activations, total;
  uint64_t buffers;
} ts_mem_breakdown;

typedef enum ts_phase {
  TS_PHASE_FWD,
  TS_PHASE_BWD,
  TS_PHASE_RECOMPUTE, /* forward re-run inside backward (recompute) */
  TS_PHASE_STEP,      /* once per iteration: optimizer, gradient sync */
  TS_PHASE_COUNT
} ts_phase;

typedef enum ts_op_kind {
  TS_OP_EMBED, TS_OP_LAYERNORM, TS_OP_QKV, TS_OP_ATTN_SCORE,
  TS_OP_ATTN_VALUE, TS_OP_ATTN_OUT, TS_OP_MLP_UP, TS_OP_MLP_ACT,
  TS_OP_MLP_DOWN, TS_OP_ROUTER, TS_OP_EXPERT_UP, TS_OP_EXPERT_DOWN,
  TS_OP_ELEMENTWISE, TS_OP_LOGITS, TS_OP_OPTIMIZER, TS_OP_KIND_COUNT
} ts_op_kind; /* TS_OP_LOGITS: the output layer's GEMM and the loss after it */

/* One kernel-level operation of one micro-batch on one GPU. */
typedef struct ts_op {
  uint8_t kind;       /* ts_op_kind */
  uint8_t phase;      /* ts_phase */
  int32_t layer;      /* global layer index, -1 for embedding/logits/step */
  double flops;       /* FLOPs on this GPU */
  double bytes;       /* HBM bytes read + written on this GPU */
  ts_time_ps time;    /* max(flops / (peak*eff), bytes / (hbm_bw*eff)) */
} ts_op;

/* One collective (or send) a rank takes part in. `bytes` is the size of the
 * tensor (all-reduce buffer; the full, gathered tensor for all-gather and
 * reduce-scatter; this rank's total input for all-to-all; the message for a
 * send). `sent` is what this rank puts on the wire per occurrence: ring
 * all-reduce 2(p-1)/p*bytes, all-gather and reduce-scatter (p-1)/p*bytes,
 * all-to-all the part routed to other ranks, send = bytes. */
typedef struct ts_comm_desc {
  uint8_t kind;          /* ts_coll_op: all_reduce, all_gather,
                            reduce_scatter, all_to_all, send_recv */
  uint8_t group_kind;    /* ts_group */
  uint8_t phase;         /* ts_phase */
  uint8_t overlap;       /* 1: may overlap compute (tp_comm_overlap, ...) */
  uint8_t per_microbatch;/* 1: happens once per micro-batch, else per step */
  uint32_t group;        /* group id within group_kind */
  uint32_t group_size;
  int32_t layer;         /* global layer, -1 when not per layer */
  int32_t peer;          /* TS_COLL_SEND_RECV: destination rank, else -1 */
  uint32_t repeat;       /* occurrences per step */
  uint64_t bytes;
  uint64_t sent;         /* bytes this rank sends per occurrence */
  uint64_t sent_cross_node; /* part of sent leaving the host: EP from the
                               routing, PP from the peer's host, rings H/p
                               of sent for a group over H hosts */
} ts_comm_desc;

/* Bytes one rank sends, summed by group kind. */
typedef struct ts_comm_volume {
  uint64_t per_microbatch[TS_GROUP_COUNT]; /* descriptors marked per micro-batch, once */
  uint64_t per_step[TS_GROUP_COUNT];       /* everything, times repeat */
  uint64_t cross_node_per_step;
  uint64_t cross_node[TS_GROUP_COUNT];     /* per step, leaving the host */
} ts_comm_volume;

/* ---- workload input ---------------------------------------------------- */

/* Loads a workload file. On success *out owns it (ts_workload_free). On
 * failure returns TS_ENOINPUT, TS_ESYNTAX, TS_ELIMIT, TS_ESCHEMA or
 * TS_ENOMEM, sets *out = NULL and d names file:line:column. */
int ts_workload_load_file(const char *path, ts_workload **out, ts_diag *d);
/* Same from a buffer; name is used in diagnostics and relative paths
 * (topology, placement) resolve against the current directory. */
int ts_workload_load_buffer(const char *buf, size_t len, const char *name,
                            ts_workload **out, ts_diag *d);
void ts_workload_free(ts_workload *w); /* NULL is fine */

/* Sets one key as the file would ("tp", "8"); a key may be written bare
 * ("tp") or with its section ("parallelism.tp"). Returns 0, or TS_ESCHEMA
 * (unknown key, bad value) leaving w unchanged. */
int ts_workload_override(ts_workload *w, const char *key, const char *value,
                         ts_diag *d);
/* Applies "key=value" strings in order; stops at the first error. */
int ts_workload_override_list(ts_workload *w, const char *const *kv, size_t n,
                              ts_diag *d);

const char *ts_workload_name(const ts_workload *w);
/* Topology path from the file (resolved against the file's directory), or
 * NULL when the file names none. Owned by w. */
const char *ts_workload_topology(const ts_workload *w);
/* Line and column (1-based) where `key` ("topology", "tp", ...) is written in
 * the workload file; 0, 0 when it is not (default or override). */
void ts_workload_key_pos(const ts_workload *w, const char *key, int *line,
                         int *col);
/* Parallel size of a dimension (TS_GROUP_TP .. TS_GROUP_PP). */
uint32_t ts_workload_parallel(const ts_workload *w, ts_group g);
/* Micro-batches per pipeline per step: global_batch / (micro_batch * dp). */
uint32_t ts_workload_microbatches(const ts_workload *w);
/* Sequences per step (training.global_batch). */
uint32_t ts_workload_global_batch(const ts_workload *w);

/* Effective values of the keys a sweep varies or checks (defaults filled
 * in). schedule: 0 gpipe, 1 1f1b, 2 interleaved (ts_schedule_name);
 * recompute: 0 none, 1 selective, 2 full (ts_recompute_name); zero_stage
 * counts distributed_optimizer as stage 1; memory_check: 0 refuse, 1 warn;
 * order is owned by w. */
typedef struct ts_workload_shape {
  uint32_t layers, heads, kv_heads, seq_len, experts, top_k;
  uint32_t global_batch, micro_batch, schedule, virtual_stages, recompute;
  uint32_t zero_stage, first_stage_layers, last_stage_layers, gpus;
  uint32_t memory_check;
  const char *order;
} ts_workload_shape;

/* Fills *out from w. */
void ts_workload_shape_get(const ts_workload *w, ts_workload_shape *out);
/* "gpipe", "1f1b", "interleaved" for 0..2, else "?". */
const char *ts_schedule_name(uint32_t s);
/* "none", "selective", "full" for 0..2, else "?". */
const char *ts_recompute_name(uint32_t r);
/* One effective setting (defaults and derived values filled in, as the
 * models use them): section and key as in the file, value typed. */
typedef enum ts_setting_kind { TS_SET_INT, TS_SET_REAL, TS_SET_BOOL,
                               TS_SET_STRING } ts_setting_kind;
typedef struct ts_setting {
  const char *section, *key;  /* static strings */
  ts_setting_kind kind;
  double num;                 /* INT, REAL, BOOL (0/1) */
  char str[64];               /* STRING (enum name, order); also num as text */
} ts_setting;

/* The effective value of every workload key (the placement list excepted),
 * in file order, into out[0..max); returns how many there are. */
size_t ts_workload_settings(const ts_workload *w, ts_setting *out, size_t max);

/* ---- mapping ------------------------------------------------------------ */

/* Maps ranks onto GPUs (topology order permuted by the order string, or the
 * placement list) and checks the layout: product of sizes = GPUs used,
 * divisibility (heads, kv_heads, layers, batch, experts, sequence) and
 * memory per GPU against HBM. On failure returns TS_EINVALID with a message
 * naming the failed constraint and by how much (or TS_ESCHEMA for a bad
 * placement name, TS_ENOMEM) and sets *out = NULL. */
int ts_work_map(const ts_workload *w, const ts_topo *t, ts_mapping **out,
                ts_diag *d);
void ts_mapping_free(ts_mapping *m); /* NULL is fine */
/* Per group kind, the most members one group has on one host (topology
 * host label) in the layout ts_work_map would build, without building it
 * (O(ranks x group kinds)), and *host_gpus the ranks on rank 0's host; 0
 * where unknown (placement lists, HSDP shard/replica kinds, GPUs without a
 * host, a layout that does not fit). 0 or TS_ENOMEM. */
int ts_work_host_members(const ts_workload *w, const ts_topo *t,
                         uint32_t out[TS_GROUP_COUNT], uint32_t *host_gpus);
/* Shape of that layout (ts_work_host_layout's flags). */
enum {
  TS_HOST_TP_WHOLE = 1,  /* every TP group has all its members on one host */
  TS_HOST_ONE_STAGE = 2  /* every host with ranks holds *host_gpus of them,
                            all running one program: one pipeline stage
                            and one EP rank */
};
/* ts_work_host_members, and *flags the TS_HOST_* facts that hold (0 where
 * the layout is unknown). 0 or TS_ENOMEM. */
int ts_work_host_layout(const ts_workload *w, const ts_topo *t,
                        uint32_t out[TS_GROUP_COUNT], uint32_t *host_gpus,
                        uint32_t *flags);
/* The layout checks of ts_work_map that need no topology (divisibility of
 * heads, sequence, layers, batch; experts): 0 or TS_EINVALID naming the
 * constraint. Cheap: no allocation. */
int ts_work_validate(const ts_workload *w, ts_diag *d);

uint32_t ts_mapping_ranks(const ts_mapping *m);
/* Labels of rank r (< ranks); owned by m. */
const ts_rank_label *ts_mapping_rank(const ts_mapping *m, uint32_t r);
uint32_t ts_mapping_group_size(const ts_mapping *m, ts_group g);
uint32_t ts_mapping_group_count(const ts_mapping *m, ts_group g);
/* Rank that is member `index` of group `id` of kind g. */
uint32_t ts_mapping_group_member(const ts_mapping *m, ts_group g, uint32_t id,
                                 uint32_t index);
/* Warnings that do not refuse the layout (TP wider than NVLink, ...). */
uint32_t ts_mapping_warning_count(const ts_mapping *m);
const char *ts_mapping_warning(const ts_mapping *m, uint32_t i);

/* ---- memory, compute, communication ------------------------------------ */

/* Memory per GPU of pipeline stage `stage`, worst rank of that stage.
 * Returns 0, or TS_EINVALID when the stage does not exist. */
int ts_work_memory(const ts_workload *w, uint32_t stage,
                   ts_mem_breakdown *out);

/* Operations of one micro-batch (forward, backward, recompute) on a GPU of
 * pipeline stage `stage` holding EP rank `ep_rank`, followed by the
 * once-per-step optimizer op. *out is malloc'ed (caller frees). Returns 0,
 * TS_EINVALID (bad stage/ep_rank), TS_ELIMIT (more ops than the descriptor
 * budget, ts_budget.h) or TS_ENOMEM. */
int ts_work_ops(const ts_workload *w, const ts_gpu_model *gpu, uint32_t stage,
                uint32_t ep_rank, ts_op **out, size_t *n);
/* Model FLOPs of one training iteration summed over all GPUs (uniform
 * routing), including recompute. */
double ts_work_step_flops(const ts_workload *w);
/* The same without recomputation: the model FLOPs MFU is defined on. */
double ts_work_step_model_flops(const ts_workload *w);

/* Collectives rank `rank` takes part in during one step. *out is
 * malloc'ed (caller frees). Returns 0, TS_EINVALID, TS_ELIMIT (over the
 * descriptor budget) or TS_ENOMEM. */
int ts_work_comm(const ts_workload *w, const ts_mapping *m, uint32_t rank,
                 ts_comm_desc **out, size_t *n);
/* Sums descriptors into per-group volumes. */
void ts_work_comm_volume(const ts_comm_desc *c, size_t n, ts_comm_volume *v);

/* ---- MoE dispatch/combine traffic (DeepEP-style) ---------------------- */

/* One expert-parallel all-to-all: every one of n ranks routes `tokens`
 * tokens of `hidden` elements to top_k of `experts` experts (laid out
 * contiguously, experts / n per rank), expert e drawn with probability
 * proportional to (e+1)^-skew; node_limit M > 0 lets a token reach at most
 * M nodes (DeepSeek-V3). fp8: 1 byte per element plus an fp32 scale per
 * 128 (dispatch only; combine is bf16, 2 bytes). */
typedef struct ts_moe_route {
  uint32_t tokens, hidden, top_k, experts, node_limit;
  double skew;
  int fp8;
} ts_moe_route;

/* Fills matrix[n*n] ([src*n + dst] bytes) for a dispatch (combine = 0) or
 * a combine (its transpose, bf16), DeepEP's normal kernels: a token goes
 * once to each rank of its node that holds one of its experts (NVLink); to
 * a remote node once, to the rank there with the sender's local index
 * (RDMA), which forwards it over NVLink to that node's other ranks that
 * need it. P(token reaches a set with share P) = 1 - (1 - P)^top_k.
 * hosts[i] labels rank i's node. 0, or TS_EINVALID (experts not divisible
 * by n, top_k > experts, zero sizes). */
int ts_moe_matrix(const ts_moe_route *r, const int32_t *hosts, uint32_t n,
                  int combine, uint64_t *matrix);

const char *ts_group_name(ts_group g);
const char *ts_op_kind_name(ts_op_kind k);
const char *ts_phase_name(ts_phase p);

#endif
