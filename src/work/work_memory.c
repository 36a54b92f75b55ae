/* work_memory.c - memory per GPU: weights, gradients, optimizer state,
 * activations and transient buffers of one pipeline stage.
 *
 * Model states (mixed-precision Adam, Rajbhandari et al. 2020 "ZeRO";
 * Megatron-LM's distributed-optimizer table): 2 bytes of bf16 weights,
 * 4 (fp32) or 2 (bf16) bytes of gradients, 12 bytes of fp32 master weights
 * + Adam m + v per parameter, plus a 4-byte fp32 main-gradient copy when
 * gradients are bf16 (Megatron: bf16 params + fp32 grads 6 + 12/d bytes,
 * 16-bit grads 4 + 16/d). ZeRO stage 1 (= distributed optimizer, fsdp,
 * hsdp) shards the optimizer bytes, stage 2 also the gradients, stage 3
 * also the weights, over work_state_shards: the gradient group (DP x CP
 * dense, (DP / EP) x CP expert) or the HSDP shard group. BF16 Adam moments
 * (optimizer_moments) make the 12 bytes 8 (DeepSeek-V3 section 3.3.2).
 * fsdp / hsdp keep the gradient shard plus each chunk's unsharded
 * accumulator only between its first backward and its reduce-scatter
 * (fsdp_peak).
 *
 * Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation
 * in Large Transformer Models", section 4 and table 2): per layer per
 * micro-batch s*b*h*(34 + 5*a*s/h) bytes for GPT (4h GeLU MLP, multi-head
 * attention, dropout); the same accounting term by term lets GQA, head_dim,
 * SwiGLU and MoE fit: 10 s*b*h that tensor parallelism alone does not split
 * (layernorm inputs 4, QKV and MLP inputs 2 + 2, dropout masks 1 + 1; 8
 * without dropout), the rest split by tp; sequence parallelism splits all
 * of it. The a*s*s scores (5as/h) are kept only by the unfused kernel
 * without recompute; FlashAttention keeps 4 bytes of softmax statistics
 * per head and token (4a/h) instead. Full recompute keeps the layer input
 * only (2sbh, split by tp with sequence parallelism). MoE layers also keep
 * the dispatched copies of the routed tokens; DeepSeek-V3's recipe
 * (sections 3.2.3, 3.3.2) drops the RMSNorm outputs under MLA selective
 * recompute, caches MLP activations in FP8 (activation_cache) and keeps
 * only the SwiGLU inputs of the experts (recompute_moe_act). Context parallelism
 * shortens s to s/cp throughout. In flight on stage i: GPipe all m
 * micro-batches; 1F1B min(m, pp - i); interleaved the model chunks of the
 * first 2*(pp - i - 1) + (v - 1)*pp + 1 units (Megatron's warm-up + one),
 * each with its own layer count, which on stage 0 with even chunks is
 * Korthikanti's L*(1 + (p-1)/(p*v)) layers; DualPipe (pp + 1)/2 on each of
 * its two chunks (DeepSeek-V3 report, table 2: PP + 1). The last stage adds fp32
 * logits of one micro-batch, 4*s*b*V/tp.
 * Not counted: CUDA context, NCCL's internal buffers, allocator
 * fragmentation. */
#include <math.h>
#include <stdbool.h>

#include "topsim/ts_checked.h"
#include "work/work_int.h"

/* Parameters of model chunk `chunk` of `stage` on one GPU: its layers, plus
 * the input embedding at position 0 and the output layer and final norm at
 * the last position. */
static void chunk_params(const work_cfg *c, uint32_t stage, uint32_t chunk,
                         double *dense, double *expert) {
  uint32_t first, count;
  double d = 0, e = 0;
  work_stage_layers(c, stage, chunk, &first, &count);
  for (uint32_t l = first; l < first + count; l++) {
    double ld, le;
    work_layer_params(c, l, &ld, &le);
    d += ld;
    e += le;
  }
  double vh = (double)c->vocab * c->hidden;
  uint32_t pos = work_chunk_pos(c, stage, chunk);
  if (pos == 0) d += vh;                                      /* embedding */
  if (pos + 1 == work_positions(c)) d += vh + 2.0 * c->hidden; /* output */
  *dense = d / c->tp;
  *expert = e / ((double)c->tp * (c->ep ? c->ep : 1));
}

void work_stage_params(const work_cfg *c, uint32_t stage, double *dense,
                       double *expert) {
  *dense = *expert = 0;
  for (uint32_t ch = 0; ch < work_chunks(c); ch++) {
    double d, e;
    chunk_params(c, stage, ch, &d, &e);
    *dense += d;
    *expert += e;
  }
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
  work_attn A;
  work_attn_dims(c, &A);
  double kvv = c->kv_lora ? A.v
                          : (double)c->kv_heads * (c->v_dim ? c->v_dim : c->head_dim);
  /* Q, K, V, and the output projection's input */
  double attn = 2 * (A.q + A.k + kvv + A.v) / h;
  double latent = 0;
  /* layernorm inputs 2 + 2, their outputs (the QKV and MLP inputs) 2 + 2,
   * residual dropout masks 1 + 1 */
  double base = c->dropout ? 10 : 8;
  if (c->kv_lora) { /* MLA keeps its latents (all TP ranks hold them) */
    latent = 2 * A.latent / h;
    /* DeepSeek-V3's selective recompute redoes the RMSNorms and the up
     * projections, so neither the norm outputs nor Q, K and V are kept
     * (section 3.2.3) */
    if (c->recompute == WORK_RC_SELECTIVE) {
      attn = 2 * A.v / h;
      base -= 4;
    }
  }
  /* MLP intermediates, bytes per element: SwiGLU gate and up outputs and
   * their product (the down projection's input), GeLU input and output;
   * cached in FP8 with one fp32 scale per 1x128 tile (DeepSeek-V3 section
   * 3.3.2) when activation_cache is fp8 */
  double eb = c->act_cache == WORK_FP8 ? 1 + 4.0 / 128 : 2;
  double per_f = (c->activation == WORK_SWIGLU ? 3 : 2) * eb;
  double mlp;
  if (work_layer_is_moe(c, layer)) {
    /* routed experts: the dispatched copies of their input tokens (the
     * weight gradient of the first expert GEMM needs them), in the
     * dispatch dtype or the cache dtype; recompute_moe_act keeps only the
     * activation function's input (SwiGLU: gate and up) */
    double routed = c->top_k * hot, db = 2;
    if (c->dispatch_dtype == WORK_FP8 || c->act_cache == WORK_FP8)
      db = 1 + 4.0 / 128;
    double per_r = c->recompute_moe_act ? per_f - eb : per_f;
    mlp = routed * db + (routed * per_r + c->shared_experts * per_f) *
                            c->expert_ffn_hidden / h;
  } else {
    mlp = per_f * c->ffn_hidden / h;
  }
  /* the unfused kernel keeps the a*s*s scores (softmax 2, dropout mask 1,
   * dropout output 2 bytes); FlashAttention keeps only the fp32 softmax
   * statistics per head and token (4 bytes) and recomputes the rest */
  double score = c->flash_attention          ? 4.0 * c->heads / h
                 : c->recompute == WORK_RC_NONE ? 5.0 * c->heads * s / h
                                                : 0;
  return sbh * (base / sp + latent + (attn + mlp + score) / t);
}

static double chunk_activations(const work_cfg *c, uint32_t stage,
                                uint32_t chunk, double hot) {
  uint32_t first, count;
  work_stage_layers(c, stage, chunk, &first, &count);
  double a = 0;
  for (uint32_t l = first; l < first + count; l++)
    a += layer_activations(c, l, hot);
  return a;
}

/* Activations of the micro-batches (model chunks) in flight at the peak. */
static double stage_activations(const work_cfg *c, uint32_t stage,
                                double hot) {
  uint32_t m = work_microbatches(c), pp = c->pp, v = work_chunks(c);
  double n;
  switch (c->schedule) {
  case WORK_GPIPE: return m * chunk_activations(c, stage, 0, hot);
  case WORK_DUALPIPE:
    /* DeepSeek-V3 report, table 2: PP + 1 micro-batches' worth of one
     * stage, here half on each of the rank's two chunks */
    n = (pp + 1) / 2.0;
    if (n > m / 2) n = m / 2;
    return n * (chunk_activations(c, stage, 0, hot) +
                chunk_activations(c, stage, 1, hot));
  case WORK_INTERLEAVED: {
    /* forward units run before the first backward, plus the one in it */
    n = 2.0 * (pp - stage - 1) + (double)(v - 1) * pp + 1;
    if (n > (double)m * v) n = (double)m * v;
    double a = 0;
    for (uint32_t k = 0; k < (uint32_t)n; k++)
      a += chunk_activations(c, stage, (k / pp) % v, hot);
    return a;
  }
  default:
    n = pp - stage;
    return (n < m ? n : m) * chunk_activations(c, stage, 0, hot);
  }
}

/* Unit k of the interleaved schedule as chunk and micro-batch, in
 * Megatron-LM's order (work_step_prog.c runs the same): groups of pp
 * micro-batches per chunk, chunks ascending forward, descending backward. */
static void unit_of(const work_cfg *c, uint64_t k, bool bwd, uint32_t *ch) {
  uint32_t v = work_chunks(c), g = (uint32_t)((k / c->pp) % v);
  *ch = bwd ? v - 1 - g : g;
}

typedef struct walk {
  const work_cfg *c;
  uint32_t stage, m;
  double hot, gb, act, grad; /* alive now */
  double peak, peak_act, peak_grad;
  uint32_t done[WORK_MAX_CHUNKS]; /* backward units finished per chunk */
} walk;

static double chunk_grad_bytes(const walk *W, uint32_t ch) {
  double d, e;
  chunk_params(W->c, W->stage, ch, &d, &e);
  return W->gb * (d + e);
}

static void walk_note(walk *W) {
  if (W->act + W->grad <= W->peak) return;
  W->peak = W->act + W->grad;
  W->peak_act = W->act;
  W->peak_grad = W->grad;
}

static void walk_unit(walk *W, uint64_t k, bool bwd) {
  uint32_t ch;
  unit_of(W->c, k, bwd, &ch);
  double a = chunk_activations(W->c, W->stage, ch, W->hot);
  if (!bwd) {
    W->act += a;
    walk_note(W);
    return;
  }
  /* the chunk's unsharded gradient exists from its first backward ... */
  if (W->done[ch]++ == 0) W->grad += chunk_grad_bytes(W, ch);
  walk_note(W);
  W->act -= a;
  /* ... to the reduce-scatter after its last one */
  if (W->done[ch] == W->m) W->grad -= chunk_grad_bytes(W, ch);
}

/* fsdp / hsdp: activations in flight and unsharded gradients alive at the
 * peak of their sum (PyTorch FSDP, Zhao et al. 2023, section 3.3: without
 * gradient sync a unit accumulates its unsharded gradient; the last
 * micro-batch's backward reduce-scatters and frees it). One chunk (GPipe,
 * 1F1B): the activation peak is at the first backward, where the chunk's
 * gradient appears and stays. Interleaved: walk the stage's unit order.
 * The steady phase repeats every pp * v units and no chunk finishes before
 * the last group, so walking 2 * pp * v of its pairs finds the peak; the
 * cool-down only frees. O(pp * v * layers per chunk). */
static int fsdp_peak(const work_cfg *c, uint32_t stage, double hot,
                     double gb, double *act, double *grad) {
  uint32_t v = work_chunks(c), m = work_microbatches(c);
  if (v == 1) {
    double d, e;
    chunk_params(c, stage, 0, &d, &e);
    *act = stage_activations(c, stage, hot);
    *grad = gb * (d + e);
    return 0;
  }
  if (v > WORK_MAX_CHUNKS) return TS_EINVALID; /* the loader's limit */
  walk W = {c, stage, m, hot, gb, 0, 0, 0, 0, 0, {0}};
  uint64_t total = (uint64_t)m * v;
  uint64_t warm = (uint64_t)(c->pp - stage - 1) * 2 + (uint64_t)(v - 1) * c->pp;
  if (warm > total) warm = total;
  uint64_t steady = total - warm, cap = 2ull * c->pp * v;
  for (uint64_t k = 0; k < warm; k++) walk_unit(&W, k, false);
  for (uint64_t k = 0; k < steady && k < cap; k++) {
    walk_unit(&W, warm + k, false);
    walk_unit(&W, k, true);
  }
  if (steady <= cap)
    for (uint64_t k = steady; k < total; k++) walk_unit(&W, k, true);
  *act = W.peak_act;
  *grad = W.peak_grad;
  return 0;
}

/* Transient tensors at the peak of one GPU of the stage. */
static double stage_buffers(const work_cfg *c, uint32_t stage, double hot) {
  double s = (double)c->seq_len / c->cp, b = c->micro_batch, h = c->hidden;
  double t = c->tp, buf = 0;
  if (c->sequence_parallel && t > 1) buf += 2 * s * b * h; /* gathered input */
  if (c->pp > 1) buf += 2 * (2 * s * b * h / t); /* activation + gradient */
  if (c->zero_stage >= 3) { /* gathered weights: this layer and the next */
    double big = 0;
    for (uint32_t ch = 0; ch < work_chunks(c); ch++) {
      uint32_t first, count;
      work_stage_layers(c, stage, ch, &first, &count);
      for (uint32_t l = first; l < first + count; l++) {
        double d, e;
        work_layer_params(c, l, &d, &e);
        double p = d / t + e / (t * c->ep);
        if (p > big) big = p;
      }
    }
    buf += 2 * 2 * big;
  }
  if (c->experts && c->ep > 1) { /* dispatch output + combine input */
    double db = c->dispatch_dtype == WORK_FP8 ? 1 : 2;
    buf += hot * c->top_k * s * b / t * h * (db + 2);
  }
  return buf;
}

int ts_work_memory(const ts_workload *w, uint32_t stage,
                   ts_mem_breakdown *out) {
  work_cfg c;
  work_derive(w, &c);
  if (stage >= c.pp || work_validate(w, NULL)) return TS_EINVALID;
  double dense, expert;
  work_stage_params(&c, stage, &dense, &expert);
  double sd = work_state_shards(&c, false), se = work_state_shards(&c, true);
  double z = c.zero_stage, gb = c.grad_dtype == WORK_GRAD_FP32 ? 4 : 2;
  /* fp32 master weights + Adam m and v (fp32, or bf16 as DeepSeek-V3
   * section 3.3.2 keeps them), + fp32 main gradients when grads are bf16 */
  double ob = 4 + 2 * (c.moment_dtype == WORK_GRAD_BF16 ? 2 : 4) +
              (gb == 2 ? 4 : 0);
  double wts = 2 * (z >= 3 ? dense / sd + expert / se : dense + expert);
  double grads = gb * (z >= 2 ? dense / sd + expert / se : dense + expert);
  double opt = ob * (z >= 1 ? dense / sd + expert / se : dense + expert);
  double hot = c.experts ? work_moe_hot_factor(&c) : 0;
  double act;
  if (c.dp_mode != WORK_DP_ZERO && c.schedule != WORK_DUALPIPE) {
    /* the gradient shard, plus the unsharded accumulators alive at the
     * peak (fsdp_peak) */
    double unsharded;
    int rc = fsdp_peak(&c, stage, hot, gb, &act, &unsharded);
    if (rc) return rc;
    grads = gb * (dense / sd + expert / se) + unsharded;
  } else {
    act = stage_activations(&c, stage, hot);
  }
  if (stage == c.pp - 1 || (c.schedule == WORK_DUALPIPE && stage == 0))
    act += 4.0 * c.seq_len / c.cp * c.micro_batch * c.vocab / c.tp;
  /* Saturating: huge dimensions give UINT64_MAX (refused by the fit check),
   * never a value wrapped by llround or by the sum. */
  double buf = stage_buffers(&c, stage, hot);
  out->weights = ts_double_to_u64_sat(wts);
  out->grads = ts_double_to_u64_sat(grads);
  out->optimizer = ts_double_to_u64_sat(opt);
  out->activations = ts_double_to_u64_sat(act);
  out->buffers = ts_double_to_u64_sat(buf);
  out->total = ts_double_to_u64_sat(wts + grads + opt + act + buf);
  return 0;
}
