/* work_memory.c - memory per GPU: weights, gradients, optimizer state and
 * activations of one pipeline stage.
 *
 * Model states (mixed-precision Adam, Rajbhandari et al. 2020 "ZeRO"):
 * 2 bytes of bf16 weights, 4 (fp32) or 2 bytes of gradients, 12 bytes of
 * fp32 master weights + Adam m + v per parameter. ZeRO stage 1 (= Megatron's
 * distributed optimizer) shards the 12, stage 2 also the gradients, stage 3
 * also the weights, across the gradient group: DP x CP ranks for dense
 * weights, (DP / EP) x CP for expert weights.
 *
 * Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation
 * in Large Transformer Models", section 4): per layer per micro-batch
 * s*b*h*(34 + 5*a*s/h) bytes for GPT (4h GeLU MLP, multi-head attention);
 * this file uses the same accounting term by term so GQA, head_dim, SwiGLU
 * and MoE fit: 10 s*b*h that tensor parallelism alone does not split
 * (layernorm inputs 4, QKV and MLP inputs 2 + 2, dropout masks 1 + 1), the
 * rest split by tp; sequence parallelism splits all of it. Selective
 * recompute drops the 5as/h term; full recompute keeps the layer input
 * only (2sbh, split by tp with sequence parallelism). Context parallelism
 * shortens s to s/cp throughout. In flight on stage i: GPipe all m
 * micro-batches; 1F1B min(m, pp - i); interleaved (pp - i - 1)*2 +
 * (v - 1)*pp + 1 model chunks (Megatron's warm-up count), which on stage 0
 * is Korthikanti's L*(1 + (p-1)/(p*v)) layers. The last stage adds fp32
 * logits of one micro-batch, 4*s*b*V/tp.
 * Not counted: CUDA context, NCCL buffers, allocator fragmentation. */
#include <math.h>

#include "topsim/ts_checked.h"
#include "work/work_int.h"

void work_stage_params(const work_cfg *c, uint32_t stage, double *dense,
                       double *expert) {
  double d = 0, e = 0;
  for (uint32_t ch = 0; ch < work_chunks(c); ch++) {
    uint32_t first, count;
    work_stage_layers(c, stage, ch, &first, &count);
    for (uint32_t l = first; l < first + count; l++) {
      double ld, le;
      work_layer_params(c, l, &ld, &le);
      d += ld;
      e += le;
    }
  }
  double vh = (double)c->vocab * c->hidden;
  if (stage == 0) d += vh;                       /* input embedding */
  if (stage == c->pp - 1) d += vh + 2.0 * c->hidden; /* output layer, norm */
  *dense = d / c->tp;
  *expert = e / ((double)c->tp * (c->ep ? c->ep : 1));
}

double work_moe_hot_factor(const work_cfg *c) {
  double hot = 0;
  for (uint32_t r = 0; r < c->ep; r++) {
    double s = work_moe_rank_share(c, r) * c->ep;
    if (s > hot) hot = s;
  }
  return hot;
}

/* Activation bytes of one layer for one micro-batch on one GPU. */
static double layer_activations(const work_cfg *c, uint32_t layer,
                                double hot) {
  double s = (double)c->seq_len / c->cp, b = c->micro_batch, h = c->hidden;
  double t = c->tp, sbh = s * b * h, sp = c->sequence_parallel ? t : 1;
  if (c->recompute == WORK_RC_FULL) return 2 * sbh / sp;
  double q = (double)c->heads * c->head_dim / h;
  double kv = (double)c->kv_heads * c->head_dim / h;
  double attn = 2 * q + 4 * kv + 2 * q;  /* Q, K+V, projection input */
  double per_f = c->activation == WORK_SWIGLU ? 6 : 4;
  double mlp;
  if (work_layer_is_moe(c, layer))
    mlp = (c->top_k * hot + c->shared_experts) * per_f *
          c->expert_ffn_hidden / h;
  else
    mlp = per_f * c->ffn_hidden / h;
  double score = c->recompute == WORK_RC_NONE ? 5.0 * c->heads * s / h : 0;
  return sbh * (10 / sp + (attn + mlp + score) / t);
}

/* Model chunks (each of the stage's layers per chunk) in flight. */
static double in_flight(const work_cfg *c, uint32_t stage) {
  uint32_t m = work_microbatches(c), pp = c->pp, v = work_chunks(c);
  double n;
  switch (c->schedule) {
  case WORK_GPIPE: return m;
  case WORK_INTERLEAVED:
    n = 2.0 * (pp - stage - 1) + (double)(v - 1) * pp + 1;
    return n < (double)m * v ? n : (double)m * v;
  default: n = pp - stage; return n < m ? n : m;
  }
}

int ts_work_memory(const ts_workload *w, uint32_t stage,
                   ts_mem_breakdown *out) {
  work_cfg c;
  work_derive(w, &c);
  if (stage >= c.pp || work_validate(w, NULL)) return TS_EINVALID;
  double dense, expert;
  work_stage_params(&c, stage, &dense, &expert);
  double gd = (double)c.dp * c.cp, ge = gd / c.ep;
  double z = c.zero_stage, gb = c.grad_dtype == WORK_GRAD_FP32 ? 4 : 2;
  double wts = 2 * (z >= 3 ? dense / gd + expert / ge : dense + expert);
  double grads = gb * (z >= 2 ? dense / gd + expert / ge : dense + expert);
  double opt = 12 * (z >= 1 ? dense / gd + expert / ge : dense + expert);
  double hot = c.experts ? work_moe_hot_factor(&c) : 0;
  double act = 0;
  uint32_t first, count;
  work_stage_layers(&c, stage, 0, &first, &count);
  for (uint32_t l = first; l < first + count; l++)
    act += layer_activations(&c, l, hot); /* chunks hold alike layers */
  act *= in_flight(&c, stage);
  if (stage == c.pp - 1)
    act += 4.0 * c.seq_len / c.cp * c.micro_batch * c.vocab / c.tp;
  /* Saturating: huge dimensions give UINT64_MAX (refused by the fit check),
   * never a value wrapped by llround or by the sum. */
  out->weights = ts_double_to_u64_sat(wts);
  out->grads = ts_double_to_u64_sat(grads);
  out->optimizer = ts_double_to_u64_sat(opt);
  out->activations = ts_double_to_u64_sat(act);
  out->total = ts_double_to_u64_sat(wts + grads + opt + act);
  return 0;
}
