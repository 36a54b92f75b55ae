/* test_work.c - workload format, mapping, memory, compute and comm volumes.
 *
 * Each test states the configuration and its closed-form answer. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "topsim/ts_work.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)

static ts_workload *load_text(const char *yaml) {
  ts_workload *w = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_workload_load_buffer(yaml, strlen(yaml), "<test>", &w, &d);
  if (rc) {
    char msg[1200];
    ts_diag_format(&d, msg, sizeof msg);
    print_error("%s\n", msg);
  }
  assert_int_equal(rc, 0);
  return w;
}

static int load_err(const char *yaml, char *msg, size_t len) {
  ts_workload *w = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_workload_load_buffer(yaml, strlen(yaml), "w.yaml", &w, &d);
  assert_null(w);
  ts_diag_format(&d, msg, len);
  return rc;
}

static ts_mapping *map_ok(const ts_workload *w, const ts_topo *t) {
  ts_mapping *m = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_work_map(w, t, &m, &d);
  if (rc) print_error("%s\n", d.msg);
  assert_int_equal(rc, 0);
  return m;
}

static int map_err(const ts_workload *w, const ts_topo *t, char *msg,
                   size_t len) {
  ts_mapping *m = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_work_map(w, t, &m, &d);
  assert_null(m);
  snprintf(msg, len, "%s", d.msg);
  return rc;
}

/* The seed's worked example (domain brief section 4): 48 layers, hidden
 * 8192, seq 4096, micro-batch 1, BF16, TP = 8, no sequence parallelism. */
static const char seed_yaml[] =
    "topsim: 1\n"
    "name: seed-tp8\n"
    "model: {layers: 48, hidden: 8192, heads: 64, seq_len: 4096, vocab: 51200}\n"
    "training: {global_batch: 1, micro_batch: 1}\n"
    "parallelism: {tp: 8}\n";

/* 4 ring all-reduces per layer per micro-batch of S = s*b*h*2 = 64 MiB; each
 * GPU sends 2*(7/8)*64 = 112 MiB per all-reduce; 48*4*112 MiB = 21 GiB per
 * micro-batch. HGX B300 (288 GB) holds the 132 GiB this needs. */
/* A layout whose message size s*b*h*2 is past 2^64 (seq, hidden and
 * micro-batch at their 2^30 limits, set after mapping: `run` would refuse
 * it for memory first): s*b*h*2 = 2^91, so the descriptor saturates at
 * UINT64_MAX instead of wrapping to a small size, and the message budget
 * refuses it by name downstream. */
static void test_comm_bytes_saturate(void **st) {
  (void)st;
  ts_workload *w = load_text(seed_yaml);
  ts_topo *t = tu_load("topologies/hgx-b300.yaml");
  ts_mapping *m = map_ok(w, t);
  tu_set(w, "seq_len", "1073741824");
  tu_set(w, "hidden", "1073741824");
  tu_set(w, "global_batch", "1073741824");
  tu_set(w, "micro_batch", "1073741824");
  ts_comm_desc *c = NULL;
  size_t n = 0;
  assert_int_equal(ts_work_comm(w, m, 0, &c, &n), 0);
  assert_true(n > 0);
  assert_true(c[0].bytes == UINT64_MAX);
  free(c);
  ts_mapping_free(m);
  ts_topo_free(t);
  ts_workload_free(w);
}

static void test_seed_tp_volume(void **st) {
  (void)st;
  ts_workload *w = load_text(seed_yaml);
  ts_topo *t = tu_load("topologies/hgx-b300.yaml");
  ts_mapping *m = map_ok(w, t);
  for (uint32_t r = 0; r < 8; r++) {
    ts_comm_desc *c;
    size_t n;
    assert_int_equal(ts_work_comm(w, m, r, &c, &n), 0);
    assert_int_equal(n, 48 * 4);
    uint32_t fwd = 0, bwd = 0;
    for (size_t i = 0; i < n; i++) {
      assert_int_equal(c[i].kind, TS_COLL_ALL_REDUCE);
      assert_int_equal(c[i].group_kind, TS_GROUP_TP);
      assert_int_equal(c[i].group_size, 8);
      assert_int_equal(c[i].bytes, 64 * MIB);
      assert_int_equal(c[i].sent, 112 * MIB);
      assert_int_equal(c[i].repeat, 1);
      fwd += c[i].phase == TS_PHASE_FWD;
      bwd += c[i].phase == TS_PHASE_BWD;
    }
    assert_int_equal(fwd, 96);
    assert_int_equal(bwd, 96);
    ts_comm_volume v;
    ts_work_comm_volume(c, n, &v);
    assert_int_equal(v.per_microbatch[TS_GROUP_TP], 21 * GIB);
    assert_int_equal(v.per_microbatch[TS_GROUP_TP],
                     48ull * 4 * 2 * 7 * (64 * MIB) / 8);
    free(c);
  }
  /* sequence parallelism: all-gather + reduce-scatter, same bytes */
  tu_set(w, "sequence_parallel", "true");
  ts_comm_desc *c;
  size_t n;
  assert_int_equal(ts_work_comm(w, m, 0, &c, &n), 0);
  assert_int_equal(n, 48 * 8);
  ts_comm_volume v;
  ts_work_comm_volume(c, n, &v);
  assert_int_equal(v.per_microbatch[TS_GROUP_TP], 21 * GIB);
  free(c);
  ts_mapping_free(m);
  ts_topo_free(t);
  ts_workload_free(w);
}

/* Same model on one DGX A100 (80 GB = 74.5 GiB): refused. Per GPU
 * 4,936,894,464 parameters (48 x 805,339,136 + 2 x 51200 x 8192 + 2 x 8192,
 * over tp 8): weights x2 = 9.2 GiB, fp32 grads x4 = 18.4, Adam x12 = 55.2;
 * activations 48 x 4096*8192*(10 + 24/8 + 5*64*4096/(8192*8)) bytes plus
 * fp32 logits 4*4096*51200/8 = 49.6 GiB; total 132.4 GiB. */
static void test_refuse_memory(void **st) {
  (void)st;
  ts_workload *w = load_text(seed_yaml);
  tu_set(w, "flash_attention", "false"); /* Korthikanti's unfused attention */
  ts_mem_breakdown b;
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.weights, 2ull * 4936894464ull);
  assert_int_equal(b.grads, 4ull * 4936894464ull);
  assert_int_equal(b.optimizer, 12ull * 4936894464ull);
  assert_int_equal(b.activations, 48ull * 33554432 * 33 + 104857600);
  ts_topo *t = tu_load("topologies/dgx-a100.yaml");
  char msg[800];
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_string_equal(msg,
      "pipeline stage 0 needs 132.4 GiB per GPU, HBM holds 74.5 GiB "
      "(A100-SXM4-80GB) on rank 0: over by 57.9 GiB (weights 9.2, grads "
      "18.4, optimizer 55.2, activations 49.6, buffers 0.0 GiB)");
  /* memory_check: warn maps it anyway, with the same figures as a warning */
  tu_set(w, "memory_check", "warn");
  ts_mapping *m = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_work_map(w, t, &m, &d), 0);
  assert_int_equal(ts_mapping_warning_count(m), 1);
  assert_string_equal(ts_mapping_warning(m, 0),
      "1 of 1 pipeline stages over HBM, run anyway (training.memory_check: "
      "warn); the worst: pipeline stage 0 needs 132.4 GiB per GPU, HBM holds "
      "74.5 GiB (A100-SXM4-80GB) on rank 0: over by 57.9 GiB (weights 9.2, "
      "grads 18.4, optimizer 55.2, activations 49.6, buffers 0.0 GiB)");
  ts_mapping_free(m);
  tu_set(w, "memory_check", "refuse");
  /* selective recompute drops 5as/h (20 of 33 per sbh): still too big;
   * ZeRO cannot help with dp = 1 */
  tu_set(w, "recompute", "selective");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.activations, 48ull * 33554432 * 13 + 104857600);
  /* full recompute keeps 2sbh per layer */
  tu_set(w, "recompute", "full");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.activations, 48ull * 33554432 * 2 + 104857600);
  ts_topo_free(t);
  ts_workload_free(w);
}

/* Korthikanti et al. 2022: with sequence parallelism every term is split by
 * t: s*b*h*(34 + 5as/h)/t per layer. GPT: h = 4096, a = 32, s = 2048,
 * t = 8: 2048*4096*(34 + 5*32*2048/4096)/8 = 2048*4096*114/8 bytes. */
static void test_activation_formula(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: k\n"
      "model: {layers: 8, hidden: 4096, heads: 32, seq_len: 2048, vocab: 8}\n"
      "training: {global_batch: 1, sequence_parallel: true, "
      "flash_attention: false}\n"
      "parallelism: {tp: 8}\n");
  ts_mem_breakdown b;
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  uint64_t logits = 4ull * 2048 * 8 / 8;
  assert_int_equal(b.activations, 8ull * 2048 * 4096 * 114 / 8 + logits);
  /* 1F1B, pp = 2, 4 micro-batches: stage 0 keeps 2 in flight, stage 1 one */
  tu_set(w, "pp", "2");
  tu_set(w, "global_batch", "4");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.activations, 2 * (4ull * 2048 * 4096 * 114 / 8));
  assert_int_equal(ts_work_memory(w, 1, &b), 0);
  assert_int_equal(b.activations, 4ull * 2048 * 4096 * 114 / 8 + logits);
  assert_int_equal(ts_work_memory(w, 2, &b), TS_EINVALID);
  /* ZeRO-1 over dp shards the 12 optimizer bytes */
  ts_mem_breakdown z0, z1;
  tu_set(w, "dp", "4");
  tu_set(w, "global_batch", "16");
  assert_int_equal(ts_work_memory(w, 0, &z0), 0);
  tu_set(w, "distributed_optimizer", "true");
  assert_int_equal(ts_work_memory(w, 0, &z1), 0);
  assert_int_equal(z1.weights, z0.weights);
  assert_true(llabs((long long)z1.optimizer * 4 - (long long)z0.optimizer) < 8);
  ts_workload_free(w);
}

/* Korthikanti et al. 2022, table 2: activation bytes per layer per
 * micro-batch, t = tensor parallel size, unfused attention with dropout:
 *   no parallelism             sbh(34 + 5as/h)
 *   TP                         sbh(10 + 24/t + 5as/(ht))
 *   TP + SP                    sbh(34/t + 5as/(ht))
 *   TP + selective             sbh(10 + 24/t)
 *   TP + SP + selective        sbh(34/t)
 *   full recompute             2sbh
 * GPT-3 175B: h 12288, a 96, s 2048, b 1, t 8: sbh = 25,165,824 and
 * 5as/h = 80, so the factors are 114, 23, 14.25, 13, 4.25 and 2. One stage
 * of 8 layers; vocabulary 8 keeps the fp32 logits (4sbV/t) a known tail.
 * Without dropout the two 1-byte residual masks go (34 -> 32);
 * FlashAttention replaces 5as/h by 4a/h (softmax statistics). Pipeline:
 * stage 0 of 1F1B holds L layers' worth (p micro-batches of L/p layers);
 * interleaved L(1 + (p-1)/(pv)). */
static void test_korthikanti(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: k175\n"
      "model: {layers: 8, hidden: 12288, heads: 96, seq_len: 2048, "
      "vocab: 8}\n"
      "training: {global_batch: 1, flash_attention: false}\n");
  const double sbh = 2048.0 * 12288, L = 8, logits = 4.0 * 2048 * 8;
  struct { const char *tp, *sp, *rc; double f; } row[] = {
      {"1", "false", "none", 114},     {"8", "false", "none", 23},
      {"8", "true", "none", 14.25},    {"8", "false", "selective", 13},
      {"8", "true", "selective", 4.25}, {"8", "false", "full", 2},
  };
  ts_mem_breakdown b;
  for (size_t i = 0; i < sizeof row / sizeof row[0]; i++) {
    tu_set(w, "tp", row[i].tp);
    tu_set(w, "sequence_parallel", row[i].sp);
    tu_set(w, "recompute", row[i].rc);
    assert_int_equal(ts_work_memory(w, 0, &b), 0);
    double want = L * sbh * row[i].f + logits / atof(row[i].tp);
    assert_int_equal(b.activations, (uint64_t)want);
  }
  /* no dropout: 34 -> 32 (TP + SP + selective: 32/8 = 4) */
  tu_set(w, "dropout", "false");
  tu_set(w, "recompute", "selective");
  tu_set(w, "sequence_parallel", "true");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.activations, (uint64_t)(L * sbh * 4 + logits / 8));
  /* FlashAttention: 4a/h bytes of statistics, any recompute setting */
  tu_set(w, "flash_attention", "true");
  tu_set(w, "recompute", "none");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  double fl = L * sbh * (4 + 4.0 * 96 / 12288 / 8) + logits / 8;
  assert_true(fabs((double)b.activations - fl) < 1);
  /* 1F1B over pp 4 with m = 8: stage 0 holds 4 micro-batches of 2 layers =
   * L layers; interleaved v = 2: 11 chunks of 1 layer = L(1 + 3/8) */
  tu_set(w, "flash_attention", "false");
  tu_set(w, "dropout", "true");
  tu_set(w, "recompute", "selective");
  tu_set(w, "pp", "4");
  tu_set(w, "global_batch", "8");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.activations, (uint64_t)(L * sbh * 4.25));
  tu_set(w, "schedule", "interleaved");
  tu_set(w, "virtual_stages", "2");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.activations, (uint64_t)(L * (1 + 3.0 / 8) * sbh * 4.25));
  ts_workload_free(w);
}

/* Megatron-LM's distributed optimizer (docs, "distrib_optimizer"): bytes
 * per parameter with d data-parallel ranks: bf16 params + fp32 grads 18
 * without it, 6 + 12/d with it; 16-bit grads 20 and 4 + 16/d (an fp32
 * main-gradient copy joins the 12 optimizer bytes). Seed model, tp 8:
 * P = 4,936,894,464 per GPU; d = 4. fsdp shards the optimizer like the
 * distributed optimizer over the gradient group and keeps the gradient
 * shard (4P/d) plus, from the first backward to the reduce-scatter, the
 * unsharded fp32 accumulator (4P; one stage, one chunk); hsdp shards over
 * its shard group (2 here). */
static void test_distributed_optimizer_bytes(void **st) {
  (void)st;
  ts_workload *w = load_text(seed_yaml);
  const uint64_t P = 4936894464ull;
  tu_set(w, "dp", "4");
  tu_set(w, "global_batch", "4");
  ts_mem_breakdown b;
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.weights + b.grads + b.optimizer, 18 * P);
  tu_set(w, "grad_dtype", "bf16");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.weights + b.grads + b.optimizer, 20 * P);
  tu_set(w, "distributed_optimizer", "true");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.weights + b.grads + b.optimizer, 4 * P + 16 * P / 4);
  tu_set(w, "grad_dtype", "fp32");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.weights + b.grads + b.optimizer, 6 * P + 12 * P / 4);
  tu_set(w, "distributed_optimizer", "false");
  tu_set(w, "dp_mode", "fsdp");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.grads, 4 * P + 4 * P / 4);
  assert_int_equal(b.weights + b.grads + b.optimizer, 6 * P + 16 * P / 4);
  tu_set(w, "dp_mode", "hsdp");
  tu_set(w, "shard_group", "2");
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.optimizer, 12 * P / 2);
  tu_set(w, "shard_group", "3");
  ts_topo *t = tu_load("topologies/dgx-a100.yaml");
  char msg[800];
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_non_null(strstr(msg, "shard_group = 3 must divide"));
  ts_topo_free(t);
  ts_workload_free(w);
}

static const char label_yaml[] =
    "topsim: 1\nname: labels\n"
    "model: {layers: 24, hidden: 2048, heads: 16, seq_len: 2048, vocab: 32000}\n"
    "training: {global_batch: 40}\n"
    "parallelism: {tp: 8, pp: 4, dp: 5}\n";

/* DGX A100 SuperPOD, 1 SU (20 nodes x 8 GPUs), TP 8 x DP 5 x PP 4 in the
 * default order tp-cp-ep-dp-pp: rank r = tp + 8*(dp + 5*pp). TP groups are
 * the 8 GPUs of one node; DP neighbours are the next node; stages are blocks
 * of 5 nodes. NIC i of a DGX sits with GPU i under PCIe switch i/2: rail i. */
static void test_mapping_labels(void **st) {
  (void)st;
  ts_workload *w = load_text(label_yaml);
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_mapping *m = map_ok(w, t);
  assert_int_equal(ts_mapping_ranks(m), 160);
  assert_int_equal(ts_mapping_warning_count(m), 0);
  assert_int_equal(ts_mapping_group_size(m, TS_GROUP_TP), 8);
  assert_int_equal(ts_mapping_group_count(m, TS_GROUP_TP), 20);
  assert_int_equal(ts_mapping_group_size(m, TS_GROUP_GRAD), 5);
  for (uint32_t g = 0; g < 20; g++) {
    const ts_rank_label *l0 =
        ts_mapping_rank(m, ts_mapping_group_member(m, TS_GROUP_TP, g, 0));
    for (uint32_t i = 0; i < 8; i++) {
      uint32_t r = ts_mapping_group_member(m, TS_GROUP_TP, g, i);
      const ts_rank_label *l = ts_mapping_rank(m, r);
      assert_int_equal(l->host, l0->host);
      assert_int_equal(l->nvl_domain, l0->nvl_domain);
      assert_int_equal(ts_topo_node(t, l->gpu)->local, i);
      assert_int_equal(l->rail, (int)i);
      assert_int_equal(ts_topo_node(t, (uint32_t)l->nic)->kind, TS_NODE_NIC);
      assert_int_equal(l->numa, i < 4 ? 0 : 1);
      assert_int_equal(l->index[TS_GROUP_TP], i);
    }
  }
  for (uint32_t r = 0; r < 160; r++) {
    const ts_rank_label *l = ts_mapping_rank(m, r);
    assert_int_equal(l->index[TS_GROUP_DP], (r / 8) % 5);
    assert_int_equal(l->index[TS_GROUP_PP], r / 40);
    assert_int_equal(l->host, (int)(r / 8));
    assert_int_equal(l->nvl_domain, (int)(r / 8));
    assert_int_equal(l->su, 0);
    if (l->index[TS_GROUP_DP] < 4) { /* DP neighbour: same GPU, next node */
      uint32_t nb = ts_mapping_group_member(m, TS_GROUP_DP, l->group[TS_GROUP_DP],
                                            l->index[TS_GROUP_DP] + 1);
      assert_int_equal(nb, r + 8);
      assert_int_equal(ts_mapping_rank(m, nb)->host, l->host + 1);
      assert_int_equal(ts_mapping_rank(m, nb)->rail, l->rail);
    }
  }
  ts_mapping_free(m);
  /* order dp-tp-pp-cp: DP innermost, TP spans 8 nodes and leaves NVLink */
  tu_set(w, "order", "dp-tp-cp-pp");
  m = map_ok(w, t);
  assert_int_equal(ts_mapping_rank(m, 1)->index[TS_GROUP_DP], 1);
  assert_int_equal(ts_mapping_rank(m, 5)->index[TS_GROUP_TP], 1);
  assert_int_equal(ts_mapping_warning_count(m), 1);
  assert_non_null(strstr(ts_mapping_warning(m, 0), "span more than one NVLink"));
  ts_mapping_free(m);
  ts_topo_free(t);
  ts_workload_free(w);
}

/* Gradient reduction once per step. TP 8 x PP 4 x DP 4 on 128 GPUs of the
 * 1-SU SuperPOD, m = 8 micro-batches, P parameters per GPU of stage 0
 * (weights / 2), fp32 gradients. Bytes sent per GPU per step (buckets of
 * 160 MB round each term by < 1 byte per bucket):
 *   ZeRO-2  8 x RS(4P) + AG(2P) over DP 4     = 8 x 3P + 1.5P = 25.5P
 *   fsdp    RS(4P) + AG(2P) over DP 4 once     = 3P + 1.5P     = 4.5P
 *   hsdp 2  RS(4P) + AG(2P) over shard 2       = 2P + P        = 3P
 *           + AR(4P/2) over replica 2          = 2P
 * where RS and AG of S over p send (p-1)/p S and AR 2(p-1)/p S. */
static void test_dp_modes(void **st) {
  (void)st;
  ts_workload *w = load_text(label_yaml);
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  tu_set(w, "dp", "4");
  tu_set(w, "global_batch", "32");
  tu_set(w, "gpus", "128");
  const char *mode[3] = {"zero", "fsdp", "hsdp"};
  double want_grad[3] = {25.5, 4.5, 0}, want_shard[3] = {0, 0, 3};
  double want_rep[3] = {0, 0, 2};
  for (int i = 0; i < 3; i++) {
    tu_set(w, "zero_stage", i == 0 ? "2" : "0");
    tu_set(w, "dp_mode", mode[i]);
    if (i == 2) tu_set(w, "shard_group", "2");
    ts_mapping *m = map_ok(w, t);
    ts_mem_breakdown b;
    assert_int_equal(ts_work_memory(w, 0, &b), 0);
    double P = (double)b.weights / 2; /* weights are unsharded in all */
    ts_comm_desc *c;
    size_t n;
    assert_int_equal(ts_work_comm(w, m, 0, &c, &n), 0);
    ts_comm_volume v;
    ts_work_comm_volume(c, n, &v);
    free(c);
    assert_true(fabs(v.per_step[TS_GROUP_GRAD] - want_grad[i] * P) < 64);
    assert_true(fabs(v.per_step[TS_GROUP_SHARD] - want_shard[i] * P) < 64);
    assert_true(fabs(v.per_step[TS_GROUP_REPLICA] - want_rep[i] * P) < 64);
    if (i == 2) { /* shard groups: grad members 0-1 and 2-3 */
      assert_int_equal(ts_mapping_group_size(m, TS_GROUP_SHARD), 2);
      assert_int_equal(ts_mapping_group_size(m, TS_GROUP_REPLICA), 2);
      uint32_t g = ts_mapping_rank(m, 0)->group[TS_GROUP_GRAD];
      assert_int_equal(ts_mapping_group_member(m, TS_GROUP_SHARD, 0, 1),
                       ts_mapping_group_member(m, TS_GROUP_GRAD, g, 1));
      assert_int_equal(ts_mapping_group_member(m, TS_GROUP_REPLICA, 0, 1),
                       ts_mapping_group_member(m, TS_GROUP_GRAD, g, 2));
    }
    ts_mapping_free(m);
  }
  /* ZeRO-2's per-micro-batch reduce-scatter contradicts "once per step" */
  tu_set(w, "zero_stage", "2");
  char msg[800];
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_non_null(strstr(msg, "dp_mode hsdp reduces gradients once per step"));
  ts_topo_free(t);
  ts_workload_free(w);
}

/* Interleaved with uneven first/last stages (Llama 3 405B: 126 layers,
 * PP 16, first = last = 7; here v = 4). Stage 0 splits 7 as 1,2,2,2 (the
 * short chunk first, with the embedding), stage 15 as 2,2,2,1, the 14
 * others 8 as 2,2,2,2. Virtual stages run chunk-major (g = c*16 + s), so
 * rounds hold 31, 32, 32, 31 layers: stage 0 owns layers 0, 31-32, 63-64,
 * 95-96 and stage 15 ends with layer 125 alone. */
static void test_interleaved_uneven(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: l3\n"
      "model: {layers: 126, hidden: 256, heads: 8, seq_len: 128, vocab: 128}\n"
      "training: {global_batch: 16, schedule: interleaved, virtual_stages: 4, "
      "first_stage_layers: 7, last_stage_layers: 7}\n"
      "parallelism: {pp: 16}\n");
  int owner[126];
  for (int i = 0; i < 126; i++) owner[i] = -1;
  for (uint32_t sg = 0; sg < 16; sg++) {
    ts_op *ops;
    size_t n;
    assert_int_equal(ts_work_ops(w, NULL, sg, 0, &ops, &n), 0);
    for (size_t i = 0; i < n; i++) {
      if (ops[i].phase != TS_PHASE_FWD || ops[i].kind != TS_OP_QKV) continue;
      assert_true(ops[i].layer >= 0 && ops[i].layer < 126);
      assert_int_equal(owner[ops[i].layer], -1); /* once */
      owner[ops[i].layer] = (int)sg;
    }
    free(ops);
  }
  int want0[] = {0, 31, 32, 63, 64, 95, 96}, n0 = 0;
  for (int i = 0; i < 126; i++) {
    assert_true(owner[i] >= 0);
    n0 += owner[i] == 0;
  }
  assert_int_equal(n0, 7);
  for (int i = 0; i < 7; i++) assert_int_equal(owner[want0[i]], 0);
  assert_int_equal(owner[125], 15);
  assert_int_equal(owner[124], 14);
  /* 8 layers per other stage do not split over v = 3 */
  tu_set(w, "virtual_stages", "3");
  ts_op *ops;
  size_t n;
  assert_int_equal(ts_work_ops(w, NULL, 0, 0, &ops, &n), TS_EINVALID);
  ts_workload_free(w);
}

/* The host layout's one-program fact (the sweep's host fluid bound relies
 * on every rank of a host running the same program): TP 1, PP 2, DP 8 on
 * 16 GPUs of DGX A100s (8 per host), order tp-cp-ep-dp-pp. With EP 8 the
 * ranks of host 0 are EP ranks 0-7 of stage 0, eight different programs
 * under routing skew: no TS_HOST_ONE_STAGE. With EP 1 they are DP ranks
 * 0-7 of stage 0, one program: the flag holds. Either way 8 ranks per
 * host and every (one-rank) TP group on one host. */
static void test_host_layout_programs(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: moe\n"
      "model: {layers: 2, hidden: 256, heads: 8, seq_len: 128, vocab: 128, "
      "experts: 8, top_k: 2, expert_ffn_hidden: 512, routing_skew: 1.0}\n"
      "training: {global_batch: 16}\n"
      "parallelism: {tp: 1, pp: 2, dp: 8, ep: 8, order: tp-cp-ep-dp-pp}\n");
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  uint32_t K[TS_GROUP_COUNT], n = 0, flags = 0;
  assert_int_equal(ts_work_host_layout(w, t, K, &n, &flags), 0);
  assert_int_equal(n, 8);
  assert_int_equal(flags, TS_HOST_TP_WHOLE);
  tu_set(w, "ep", "1");
  assert_int_equal(ts_work_host_layout(w, t, K, &n, &flags), 0);
  assert_int_equal(n, 8);
  assert_int_equal(flags, TS_HOST_TP_WHOLE | TS_HOST_ONE_STAGE);
  ts_topo_free(t);
  ts_workload_free(w);
}

/* MoE dispatch matrix, worked by hand: 4 ranks on 2 nodes (hosts 0 0 1 1),
 * 4 experts (one per rank), top-2, uniform, 300 tokens of h = 128 bf16
 * (256 bytes). share_j = 1/4: a token reaches rank j with 1 - (3/4)^2 =
 * 7/16 and a node with 1 - (1/2)^2 = 3/4. From rank 0:
 *   to rank 1 (same node, NVLink)      300 x 7/16 x 256 = 33,600
 *   to node 1 via rank 2 (same local)  300 x 3/4  x 256 = 57,600 (RDMA)
 *   rank 2 forwards to rank 3          300 x 7/16 x 256 = 33,600
 * so [2][3] = 33,600 (rank 2's own) + 33,600 (forwarded for rank 0), and
 * alike [0][1], [1][0], [3][2] (node 0 forwards for ranks 2 and 3): every
 * rank sends 33,600 x 2 + 57,600 = 124,800: 499,200 in all, 230,400
 * across nodes. Node limit M = 1: D = 2 x 3/4 = 1.5 nodes, own 3/4, so
 * remote copies fall from 0.75 to 0.25: cross and forwarded bytes / 3.
 * FP8 dispatch: 128 + 4 bytes (one fp32 scale per 128) instead of 256.
 * Combine is the transpose. */
static void test_moe_matrix(void **st) {
  (void)st;
  ts_moe_route r = {300, 128, 2, 4, 0, 0, 0};
  int32_t hosts[4] = {0, 0, 1, 1};
  uint64_t m[16], t[16];
  assert_int_equal(ts_moe_matrix(&r, hosts, 4, 0, m), 0);
  uint64_t want[16] = {0, 67200, 57600, 0,       67200, 0, 0, 57600,
                       57600, 0, 0, 67200,       0, 57600, 67200, 0};
  for (int i = 0; i < 16; i++) assert_int_equal(m[i], want[i]);
  uint64_t sum = 0, cross = 0;
  for (int i = 0; i < 16; i++) {
    sum += m[i];
    if (hosts[i / 4] != hosts[i % 4]) cross += m[i];
  }
  assert_int_equal(sum, 499200);
  assert_int_equal(cross, 230400);
  assert_int_equal(ts_moe_matrix(&r, hosts, 4, 1, t), 0);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) assert_int_equal(t[i * 4 + j], m[j * 4 + i]);
  r.node_limit = 1;
  assert_int_equal(ts_moe_matrix(&r, hosts, 4, 0, m), 0);
  assert_int_equal(m[2], 19200);      /* 57,600 / 3 */
  assert_int_equal(m[1], 33600 + 11200); /* own NVLink part unchanged */
  assert_int_equal(m[2 * 4 + 3], 33600 + 11200);
  r.node_limit = 0;
  r.fp8 = 1;
  assert_int_equal(ts_moe_matrix(&r, hosts, 4, 0, m), 0);
  assert_int_equal(m[1], 2 * (300ull * 7 * 132 / 16)); /* 2 x 17,325 */
  assert_int_equal(m[2], 300ull * 3 * 132 / 4);
  r.experts = 6; /* not a multiple of 4 ranks */
  assert_int_equal(ts_moe_matrix(&r, hosts, 4, 0, m), TS_EINVALID);
}

/* Cross-node bytes of ring collectives: a group over H hosts has H of its
 * p ring edges between hosts (NCCL orders rings by host), so H/p of the
 * bytes leave the host. TP 8 x PP 4 x DP 5 on the 1-SU SuperPOD: a TP group
 * is one node (nothing leaves), a DP group spans 5 nodes (5/5: all of
 * it). With order dp-tp-cp-pp DP is innermost: a DP group is GPUs 0-4 of
 * one node (nothing leaves) and a TP group takes every 5th GPU, 0, 5, ...
 * 35, on nodes 0 0 1 1 2 3 3 4: H = 5 of p = 8, so 5/8 of TP bytes. */
static void test_cross_node_rings(void **st) {
  (void)st;
  ts_workload *w = load_text(label_yaml);
  tu_set(w, "zero_stage", "1");
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  for (int k = 0; k < 2; k++) {
    if (k) tu_set(w, "order", "dp-tp-cp-pp");
    ts_mapping *m = map_ok(w, t);
    ts_comm_desc *c;
    size_t n;
    assert_int_equal(ts_work_comm(w, m, 0, &c, &n), 0);
    ts_comm_volume v;
    ts_work_comm_volume(c, n, &v);
    free(c);
    assert_true(v.per_step[TS_GROUP_TP] > 0 && v.per_step[TS_GROUP_GRAD] > 0);
    uint64_t tp = k ? v.per_step[TS_GROUP_TP] * 5 / 8 : 0;
    uint64_t dp = k ? 0 : v.per_step[TS_GROUP_GRAD];
    assert_true(llabs((long long)(v.cross_node[TS_GROUP_TP] - tp)) < 1000);
    assert_true(llabs((long long)(v.cross_node[TS_GROUP_GRAD] - dp)) < 1000);
    ts_mapping_free(m);
  }
  ts_topo_free(t);
  ts_workload_free(w);
}

/* Multi-head Latent Attention with DeepSeek-V3's ranks (h 7168, 128 heads,
 * nope 128, rope 64, v 128, q_lora 1536, kv_lora 512): attention weights
 * per layer 7168*1536 + 1536 (q down + norm) + 1536*128*192 (q up) +
 * 7168*576 (kv down) + 512 (norm) + 512*128*256 (k, v up) + 128*128*7168
 * (out) = 187,107,328 (DeepSeek-V3's ~187M). With 4h of norms, a 1-wide
 * GeLU MLP (2h), a vocabulary of 8 (in and out, 16h) and the final norm
 * (2h): 187,279,360 parameters, 2 bytes each. Scores contract over 192
 * per head, values over 128: attn_value = attn_score x 128/192. Selective
 * recompute re-runs the RMSNorms and the up projections (2T x (1536*24576
 * + 512*32768)) and keeps no Q, K, V and no norm outputs: the per-layer
 * activations drop by 2(q + k + v)/h sbh = 2 x (24576 + 24576 + 16384)/7168
 * sbh, plus 4 sbh (the two norm outputs, bf16). */
static void test_mla(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: mla\n"
      "model: {layers: 1, hidden: 7168, ffn_hidden: 1, heads: 128, "
      "head_dim: 128, q_lora_rank: 1536, kv_lora_rank: 512, "
      "qk_rope_head_dim: 64, v_head_dim: 128, seq_len: 4096, vocab: 8}\n"
      "training: {global_batch: 1}\n");
  ts_mem_breakdown b, bs;
  assert_int_equal(ts_work_memory(w, 0, &b), 0);
  assert_int_equal(b.weights, 2ull * 187279360);
  ts_op *ops;
  size_t n;
  assert_int_equal(ts_work_ops(w, NULL, 0, 0, &ops, &n), 0);
  double sc = 0, av = 0;
  for (size_t i = 0; i < n; i++) {
    if (ops[i].phase != TS_PHASE_FWD) continue;
    if (ops[i].kind == TS_OP_ATTN_SCORE) sc = ops[i].flops;
    if (ops[i].kind == TS_OP_ATTN_VALUE) av = ops[i].flops;
  }
  assert_true(fabs(sc - 2 * 4096.0 * 4097 / 2 * 128 * 192) < 1);
  assert_true(fabs(av / sc - 128.0 / 192) < 1e-12);
  free(ops);
  tu_set(w, "recompute", "selective");
  assert_int_equal(ts_work_memory(w, 0, &bs), 0);
  double sbh = 4096.0 * 7168;
  double drop = (2 * (24576.0 + 24576 + 16384) / 7168 + 4) * sbh;
  assert_true(fabs((double)b.activations - (double)bs.activations - drop) < 2);
  assert_int_equal(ts_work_ops(w, NULL, 0, 0, &ops, &n), 0);
  double up = 0;
  int value_rerun = 0; /* DeepSeek's recipe re-runs no core attention */
  for (size_t i = 0; i < n; i++) {
    if (ops[i].phase == TS_PHASE_RECOMPUTE && ops[i].kind == TS_OP_QKV)
      up += ops[i].flops;
    value_rerun += ops[i].phase == TS_PHASE_RECOMPUTE &&
                   ops[i].kind == TS_OP_ATTN_VALUE;
  }
  assert_int_equal(value_rerun, 0);
  assert_true(fabs(up - 2 * 4096.0 * (1536.0 * 24576 + 512.0 * 32768)) < 1);
  free(ops);
  ts_workload_free(w);
}

static void test_refusals(void **st) {
  (void)st;
  ts_workload *w = load_text(label_yaml);
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  char msg[800];
  tu_set(w, "dp", "4");
  tu_set(w, "global_batch", "32");
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_string_equal(msg, "tp*cp*pp*dp = 8*1*4*4 = 128 but the topology has "
                           "160 GPUs (under by 32)");
  tu_set(w, "gpus", "128"); /* the first 16 nodes only: fits */
  ts_mapping *m = map_ok(w, t);
  assert_int_equal(ts_mapping_ranks(m), 128);
  ts_mapping_free(m);
  tu_set(w, "gpus", "200");
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_string_equal(msg, "the job asks for 200 GPUs but topology "
                           "'superpod-a100-1su' has 160 (40 short)");
  ts_workload_free(w);

  w = load_text(label_yaml);
  tu_set(w, "heads", "12");
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_string_equal(msg, "heads = 12 is not divisible by tp = 8 (remainder 4)");
  tu_set(w, "heads", "16");
  tu_set(w, "kv_heads", "4");
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_string_equal(msg, "kv_heads = 4 is not divisible by tp = 8 (remainder 4)");
  tu_set(w, "kv_heads", "8");
  tu_set(w, "layers", "25");
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_string_equal(msg, "layers = 25 is not divisible by pp = 4 (remainder 1)");
  tu_set(w, "schedule", "interleaved");
  tu_set(w, "virtual_stages", "4");
  tu_set(w, "layers", "24");
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_string_equal(msg, "layers = 24 is not divisible by pp * virtual_stages "
                           "= 4 * 4 = 16 (remainder 8)");
  tu_set(w, "virtual_stages", "3");
  tu_set(w, "global_batch", "42");
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_string_equal(msg, "global_batch = 42 is not divisible by micro_batch * "
                           "dp = 1 * 5 = 5 (remainder 2)");
  tu_set(w, "global_batch", "40"); /* 8 micro-batches, pp 4: fine */
  m = map_ok(w, t);
  ts_mapping_free(m);
  tu_set(w, "ep", "2");
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_string_equal(msg, "ep = 2 but the model has no experts");
  tu_set(w, "experts", "8");
  tu_set(w, "expert_ffn_hidden", "1024");
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_string_equal(msg, "ep = 2 must divide dp = 5 (expert parallelism is "
                           "carved out of data parallelism; remainder 1)");
  ts_topo_free(t);
  ts_workload_free(w);
}

/* Narayanan et al. 2021, appendix: FLOPs per iteration of a GPT model are
 * 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)) without recomputation (forward +
 * backward = 3 forward passes) and 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h))
 * with full recomputation (4 passes over the layers; the logits are not
 * recomputed). GPT-3 175B: B 1536, s 2048, l 96, h 12288, V 51200. */
static void test_flops_megatron(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: gpt3\n"
      "model: {layers: 96, hidden: 12288, heads: 96, seq_len: 2048, vocab: 51200}\n"
      "training: {global_batch: 1536, micro_batch: 1}\n"
      "parallelism: {tp: 8, pp: 16, dp: 8}\n");
  tu_set(w, "attention", "full"); /* Narayanan's formula: no causal mask */
  tu_set(w, "flash_attention", "false");
  double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  double f72 = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  double f96 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  double got = ts_work_step_flops(w);
  assert_true(fabs(got / f72 - 1) < 0.01);
  tu_set(w, "recompute", "full");
  got = ts_work_step_flops(w);
  assert_true(fabs(got / f96 - 1) < 0.01);
  /* selective recompute adds only the attention core: in between */
  tu_set(w, "recompute", "selective");
  got = ts_work_step_flops(w);
  assert_true(got > f72 * 1.001 && got < f96);
  /* the total does not depend on the layout */
  tu_set(w, "recompute", "full");
  tu_set(w, "pp", "8");
  tu_set(w, "dp", "16");
  assert_true(fabs(ts_work_step_flops(w) / f96 - 1) < 0.01);
  ts_workload_free(w);
}

/* Selective recompute is Megatron-LM's core-attention checkpoint
 * (megatron/core/transformer/attention.py: checkpoint_core_attention =
 * recompute_granularity == 'selective'): the fused kernel's forward runs
 * again before its backward, on top of the score GEMM FlashAttention's
 * backward recomputes anyway. One stage, 2 layers, s = 2048, q = h = 1024,
 * t = 1, b = 1, causal: each attention GEMM keeps s(s + 1)/2 pairs, so
 *   score = value = 2 x 2048 x 2049 / 2 x 1024 FLOPs per layer;
 * recompute-phase FLOPs: none = 2 x score (FlashAttention's score only),
 * selective = 2 x (2 score + value) = 6 score. MLA models keep DeepSeek's
 * recipe (no core-attention re-run; test_mla above). */
static void test_selective_core_attention(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: sel\n"
      "model: {layers: 2, hidden: 1024, heads: 8, seq_len: 2048, vocab: 1024}\n"
      "training: {global_batch: 1, micro_batch: 1}\n");
  double score = 2 * 2048.0 * 2049 / 2 * 1024, rc[2] = {0, 0};
  const char *mode[2] = {"none", "selective"};
  for (int i = 0; i < 2; i++) {
    tu_set(w, "recompute", mode[i]);
    ts_op *ops;
    size_t n;
    assert_int_equal(ts_work_ops(w, NULL, 0, 0, &ops, &n), 0);
    for (size_t j = 0; j < n; j++)
      if (ops[j].phase == TS_PHASE_RECOMPUTE) {
        assert_true(ops[j].kind == TS_OP_ATTN_SCORE ||
                    ops[j].kind == TS_OP_ATTN_VALUE);
        rc[i] += ops[j].flops;
      }
    free(ops);
  }
  assert_true(fabs(rc[0] - 2 * score) < 1);
  assert_true(fabs(rc[1] - 6 * score) < 1);
  /* model FLOPs leave every recompute phase out: the same for both */
  double mf = ts_work_step_model_flops(w);
  tu_set(w, "recompute", "none");
  assert_true(fabs(ts_work_step_model_flops(w) - mf) < 1);
  ts_workload_free(w);
}

/* Defect (issue 16): with one pipeline stage the first and the last stage
 * are the same, and the output layer and embedding were counted twice.
 * GPT 1.3B-like: l 24, h 2048, s 2048, V 51200, B 8 on one stage. The
 * logits term V/(12 l h) = 0.0868 of the layer FLOPs: counted twice it made
 * the total 8% too high. Narayanan's closed form must hold within 1%, and
 * the op list holds exactly one embedding and one logits op per pass. */
static void test_flops_one_stage(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: gpt1b\n"
      "model: {layers: 24, hidden: 2048, heads: 16, seq_len: 2048, "
      "vocab: 51200}\n"
      "training: {global_batch: 8, micro_batch: 1}\n");
  tu_set(w, "attention", "full");
  tu_set(w, "flash_attention", "false");
  double B = 8, s = 2048, l = 24, h = 2048, V = 51200;
  double f72 = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  assert_true(fabs(ts_work_step_flops(w) / f72 - 1) < 0.01);
  ts_op *ops;
  size_t n;
  assert_int_equal(ts_work_ops(w, NULL, 0, 0, &ops, &n), 0);
  int logits[TS_PHASE_COUNT] = {0}, embed[TS_PHASE_COUNT] = {0};
  for (size_t i = 0; i < n; i++) {
    if (ops[i].kind == TS_OP_LOGITS) logits[ops[i].phase]++;
    if (ops[i].kind == TS_OP_EMBED) embed[ops[i].phase]++;
  }
  /* the output layer's GEMM and the loss after it (test_loss) */
  assert_int_equal(logits[TS_PHASE_FWD], 2);
  assert_int_equal(logits[TS_PHASE_BWD], 2);
  assert_int_equal(embed[TS_PHASE_FWD], 1);
  assert_int_equal(embed[TS_PHASE_BWD], 1);
  free(ops);
  ts_workload_free(w);
}

/* The loss after the output layer is Megatron-LM's vocab-parallel
 * cross-entropy over the n = T V / t logits of a GPU, each pass at HBM
 * speed: forward cast to fp32 (2 + 4 bytes per logit), max (4), subtract
 * (4 + 4), exp (4 + 4), sum (4), divide (4 + 4) = 38 n in 6 kernels;
 * backward scale (4 + 4) and cast back (4 + 2) = 14 n in 2 kernels. Seed
 * (TP 8, T = 4096, V = 51200) on an A100 (2039 GB/s x 0.8): n = 26.2M,
 * forward 995.9 MB in 610.6 us + 6 us, backward 366.9 MB in 224.9 us + 2
 * us; the GEMM before it writes its logits in BF16 (2 n bytes). */
static void test_loss(void **st) {
  (void)st;
  ts_workload *w = load_text(seed_yaml);
  ts_gpu_model a100 = {"A100", 312e12, 0, 80000000000ull, 2039e9, 108};
  ts_op *ops;
  size_t n;
  assert_int_equal(ts_work_ops(w, &a100, 0, 0, &ops, &n), 0);
  double T = 4096, h = 8192, t = 8, V = 51200, nl = T * V / t;
  double bw = 2039e9 * 0.8;
  int seen[TS_PHASE_COUNT] = {0};
  for (size_t i = 0; i < n; i++) {
    if (ops[i].kind != TS_OP_LOGITS) continue;
    int bwd = ops[i].phase == TS_PHASE_BWD;
    assert_true(ops[i].phase == TS_PHASE_FWD || bwd);
    if (ops[i].flops > 0) { /* the GEMM: weights, input, BF16 logits */
      assert_true(fabs(ops[i].flops - (bwd ? 2 : 1) * 2 * T * h * V / t) < 1);
      assert_true(fabs(ops[i].bytes - (bwd ? 2 : 1) *
                                          (h * V / t * 2 + 2 * T * h + 2 * nl)) < 1);
    } else {
      double by = (bwd ? 14 : 38) * nl;
      assert_true(fabs(ops[i].bytes - by) < 1);
      double ps = (by / bw + (bwd ? 2 : 6) * 1e-6) * 1e12;
      assert_true(fabs((double)ops[i].time - ps) <= 1);
      /* after the GEMM forward, before it backward (the GEMM's backward
       * needs the loss gradient) */
      if (bwd) assert_true(i + 1 < n && ops[i + 1].kind == TS_OP_LOGITS);
      else assert_true(i > 0 && ops[i - 1].kind == TS_OP_LOGITS);
    }
    seen[ops[i].phase]++;
  }
  assert_int_equal(seen[TS_PHASE_FWD], 2);
  assert_int_equal(seen[TS_PHASE_BWD], 2);
  free(ops);
  ts_workload_free(w);
}

/* Causal attention computes s(s+1)/2 of the s^2 (query, key) pairs, so
 * Narayanan's attention term s/(6h) becomes (s+1)/(12h):
 *   full    72 B s l h^2 (1 + s/(6h)      + V/(12 l h))
 *   causal  72 B s l h^2 (1 + (s+1)/(12h) + V/(12 l h))
 * At 128K context (s 131072, h 8192: s/(6h) = 2.67) the attention is most of
 * the work and causal masking nearly halves the step. Sliding window W:
 * W(W+1)/2 + (s-W)W pairs; with full_attention_every k, layer l is global
 * when (l+1) % k == 0. FlashAttention's backward recomputes the scores once
 * (phase recompute, one attn_score op per layer), which is hardware, not
 * model, FLOPs. */
static void test_attention_mask(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: long\n"
      "model: {layers: 8, hidden: 8192, heads: 64, seq_len: 131072, "
      "vocab: 51200}\n"
      "training: {global_batch: 1, flash_attention: false}\n"
      "parallelism: {tp: 8, cp: 8}\n");
  double B = 1, s = 131072, l = 8, h = 8192, V = 51200;
  double base = 72 * B * s * l * h * h;
  double causal = base * (1 + (s + 1) / (12 * h) + V / (12 * l * h));
  double full = base * (1 + s / (6 * h) + V / (12 * l * h));
  assert_true(fabs(ts_work_step_flops(w) / causal - 1) < 0.01);
  tu_set(w, "attention", "full");
  assert_true(fabs(ts_work_step_flops(w) / full - 1) < 0.01);
  /* layer 0 attn_score on one GPU: 2 b pairs/cp q/t */
  tu_set(w, "attention", "causal");
  tu_set(w, "sliding_window", "4096");
  tu_set(w, "full_attention_every", "2");
  ts_op *ops;
  size_t n;
  assert_int_equal(ts_work_ops(w, NULL, 0, 0, &ops, &n), 0);
  double win = 4096.0 * 4097 / 2 + (s - 4096) * 4096, glob = s * (s + 1) / 2;
  double want[2] = {2 * win / 8 * h / 8, 2 * glob / 8 * h / 8};
  int seen = 0, rec = 0;
  for (size_t i = 0; i < n; i++) {
    if (ops[i].kind != TS_OP_ATTN_SCORE || ops[i].layer > 1) continue;
    if (ops[i].phase == TS_PHASE_FWD) {
      assert_true(fabs(ops[i].flops / want[ops[i].layer] - 1) < 1e-12);
      seen++;
    }
    rec += ops[i].phase == TS_PHASE_RECOMPUTE;
  }
  assert_int_equal(seen, 2);
  assert_int_equal(rec, 0); /* unfused, no recompute */
  free(ops);
  tu_set(w, "flash_attention", "true");
  assert_int_equal(ts_work_ops(w, NULL, 0, 0, &ops, &n), 0);
  double fwd0 = 0, rec0 = 0;
  for (size_t i = 0; i < n; i++) {
    if (ops[i].layer != 0) continue;
    if (ops[i].phase == TS_PHASE_RECOMPUTE) {
      assert_int_equal(ops[i].kind, TS_OP_ATTN_SCORE);
      rec0 += ops[i].flops;
      rec++;
    }
    if (ops[i].phase == TS_PHASE_FWD && ops[i].kind == TS_OP_ATTN_SCORE)
      fwd0 = ops[i].flops;
  }
  assert_int_equal(rec, 1); /* one score recompute in layer 0 */
  assert_true(fabs(rec0 - fwd0) < 1);
  /* model FLOPs leave the kernel's recompute out */
  assert_true(ts_work_step_flops(w) > ts_work_step_model_flops(w) * 1.01);
  free(ops);
  /* a window needs the causal mask */
  tu_set(w, "attention", "full");
  ts_topo *t = tu_load("topologies/dgx-a100.yaml");
  char msg[800];
  tu_set(w, "cp", "1");
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_non_null(strstr(msg, "sliding_window = 4096 needs attention: causal"));
  ts_topo_free(t);
  ts_workload_free(w);
}

/* Roofline of layer 0 forward of the seed model on an A100 (312 TFLOP/s,
 * 2039 GB/s, 108 SMs; efficiencies gemm 0.7, attention 0.5, memory 0.8),
 * T = 4096 tokens, h = 8192, t = 8, f = 4h (FLOPs, bytes as in
 * work_compute.c). GEMMs lose their tile and wave quantization (256 x 128
 * tiles on 108 SMs, work_eff.c): qkv M = T, N = 3h/t = 3072: 16 x 24 = 384
 * tiles in 4 waves of 108, 384/432 = 0.8889; attn_out and mlp_down N = h:
 * 1024 tiles in 10 waves, 0.9481; mlp_up N = f/t = 4096: 512 tiles in 5
 * waves, 0.9481. Every kernel adds a 1 us launch gap; a GEMM's epilogue
 * writes its M x N BF16 output after the FLOPs (2 M N / (2039e9 * 0.8)).
 * Backward GEMMs run the data gradient (M x K outputs) and the weight
 * gradient (K x N), each at its own shape, harmonic mean of the two:
 *   qkv      K = h:    4096 x 8192 1024 tiles 10 waves 0.9481;
 *                      8192 x 3072  768 tiles  8 waves 768/864 = 0.8889
 *   attn_out K = h/t:  4096 x 1024  128 tiles  2 waves 128/216 = 0.5926;
 *                      1024 x 8192  256 tiles  3 waves 256/324 = 0.7901
 *   mlp_up   K = h:    4096 x 8192 and 8192 x 4096, 1024 tiles: 0.9481
 *   mlp_down K = f/t:  4096 x 4096  512 tiles  5 waves 0.9481;
 *                      4096 x 8192 1024 tiles: 0.9481
 *   layernorm    10Th          8Th                      memory-bound 165.56 us
 *   qkv          2Th(3h)/t     3h^2/t*2 + 2Th + 2T3h/t  1062.94 + 15.43 us
 *   attn_score   2TTh/t        2(Th/t + Th/t)           221.25 us
 *   attn_value   2TTh/t        same                     221.25 us
 *   attn_out     2Thh/t        h^2/t*2 + 2Th/t + 2Th    332.86 + 41.14 us
 *   elementwise  2Th           12Th                     247.84 us
 *   mlp_up       2Thf/t        hf/t*2 + 2Th + 2Tf/t     1328.43 + 20.57 us
 *   mlp_act      8Tf/t         2*2Tf/t                  42.14 us
 *   mlp_down     2Tfh/t        hf/t*2 + 2Tf/t + 2Th     1328.43 + 41.14 us
 * time per op = max(FLOPs/(312e12*eff*shape) + epilogue, bytes/(2039e9*0.8))
 * + 1 us. */
static void test_roofline_layer(void **st) {
  (void)st;
  ts_workload *w = load_text(seed_yaml);
  tu_set(w, "attention", "full");
  /* no dropout: attention at 0.5 exactly (its cost: test_causal_attention_blocks) */
  tu_set(w, "dropout", "false");
  ts_gpu_model a100 = {"A100", 312e12, 0, 80000000000ull, 2039e9, 108};
  ts_op *ops;
  size_t n;
  assert_int_equal(ts_work_ops(w, &a100, 0, 0, &ops, &n), 0);
  double T = 4096, h = 8192, t = 8, f = 4 * h;
  const double w4 = 384.0 / 432, w10 = 1024.0 / 1080; /* wave quantization */
  const double w8 = 768.0 / 864, w2 = 128.0 / 216, w3 = 256.0 / 324;
#define HM(a, b) (2.0 / (1.0 / (a) + 1.0 / (b))) /* backward: dX and dW */
  /* out: GEMM M x N outputs; in: the backward's extra output bytes over
   * twice the forward's, (M + N) K - 2 M N (data + weight gradients);
   * beff: the backward's efficiency */
  struct { ts_op_kind k; double fl, by, eff, out, in, beff; } want[] = {
      {TS_OP_LAYERNORM, 10 * T * h, 8 * T * h, 0.7, 0, 0, 0.7},
      {TS_OP_QKV, 2 * T * h * 3 * h / t,
       3 * h * h / t * 2 + 2 * T * h + 2 * T * 3 * h / t, 0.7 * w4,
       T * 3 * h / t, (T + 3 * h / t) * h - 2 * T * 3 * h / t,
       0.7 * HM(w10, w8)},
      {TS_OP_ATTN_SCORE, 2 * T * T * h / t, 2 * (T * h / t + T * h / t), 0.5,
       0, 0, 0.5},
      {TS_OP_ATTN_VALUE, 2 * T * T * h / t, 2 * (T * h / t + T * h / t), 0.5,
       0, 0, 0.5},
      {TS_OP_ATTN_OUT, 2 * T * h * h / t, h * h / t * 2 + 2 * T * h / t + 2 * T * h,
       0.7 * w10, T * h, (T + h) * h / t - 2 * T * h, 0.7 * HM(w2, w3)},
      {TS_OP_ELEMENTWISE, 2 * T * h, 12 * T * h, 0.7, 0, 0, 0.7},
      {TS_OP_MLP_UP, 2 * T * h * f / t, h * f / t * 2 + 2 * T * h + 2 * T * f / t,
       0.7 * w10, T * f / t, (T + f / t) * h - 2 * T * f / t, 0.7 * w10},
      {TS_OP_MLP_ACT, 8 * T * f / t, 2 * T * f * 2 / t, 0.7, 0, 0, 0.7},
      {TS_OP_MLP_DOWN, 2 * T * f * h / t,
       h * f / t * 2 + 2 * T * f / t + 2 * T * h, 0.7 * w10, T * h,
       (T + h) * f / t - 2 * T * h, 0.7 * w10},
  };
#undef HM
  const double bw = 2039e9 * 0.8;
  size_t i = 0, k = 0;
  while (i < n && !(ops[i].layer == 0 && ops[i].phase == TS_PHASE_FWD)) i++;
  double sum = 0, want_sum = 0;
  for (; k < sizeof want / sizeof want[0]; k++, i++) {
    assert_int_equal(ops[i].kind, want[k].k);
    assert_true(fabs(ops[i].flops - want[k].fl) < 1);
    assert_true(fabs(ops[i].bytes - want[k].by) < 1);
    double tc = want[k].fl / (312e12 * want[k].eff) + 2 * want[k].out / bw;
    double tm = want[k].by / bw;
    double ps = (tc > tm ? tc : tm) * 1e12 + 1e6; /* + 1 us launch gap */
    assert_true(fabs((double)ops[i].time - ps) <= 1);
    sum += (double)ops[i].time;
    want_sum += ps;
  }
  /* 5.069 ms for the forward of one layer */
  assert_true(fabs(sum - want_sum) < 10);
  assert_true(fabs(sum / 1e9 - 5.069) < 0.001);
  /* backward: twice the FLOPs and bytes at the backward efficiency, the
   * epilogues write the data and weight gradients (2 (M + N) K bytes =
   * 2 in + 4 out), two kernels (two launch gaps) */
  k = 0;
  for (size_t j = 0; j < n; j++) {
    if (ops[j].layer != 0 || ops[j].phase != TS_PHASE_BWD) continue;
    assert_true(k < sizeof want / sizeof want[0]);
    assert_int_equal(ops[j].kind, want[k].k);
    double tc = 2 * want[k].fl / (312e12 * want[k].beff) +
                (2 * want[k].in + 4 * want[k].out) / bw;
    double tm = 2 * want[k].by / bw;
    double ps = (tc > tm ? tc : tm) * 1e12 + 2e6;
    assert_true(fabs((double)ops[j].time - ps) <= 1);
    k++;
  }
  assert_int_equal(k, sizeof want / sizeof want[0]);
  assert_int_equal(ops[n - 1].kind, TS_OP_OPTIMIZER);
  assert_int_equal(ops[n - 1].phase, TS_PHASE_STEP);
  free(ops);
  /* dropout (Megatron-LM's default) writes its two 1-byte residual masks
   * forward and reads them back: elementwise bytes 12 -> 14 T h, 2 T h
   * FLOPs, memory-bound: 14 T h / bw + 1 us */
  tu_set(w, "dropout", "true");
  assert_int_equal(ts_work_ops(w, &a100, 0, 0, &ops, &n), 0);
  size_t e = 0;
  while (e < n && !(ops[e].kind == TS_OP_ELEMENTWISE && ops[e].layer == 0 &&
                    ops[e].phase == TS_PHASE_FWD))
    e++;
  assert_true(e < n);
  assert_true(fabs(ops[e].bytes - 14 * T * h) < 1);
  assert_true(fabs((double)ops[e].time - (14 * T * h / bw * 1e12 + 1e6)) <= 1);
  free(ops);
  /* rotary embeddings: right after the QKV GEMM an elementwise op reads
   * and writes Q and K (2 bytes each, q = k = h / t per GPU): 4 T (q + k)
   * / t = 32 MiB forward, twice that backward (one more launch gap), no
   * FLOPs; learned positions (the default) have no such op */
  tu_set(w, "position_embedding", "rope");
  assert_int_equal(ts_work_ops(w, &a100, 0, 0, &ops, &n), 0);
  int rot = 0;
  for (size_t j = 0; j + 1 < n; j++) {
    if (ops[j].layer != 0 || ops[j].kind != TS_OP_QKV) continue;
    if (ops[j].phase != TS_PHASE_FWD && ops[j].phase != TS_PHASE_BWD) continue;
    double mb = ops[j].phase == TS_PHASE_BWD ? 2 : 1;
    const ts_op *r = &ops[j + 1];
    assert_int_equal(r->kind, TS_OP_ELEMENTWISE);
    assert_true(r->flops == 0);
    assert_true(fabs(r->bytes - mb * 4 * T * 2 * h / t) < 1);
    assert_true(fabs((double)r->time - (mb * 4 * T * 2 * h / t / bw * 1e12 +
                                        mb * 1e6)) <= 1);
    rot++;
  }
  assert_int_equal(rot, 2); /* forward and backward */
  free(ops);
  ts_workload_free(w);
}

/* FP8 casts (work_eff.c) around the QKV GEMM of layer 0 of the seed model
 * in FP8 on an H100 (989 / 1979 TFLOP/s, 3.35 TB/s, 132 SMs), T = 4096,
 * h = 8192, t = 8: M = 4096, N = 3h/t = 3072, K = h. 16 x 24 = 384 tiles
 * in 3 waves of 132: shape 384/396; FP8 GEMMs at 0.875 of the BF16
 * efficiency 0.7. Forward: GEMM + epilogue 2 M N, then the cast-transpose
 * of the input (4 M K bytes) and 3 amax histories of 1024 fp32 read and
 * written (3 x 8 KiB), one launch each: 2 us. Backward: twice the FLOPs
 * and bytes, epilogues 2 (M + N) K, the cast of the output gradient
 * (4 M N) and 2 histories, 3 launches; its GEMMs at their own shapes: data
 * gradient 4096 x 8192, 16 x 64 = 1024 tiles in 8 waves (1024/1056),
 * weight gradient 8192 x 3072, 32 x 24 = 768 tiles in 6 waves (768/792),
 * harmonic mean of the two. The optimizer's pass adds the
 * weights' cast, 4 bytes per local weight: with dp = 1 its 30 bytes per
 * parameter are the whole stage, so FP8 adds 4/30 of the BF16 bytes. */
static void test_fp8_cast_roofline(void **st) {
  (void)st;
  ts_gpu_model h100 = {"H100", 989e12, 1979e12, 80000000000ull, 3.35e12, 132};
  ts_workload *w = load_text(seed_yaml);
  tu_set(w, "attention", "full");
  ts_op *bf, *f8;
  size_t nb, n8;
  assert_int_equal(ts_work_ops(w, &h100, 0, 0, &bf, &nb), 0);
  tu_set(w, "dtype", "fp8");
  assert_int_equal(ts_work_ops(w, &h100, 0, 0, &f8, &n8), 0);
  assert_int_equal(nb, n8);
  double T = 4096, h = 8192, t = 8, M = T, N = 3 * h / t, K = h;
  double bw = 3.35e12 * 0.8, eff = 0.7 * 384.0 / 396 * 0.875;
  double fl = 2 * T * h * 3 * h / t;
  double by = 3 * h * h / t + 2 * T * h + 2 * T * 3 * h / t;
  double hist = 1024.0 * 4 * 2;
  int seen = 0;
  for (size_t i = 0; i < n8; i++) {
    if (f8[i].layer != 0 || f8[i].kind != TS_OP_QKV) continue;
    int bwd = f8[i].phase == TS_PHASE_BWD;
    if (f8[i].phase != TS_PHASE_FWD && !bwd) continue;
    double m = bwd ? 2 : 1;
    double epi = 2 * (bwd ? (M + N) * K : M * N);
    double e = bwd ? 0.7 * 0.875 * 2 / (1056.0 / 1024 + 792.0 / 768) : eff;
    double tc = m * fl / (1979e12 * e) + epi / bw, tm = m * by / bw;
    double cast = bwd ? 4 * M * N + 2 * hist : 4 * M * K + 3 * hist;
    double want = (tc > tm ? tc : tm) + cast / bw + (bwd ? 3 : 2) * 1e-6;
    assert_true(fabs((double)f8[i].time - want * 1e12) <= 2);
    seen++;
  }
  assert_int_equal(seen, 2); /* forward and backward */
  /* the output layer stays BF16 in an FP8 model (Megatron-LM's
   * output_layer is no Transformer Engine module): logits M = T, N = V/t
   * = 6400, K = h, 16 x 50 = 800 tiles in 7 waves of 132 (800/924), at
   * 0.7 of the BF16 peak, BF16 weights, no casts; the same op as in the
   * BF16 model */
  double V = 51200, ln = V / t, lfl = 2 * T * h * ln;
  double lby = h * ln * 2 + 2 * T * h + 2 * T * ln;
  double ltc = lfl / (989e12 * 0.7 * 800.0 / 924) + 2 * T * ln / bw;
  double lwant = ((ltc > lby / bw ? ltc : lby / bw) + 1e-6) * 1e12;
  seen = 0;
  for (size_t i = 0; i < n8; i++) {
    if (f8[i].kind != TS_OP_LOGITS) continue;
    assert_int_equal(bf[i].kind, TS_OP_LOGITS);
    assert_true(f8[i].time == bf[i].time && f8[i].bytes == bf[i].bytes);
    if (f8[i].flops == 0) continue; /* the loss after it: test_loss */
    if (f8[i].phase == TS_PHASE_FWD) {
      assert_true(fabs(f8[i].bytes - lby) < 1);
      assert_true(fabs((double)f8[i].time - lwant) <= 2);
    }
    seen++;
  }
  assert_int_equal(seen, 2); /* forward and backward */
  assert_int_equal(f8[n8 - 1].kind, TS_OP_OPTIMIZER);
  assert_true(fabs(f8[n8 - 1].bytes - bf[nb - 1].bytes * (1 + 4.0 / 30)) <
              1e-9 * bf[nb - 1].bytes);
  free(bf);
  free(f8);
  ts_workload_free(w);
}

/* Causal attention blocks (work_eff.c): the seed model (s = 4096, h = 8192,
 * t = 8, b = 1) on an A100. The causal score op counts s(s+1)/2 pairs,
 * 2 * b * s(s+1)/2 * h / t FLOPs, and runs the (s/128)(s/128 + 1)/2 = 528
 * blocks of 128 x 128 pairs FlashAttention computes: at the attention
 * efficiency 0.5 times (s + 1) / (s + 128) = 4097 / 4224 = 0.96993, plus
 * the 1 us launch gap (compute-bound: bytes 2(Th/t + Th/t) = 16 MiB take
 * 10 us at 0.8 x 2039 GB/s against 1.1 ms of FLOPs). Full attention (no
 * mask) keeps 0.5; a sliding window keeps 0.5 too. Dropout (the seed's
 * default, Megatron-LM's 0.1) costs the fused kernel 0.020 ms of 0.594
 * (TransformerEngine#3312): efficiency / (1 + 0.020 / 0.594) = / 1.03367;
 * `dropout: false` leaves it. */
static void test_causal_attention_blocks(void **st) {
  (void)st;
  ts_gpu_model a100 = {"A100", 312e12, 0, 80000000000ull, 2039e9, 108};
  ts_workload *w = load_text(seed_yaml);
  double s = 4096, h = 8192, t = 8;
  const char *mode[] = {"causal", "full", "causal"};
  for (int i = 0; i < 3; i++) {
    tu_set(w, "attention", mode[i]);
    tu_set(w, "dropout", i == 2 ? "false" : "true");
    ts_op *ops;
    size_t n;
    assert_int_equal(ts_work_ops(w, &a100, 0, 0, &ops, &n), 0);
    double pairs = i != 1 ? s * (s + 1) / 2 : s * s;
    double eff = 0.5 * (i != 1 ? 4097.0 / 4224 : 1.0) /
                 (i == 2 ? 1.0 : 1 + 0.020 / 0.594);
    double fl = 2 * pairs * h / t;
    size_t k = 0;
    while (k < n && !(ops[k].kind == TS_OP_ATTN_SCORE && ops[k].layer == 0 &&
                      ops[k].phase == TS_PHASE_FWD))
      k++;
    assert_true(k < n);
    assert_true(fabs(ops[k].flops - fl) < 1);
    double want = (fl / (312e12 * eff) + 1e-6) * 1e12;
    assert_true(fabs((double)ops[k].time - want) <= 1);
    free(ops);
  }
  ts_workload_free(w);
}

/* MoE, 64-way EP over 8 DGX nodes of the 1-SU SuperPOD (first 64 GPUs),
 * 256 experts, top-8, uniform routing. Unlimited: each token sends 8 pairs,
 * 7/8 of them off-node: 7 copies of h*2 bytes. Node-limited M = 4, deduped
 * per node: D = 8*(1 - (7/8)^8) = 5.2511 distinct nodes expected, own node
 * hit with 1 - (7/8)^8 = 0.6564: min(D, 4) - 0.6564 = 3.3436 copies, so
 * cross-node bytes fall to 3.3436/7 = 0.47766 of unlimited. */
static void test_moe_node_limited(void **st) {
  (void)st;
  ts_workload *w = load_text(
      "topsim: 1\nname: moe\n"
      "model: {layers: 2, hidden: 1024, heads: 8, seq_len: 1024, vocab: 32000,\n"
      "        experts: 256, top_k: 8, expert_ffn_hidden: 512}\n"
      "training: {global_batch: 64}\n"
      "parallelism: {dp: 64, ep: 64, gpus: 64}\n");
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_mapping *m = map_ok(w, t);
  assert_int_equal(ts_mapping_group_size(m, TS_GROUP_EP), 64);
  assert_int_equal(ts_mapping_group_size(m, TS_GROUP_EXPERT_GRAD), 1);
  ts_comm_desc *c;
  size_t n;
  ts_comm_volume free_v, lim_v;
  assert_int_equal(ts_work_comm(w, m, 0, &c, &n), 0);
  ts_work_comm_volume(c, n, &free_v);
  /* dispatch of one layer forward: 1024 tokens * 8 * 2048 B, 63/64 leave the
   * GPU, 56/64 the node */
  assert_int_equal(c[0].kind, TS_COLL_ALL_TO_ALL);
  assert_int_equal(c[0].bytes, 1024ull * 8 * 2048);
  assert_int_equal(c[0].sent, 1024ull * 8 * 2048 * 63 / 64);
  assert_int_equal(c[0].sent_cross_node, 1024ull * 8 * 2048 * 56 / 64);
  free(c);
  ts_mapping_free(m);
  tu_set(w, "node_limited_routing", "4");
  m = map_ok(w, t);
  assert_int_equal(ts_work_comm(w, m, 0, &c, &n), 0);
  ts_work_comm_volume(c, n, &lim_v);
  free(c);
  uint64_t ep_free = free_v.cross_node[TS_GROUP_EP];
  uint64_t ep_lim = lim_v.cross_node[TS_GROUP_EP];
  assert_true(ep_lim < ep_free);
  assert_true(fabs((double)ep_lim / (double)ep_free - 0.477658) < 1e-4);
  /* skew: Zipf exponent 1 makes EP rank 0 (experts 0-3) the hot one */
  tu_set(w, "routing_skew", "1");
  ts_op *o0, *o63;
  size_t n0, n63;
  assert_int_equal(ts_work_ops(w, NULL, 0, 0, &o0, &n0), 0);
  assert_int_equal(ts_work_ops(w, NULL, 0, 63, &o63, &n63), 0);
  assert_int_equal(n0, n63);
  for (size_t i = 0; i < n0; i++)
    if (o0[i].kind == TS_OP_EXPERT_UP) assert_true(o0[i].flops > 10 * o63[i].flops);
  free(o0);
  free(o63);
  ts_mapping_free(m);
  ts_topo_free(t);
  ts_workload_free(w);
}

static void test_overrides(void **st) {
  (void)st;
  ts_workload *w = load_text(label_yaml);
  ts_diag d;
  assert_int_equal(ts_workload_parallel(w, TS_GROUP_TP), 8);
  const char *kv[] = {"tp=4", "parallelism.dp=10", "global_batch=80"};
  ts_diag_clear(&d);
  assert_int_equal(ts_workload_override_list(w, kv, 3, &d), 0);
  assert_int_equal(ts_workload_parallel(w, TS_GROUP_TP), 4);
  assert_int_equal(ts_workload_parallel(w, TS_GROUP_DP), 10);
  assert_int_equal(ts_workload_microbatches(w), 8);
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_mapping *m = map_ok(w, t);
  assert_int_equal(ts_mapping_group_size(m, TS_GROUP_TP), 4);
  ts_mapping_free(m);
  ts_topo_free(t);
  /* bad overrides leave the workload unchanged */
  ts_diag_clear(&d);
  assert_int_equal(ts_workload_override(w, "tp", "0", &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "out of range"));
  assert_int_equal(ts_workload_override(w, "tp", "eight", &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "whole number"));
  assert_int_equal(ts_workload_override(w, "nope", "1", &d), TS_ESCHEMA);
  assert_string_equal(d.msg, "unknown workload key 'nope'");
  assert_int_equal(ts_workload_override(w, "schedule", "zigzag", &d), TS_ESCHEMA);
  assert_string_equal(d.msg, "'schedule' = 'zigzag' is not one of: gpipe, 1f1b, "
                             "interleaved, dualpipe");
  assert_int_equal(ts_workload_override(w, "dp_bucket_size", "25", &d),
                   TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "has no unit"));
  assert_int_equal(ts_workload_override(w, "order", "tp-dp-pp", &d), TS_ESCHEMA);
  assert_non_null(strstr(d.msg, "'cp' is missing"));
  const char *bad[] = {"tp"};
  assert_int_equal(ts_workload_override_list(w, bad, 1, &d), TS_ESCHEMA);
  assert_int_equal(ts_workload_parallel(w, TS_GROUP_TP), 4);
  char buf[900];
  ts_diag_format(&d, buf, sizeof buf);
  assert_string_equal(buf, "override: error: 'tp' is not key=value");
  tu_set(w, "dp_bucket_size", "64MiB");
  tu_set(w, "efficiency.gemm", "0.6");
  ts_workload_free(w);
}

/* Schema errors carry file:line:column of the offending token. */
static void test_load_errors(void **st) {
  (void)st;
  char msg[1200];
  assert_int_equal(load_err("topsim: 1\nname: x\nmodel: {layers: 2, hidden: 8, "
                            "heads: 2, seq_len: 8, vocab: 8, layerz: 3}\n"
                            "training: {global_batch: 1}\n", msg, sizeof msg),
                   TS_ESCHEMA);
  assert_non_null(strstr(msg, "w.yaml:3:63: error: unknown key 'layerz' in 'model'"));
  assert_int_equal(load_err("topsim: 1\nname: x\nmodel:\n  layers: many\n",
                            msg, sizeof msg), TS_ESCHEMA);
  assert_non_null(strstr(msg, "w.yaml:4:11: error: 'layers'"));
  assert_int_equal(load_err("topsim: 1\nname: x\nmodel: {layers: 2, hidden: 8, "
                            "heads: 2, seq_len: 8, vocab: 8}\n"
                            "training: {global_batch: 1, dp_bucket_size: 25}\n",
                            msg, sizeof msg), TS_ESCHEMA);
  assert_non_null(strstr(msg, "w.yaml:4:45: error: 'dp_bucket_size' = 25 has no unit"));
  assert_int_equal(load_err("topsim: 1\nname: x\nmodel: {layers: 2, hidden: 8, "
                            "heads: 2, vocab: 8}\ntraining: {global_batch: 1}\n",
                            msg, sizeof msg), TS_ESCHEMA);
  assert_non_null(strstr(msg, "missing required key 'seq_len'"));
  assert_int_equal(load_err("topsim: 1\nname: x\nmodel: [1]\n", msg, sizeof msg),
                   TS_ESCHEMA);
  assert_non_null(strstr(msg, "w.yaml:3:8: error: 'model' must be a mapping"));
  assert_int_equal(load_err("topsim: 1\nname: x\nmodel: {}\ntraining: {}\n"
                            "parallelism: {order: tp-tp-dp-pp}\n", msg, sizeof msg),
                   TS_ESCHEMA);
  assert_non_null(strstr(msg, "'tp' appears twice"));
  assert_int_equal(load_err("topsim: 1\nname: x\nmodel: {experts: 8}\n"
                            "training: {schedule: 1F1B}\n", msg, sizeof msg),
                   TS_ESCHEMA);
  assert_non_null(strstr(msg, "w.yaml:4:22: error: 'schedule' = '1F1B' is not one of"));
}

/* A placement list overrides topology order: ranks in reverse. */
static void test_placement(void **st) {
  (void)st;
  ts_topo *t = tu_load("topologies/dgx-a100.yaml");
  const uint32_t *g;
  uint32_t ng = ts_topo_gpus(t, &g);
  char path[] = "/tmp/topsim-placement-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  for (uint32_t i = ng; i-- > 0;) fprintf(f, "- %s\n", ts_topo_node_name(t, g[i]));
  fclose(f);
  ts_workload *w = load_text(
      "topsim: 1\nname: p\n"
      "model: {layers: 2, hidden: 1024, heads: 8, seq_len: 1024, vocab: 100}\n"
      "training: {global_batch: 8}\nparallelism: {dp: 8}\n");
  tu_set(w, "placement", path);
  ts_mapping *m = map_ok(w, t);
  for (uint32_t r = 0; r < 8; r++)
    assert_int_equal(ts_mapping_rank(m, r)->gpu, g[7 - r]);
  ts_mapping_free(m);
  f = fopen(path, "w");
  fprintf(f, "- %s\n- %s\n", ts_topo_node_name(t, g[0]), ts_topo_node_name(t, g[0]));
  fclose(f);
  tu_set(w, "placement", path);
  tu_set(w, "dp", "2");
  tu_set(w, "global_batch", "2");
  char msg[800];
  assert_int_equal(map_err(w, t, msg, sizeof msg), TS_EINVALID);
  assert_non_null(strstr(msg, "is given to two ranks"));
  unlink(path);
  ts_workload_free(w);
  ts_topo_free(t);
}

/* Same input, same labels and descriptors, byte for byte. */
static void test_determinism(void **st) {
  (void)st;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  ts_comm_desc *c[2];
  size_t n[2];
  ts_rank_label lab[2][160];
  for (int k = 0; k < 2; k++) {
    ts_workload *w = load_text(label_yaml);
    tu_set(w, "sequence_parallel", "true");
    tu_set(w, "zero_stage", "1");
    ts_mapping *m = map_ok(w, t);
    memcpy(lab[k], ts_mapping_rank(m, 0), sizeof lab[k]);
    assert_int_equal(ts_work_comm(w, m, 77, &c[k], &n[k]), 0);
    ts_mapping_free(m);
    ts_workload_free(w);
  }
  assert_int_equal(n[0], n[1]);
  assert_memory_equal(c[0], c[1], n[0] * sizeof *c[0]);
  assert_memory_equal(lab[0], lab[1], sizeof lab[0]);
  free(c[0]);
  free(c[1]);
  ts_topo_free(t);
}

/* Every example names its topology and maps onto it without warnings. */
static void test_examples(void **st) {
  (void)st;
  DIR *dir = opendir(tu_path("examples"));
  assert_non_null(dir);
  struct dirent *e;
  int seen = 0;
  while ((e = readdir(dir))) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml")) continue;
    char rel[512];
    snprintf(rel, sizeof rel, "examples/%s", e->d_name);
    ts_workload *w = NULL;
    ts_diag d;
    ts_diag_clear(&d);
    int rc = ts_workload_load_file(tu_path(rel), &w, &d);
    if (rc) print_error("%s: %s\n", rel, d.msg);
    assert_int_equal(rc, 0);
    assert_non_null(ts_workload_topology(w));
    ts_topo *t = NULL;
    assert_int_equal(ts_topo_load_file(ts_workload_topology(w), &t, &d), 0);
    ts_mapping *m = map_ok(w, t);
    assert_int_equal(ts_mapping_warning_count(m), 0);
    ts_comm_desc *c;
    size_t n;
    assert_int_equal(ts_work_comm(w, m, ts_mapping_ranks(m) - 1, &c, &n), 0);
    assert_true(n > 0);
    free(c);
    ts_mapping_free(m);
    ts_topo_free(t);
    ts_workload_free(w);
    seen++;
  }
  closedir(dir);
  assert_int_equal(seen, 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seed_tp_volume),
      cmocka_unit_test(test_comm_bytes_saturate),
      cmocka_unit_test(test_refuse_memory),
      cmocka_unit_test(test_activation_formula),
      cmocka_unit_test(test_mapping_labels),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_flops_megatron),
      cmocka_unit_test(test_selective_core_attention),
      cmocka_unit_test(test_flops_one_stage),
      cmocka_unit_test(test_loss),
      cmocka_unit_test(test_mla),
      cmocka_unit_test(test_cross_node_rings),
      cmocka_unit_test(test_moe_matrix),
      cmocka_unit_test(test_interleaved_uneven),
      cmocka_unit_test(test_host_layout_programs),
      cmocka_unit_test(test_dp_modes),
      cmocka_unit_test(test_korthikanti),
      cmocka_unit_test(test_distributed_optimizer_bytes),
      cmocka_unit_test(test_attention_mask),
      cmocka_unit_test(test_roofline_layer),
      cmocka_unit_test(test_fp8_cast_roofline),
      cmocka_unit_test(test_causal_attention_blocks),
      cmocka_unit_test(test_moe_node_limited),
      cmocka_unit_test(test_overrides),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_placement),
      cmocka_unit_test(test_determinism),
      cmocka_unit_test(test_examples),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
