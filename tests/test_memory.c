/* test_memory.c - the memory recipes of ts_work_memory that published
 * training runs rely on: FSDP's gradient lifetime under the interleaved
 * schedule (Llama 3), BF16 Adam moments, FP8 activation caching and the
 * MoE activation-function recompute (DeepSeek-V3). The Korthikanti
 * formulas themselves are in test_work.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "topsim/ts_error.h"
#include "topsim/ts_work.h"

static ts_workload *load_text(const char *yaml) {
  ts_workload *w = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_workload_load_buffer(yaml, strlen(yaml), "<test>", &w, &d);
  if (rc) print_error("%s\n", d.msg);
  assert_int_equal(rc, 0);
  return w;
}

static ts_mem_breakdown mem(const ts_workload *w, uint32_t stage) {
  ts_mem_breakdown b;
  assert_int_equal(ts_work_memory(w, stage, &b), 0);
  return b;
}

/* 4 layers on pp 2 x v 2, one layer per chunk; stage 0 holds chunk 0 =
 * layer 0 + embedding (P_l + Vh) and chunk 1 = layer 2 (P_l). DP 2 shards.
 * Megatron's interleaved order on stage 0: warm-up 2(pp - 1) + (v - 1)pp
 * = 4 forward units; backward units take chunk 1 first.
 * m = 2: the 4 units are all of them, the first backward (chunk 1) comes
 *   with all 4 in flight: activations 4A, unsharded gradients of chunk 1
 *   only: 4 P_l (fp32); chunk 0's appear after chunk 1's reduce-scatter
 *   freed its own.
 * m = 4: forward 4, then (F4, B0): 5A in flight, chunk 1's accumulator;
 *   (F6, B2) is chunk 0's first backward: 5A with both accumulators
 *   4 (2 P_l + Vh). Activations equal ZeRO-1's (warm-up + 1 units) in both.
 * The gradient shard 4 (2 P_l + Vh) / 2 is always held. */
static void test_fsdp_interleaved(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: fsdp\n"
      "model: {layers: 4, hidden: 64, heads: 4, seq_len: 32, vocab: 100}\n"
      "training: {global_batch: 4, schedule: interleaved, virtual_stages: 2,"
      " zero_stage: 1}\n"
      "parallelism: {pp: 2, dp: 2}\n");
  const double Vh = 100.0 * 64;
  for (int m = 2; m <= 4; m += 2) {
    tu_set(w, "global_batch", m == 2 ? "4" : "8");
    tu_set(w, "dp_mode", "zero");
    ts_mem_breakdown z = mem(w, 0);
    double Pl = ((double)z.weights / 2 - Vh) / 2;
    assert_true(Pl > 0 && Pl == floor(Pl));
    assert_int_equal(z.grads, (uint64_t)(4 * (2 * Pl + Vh)));
    tu_set(w, "dp_mode", "fsdp");
    ts_mem_breakdown f = mem(w, 0);
    assert_int_equal(f.activations, z.activations);
    double shard = 4 * (2 * Pl + Vh) / 2;
    double live = m == 2 ? 4 * Pl : 4 * (2 * Pl + Vh);
    assert_int_equal(f.grads, (uint64_t)(shard + live));
    assert_int_equal(f.optimizer, z.optimizer);
  }
  /* 4A (m = 2) against 5A (m = 4): ZeRO-1 in flight as warm-up + 1 */
  tu_set(w, "dp_mode", "zero");
  tu_set(w, "global_batch", "4");
  uint64_t a4 = mem(w, 0).activations;
  tu_set(w, "global_batch", "8");
  uint64_t a5 = mem(w, 0).activations;
  assert_true(llabs((long long)(a4 * 5) - (long long)(a5 * 4)) < 8);
  ts_workload_free(w);
}

/* Llama 3 405B as Meta ran it (section 3.3.2; examples/validation/
 * llama3-405b-16k-h100.yaml): TP 8 with sequence parallelism, PP 16, v = 8
 * (one layer per chunk on stages 1-14), s = 8192, b = 1, no dropout, no
 * recompute, FSDP with fp32 gradients reduced once per step. Per layer and
 * micro-batch, Korthikanti's table 2 term by term for a Llama layer, all
 * split by sp = 8: the two RMSNorms' inputs and outputs 8, Q K V O
 * 2 (16384 + 1024 + 1024 + 16384) / h = 4.25, SwiGLU's gate, up and
 * product 6 f / h = 19.5, the fp32 softmax statistics 4 a / h = 1/32:
 * s b h (8 + 23.78125) / 8 = 533,200,896 bytes. In flight on stage 1:
 * Megatron's (and PyTorch's ScheduleInterleaved1F1B's) warm-up
 * 2 (pp - 2) + (v - 1) N + 1 units with N = 16 micro-batches per round
 * (m = 32: rounds = m / pp = 2, N = m / rounds = 16): 141 units at 8K GPUs
 * (DP 64), all m v = 128 at 16K (DP 128, m = 16). Gradients: the fp32
 * shard 4 P / 64 plus, at 8K, all eight chunks' unsharded fp32
 * accumulators (backward unit 112 of the steady phase, which lasts
 * 256 - 140 = 116 pairs), P = 8 layers x 398,467,072 per TP rank; at
 * 16K only the last chunk's (its first backward is the peak). */
static void test_llama3_405b_stage1(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: llama3\n"
      "model: {layers: 126, hidden: 16384, ffn_hidden: 53248, heads: 128,"
      " kv_heads: 8, seq_len: 8192, vocab: 128256, activation: swiglu,"
      " position_embedding: rope}\n"
      "training: {global_batch: 2048, schedule: interleaved,"
      " virtual_stages: 8, dropout: false, dp_mode: fsdp, grad_dtype: fp32,"
      " sequence_parallel: true, first_stage_layers: 7,"
      " last_stage_layers: 7}\n"
      "parallelism: {tp: 8, pp: 16, dp: 64}\n");
  /* P per layer and TP rank: (h (q + 2k) + q h + 3 h f) / 8 = 398,458,880
   * plus the two norms' 4 h / 8 = 8,192 (weight and bias as LayerNorm
   * has them; RMSNorm's have no bias, 0.001% of P) */
  const double layer = 533200896.0, pl = 398467072.0;
  ts_mem_breakdown b = mem(w, 1);
  assert_true(fabs((double)b.activations - 141 * layer) < 2);
  assert_true(fabs((double)b.grads - (4 * 8 * pl / 64 + 4 * 8 * pl)) < 2);
  assert_true(fabs((double)b.weights - 2 * 8 * pl) < 2);
  /* 88.9 GiB in all: over the 80 GiB of the card, let alone 74.5 */
  assert_true(b.total > 88.8 * 1073741824.0 && b.total < 89.0 * 1073741824.0);
  tu_set(w, "dp", "128");
  b = mem(w, 1);
  assert_true(fabs((double)b.activations - 128 * layer) < 2);
  assert_true(fabs((double)b.grads - (4 * 8 * pl / 128 + 4 * pl)) < 2);
  ts_workload_free(w);
}

/* One MoE layer: h 128, 4 heads, SwiGLU, 4 experts, top-2 of width 64,
 * s 256, no dropout, FlashAttention, tp 1. Bytes per token:
 *   norm inputs and outputs 8h = 1024; Q, K, V, O 2 x 4 x 128 = 1024;
 *   softmax statistics 4 x 4 = 16;
 *   routed input copies 2 x 2h = 512; gate, up, product 2 x 3 x 2 x 64 = 768
 * = 3344, x 256 tokens = 856,064, + fp32 logits 4 x 256 x 8 = 8,192.
 * FP8 dispatch keeps the copies in FP8 with a fp32 scale per 128
 * (1 + 1/32 bytes): 2 x 128 x 1.03125 = 264 instead of 512.
 * activation_cache fp8 also caches the intermediates so: 1.03125 x
 * (256 + 384) = 660 instead of 1280; recompute_moe_act keeps gate and up
 * only: 1.03125 x (256 + 256) = 528. */
static void test_moe_activation_cache(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: moe\n"
      "model: {layers: 1, hidden: 128, heads: 4, seq_len: 256, vocab: 8,\n"
      "        activation: swiglu, experts: 4, top_k: 2, expert_ffn_hidden: 64}\n"
      "training: {global_batch: 1, dropout: false}\n");
  double base = (double)mem(w, 0).activations;
  assert_true(fabs(base - (856064.0 + 8192)) < 2);
  tu_set(w, "moe_dispatch_dtype", "fp8");
  double d8 = (double)mem(w, 0).activations;
  assert_true(fabs(base - d8 - (512 - 264) * 256.0) < 2);
  tu_set(w, "activation_cache", "fp8");
  double c8 = (double)mem(w, 0).activations;
  assert_true(fabs(base - c8 - (1280 - 660) * 256.0) < 2);
  tu_set(w, "recompute_moe_act", "true");
  double r8 = (double)mem(w, 0).activations;
  assert_true(fabs(base - r8 - (1280 - 528) * 256.0) < 2);
  ts_workload_free(w);
}

/* DeepSeek-V3 section 3.3.2: Adam moments in BF16, master weights and
 * gradients fp32: 4 + 2 + 2 optimizer bytes per parameter, 8P/d with the
 * distributed optimizer, against 12P/d; bf16 gradients add the fp32 main
 * gradient (4). Seed model, tp 8: P = 4,936,894,464; d = 4. */
static void test_bf16_moments(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: seed-tp8\n"
      "model: {layers: 48, hidden: 8192, heads: 64, seq_len: 4096, vocab: 51200}\n"
      "training: {global_batch: 4, distributed_optimizer: true}\n"
      "parallelism: {tp: 8, dp: 4}\n");
  const uint64_t P = 4936894464ull;
  assert_int_equal(mem(w, 0).optimizer, 12 * P / 4);
  tu_set(w, "optimizer_moments", "bf16");
  assert_int_equal(mem(w, 0).optimizer, 8 * P / 4);
  tu_set(w, "grad_dtype", "bf16");
  assert_int_equal(mem(w, 0).optimizer, 12 * P / 4);
  ts_workload_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fsdp_interleaved),
      cmocka_unit_test(test_llama3_405b_stage1),
      cmocka_unit_test(test_moe_activation_cache),
      cmocka_unit_test(test_bf16_moments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
