/* work_model.c - model arithmetic shared by the work module: derived
 * defaults, the order string, the layer split across pipeline stages,
 * parameter counts, MoE routing shares and the layout checks that do not
 * need a topology.
 *
 * All O(1) except work_moe_rank_share, O(experts). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "work/work_int.h"

void work_derive(const ts_workload *w, work_cfg *c) {
  *c = w->cfg;
  if (!c->ffn_hidden) c->ffn_hidden = 4 * c->hidden;
  if (!c->kv_heads) c->kv_heads = c->heads;
  if (!c->head_dim) c->head_dim = c->heads ? c->hidden / c->heads : 0;
  if (!c->expert_ffn_hidden) c->expert_ffn_hidden = c->ffn_hidden;
  if (c->distributed_optimizer && c->zero_stage < 1) c->zero_stage = 1;
  if (c->schedule != WORK_INTERLEAVED) c->virtual_stages = 1;
  if (c->experts == 0) c->top_k = 0;
  if (!c->dp_bucket) {
    /* Megatron-LM DDP: max(40M, 1M * dp) parameters per bucket */
    uint64_t elems = 40000000u;
    if ((uint64_t)c->dp * 1000000u > elems) elems = (uint64_t)c->dp * 1000000u;
    c->dp_bucket = elems * (c->grad_dtype == WORK_GRAD_FP32 ? 4 : 2);
  }
}

static const char *const dim_names[WORK_D_COUNT] = {"tp", "cp", "ep", "dp",
                                                    "pp"};

int work_parse_order(const char *s, int perm[WORK_D_COUNT], char *why,
                     size_t len) {
  int seen[WORK_D_COUNT] = {0}, n = 0;
  const char *p = s;
  while (*p) {
    size_t tl = strcspn(p, "-");
    int d = -1;
    for (int i = 0; i < WORK_D_COUNT; i++)
      if (tl == 2 && strncmp(p, dim_names[i], 2) == 0) d = i;
    if (d < 0) {
      snprintf(why, len, "unknown dimension '%.*s': expected tp, cp, ep, dp, pp "
               "joined by '-'", (int)tl, p);
      return -1;
    }
    if (seen[d]++) {
      snprintf(why, len, "'%s' appears twice", dim_names[d]);
      return -1;
    }
    perm[n++] = d;
    p += tl;
    if (*p == '-' && !*++p) break;
  }
  for (int i = 0; i < WORK_D_COUNT; i++)
    if (!seen[i] && i != WORK_D_EP) {
      snprintf(why, len, "'%s' is missing: the order names tp, cp, dp and pp "
               "(ep optional), inner to outer", dim_names[i]);
      return -1;
    }
  if (!seen[WORK_D_EP]) { /* EP is carved out of DP: innermost part of it */
    int at = 0;
    while (perm[at] != WORK_D_EDP) at++;
    memmove(&perm[at + 1], &perm[at], (size_t)(n - at) * sizeof *perm);
    perm[at] = WORK_D_EP;
  }
  return 0;
}

uint32_t work_chunks(const work_cfg *c) {
  return c->schedule == WORK_INTERLEAVED ? c->virtual_stages : 1;
}

uint32_t work_dtype_bytes(const work_cfg *c) {
  (void)c;
  return 2; /* fp8 GEMMs still exchange bf16 activations (Transformer Engine) */
}

uint32_t work_microbatches(const work_cfg *c) {
  uint64_t per = (uint64_t)c->micro_batch * c->dp;
  return per ? (uint32_t)(c->global_batch / per) : 0;
}

bool work_layer_is_moe(const work_cfg *c, uint32_t layer) {
  if (!c->experts || layer < c->first_dense) return false;
  return (layer - c->first_dense) % c->moe_freq == 0;
}

void work_stage_layers(const work_cfg *c, uint32_t stage, uint32_t chunk,
                       uint32_t *first, uint32_t *count) {
  uint32_t v = work_chunks(c), pp = c->pp;
  if (v > 1 || (!c->first_stage_layers && !c->last_stage_layers)) {
    uint32_t per = c->layers / (pp * v);
    *first = (chunk * pp + stage) * per;
    *count = per;
    return;
  }
  uint32_t f = c->first_stage_layers, l = pp > 1 ? c->last_stage_layers : 0;
  uint32_t rest = pp - (f ? 1 : 0) - (l ? 1 : 0);
  uint32_t per = rest ? (c->layers - f - l) / rest : 0;
  if (stage == 0 && f) {
    *first = 0;
    *count = pp == 1 ? c->layers : f;
    return;
  }
  if (stage == pp - 1 && l) {
    *first = c->layers - l;
    *count = l;
    return;
  }
  *first = f + (stage - (f ? 1 : 0)) * per;
  *count = per;
}

void work_layer_params(const work_cfg *c, uint32_t layer, double *dense,
                       double *expert) {
  double h = c->hidden, q = (double)c->heads * c->head_dim;
  double kv = (double)c->kv_heads * c->head_dim;
  double mats = c->activation == WORK_SWIGLU ? 3 : 2;
  *dense = h * q + 2 * h * kv + q * h + 4 * h; /* QKV, out, two norms */
  *expert = 0;
  if (work_layer_is_moe(c, layer)) {
    double fe = c->expert_ffn_hidden;
    *dense += c->shared_experts * mats * h * fe + h * c->experts; /* router */
    *expert = c->experts * mats * h * fe;
  } else {
    *dense += mats * h * c->ffn_hidden;
  }
}

double work_moe_rank_share(const work_cfg *c, uint32_t ep_rank) {
  uint32_t E = c->experts, per = c->ep ? E / c->ep : 0;
  if (!E || !per) return 0;
  double norm = 0, share = 0, cap = c->capacity_factor / E;
  for (uint32_t e = 0; e < E; e++) norm += pow(e + 1.0, -c->routing_skew);
  for (uint32_t e = ep_rank * per; e < (ep_rank + 1) * per && e < E; e++) {
    double p = pow(e + 1.0, -c->routing_skew) / norm;
    share += c->capacity_factor > 0 && p > cap ? cap : p;
  }
  return share;
}

void work_gib(uint64_t bytes, char *buf, size_t len) {
  snprintf(buf, len, "%.1f", (double)bytes / (double)(1ull << 30));
}

#define FAIL(...) ts_diag_set(d, TS_EINVALID, w->file, 0, 0, __VA_ARGS__)

static int check_split(const ts_workload *w, const work_cfg *c, ts_diag *d) {
  uint32_t v = work_chunks(c), L = c->layers, pp = c->pp;
  if (v > 1) {
    if (c->first_stage_layers || c->last_stage_layers)
      return FAIL("first_stage_layers/last_stage_layers cannot be combined "
                  "with the interleaved schedule");
    if (L % (pp * v))
      return FAIL("layers = %u is not divisible by pp * virtual_stages = %u * "
                  "%u = %u (remainder %u)", L, pp, v, pp * v, L % (pp * v));
    uint32_t m = work_microbatches(c);
    if (pp > 1 && m % pp)
      return FAIL("interleaved schedule needs micro-batches (%u) divisible by "
                  "pp = %u (remainder %u)", m, pp, m % pp);
    return 0;
  }
  uint32_t f = c->first_stage_layers, l = pp > 1 ? c->last_stage_layers : 0;
  if (!f && !l) {
    if (L % pp)
      return FAIL("layers = %u is not divisible by pp = %u (remainder %u)", L,
                  pp, L % pp);
    return 0;
  }
  uint32_t rest = pp - (f ? 1 : 0) - (l ? 1 : 0);
  if ((uint64_t)f + l > L || (pp == 1 && f != L))
    return FAIL("first_stage_layers + last_stage_layers = %u exceeds or "
                "misses layers = %u", f + l, L);
  if (rest == 0 ? f + l != L : (L - f - l) % rest)
    return FAIL("layers - first_stage_layers - last_stage_layers = %u is not "
                "divisible by the %u other stages (remainder %u)", L - f - l,
                rest, rest ? (L - f - l) % rest : L - f - l);
  return 0;
}

static int check_moe(const ts_workload *w, const work_cfg *c, ts_diag *d) {
  if (!c->experts) {
    if (c->ep > 1) return FAIL("ep = %u but the model has no experts", c->ep);
    return 0;
  }
  if (c->dp % c->ep)
    return FAIL("ep = %u must divide dp = %u (expert parallelism is carved "
                "out of data parallelism; remainder %u)", c->ep, c->dp,
                c->dp % c->ep);
  if (c->experts % c->ep)
    return FAIL("experts = %u is not divisible by ep = %u (remainder %u)",
                c->experts, c->ep, c->experts % c->ep);
  if (c->top_k > c->experts)
    return FAIL("top_k = %u exceeds experts = %u", c->top_k, c->experts);
  if (c->first_dense > c->layers)
    return FAIL("first_dense_layers = %u exceeds layers = %u", c->first_dense,
                c->layers);
  return 0;
}

/* Checks that need no topology; TS_EINVALID naming the constraint. */
int work_validate(const ts_workload *w, ts_diag *d) {
  work_cfg c;
  work_derive(w, &c);
  if (c.heads % c.tp)
    return FAIL("heads = %u is not divisible by tp = %u (remainder %u)",
                c.heads, c.tp, c.heads % c.tp);
  if (c.kv_heads % c.tp)
    return FAIL("kv_heads = %u is not divisible by tp = %u (remainder %u)",
                c.kv_heads, c.tp, c.kv_heads % c.tp);
  if (c.kv_heads > c.heads || c.heads % c.kv_heads)
    return FAIL("heads = %u is not a multiple of kv_heads = %u", c.heads,
                c.kv_heads);
  if (c.seq_len % c.cp)
    return FAIL("seq_len = %u is not divisible by cp = %u (remainder %u)",
                c.seq_len, c.cp, c.seq_len % c.cp);
  uint64_t per = (uint64_t)c.micro_batch * c.dp;
  if (c.global_batch % per)
    return FAIL("global_batch = %u is not divisible by micro_batch * dp = %u "
                "* %u = %llu (remainder %llu)", c.global_batch, c.micro_batch,
                c.dp, (unsigned long long)per,
                (unsigned long long)(c.global_batch % per));
  int rc = check_split(w, &c, d);
  return rc ? rc : check_moe(w, &c, d);
}

const char *ts_group_name(ts_group g) {
  static const char *const n[] = {"tp", "cp", "ep", "dp", "pp", "grad",
                                  "expert_grad"};
  return (unsigned)g < TS_GROUP_COUNT ? n[g] : "?";
}

const char *ts_op_kind_name(ts_op_kind k) {
  static const char *const n[] = {
      "embed", "layernorm", "qkv", "attn_score", "attn_value", "attn_out",
      "mlp_up", "mlp_act", "mlp_down", "router", "expert_up", "expert_down",
      "elementwise", "logits", "optimizer"};
  return (unsigned)k < TS_OP_KIND_COUNT ? n[k] : "?";
}

const char *ts_phase_name(ts_phase p) {
  static const char *const n[] = {"fwd", "bwd", "recompute", "step"};
  return (unsigned)p < TS_PHASE_COUNT ? n[p] : "?";
}

int ts_work_validate(const ts_workload *w, ts_diag *d) {
  return work_validate(w, d);
}
