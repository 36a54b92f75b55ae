/* work_compute.c - the operations of one micro-batch on one GPU, each with
 * FLOPs, HBM bytes and a roofline time.
 *
 * Per layer, forward, for T = b*s/cp tokens on a GPU of a TP group of t
 * (h hidden, q = heads*head_dim, k = kv_heads*head_dim, f ffn, S = s the
 * full sequence the keys span, w = weight bytes, 2 = bf16 activations):
 *   layernorm    2 norms, ~5 FLOP and a read + write of 2 bytes per element
 *   qkv          2*T*h*(q + 2k)/t          GEMM
 *   rope         Q and K read + written    (position_embedding: rope)
 *   attn_score   2*b*(s/cp)*S*q/t          attention (fused, FlashAttention:
 *   attn_value   2*b*(s/cp)*S*q/t          no s^2 tensor touches HBM)
 *   attn_out     2*T*q*h/t                 GEMM
 *   mlp_up       2*T*h*f*(1 or 2)/t        GEMM (2 for SwiGLU: up + gate)
 *   mlp_act      elementwise over T*f/t
 *   mlp_down     2*T*f*h/t                 GEMM
 *   MoE layers replace the MLP by router 2*T*h*E and expert GEMMs over the
 *   R = share * ep * top_k * T (token, expert) pairs routed to this EP rank
 *   (capacity drops included), plus shared experts as a dense MLP.
 *   elementwise  residual adds, dropout, bias: 6 passes of T*h, and with
 *                dropout its two 1-byte masks (written; read in backward)
 * Embedding (first stage) is a gather; logits (last stage) 2*T*h*V/t with
 * BF16 logits written, then the cross-entropy loss over them (loss_op: 38
 * bytes per logit forward, 14 backward). Backward = 2x forward FLOPs and
 * bytes (data + weight gradients). Full recompute repeats every forward op before its backward;
 * selective recompute repeats attn_score and attn_value (Megatron-LM
 * checkpoints the core attention, the fused kernel included; MLA models
 * follow DeepSeek-V3's recipe instead). Once per step the
 * optimizer reads and writes 30 bytes per (ZeRO-sharded) parameter (fp32
 * grad, master, m, v read; master, m, v and bf16 weight written), and for
 * FP8 models casts every local weight to FP8 (4 bytes each, work_eff.c).
 *
 * time = max(FLOPs / (peak * eff), bytes / (HBM bandwidth * eff_memory)),
 * eff = efficiency.gemm for GEMMs and elementwise ops, efficiency.attention
 * for attention (defaults in docs/workload-format.md, with sources). FLOPs
 * count a multiply-add as 2 and ignore softmax and norms' exponentials, as
 * Narayanan et al. 2021 do, so totals compare with their formula.
 * Cost: O(ops) = O(layers on the stage); one allocation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_budget.h"
#include "topsim/ts_checked.h"
#include "work/work_int.h"

typedef enum eff_class { EFF_GEMM, EFF_ATTN } eff_class;

typedef struct op_list {
  ts_op *v;
  size_t n, cap;
  const work_cfg *c;
  const ts_gpu_model *gpu;
  int fail;
  double gm, gn, gk, gg; /* shape of the next pushed GEMM (0: not a GEMM) */
  double ab;             /* block efficiency of the next attention op (0: 1) */
  bool bf16;             /* the next GEMM runs in BF16 whatever the dtype */
  uint32_t kernels;      /* kernels of the next op (0: 1 forward, 2 backward) */
} op_list;

/* The next push is a GEMM of M x N outputs, inner dimension K, in G equal
 * groups (grouped expert GEMMs; 1 otherwise): work_eff.c. */
static void shape(op_list *L, double M, double N, double K, double G) {
  L->gm = M, L->gn = N, L->gk = K, L->gg = G;
}

/* Roofline time of an op, times the GEMM shape efficiency (and the FP8
 * GEMM efficiency relative to BF16's), plus for FP8
 * GEMMs the cast-transpose of their BF16 input (activations forward,
 * output gradient backward) and the amax-history update, plus the launch gap of its kernels (1 forward, 2 backward:
 * data and weight gradients): work_eff.c. */
static ts_time_ps roofline(const op_list *L, double flops, double bytes,
                           eff_class e, ts_phase ph) {
  const work_cfg *c = L->c;
  if (!L->gpu) return 0;
  int fp8 = c->dtype == WORK_FP8 && L->gpu->fp8_flops > 0 && e == EFF_GEMM &&
            !L->bf16;
  double peak = fp8 ? L->gpu->fp8_flops : L->gpu->bf16_flops;
  double eff = e == EFF_ATTN ? c->eff_attn : c->eff_gemm;
  int bwd = ph == TS_PHASE_BWD;
  /* a backward GEMM is two GEMMs of their own output shapes, the data
   * gradient (M x K) and the weight gradient (K x N), half the FLOPs each */
  if (L->gm > 0)
    eff *= bwd ? work_gemm_bwd_shape_eff(L->gpu, L->gm, L->gn, L->gk, L->gg)
               : work_gemm_shape_eff(L->gpu, L->gm, L->gn, L->gg);
  if (fp8) eff *= work_fp8_gemm_rel();
  if (e == EFF_ATTN && L->ab > 0) eff *= L->ab;
  double tc = peak > 0 ? flops / (peak * eff) : 0;
  double bw = L->gpu->hbm_bandwidth * c->eff_mem;
  /* each output tile is written after its K loop (the epilogue): at the
   * SM's share of HBM bandwidth that is the whole output over bw, serial
   * with the FLOPs, and not sped up by FP8 (work_eff.c) */
  if (L->gm > 0 && bw > 0 && tc > 0)
    tc += work_epilogue_bytes(L->gm, L->gn, L->gk, L->gg, bwd) / bw;
  double tm = bw > 0 ? bytes / bw : 0;
  double t = tc > tm ? tc : tm;
  if (fp8 && L->gm > 0 && bw > 0)
    t += work_fp8_cast_bytes(L->gm, L->gn, L->gk, L->gg, bwd) / bw +
         work_launch_gap_s();
  t += (L->kernels ? L->kernels : bwd ? 2 : 1) * work_launch_gap_s();
  /* Saturate at 2^62 ps: beyond the simulated-time budget, which the engine
   * then refuses, and never an undefined llround past int64. */
  uint64_t ps = ts_double_to_u64_sat(t * 1e12);
  return ps < (1ULL << 62) ? ps : 1ULL << 62;
}

static void push(op_list *L, ts_op_kind k, ts_phase ph, int32_t layer,
                 double flops, double bytes, eff_class e) {
  if (L->fail) return;
  if (L->n >= ts_budget_get()->descriptors) { /* before growing: ts_budget.h */
    L->fail = 2;
    return;
  }
  if (L->n == L->cap) {
    size_t cap = L->cap ? 2 * L->cap : 64;
    ts_op *v = realloc(L->v, cap * sizeof *v);
    if (!v) {
      L->fail = 1;
      return;
    }
    L->v = v;
    L->cap = cap;
  }
  ts_op *o = &L->v[L->n++];
  memset(o, 0, sizeof *o);
  o->kind = (uint8_t)k;
  o->phase = (uint8_t)ph;
  o->layer = layer;
  o->flops = flops;
  o->bytes = bytes;
  o->time = roofline(L, flops, bytes, e, ph);
  L->gm = L->gn = L->gk = L->gg = L->ab = 0;
  L->bf16 = false;
  L->kernels = 0;
}

/* Parts of a layer's forward that layer_ops appends. */
enum { PART_ALL, PART_CORE, PART_SCORE };

/* Appends the forward ops of `layer`; mult scales FLOPs and bytes (2 for
 * backward); part PART_CORE keeps the attention core (selective
 * recompute), PART_SCORE its score GEMM only (what FlashAttention's
 * backward recomputes). */
static void layer_ops(op_list *L, uint32_t layer, ts_phase ph, double mult,
                      int part, double share) {
  const work_cfg *c = L->c;
  double t = c->tp, sl = (double)c->seq_len / c->cp, b = c->micro_batch;
  double T = b * sl, h = c->hidden;
  work_attn A;
  work_attn_dims(c, &A);
  double q = A.q, k = A.k, v = A.v; /* MHA/GQA: k = kv_heads * head_dim */
  double wb = c->dtype == WORK_FP8 ? 1 : 2, sp = c->sequence_parallel ? t : 1;
  double m = mult;
  int32_t ly = (int32_t)layer;
  /* (query, key) pairs of the mask, spread evenly over CP ranks (Megatron
   * balances causal CP by giving each rank two mirrored chunks) */
  double f_sc = 2 * b * work_attn_pairs(c, layer) / c->cp * q / t;
  double f_av = f_sc * v / q; /* probabilities x values: the value width */
  /* QKV projections: weights TP splits, and MLA's down projections that
   * every TP rank runs whole; outputs Q, K, V (MLA: plus the latents) */
  double w_qkv = A.proj_split / t + A.proj_rep;
  double o_qkv = (q + k + (c->kv_lora ? v : (double)c->kv_heads *
                  (c->v_dim ? c->v_dim : c->head_dim))) / t + A.latent;
  double S = c->seq_len;
  bool only_attn = part != PART_ALL;
  if (!only_attn) {
    push(L, TS_OP_LAYERNORM, ph, ly, m * 10 * T * h / sp, m * 8 * T * h / sp,
         EFF_GEMM);
    shape(L, T, o_qkv, h, 1);
    push(L, TS_OP_QKV, ph, ly, m * 2 * T * w_qkv,
         m * (w_qkv * wb + 2 * T * h + 2 * T * o_qkv), EFF_GEMM);
    /* rotary embeddings (Su et al. 2021; Megatron-LM's fused RoPE kernel):
     * Q and K read and written in BF16 (gradients alike in backward),
     * memory-bound, no model FLOPs; MLA rotates only its rope part (each
     * head's rope_dim of Q and the shared rope key, whole on every rank) */
    if (c->pos_emb == WORK_POS_ROPE) {
      double rot = c->kv_lora ? (double)c->heads * c->rope_dim / t + c->rope_dim
                              : (q + k) / t;
      push(L, TS_OP_ELEMENTWISE, ph, ly, 0, m * 4 * T * rot, EFF_GEMM);
    }
  }
  L->ab = work_attn_block_eff(c, layer) * work_attn_dropout_eff(c);
  push(L, TS_OP_ATTN_SCORE, ph, ly, m * f_sc,
       m * 2 * (T * q / t + b * S * k / t), EFF_ATTN);
  if (part == PART_SCORE) return;
  L->ab = work_attn_block_eff(c, layer) * work_attn_dropout_eff(c);
  push(L, TS_OP_ATTN_VALUE, ph, ly, m * f_av,
       m * 2 * (b * S * k / t + T * q / t), EFF_ATTN);
  if (only_attn) return;
  shape(L, T, h, v / t, 1);
  push(L, TS_OP_ATTN_OUT, ph, ly, m * 2 * T * v * h / t,
       m * (v * h / t * wb + 2 * T * v / t + 2 * T * h), EFF_GEMM);
  /* two residual adds (bias and dropout fused in): 6 passes of 2 bytes;
   * with dropout also its two 1-byte masks (Korthikanti et al. 2022,
   * table 2; the memory model keeps the same), written forward, read back */
  push(L, TS_OP_ELEMENTWISE, ph, ly, m * 2 * T * h / sp,
       m * (c->dropout ? 14 : 12) * T * h / sp, EFF_GEMM);
  double up = c->activation == WORK_SWIGLU ? 2 : 1;
  double f = c->ffn_hidden, tok = T;
  ts_op_kind kup = TS_OP_MLP_UP, kdn = TS_OP_MLP_DOWN;
  if (work_layer_is_moe(c, layer)) {
    double E = c->experts, fe = c->expert_ffn_hidden;
    shape(L, T / sp, E, h, 1);
    push(L, TS_OP_ROUTER, ph, ly, m * 2 * T * h * E / sp,
         m * (2 * h * E + 2 * T * h / sp), EFF_GEMM);
    if (c->shared_experts) { /* dense MLP of width shared * fe */
      double fs = c->shared_experts * fe;
      shape(L, T, fs * up / t, h, 1);
      push(L, TS_OP_MLP_UP, ph, ly, m * 2 * T * h * fs * up / t,
           m * (h * fs * up / t * wb + 2 * T * h + 2 * T * fs * up / t),
           EFF_GEMM);
      shape(L, T, h, fs / t, 1);
      push(L, TS_OP_MLP_DOWN, ph, ly, m * 2 * T * fs * h / t,
           m * (h * fs / t * wb + 2 * T * fs / t + 2 * T * h), EFF_GEMM);
    }
    f = fe * (E / c->ep);   /* weights of the local experts */
    tok = share * c->ep * c->top_k * T;
    kup = TS_OP_EXPERT_UP;
    kdn = TS_OP_EXPERT_DOWN;
    double fl = fe;         /* each pair goes through one expert */
    double El = E / c->ep; /* local experts, one grouped GEMM */
    shape(L, tok / El, fl * up / t, h, El);
    push(L, kup, ph, ly, m * 2 * tok * h * fl * up / t,
         m * (h * f * up / t * wb + 2 * tok * h + 2 * tok * fl * up / t),
         EFF_GEMM);
    push(L, TS_OP_MLP_ACT, ph, ly, m * 8 * tok * fl / t,
         m * 2 * tok * fl * (up + 1) / t, EFF_GEMM);
    shape(L, tok / El, h, fl / t, El);
    push(L, kdn, ph, ly, m * 2 * tok * fl * h / t,
         m * (h * f / t * wb + 2 * tok * fl / t + 2 * tok * h), EFF_GEMM);
    return;
  }
  shape(L, tok, f * up / t, h, 1);
  push(L, kup, ph, ly, m * 2 * tok * h * f * up / t,
       m * (h * f * up / t * wb + 2 * tok * h + 2 * tok * f * up / t),
       EFF_GEMM);
  push(L, TS_OP_MLP_ACT, ph, ly, m * 8 * tok * f / t,
       m * 2 * tok * f * (up + 1) / t, EFF_GEMM);
  shape(L, tok, h, f / t, 1);
  push(L, kdn, ph, ly, m * 2 * tok * f * h / t,
       m * (h * f / t * wb + 2 * tok * f / t + 2 * tok * h), EFF_GEMM);
}

/* The loss over the n = T V / t logits of the GPU, Megatron-LM's
 * vocab-parallel cross-entropy (megatron/core/tensor_parallel/
 * cross_entropy.py), each pass over all n logits at HBM speed. Forward:
 * the BF16 logits cast to fp32 (2 + 4 bytes per logit), their max (4),
 * the max subtracted in place (4 + 4), exp in place (4 + 4), the sum (4),
 * the division into the softmax kept for backward (4 + 4): 38 n bytes in
 * 6 kernels. Backward: the softmax times the loss gradient in place
 * (4 + 4), cast back to BF16 for the output layer (4 + 2): 14 n bytes in
 * 2 kernels. The per-token gathers and TP all-reduces touch T values, a
 * (V / t)-th of that, and are left out. No model FLOPs. */
static void loss_op(op_list *L, ts_phase ph, double n) {
  int bwd = ph == TS_PHASE_BWD;
  L->kernels = bwd ? 2 : 6;
  push(L, TS_OP_LOGITS, ph, -1, 0, (bwd ? 14 : 38) * n, EFF_GEMM);
}

/* The embedding gather (first virtual stage) or the output layer (last);
 * one call per edge, so a single-stage pipeline, where both edges sit on
 * one stage, counts each once. */
static void edge_op(op_list *L, bool logits, ts_phase ph, double mult) {
  const work_cfg *c = L->c;
  double T = (double)c->micro_batch * c->seq_len / c->cp, h = c->hidden;
  double t = c->tp, V = c->vocab;
  if (!logits)
    push(L, TS_OP_EMBED, ph, -1, 0, mult * 4 * T * h, EFF_GEMM);
  else {
    /* the output layer is not a Transformer Engine module (Megatron-LM's
     * GPTModel: tensor_parallel.ColumnParallelLinear; DeepSeek-V3 report
     * section 3.3.1 keeps the output head in BF16 too): a BF16 GEMM with
     * BF16 weights in an FP8 model, no casts */
    bool bwd = ph == TS_PHASE_BWD;
    if (bwd && V > 0) loss_op(L, ph, T * V / t); /* the loss's gradient first */
    shape(L, T, V / t, h, 1);
    L->bf16 = true;
    push(L, TS_OP_LOGITS, ph, -1, mult * 2 * T * h * V / t,
         mult * (h * V / t * 2 + 2 * T * h + 2 * T * V / t), EFF_GEMM);
    if (!bwd && V > 0) loss_op(L, ph, T * V / t);
  }
}

/* MLA under selective recompute: the up projections run again before the
 * backward (DeepSeek-V3 section 3.2.3), from the stored latents. */
static void mla_up_op(op_list *L, uint32_t layer) {
  const work_cfg *c = L->c;
  work_attn A;
  work_attn_dims(c, &A);
  double t = c->tp, T = (double)c->micro_batch * c->seq_len / c->cp;
  double wb = c->dtype == WORK_FP8 ? 1 : 2;
  double out = (A.q + A.k + A.v) / t;
  push(L, TS_OP_QKV, TS_PHASE_RECOMPUTE, (int32_t)layer,
       2 * T * A.proj_split / t,
       A.proj_split / t * wb + 2 * T * A.latent + 2 * T * out, EFF_GEMM);
}

/* Elementwise re-runs before a layer's backward: DeepSeek-V3's RMSNorms
 * under MLA selective recompute (section 3.2.3), and the routed experts'
 * activation function under recompute_moe_act (section 3.3.2), each at
 * its forward cost. */
static void elementwise_recompute(op_list *L, uint32_t layer, double share) {
  const work_cfg *c = L->c;
  double t = c->tp, T = (double)c->micro_batch * c->seq_len / c->cp;
  double h = c->hidden, sp = c->sequence_parallel ? t : 1;
  if (c->recompute == WORK_RC_SELECTIVE && c->kv_lora)
    push(L, TS_OP_LAYERNORM, TS_PHASE_RECOMPUTE, (int32_t)layer,
         10 * T * h / sp, 8 * T * h / sp, EFF_GEMM);
  if (c->recompute_moe_act && work_layer_is_moe(c, layer)) {
    double up = c->activation == WORK_SWIGLU ? 2 : 1;
    double tok = share * c->ep * c->top_k * T, fl = c->expert_ffn_hidden;
    push(L, TS_OP_MLP_ACT, TS_PHASE_RECOMPUTE, (int32_t)layer,
         8 * tok * fl / t, 2 * tok * fl * (up + 1) / t, EFF_GEMM);
  }
}

/* Ops of chunk `ch` of the stage: forward layers, then in reverse each
 * layer's recompute and backward. */
static void chunk_ops(op_list *L, uint32_t stage, uint32_t ch, double share,
                      bool fwd) {
  const work_cfg *c = L->c;
  uint32_t first, count, pos = work_chunk_pos(c, stage, ch);
  work_stage_layers(c, stage, ch, &first, &count);
  bool head = pos == 0, tail = pos + 1 == work_positions(c);
  if (fwd) {
    if (head) edge_op(L, false, TS_PHASE_FWD, 1);
    for (uint32_t l = first; l < first + count; l++)
      layer_ops(L, l, TS_PHASE_FWD, 1, PART_ALL, share);
    if (tail) edge_op(L, true, TS_PHASE_FWD, 1);
    return;
  }
  if (tail) edge_op(L, true, TS_PHASE_BWD, 2);
  for (uint32_t l = first + count; l-- > first;) {
    /* selective recompute is Megatron-LM's: the core attention runs under
     * activation checkpointing (megatron/core/transformer/attention.py:
     * checkpoint_core_attention = recompute_granularity == 'selective',
     * _checkpointed_attention_forward), so its forward runs again before
     * its backward, the fused kernel's too; MLA's selective is DeepSeek's
     * recipe instead (RMSNorms and up projections, mla_up_op) */
    if (c->recompute == WORK_RC_FULL)
      layer_ops(L, l, TS_PHASE_RECOMPUTE, 1, PART_ALL, share);
    else if (c->recompute == WORK_RC_SELECTIVE && !c->kv_lora)
      layer_ops(L, l, TS_PHASE_RECOMPUTE, 1, PART_CORE, share);
    if (c->recompute == WORK_RC_SELECTIVE && c->kv_lora)
      mla_up_op(L, l);
    if (c->recompute != WORK_RC_FULL) elementwise_recompute(L, l, share);
    /* FlashAttention's backward recomputes the scores from Q, K (5 GEMMs
     * against the forward's 2, Dao 2023): hardware FLOPs, not model FLOPs,
     * inside the backward kernel whether or not the forward ran again */
    if (c->flash_attention)
      layer_ops(L, l, TS_PHASE_RECOMPUTE, 1, PART_SCORE, share);
    layer_ops(L, l, TS_PHASE_BWD, 2, PART_ALL, share);
  }
  if (head) edge_op(L, false, TS_PHASE_BWD, 2);
}

static void optimizer_op(op_list *L, uint32_t stage) {
  const work_cfg *c = L->c;
  double dense, expert;
  work_stage_params(c, stage, &dense, &expert);
  double p = dense / work_state_shards(c, false) +
             expert / work_state_shards(c, true);
  /* FP8: the weights' cast to both FP8 layouts, once per step and cached
   * over the micro-batches (work_eff.c), on every rank's full local copy */
  double cast = c->dtype == WORK_FP8 && L->gpu && L->gpu->fp8_flops > 0
                    ? work_fp8_weight_cast_bytes(dense + expert)
                    : 0;
  push(L, TS_OP_OPTIMIZER, TS_PHASE_STEP, -1, 12 * p, 30 * p + cast, EFF_GEMM);
}

int ts_work_ops(const ts_workload *w, const ts_gpu_model *gpu, uint32_t stage,
                uint32_t ep_rank, ts_op **out, size_t *n) {
  *out = NULL;
  *n = 0;
  work_cfg c;
  work_derive(w, &c);
  if (stage >= c.pp || ep_rank >= c.ep || work_validate(w, NULL))
    return TS_EINVALID;
  op_list L = {NULL, 0, 0, &c, gpu, 0, 0, 0, 0, 0, 0, false, 0};
  double share = c.experts ? work_moe_rank_share(&c, ep_rank) : 0;
  uint32_t v = work_chunks(&c);
  for (uint32_t ch = 0; ch < v; ch++) chunk_ops(&L, stage, ch, share, true);
  for (uint32_t ch = v; ch-- > 0;) chunk_ops(&L, stage, ch, share, false);
  optimizer_op(&L, stage);
  if (L.fail) {
    free(L.v);
    return L.fail == 2 ? TS_ELIMIT : TS_ENOMEM;
  }
  *out = L.v;
  *n = L.n;
  return 0;
}

/* FLOPs of one iteration over all GPUs; recompute counted or not. */
static double step_flops(const ts_workload *w, int with_recompute) {
  work_cfg c;
  work_derive(w, &c);
  double total = 0;
  for (uint32_t s = 0; s < c.pp; s++)
    for (uint32_t e = 0; e < c.ep; e++) {
      ts_op *ops;
      size_t n;
      if (ts_work_ops(w, NULL, s, e, &ops, &n)) return 0;
      for (size_t i = 0; i < n; i++)
        if (ops[i].phase != TS_PHASE_STEP &&
            (with_recompute || ops[i].phase != TS_PHASE_RECOMPUTE))
          total += ops[i].flops;
      free(ops);
    }
  /* each (stage, EP rank) stands for tp * cp * dp / ep GPUs; every chunk
   * of it sees work_chunk_microbatches micro-batches */
  return total * work_chunk_microbatches(&c) * c.tp * c.cp *
         ((double)c.dp / c.ep);
}

double ts_work_step_flops(const ts_workload *w) { return step_flops(w, 1); }

double ts_work_step_model_flops(const ts_workload *w) { return step_flops(w, 0); }
