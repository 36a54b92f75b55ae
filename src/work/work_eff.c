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
 * Grouped GEMMs (G experts of the same shape, one launch) quantize over
 * the G x tiles of the group. The product of both factors multiplies the
 * large-GEMM efficiency of the workload (efficiency.gemm, default 0.7),
 * which is what a GEMM of whole waves reaches.
 *
 * SMs: the topology's gpu_models.MODEL.sms, else by model name (datasheets:
 * A100 108, H100 SXM / H800 / H200 132, H100 PCIe 114, H20 78, B200 / GB200
 * / B300 148), else 0 = no wave quantization.
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
 * FP8 casts (Transformer Engine): every FP8 GEMM input that is not
 * already FP8 is quantised by a separate kernel that reads it in BF16 and
 * writes FP8 (3 bytes per element) and reduces its amax: the activations
 * (M x K) in forward, the output gradient in backward. Weights are cast
 * once per step (the optimizer's pass, not charged here). */
#include <math.h>
#include <string.h>

#include "work/work_int.h"

#define TILE_M 256.0
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

double work_launch_gap_s(void) { return 1e-6; }

double work_epilogue_bytes(double M, double N, double K, double groups,
                           int bwd) {
  double g = groups > 0 ? groups : 1;
  /* backward: data gradient M x K and weight gradient K x N */
  return 2.0 * (bwd ? (M + N) * K : M * N) * g;
}

double work_fp8_gemm_rel(void) { return 1.75 / 2.0; }
