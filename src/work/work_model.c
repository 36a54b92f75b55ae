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
  /* fsdp/hsdp shard the states like ZeRO-1 (unsharded weights and a local
   * gradient accumulator live through the step, Llama 3's choice) */
  if (c->dp_mode != WORK_DP_ZERO) c->zero_stage = 1;
  if (c->dp_mode != WORK_DP_HSDP || !c->shard_group)
    c->shard_group = c->dp * c->cp;
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
  if (c->schedule == WORK_DUALPIPE) return 2;
  return c->schedule == WORK_INTERLEAVED ? c->virtual_stages : 1;
}

uint32_t work_positions(const work_cfg *c) {
  return c->schedule == WORK_DUALPIPE ? c->pp : c->pp * work_chunks(c);
}

uint32_t work_chunk_pos(const work_cfg *c, uint32_t stage, uint32_t chunk) {
  if (c->schedule == WORK_DUALPIPE) return chunk ? c->pp - 1 - stage : stage;
  return chunk * c->pp + stage;
}

bool work_chunk_peer(const work_cfg *c, uint32_t stage, uint32_t chunk,
                     uint32_t dir, uint32_t *peer, uint32_t *peer_chunk) {
  uint32_t pos = work_chunk_pos(c, stage, chunk), P = work_positions(c);
  if (dir == 0 ? pos + 1 >= P : pos == 0) return false;
  uint32_t to = dir == 0 ? pos + 1 : pos - 1;
  if (c->schedule == WORK_DUALPIPE) {
    *peer = chunk ? c->pp - 1 - to : to;
    *peer_chunk = chunk;
  } else {
    *peer = to % c->pp;
    *peer_chunk = to / c->pp;
  }
  return true;
}

uint32_t work_chunk_microbatches(const work_cfg *c) {
  uint32_t m = work_microbatches(c);
  return c->schedule == WORK_DUALPIPE ? m / 2 : m;
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

/* Layers in model chunk `chunk` of stage `stage`. Stages other than a
 * first/last stage with its own count split the rest evenly; a stage's
 * layers split over its v chunks as evenly as possible, the first stage
 * putting the shorter chunks first (the embedding sits in chunk 0) and the
 * last stage last (the output layer sits in chunk v-1): Llama 3 405B's
 * 126 layers on 16 stages with first = last = 7 leave one layer out of the
 * first and the last virtual stage. */
static uint32_t chunk_count(const work_cfg *c, uint32_t stage, uint32_t chunk) {
  uint32_t v = work_chunks(c), pp = c->pp;
  uint32_t f = c->first_stage_layers, l = pp > 1 ? c->last_stage_layers : 0;
  if (pp == 1) f = c->layers; /* one stage holds everything */
  else if (!f && !l) return c->layers / (pp * v);
  uint32_t n, rev = 0;
  if (stage == 0 && f) n = f, rev = 1;
  else if (stage == pp - 1 && l) n = l;
  else {
    uint32_t rest = pp - (f ? 1 : 0) - (l ? 1 : 0);
    n = rest ? (c->layers - f - l) / rest : 0;
  }
  uint32_t base = n / v, extra = n % v; /* `extra` chunks get one more */
  if (rev) return base + (chunk >= v - extra ? 1 : 0);
  return base + (chunk < extra ? 1 : 0);
}

void work_stage_layers(const work_cfg *c, uint32_t stage, uint32_t chunk,
                       uint32_t *first, uint32_t *count) {
  if (c->schedule == WORK_DUALPIPE) { /* the 1F1B split, by position */
    work_cfg one = *c;
    one.schedule = WORK_1F1B;
    work_stage_layers(&one, work_chunk_pos(c, stage, chunk), 0, first, count);
    return;
  }
  uint32_t pp = c->pp, g = chunk * pp + stage, at = 0;
  if (!c->first_stage_layers && !c->last_stage_layers) {
    uint32_t per = c->layers / (pp * work_chunks(c));
    *first = g * per;
    *count = per;
    return;
  }
  for (uint32_t k = 0; k < g; k++) at += chunk_count(c, k % pp, k / pp);
  *first = at;
  *count = chunk_count(c, stage, chunk);
}

double work_attn_pairs(const work_cfg *c, uint32_t layer) {
  double s = c->seq_len;
  if (c->attention == WORK_ATTN_FULL) return s * s;
  bool global = c->full_every && (layer + 1) % c->full_every == 0;
  double w = c->window;
  if (!w || global || w >= s) return s * (s + 1) / 2;
  /* query i sees keys max(0, i - W + 1) .. i: the first W see i + 1 */
  return w * (w + 1) / 2 + (s - w) * w;
}

void work_attn_dims(const work_cfg *c, work_attn *a) {
  double h = c->hidden, H = c->heads, dn = c->head_dim;
  if (!c->kv_lora) {
    double v = c->v_dim ? c->v_dim : dn;
    a->q = H * dn;
    a->k = (double)c->kv_heads * dn;
    a->v = H * v;
    a->proj_rep = 0;
    a->proj_split = h * (a->q + a->k + (double)c->kv_heads * v);
    a->latent = 0;
    return;
  }
  /* Multi-head Latent Attention (DeepSeek-V2/V3): queries through a
   * q_lora_rank bottleneck (or directly), keys and values through a
   * kv_lora_rank latent plus a shared rope key of rope_dim */
  double dr = c->rope_dim, dv = c->v_dim ? c->v_dim : dn;
  double ql = c->q_lora, kl = c->kv_lora;
  a->q = a->k = H * (dn + dr);
  a->v = H * dv;
  a->proj_rep = h * (ql + kl + dr) + ql + kl; /* down projections, norms */
  a->proj_split = (ql ? ql : h) * a->q + kl * H * (dn + dv);
  a->latent = ql + kl + dr;
}

void work_layer_params(const work_cfg *c, uint32_t layer, double *dense,
                       double *expert) {
  double h = c->hidden;
  double mats = c->activation == WORK_SWIGLU ? 3 : 2;
  work_attn a;
  work_attn_dims(c, &a);
  /* QKV (or MLA's projections), output projection, two norms */
  *dense = a.proj_rep + a.proj_split + a.v * h + 4 * h;
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

double work_state_shards(const work_cfg *c, bool expert) {
  if (c->zero_stage == 0) return 1;
  double g = (double)c->dp * c->cp / (expert ? c->ep : 1);
  /* HSDP: dense states over the shard group; expert states over theirs */
  return !expert && c->dp_mode == WORK_DP_HSDP ? c->shard_group : g;
}

void work_gib(uint64_t bytes, char *buf, size_t len) {
  snprintf(buf, len, "%.1f", (double)bytes / (double)(1ull << 30));
}

/* A refusal at the position of the key the user would change. */
#define FAIL(key, ...) work_fail_at(d, TS_EINVALID, w, key, __VA_ARGS__)

static int check_split(const ts_workload *w, const work_cfg *c, ts_diag *d) {
  uint32_t v = work_chunks(c), L = c->layers, pp = c->pp;
  if (v > 1 && c->schedule == WORK_INTERLEAVED) {
    uint32_t m = work_microbatches(c);
    if (pp > 1 && m % pp)
      return FAIL("global_batch", "interleaved schedule needs micro-batches "
                  "(%u) divisible by pp = %u (remainder %u)", m, pp, m % pp);
  }
  if (c->schedule == WORK_DUALPIPE) {
    uint32_t m = work_microbatches(c);
    if (pp % 2 || m < 2 * pp || m % 2)
      return FAIL("schedule", "dualpipe needs an even pp (%u) and an even "
                  "number of micro-batches (%u) of at least 2 * pp", pp, m);
    if (c->zero_stage >= 2)
      return FAIL("zero_stage", "dualpipe runs with ZeRO stage 0 or 1 here "
                  "(zero_stage = %u)", c->zero_stage);
    v = 1; /* each chunk is one stage of the 1F1B split */
  }
  uint32_t f = c->first_stage_layers, l = pp > 1 ? c->last_stage_layers : 0;
  if (!f && !l) {
    if (L % (pp * v) && v > 1)
      return FAIL("layers", "layers = %u is not divisible by pp * "
                  "virtual_stages = %u * %u = %u (remainder %u)", L, pp, v,
                  pp * v, L % (pp * v));
    if (L % pp)
      return FAIL("layers", "layers = %u is not divisible by pp = %u "
                  "(remainder %u)", L, pp, L % pp);
    return 0;
  }
  uint32_t rest = pp - (f ? 1 : 0) - (l ? 1 : 0);
  if ((uint64_t)f + l > L || (pp == 1 && f != L))
    return FAIL("first_stage_layers", "first_stage_layers + "
                "last_stage_layers = %u exceeds or misses layers = %u", f + l,
                L);
  if (rest == 0 ? f + l != L : (L - f - l) % (rest * v))
    return FAIL("first_stage_layers", "layers - first_stage_layers - "
                "last_stage_layers = %u is not divisible by the %u other "
                "stages x %u virtual stages (remainder %u)", L - f - l, rest,
                v, rest ? (L - f - l) % (rest * v) : L - f - l);
  return 0;
}

static int check_moe(const ts_workload *w, const work_cfg *c, ts_diag *d) {
  if (!c->experts) {
    if (c->ep > 1) return FAIL("ep", "ep = %u but the model has no experts", c->ep);
    return 0;
  }
  if (c->dp % c->ep)
    return FAIL("ep", "ep = %u must divide dp = %u (expert parallelism is carved "
                "out of data parallelism; remainder %u)", c->ep, c->dp,
                c->dp % c->ep);
  if (c->experts % c->ep)
    return FAIL("experts", "experts = %u is not divisible by ep = %u (remainder %u)",
                c->experts, c->ep, c->experts % c->ep);
  if (c->top_k > c->experts)
    return FAIL("top_k", "top_k = %u exceeds experts = %u", c->top_k, c->experts);
  if (c->first_dense > c->layers)
    return FAIL("first_dense_layers", "first_dense_layers = %u exceeds layers = %u", c->first_dense,
                c->layers);
  return 0;
}

/* Checks that need no topology; TS_EINVALID naming the constraint. */
int work_validate(const ts_workload *w, ts_diag *d) {
  work_cfg c;
  work_derive(w, &c);
  if (c.heads % c.tp)
    return FAIL("heads", "heads = %u is not divisible by tp = %u (remainder %u)",
                c.heads, c.tp, c.heads % c.tp);
  if (c.kv_heads % c.tp)
    return FAIL("kv_heads", "kv_heads = %u is not divisible by tp = %u (remainder %u)",
                c.kv_heads, c.tp, c.kv_heads % c.tp);
  if (c.kv_heads > c.heads || c.heads % c.kv_heads)
    return FAIL("kv_heads", "heads = %u is not a multiple of kv_heads = %u", c.heads,
                c.kv_heads);
  if (c.window && c.attention == WORK_ATTN_FULL)
    return FAIL("sliding_window", "sliding_window = %u needs attention: "
                "causal (a window over past tokens)", c.window);
  if (c.seq_len % c.cp)
    return FAIL("seq_len", "seq_len = %u is not divisible by cp = %u (remainder %u)",
                c.seq_len, c.cp, c.seq_len % c.cp);
  uint64_t per = (uint64_t)c.micro_batch * c.dp;
  if (c.global_batch % per)
    return FAIL("global_batch", "global_batch = %u is not divisible by micro_batch * dp = %u "
                "* %u = %llu (remainder %llu)", c.global_batch, c.micro_batch,
                c.dp, (unsigned long long)per,
                (unsigned long long)(c.global_batch % per));
  uint32_t grad = c.dp * c.cp;
  if (c.dp_mode == WORK_DP_HSDP && grad % c.shard_group)
    return FAIL("shard_group", "shard_group = %u must divide the gradient "
                "group dp * cp = %u (remainder %u)", c.shard_group, grad,
                grad % c.shard_group);
  if (c.dp_mode != WORK_DP_ZERO && w->cfg.zero_stage >= 2)
    return FAIL("dp_mode", "dp_mode %s reduces gradients once per step; "
                "zero_stage = %u asks for a reduce-scatter every micro-batch: "
                "set one",
                c.dp_mode == WORK_DP_FSDP ? "fsdp" : "hsdp", w->cfg.zero_stage);
  int rc = check_split(w, &c, d);
  return rc ? rc : check_moe(w, &c, d);
}

const char *ts_group_name(ts_group g) {
  static const char *const n[] = {"tp", "cp", "ep", "dp", "pp", "grad",
                                  "expert_grad", "shard", "replica"};
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
