/* work_int.h - private layout of ts_workload and ts_mapping, and helpers
 * shared by the work_*.c files.
 *
 * Invariant: work_cfg holds values as written (0 = "derive the default");
 * every consumer calls work_derive for the effective values, so an override
 * of `hidden` also moves the default `ffn_hidden`. */
#ifndef TOPSIM_WORK_INT_H
#define TOPSIM_WORK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "topsim/ts_work.h"

enum { WORK_BF16, WORK_FP8 };
enum { WORK_GELU, WORK_SWIGLU };
enum { WORK_GPIPE, WORK_1F1B, WORK_INTERLEAVED, WORK_DUALPIPE };
enum { WORK_RC_NONE, WORK_RC_SELECTIVE, WORK_RC_FULL };
enum { WORK_GRAD_FP32, WORK_GRAD_BF16 };
enum { WORK_ATTN_CAUSAL, WORK_ATTN_FULL };
enum { WORK_POS_LEARNED, WORK_POS_ROPE };
enum { WORK_DP_ZERO, WORK_DP_FSDP, WORK_DP_HSDP };

/* Dimensions of the order string; WORK_D_EDP is the "dp" token: the part
 * of data parallelism left after EP is carved out (size dp / ep). */
enum { WORK_D_TP, WORK_D_CP, WORK_D_EP, WORK_D_EDP, WORK_D_PP, WORK_D_COUNT };

typedef struct work_cfg {
  /* model */
  uint32_t layers, hidden, ffn_hidden, heads, kv_heads, head_dim, seq_len;
  uint32_t vocab, dtype, activation;
  uint32_t pos_emb; /* WORK_POS_LEARNED (added once at the embedding) or _ROPE */
  uint32_t experts, top_k, expert_ffn_hidden, shared_experts, node_limit;
  uint32_t moe_freq, first_dense;
  uint32_t attention, window, full_every; /* mask, sliding window, every k-th layer global */
  uint32_t dispatch_dtype;                /* WORK_BF16 or WORK_FP8 */
  uint32_t q_lora, kv_lora, rope_dim, v_dim; /* MLA (kv_lora > 0) */
  double capacity_factor, routing_skew;
  /* training */
  uint32_t global_batch, micro_batch, schedule, virtual_stages;
  uint32_t first_stage_layers, last_stage_layers, recompute, zero_stage;
  uint32_t grad_dtype, dp_mode, shard_group;
  uint32_t moment_dtype; /* Adam m, v: WORK_GRAD_FP32 or WORK_GRAD_BF16 */
  uint32_t act_cache;    /* dtype of cached MLP activations: WORK_BF16, WORK_FP8 */
  uint32_t memory_check; /* 0 refuse a stage over its HBM, 1 warn and go on */
  bool distributed_optimizer, sequence_parallel, dp_overlap, tp_comm_overlap;
  bool flash_attention, dropout, ep_comm_overlap, dp_param_overlap;
  bool recompute_moe_act;
  uint64_t dp_bucket;
  /* parallelism */
  uint32_t tp, cp, pp, dp, ep, gpus;
  /* efficiency */
  double eff_gemm, eff_attn, eff_mem;
} work_cfg;

/* Where a key was written in the workload file (1-based; 0 when it was not,
 * or was last set by an override). */
typedef struct work_pos {
  uint32_t line, col;
} work_pos;

#define WORK_MAX_CHUNKS 1024 /* virtual_stages limit (work_load.c) */
#define WORK_MAX_KEYS 64   /* >= the workload keys (work_load.c checks) */
#define WORK_POS_SECTIONS 4 /* model, training, parallelism, efficiency */

struct ts_workload {
  work_cfg cfg;
  work_pos key_pos[WORK_MAX_KEYS];         /* per field of work_load.c */
  work_pos section_pos[WORK_POS_SECTIONS];
  work_pos topology_pos, root_pos;
  char *name;
  char *file;      /* name used in diagnostics */
  char *dir;       /* directory of the file, for relative paths */
  char *topology;  /* resolved path or NULL */
  char *order;     /* order string as written (default set at load) */
  char **placement;/* GPU names per rank, or NULL */
  uint32_t nplacement;
};

struct ts_mapping {
  uint32_t ranks;
  ts_rank_label *labels;
  uint32_t size[TS_GROUP_COUNT], count[TS_GROUP_COUNT];
  uint32_t *members[TS_GROUP_COUNT]; /* [id * size + index] -> rank */
  char **warnings;
  uint32_t nwarnings;
};

/* Fills d like ts_diag_set(d, code, w->file, line, col, ...) at the position
 * of `key` ("tp", "layers"...) in the file: the key's value if it was
 * written there, else its section, else line 1. A key last set by an
 * override gives no position. Returns code. */
int work_fail_at(ts_diag *d, int code, const ts_workload *w, const char *key,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Effective values: defaults filled in (ffn 4h, kv_heads = heads, ...). */
void work_derive(const ts_workload *w, work_cfg *c);

/* Parses an order string ("tp-cp-ep-dp-pp") into dims inner to outer.
 * "ep" may be omitted (placed just inside "dp"). Returns 0 or -1 with a
 * reason in why. */
int work_parse_order(const char *s, int perm[WORK_D_COUNT], char *why,
                     size_t len);

/* Pipeline stage s holds layers [*first, *first + *count) of each model
 * chunk c (interleaved: chunk c of stage s is virtual stage c*pp + s). */
void work_stage_layers(const work_cfg *c, uint32_t stage, uint32_t chunk,
                       uint32_t *first, uint32_t *count);
uint32_t work_chunks(const work_cfg *c); /* virtual stages per rank (>= 1) */
/* GEMM efficiency by shape and kernel costs (work_eff.c): SMs of a GPU
 * model (0 unknown); the fraction of the large-GEMM rate an M x N output
 * GEMM in `groups` equal groups reaches (tile x wave quantization); the
 * gap between back-to-back kernels, seconds. */
uint32_t work_gpu_sms(const ts_gpu_model *g);
double work_gemm_shape_eff(const ts_gpu_model *g, double M, double N, double groups);
/* The same for the backward of that GEMM (inner dimension K): the harmonic
 * mean of its data-gradient (M x K) and weight-gradient (K x N) shapes. */
double work_gemm_bwd_shape_eff(const ts_gpu_model *g, double M, double N,
                               double K, double groups);
double work_launch_gap_s(void);
/* Bytes a GEMM's epilogues write after their K loops (BF16 outputs):
 * forward M x N, backward M x K + K x N (data and weight gradients). */
double work_epilogue_bytes(double M, double N, double K, double groups,
                           int bwd);
/* FP8 GEMM efficiency relative to BF16's, against the FP8 peak (0.875). */
double work_fp8_gemm_rel(void);
/* Fraction of the (query, key) blocks a fused causal attention kernel
 * computes that the mask keeps (128 x 128 blocks, the diagonal ones run
 * whole): (s + 1) / (s + 128) for a causal layer, 1 otherwise. */
double work_attn_block_eff(const work_cfg *c, uint32_t layer);
/* Attention efficiency factor of dropout inside the fused kernel: 1 / 1.034
 * with `dropout` and FlashAttention, else 1 (work_eff.c). */
double work_attn_dropout_eff(const work_cfg *c);
/* Transformer Engine's amax history length (DelayedScaling default). */
#define WORK_FP8_AMAX_HISTORY 1024.0
/* HBM bytes of the FP8 casts around one GEMM (work_eff.c): 4 bytes per
 * element of its BF16 input (forward M x K, backward the output gradient
 * M x N) plus the amax-history update of its 3 (forward) or 2 (backward)
 * FP8 tensors. */
double work_fp8_cast_bytes(double M, double N, double K, double groups,
                           int bwd);
/* HBM bytes of casting `params` BF16 weights to FP8 in both layouts once
 * per step: 4 per weight. */
double work_fp8_weight_cast_bytes(double params);
/* Pipeline positions a micro-batch passes: pp * v (interleaved), pp. */
uint32_t work_positions(const work_cfg *c);
/* Position of chunk `chunk` of `stage`: chunk * pp + stage; DualPipe's
 * chunk 1 runs the other direction, position pp - 1 - stage. */
uint32_t work_chunk_pos(const work_cfg *c, uint32_t stage, uint32_t chunk);
/* Stage holding the next (dir 0) or previous (dir 1) position of chunk
 * `chunk` of `stage`, and that position's chunk there; false at the ends. */
bool work_chunk_peer(const work_cfg *c, uint32_t stage, uint32_t chunk,
                     uint32_t dir, uint32_t *peer, uint32_t *peer_chunk);
/* Micro-batches one chunk of a rank processes per step: m, or m / 2 for
 * DualPipe (each direction carries half). */
uint32_t work_chunk_microbatches(const work_cfg *c);
bool work_layer_is_moe(const work_cfg *c, uint32_t layer);
uint32_t work_dtype_bytes(const work_cfg *c);
uint32_t work_microbatches(const work_cfg *c);

/* Parameters of one layer (dense part and expert part, unsharded). */
void work_layer_params(const work_cfg *c, uint32_t layer, double *dense,
                       double *expert);

/* MoE routing (work_moe.c): share of routed (token, expert) pairs that
 * expert-parallel rank r receives, after capacity drops; sums to <= 1.
 * Zipf with exponent routing_skew over expert index, experts laid out
 * contiguously (rank r holds experts [r*E/ep, (r+1)*E/ep)). */
double work_moe_rank_share(const work_cfg *c, uint32_t ep_rank);

/* Layout checks that need no topology (divisibility of heads, layers,
 * batch, experts...). Returns 0 or TS_EINVALID naming the constraint. */
int work_validate(const ts_workload *w, ts_diag *d);

/* Parameters held by one GPU of pipeline stage `stage`, before ZeRO
 * sharding: dense (divided by tp) and expert (divided by tp * ep). */
void work_stage_params(const work_cfg *c, uint32_t stage, double *dense,
                       double *expert);

/* Largest share * ep over EP ranks: 1 for uniform routing. */
double work_moe_hot_factor(const work_cfg *c);

/* Attention widths (elements per token, whole model, before TP):
 * q and k the query/key widths the scores contract over (heads x
 * head_dim; MLA heads x (head_dim + rope_dim)), v the value/output width;
 * proj_rep the projection weights every TP rank holds whole (MLA's down
 * projections h -> q_lora + kv_lora + rope_dim, and their norms), proj_split
 * the ones TP splits (QKV; MLA's up projections). */
typedef struct work_attn {
  double q, k, v, proj_rep, proj_split;
  double latent; /* MLA: q_lora + kv_lora + rope_dim, stored per token */
} work_attn;
void work_attn_dims(const work_cfg *c, work_attn *a);

/* (query, key) pairs one sequence's attention computes in `layer`: s^2
 * (full), s(s+1)/2 (causal), fewer under a sliding window. */
double work_attn_pairs(const work_cfg *c, uint32_t layer);

/* Ranks that shard the model states of dense (expert = false) or expert
 * weights: the gradient group (ZeRO >= 1, fsdp) or the HSDP shard group;
 * 1 when nothing is sharded. */
double work_state_shards(const work_cfg *c, bool expert);

/* Formats bytes as GiB with one decimal ("93.1"). */
void work_gib(uint64_t bytes, char *buf, size_t len);

#endif
