/* work_eff.c - how much of a GPU's GEMM rate a kernel of a given shape
 * reaches, and the fixed costs around kernels (launch gap, FP8 casts).
 *
 * GEMM shape (NVIDIA, "Matrix Multiplication Background User's Guide",
 * Deep Learning Performance documentation): a GEMM of M x N outputs runs
 * as thread-block tiles of 256 x 128 outputs, one tile per SM at a time.
 *   tile quantization  M N / (ceil(M/256) 256 ceil(N/128) 128): partial
 *                      tiles at the edges compute padding;
 *   wave quantization  tiles / (ceil(tiles / SMs) SMs): the last wave of
 *                      tiles leaves SMs idle (the guide's example: 108 SMs
 *                      of an A100, a GEMM of 109 tiles takes two waves).
 * The backward of a GEMM of M x N outputs and inner dimension K runs two
 * GEMMs of the same FLOPs, each quantized on its own outputs: the data
 * gradient dX = dY W^T (M x K) and the weight gradient dW = X^T dY (K x N);
 * their combined efficiency is the harmonic mean of the two. GPT-3 175B's
 * QKV on TP 4 (M = 2048 tokens, N = 9216, K = 12288, 132 SMs): forward 576
 * tiles in 5 waves (0.873), data gradient 768 tiles in 6 (0.970), weight
 * gradient 3456 in 27 (0.970); its output projection (N = 12288, K = 3072)
 * the other way round: forward 0.970, data gradient 192 tiles in 2 waves
 * (0.727).
 * Grouped GEMMs (G experts of the same shape, one launch) quantize over
 * the G x tiles of the group. The product of both factors multiplies the
 * large-GEMM efficiency of the workload (efficiency.gemm, default 0.7),
 * which is what a GEMM of whole waves reaches.
 *
 * SMs: the topology's gpu_models.MODEL.sms, else by model name (datasheets:
 * A100 108, H100 SXM / H800 / H200 132, H100 PCIe 114, H20 78, B200 / GB200
 * / B300 148), else 0 = no wave quantization.
 *
 * Causal attention blocks (Dao 2023, "FlashAttention-2", section 3.1.1):
 * the fused kernel walks 128 x 128 blocks of (query, key) pairs, skips the
 * blocks wholly above the diagonal and computes the diagonal ones whole,
 * masking half of each; of the (s/128)(s/128 + 1)/2 blocks it runs, the
 * mask keeps s(s + 1)/2 pairs: efficiency (s + 1) / (s + 128), 0.943 at
 * s = 2048, 0.969 at 4096, 0.984 at 8192. Sliding-window layers (two
 * partial diagonals) are left at 1; so is the unfused kernel, which
 * computes every pair and masks them (its FLOPs are counted in full).
 *
 * Attention dropout inside the fused kernel: the kernel draws a Philox
 * random number for every (query, key) pair it computes, forward and again
 * in the backward (no mask is stored), so dropout costs time in the
 * attention core and nowhere else. Measured on Hopper with cuDNN's fused
 * attention through Transformer Engine (NVIDIA/TransformerEngine#3312,
 * H200, bf16, head_dim 128, sbhd layout, forward + backward: 0.594 ms at
 * p = 0 against 0.614 ms at p = 0.1): 3.4% of the attention time, applied
 * when the workload runs dropout (`dropout`, Megatron-LM's default of 0.1)
 * with FlashAttention. The unfused kernel's dropout is counted as its own
 * memory traffic instead.
 *
 * Launch gap: 1 us per kernel between back-to-back kernels of a stream
 * whose host runs ahead (NVIDIA, "Getting Started with CUDA Graphs": 2.9 us
 * kernels take 3.8 us each when launched without synchronisation).
 *
 * FP8 GEMM rate: 1.75x the BF16 rate on large matmuls, not the 2x of the
 * peaks (NVIDIA, "Boosting Matrix Multiplication Speed and Flexibility with
 * NVIDIA cuBLAS 12.9": Hopper FP8 matmuls 1.75x the BF16 baseline for large
 * sizes, at least 1.25x for most others): an FP8 GEMM reaches 0.875 of
 * the BF16 efficiency, measured against the FP8 peak.
 *
 * Epilogue: a tile's outputs are written once its K loop is done, so on
 * every SM the output write follows the FLOPs instead of hiding behind
 * them; summed over the SMs that is the GEMM's BF16 output (2 M N bytes;
 * backward: the data gradient M x K and the weight gradient K x N;
 * Transformer Engine's FP8 GEMMs write BF16 too) at the achieved HBM
 * bandwidth, added to the compute time. Relative to the K loop it weighs
 * peak / (K x HBM bandwidth): 1% for a BF16 GEMM of K = 12288 on an A100,
 * 9% for an FP8 one of K = 4096 on an H100, where the FP8 K loop is
 * twice as fast and the write is not: the reason FP8's gain over BF16
 * falls below its large-matmul 1.75x for smaller shapes (cuBLAS 12.9 post
 * below: "at least 1.25x for most others").
 *
 * FP8 casts (Transformer Engine, delayed scaling): every FP8 GEMM input
 * that is not already FP8 is quantised per micro-batch by a cast-transpose
 * kernel (TE C API `nvte_cast_transpose`: "casts the input and produces its
 * transpose") that reads it in BF16 and writes it in FP8 twice, in both
 * layouts, because Hopper's FP8 GEMMs take only the TN layout: the forward
 * copy feeds the forward GEMM, the transposed copy the weight gradient
 * (X^T dY); the output gradient dY likewise feeds the data gradient (dY)
 * and the weight gradient (dY^T). 2 + 1 + 1 = 4 bytes per element of the
 * activations (M x K) in forward and recompute, of the output gradient
 * (M x N) in backward, plus one kernel launch. The kernel also reduces the
 * tensor's amax; the delayed-scaling bookkeeping then rolls every FP8
 * tensor's amax history (DelayedScaling amax_history_len = 1024 fp32
 * values, TE's default) and recomputes its scale: 3 tensors per GEMM in
 * forward (input, weight, output), 2 in backward (output gradient, input
 * gradient), each history read and written (8 bytes per entry). Weights
 * are cast once per step and cached across micro-batches (TE user guide,
 * "FP8 weight caching"; Megatron-LM passes is_first_microbatch): read BF16,
 * write both FP8 layouts, 4 bytes per local weight, charged with the
 * optimizer's pass (work_compute.c). All at the achieved HBM bandwidth. */
#include <math.h>
#include <string.h>

#include "work/work_int.h"

#define TILE_M 256.0
#define ATTN_BLOCK 128.0
/* (0.614 - 0.594) / 0.594 ms: TransformerEngine#3312, H200 sbhd */
#define WORK_ATTN_DROPOUT_COST (0.020 / 0.594)
#define TILE_N 128.0

static int has_prefix(const char *s, const char *p) {
  return strncmp(s, p, strlen(p)) == 0;
}

uint32_t work_gpu_sms(const ts_gpu_model *g) {
  if (!g) return 0;
  if (g->sms) return g->sms;
  const char *n = g->name ? g->name : "";
  if (has_prefix(n, "A100")) return 108;
  if (has_prefix(n, "H100-PCIe")) return 114;
  if (has_prefix(n, "H20-") || strcmp(n, "H20") == 0) return 78;
  if (has_prefix(n, "H100") || has_prefix(n, "H800") || has_prefix(n, "H200") ||
      has_prefix(n, "GH200"))
    return 132;
  if (has_prefix(n, "B200") || has_prefix(n, "GB200") || has_prefix(n, "B300") ||
      has_prefix(n, "GB300"))
    return 148;
  return 0;
}

double work_gemm_shape_eff(const ts_gpu_model *g, double M, double N,
                           double groups) {
  if (!(M > 0 && N > 0 && groups > 0)) return 1.0;
  double tm = ceil(M / TILE_M), tn = ceil(N / TILE_N);
  double tile = M * N / (tm * TILE_M * tn * TILE_N);
  double tiles = tm * tn * ceil(groups), sms = work_gpu_sms(g);
  double wave = sms > 0 ? tiles / (ceil(tiles / sms) * sms) : 1.0;
  return tile * wave;
}

double work_gemm_bwd_shape_eff(const ts_gpu_model *g, double M, double N,
                               double K, double groups) {
  double d = work_gemm_shape_eff(g, M, K, groups); /* data gradient */
  double w = work_gemm_shape_eff(g, K, N, groups); /* weight gradient */
  return 2.0 / (1.0 / d + 1.0 / w);
}

double work_attn_block_eff(const work_cfg *c, uint32_t layer) {
  double s = c->seq_len;
  bool global = c->full_every && (layer + 1) % c->full_every == 0;
  if (c->attention == WORK_ATTN_FULL || !c->flash_attention || s <= 0 ||
      (c->window && !global && c->window < s))
    return 1.0;
  /* s(s+1)/2 pairs kept; (s/B)(s/B + 1)/2 blocks of B^2 computed */
  return (s + 1) / (s + ATTN_BLOCK);
}

double work_attn_dropout_eff(const work_cfg *c) {
  if (!c->dropout || !c->flash_attention) return 1.0;
  return 1.0 / (1.0 + WORK_ATTN_DROPOUT_COST);
}

double work_launch_gap_s(void) { return 1e-6; }

double work_epilogue_bytes(double M, double N, double K, double groups,
                           int bwd) {
  double g = groups > 0 ? groups : 1;
  /* backward: data gradient M x K and weight gradient K x N */
  return 2.0 * (bwd ? (M + N) * K : M * N) * g;
}

double work_fp8_gemm_rel(void) { return 1.75 / 2.0; }

double work_fp8_cast_bytes(double M, double N, double K, double groups,
                           int bwd) {
  double g = groups > 0 ? groups : 1;
  /* BF16 read + FP8 write in both layouts of the GEMM's BF16 input */
  double cast = 4.0 * M * (bwd ? N : K) * g;
  /* amax histories: 3 FP8 tensors forward, 2 backward, read + written */
  double amax = (bwd ? 2.0 : 3.0) * WORK_FP8_AMAX_HISTORY * 4.0 * 2.0;
  return cast + amax;
}

double work_fp8_weight_cast_bytes(double params) { return 4.0 * params; }
