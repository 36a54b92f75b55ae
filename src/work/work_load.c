/* work_load.c - workload format v1: YAML -> ts_workload, and overrides.
 *
 * Grammar (docs/workload-format.md is the full reference):
 *
 *   topsim: 1                         format version (required)
 *   name: STRING                      (required)
 *   description: STRING
 *   topology: FILE                    relative to this file
 *   model:       {layers, hidden, heads, seq_len, vocab (required);
 *                 ffn_hidden, kv_heads, head_dim, dtype, activation,
 *                 position_embedding,
 *                 experts, top_k, expert_ffn_hidden, shared_experts,
 *                 capacity_factor, routing_skew, node_limited_routing,
 *                 moe_layer_frequency, first_dense_layers, attention,
 *                 sliding_window, full_attention_every}
 *   training:    {global_batch (required); micro_batch, schedule,
 *                 virtual_stages, first_stage_layers, last_stage_layers,
 *                 recompute, zero_stage, distributed_optimizer,
 *                 sequence_parallel, grad_dtype, dp_bucket_size,
 *                 dp_overlap, dp_param_overlap, tp_comm_overlap,
 *                 flash_attention, dp_mode, shard_group, dropout,
 *                 ep_comm_overlap, optimizer_moments, activation_cache,
 *                 recompute_moe_act, memory_check}
 *   parallelism: {tp, cp, pp, dp, ep, order, gpus, placement}
 *   efficiency:  {gemm, attention, memory}
 *
 * Every scalar key is described once in `fields` below; the same entry
 * drives file loading and ts_workload_override (which wraps "key=value" in
 * a one-pair mapping and runs the same getter), so the two cannot disagree.
 * Cost: O(keys x fields) per load, fields being ~45. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_schema.h"
#include "topo/topo_yaml.h"
#include "work/work_int.h"

typedef enum fkind { F_U32, F_REAL, F_BOOL, F_SIZE, F_ENUM, F_ORDER,
                     F_PLACEMENT } fkind;

typedef struct field {
  const char *section, *key;
  fkind kind;
  size_t off;
  uint32_t min, max;        /* F_U32 range */
  const char *const *names; /* F_ENUM: NULL-terminated choices */
  double lo, hi;            /* F_REAL range */
} field;

static const char *const dtypes[] = {"bf16", "fp8", NULL};
static const char *const acts[] = {"gelu", "swiglu", NULL};
static const char *const posembs[] = {"learned", "rope", NULL};
static const char *const scheds[] = {"gpipe", "1f1b", "interleaved",
                                     "dualpipe", NULL};
static const char *const recomps[] = {"none", "selective", "full", NULL};
static const char *const gdtypes[] = {"fp32", "bf16", NULL};
static const char *const masks[] = {"causal", "full", NULL};
static const char *const dpmodes[] = {"zero", "fsdp", "hsdp", NULL};
static const char *const memchecks[] = {"refuse", "warn", NULL};

#define U(s, k, m, lo, hi) {s, k, F_U32, offsetof(work_cfg, m), lo, hi, NULL, 0, 0}
#define R(s, k, m, l, h) {s, k, F_REAL, offsetof(work_cfg, m), 0, 0, NULL, l, h}
#define B(s, k, m) {s, k, F_BOOL, offsetof(work_cfg, m), 0, 0, NULL, 0, 0}
#define E(s, k, m, n) {s, k, F_ENUM, offsetof(work_cfg, m), 0, 0, n, 0, 0}
#define BIG (1u << 30)

static const field fields[] = {
    U("model", "layers", layers, 1, 100000),
    U("model", "hidden", hidden, 1, BIG),
    U("model", "ffn_hidden", ffn_hidden, 1, BIG),
    U("model", "heads", heads, 1, 1u << 20),
    U("model", "kv_heads", kv_heads, 1, 1u << 20),
    U("model", "head_dim", head_dim, 1, 1u << 20),
    U("model", "seq_len", seq_len, 1, BIG),
    U("model", "vocab", vocab, 1, BIG),
    E("model", "dtype", dtype, dtypes),
    E("model", "activation", activation, acts),
    E("model", "position_embedding", pos_emb, posembs),
    U("model", "experts", experts, 0, 1u << 20),
    U("model", "top_k", top_k, 1, 1u << 20),
    U("model", "expert_ffn_hidden", expert_ffn_hidden, 1, BIG),
    U("model", "shared_experts", shared_experts, 0, 1024),
    R("model", "capacity_factor", capacity_factor, 0, 1000),
    R("model", "routing_skew", routing_skew, 0, 10),
    U("model", "node_limited_routing", node_limit, 0, 1u << 20),
    U("model", "moe_layer_frequency", moe_freq, 1, 100000),
    U("model", "first_dense_layers", first_dense, 0, 100000),
    E("model", "attention", attention, masks),
    E("model", "moe_dispatch_dtype", dispatch_dtype, dtypes),
    U("model", "q_lora_rank", q_lora, 0, BIG),
    U("model", "kv_lora_rank", kv_lora, 0, BIG),
    U("model", "qk_rope_head_dim", rope_dim, 0, 1u << 20),
    U("model", "v_head_dim", v_dim, 0, 1u << 20),
    U("model", "sliding_window", window, 0, BIG),
    U("model", "full_attention_every", full_every, 0, 100000),
    U("training", "global_batch", global_batch, 1, BIG),
    U("training", "micro_batch", micro_batch, 1, BIG),
    E("training", "schedule", schedule, scheds),
    U("training", "virtual_stages", virtual_stages, 1, WORK_MAX_CHUNKS),
    U("training", "first_stage_layers", first_stage_layers, 1, 100000),
    U("training", "last_stage_layers", last_stage_layers, 1, 100000),
    E("training", "recompute", recompute, recomps),
    U("training", "zero_stage", zero_stage, 0, 3),
    B("training", "distributed_optimizer", distributed_optimizer),
    B("training", "sequence_parallel", sequence_parallel),
    E("training", "grad_dtype", grad_dtype, gdtypes),
    E("training", "dp_mode", dp_mode, dpmodes),
    U("training", "shard_group", shard_group, 1, 1u << 24),
    B("training", "dropout", dropout),
    {"training", "dp_bucket_size", F_SIZE, offsetof(work_cfg, dp_bucket), 0, 0,
     NULL, 0, 0},
    B("training", "dp_overlap", dp_overlap),
    B("training", "dp_param_overlap", dp_param_overlap),
    B("training", "tp_comm_overlap", tp_comm_overlap),
    B("training", "ep_comm_overlap", ep_comm_overlap),
    B("training", "flash_attention", flash_attention),
    E("training", "optimizer_moments", moment_dtype, gdtypes),
    E("training", "activation_cache", act_cache, dtypes),
    B("training", "recompute_moe_act", recompute_moe_act),
    E("training", "memory_check", memory_check, memchecks),
    U("parallelism", "tp", tp, 1, 1u << 20),
    U("parallelism", "cp", cp, 1, 1u << 20),
    U("parallelism", "pp", pp, 1, 1u << 20),
    U("parallelism", "dp", dp, 1, 1u << 24),
    U("parallelism", "ep", ep, 1, 1u << 20),
    U("parallelism", "gpus", gpus, 1, 1u << 24),
    {"parallelism", "order", F_ORDER, 0, 0, 0, NULL, 0, 0},
    {"parallelism", "placement", F_PLACEMENT, 0, 0, 0, NULL, 0, 0},
    R("efficiency", "gemm", eff_gemm, 0.01, 1),
    R("efficiency", "attention", eff_attn, 0.01, 1),
    R("efficiency", "memory", eff_mem, 0.01, 1),
};
#define NFIELDS (sizeof fields / sizeof fields[0])
_Static_assert(NFIELDS <= WORK_MAX_KEYS, "raise WORK_MAX_KEYS");

static const char *const sections[] = {"model", "training", "parallelism",
                                       "efficiency", NULL};
static const char *const top_keys[] = {"topsim", "name", "description",
                                       "topology", "model", "training",
                                       "parallelism", "efficiency", NULL};

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* dir + "/" + rel unless rel is absolute or dir is empty. */
static char *join_path(const char *dir, const char *rel) {
  if (rel[0] == '/' || !dir || !dir[0]) return dupstr(rel);
  size_t n = strlen(dir) + strlen(rel) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, rel);
  return p;
}

static void free_placement(char **p, uint32_t n) {
  for (uint32_t i = 0; p && i < n; i++) free(p[i]);
  free(p);
}

/* Reads a placement file: a YAML list of GPU names, one per rank. */
static int load_placement(ts_workload *w, const sc_ctx *c,
                          const topo_ynode *at, const char *rel) {
  char *path = join_path(w->dir, rel);
  if (!path) return TS_ENOMEM;
  topo_ydoc *doc = NULL;
  int rc = topo_yaml_load_file(path, &doc, c->d);
  if (rc) {
    char inner[900];
    ts_diag_format(c->d, inner, sizeof inner);
    free(path);
    return rc == TS_ENOMEM ? rc : sc_err(c, at, "placement: %s", inner);
  }
  sc_ctx pc = {doc->file, c->d};
  char **names = NULL;
  uint32_t n = 0;
  rc = sc_expect_seq(&pc, doc->root, "a placement file");
  if (!rc) {
    n = doc->root->count;
    names = calloc(n ? n : 1, sizeof *names);
    if (!names) rc = TS_ENOMEM;
  }
  for (uint32_t i = 0; !rc && i < n; i++) {
    const char *s;
    rc = sc_node_str(&pc, doc->root->items[i], "a GPU name", &s);
    if (!rc && !(names[i] = dupstr(s))) rc = TS_ENOMEM;
  }
  topo_ydoc_free(doc);
  free(path);
  if (rc) {
    free_placement(names, n);
    return rc;
  }
  free_placement(w->placement, w->nplacement);
  w->placement = names;
  w->nplacement = n;
  return 0;
}

static int set_enum(const sc_ctx *c, const topo_ynode *map, const field *f,
                    uint32_t *out) {
  const char *s = NULL;
  if (sc_str(c, map, f->key, false, &s) || !s) return s ? TS_ESCHEMA : 0;
  for (uint32_t i = 0; f->names[i]; i++)
    if (strcmp(s, f->names[i]) == 0) return (*out = i), 0;
  char list[200] = "";
  for (uint32_t i = 0; f->names[i]; i++) {
    size_t len = strlen(list);
    snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", f->names[i]);
  }
  return sc_err(c, topo_ymap_get(map, f->key),
                "'%s' = '%s' is not one of: %s", f->key, s, list);
}

static int set_order(ts_workload *w, const sc_ctx *c, const topo_ynode *map) {
  const char *s = NULL;
  if (sc_str(c, map, "order", false, &s)) return TS_ESCHEMA;
  if (!s) return 0;
  int perm[WORK_D_COUNT];
  char why[200];
  if (work_parse_order(s, perm, why, sizeof why))
    return sc_err(c, topo_ymap_get(map, "order"), "'order' = '%s': %s", s, why);
  char *copy = dupstr(s);
  if (!copy) return TS_ENOMEM;
  free(w->order);
  w->order = copy;
  return 0;
}

/* Sets one field from map[f->key] if present; cfg is written in place. */
static int set_field(ts_workload *w, work_cfg *cfg, const sc_ctx *c,
                     const topo_ynode *map, const field *f) {
  void *p = (char *)cfg + f->off;
  switch (f->kind) {
  case F_U32: return sc_uint(c, map, f->key, false, f->min, f->max, p);
  case F_REAL: return sc_real(c, map, f->key, false, f->lo, f->hi, p);
  case F_BOOL: return sc_bool(c, map, f->key, false, p);
  case F_SIZE: return sc_size(c, map, f->key, false, p);
  case F_ENUM: return set_enum(c, map, f, p);
  case F_ORDER: return set_order(w, c, map);
  case F_PLACEMENT: {
    const char *s = NULL;
    if (sc_str(c, map, f->key, false, &s)) return TS_ESCHEMA;
    return s ? load_placement(w, c, topo_ymap_get(map, f->key), s) : 0;
  }
  }
  return TS_EINTERNAL;
}

static int load_section(ts_workload *w, const sc_ctx *c, const topo_ynode *root,
                        const char *sec) {
  const topo_ynode *map = topo_ymap_get(root, sec);
  if (!map) return 0;
  const char *keys[64];
  size_t nk = 0;
  for (size_t i = 0; i < NFIELDS; i++)
    if (strcmp(fields[i].section, sec) == 0) keys[nk++] = fields[i].key;
  keys[nk] = NULL;
  char what[64];
  snprintf(what, sizeof what, "'%s'", sec);
  if (sc_expect_map(c, map, what) || sc_check_keys(c, map, what, keys))
    return TS_ESCHEMA;
  for (size_t i = 0; i < NFIELDS; i++) {
    if (strcmp(fields[i].section, sec)) continue;
    int rc = set_field(w, &w->cfg, c, map, &fields[i]);
    if (rc) return rc;
    const topo_ynode *v = topo_ymap_get(map, fields[i].key);
    if (v) w->key_pos[i] = (work_pos){v->line, v->col};
  }
  return 0;
}

static size_t field_index(const field *f) { return (size_t)(f - fields); }

int work_fail_at(ts_diag *d, int code, const ts_workload *w, const char *key,
                 const char *fmt, ...) {
  work_pos p = w->root_pos;
  const field *f = NULL;
  for (size_t i = 0; i < NFIELDS && !f; i++)
    if (!strcmp(fields[i].key, key)) f = &fields[i];
  if (f && w->key_pos[field_index(f)].line) {
    p = w->key_pos[field_index(f)];
  } else if (f && w->key_pos[field_index(f)].col == 1u << 31) {
    p = (work_pos){0, 0}; /* set by an override */
  } else if (f) {
    for (int s = 0; sections[s]; s++)
      if (!strcmp(sections[s], f->section) && w->section_pos[s].line)
        p = w->section_pos[s];
  }
  char msg[sizeof d->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ts_diag_set(d, code, w->file, (int)p.line, (int)p.col, "%s", msg);
}

void ts_workload_key_pos(const ts_workload *w, const char *key, int *line,
                         int *col) {
  work_pos p = {0, 0};
  if (!strcmp(key, "topology")) p = w->topology_pos;
  for (size_t i = 0; i < NFIELDS; i++)
    if (!strcmp(fields[i].key, key) && w->key_pos[i].line) p = w->key_pos[i];
  *line = (int)p.line;
  *col = (int)p.col;
}

/* Defaults that do not depend on other keys (the rest: work_derive). */
static void set_defaults(work_cfg *c) {
  memset(c, 0, sizeof *c);
  c->dtype = WORK_BF16;
  c->activation = WORK_GELU;
  c->top_k = 1;
  c->moe_freq = 1;
  c->micro_batch = 1;
  c->schedule = WORK_1F1B;
  c->virtual_stages = 1;
  c->recompute = WORK_RC_NONE;
  c->grad_dtype = WORK_GRAD_FP32;
  c->dp_overlap = true;
  c->attention = WORK_ATTN_CAUSAL; /* decoder models */
  c->flash_attention = true;
  c->dropout = true; /* Megatron-LM's default (hidden and attention 0.1) */
  c->tp = c->cp = c->pp = c->dp = c->ep = 1;
  c->eff_gemm = 0.7;
  c->eff_attn = 0.5;
  c->eff_mem = 0.8;
}

static int load_doc(ts_workload *w, const topo_ydoc *doc, ts_diag *d) {
  sc_ctx c = {doc->file, d};
  const topo_ynode *root = doc->root;
  uint32_t version = 0;
  const char *name = NULL, *topo = NULL, *desc = NULL;
  if (sc_expect_map(&c, root, "a workload file") ||
      sc_check_keys(&c, root, "a workload file", top_keys) ||
      sc_uint(&c, root, "topsim", true, 1, 1, &version) ||
      sc_str(&c, root, "name", true, &name) ||
      sc_str(&c, root, "description", false, &desc) ||
      sc_str(&c, root, "topology", false, &topo))
    return TS_ESCHEMA;
  if (!(w->name = dupstr(name))) return TS_ENOMEM;
  if (topo && !(w->topology = join_path(w->dir, topo))) return TS_ENOMEM;
  const topo_ynode *tv = topo_ymap_get(root, "topology");
  if (tv) w->topology_pos = (work_pos){tv->line, tv->col};
  w->root_pos = (work_pos){1, 1};
  for (int s = 0; sections[s]; s++) {
    int rc = load_section(w, &c, root, sections[s]);
    if (rc) return rc;
    const topo_ynode *sv = topo_ymap_get(root, sections[s]);
    if (sv) w->section_pos[s] = (work_pos){sv->line, sv->col};
  }
  const topo_ynode *m;
  if (sc_require(&c, root, "model", "a workload file", &m) ||
      sc_require(&c, root, "training", "a workload file", &m))
    return TS_ESCHEMA;
  static const char *const req_model[] = {"layers", "hidden", "heads",
                                          "seq_len", "vocab", NULL};
  uint32_t tmp;
  const topo_ynode *model = topo_ymap_get(root, "model");
  for (const char *const *k = req_model; *k; k++)
    if (sc_uint(&c, model, *k, true, 0, ~0u, &tmp)) return TS_ESCHEMA;
  if (sc_uint(&c, topo_ymap_get(root, "training"), "global_batch", true, 0,
              ~0u, &tmp))
    return TS_ESCHEMA;
  if (w->cfg.experts > 0 && !topo_ymap_get(model, "expert_ffn_hidden") &&
      !topo_ymap_get(model, "ffn_hidden"))
    return sc_err(&c, model, "a model with experts needs 'expert_ffn_hidden'");
  return 0;
}

/* dir_from_name: relative paths resolve against name's directory (files)
 * or the current directory (buffers). */
static ts_workload *work_new(const char *name, bool dir_from_name) {
  ts_workload *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  set_defaults(&w->cfg);
  w->file = dupstr(name);
  w->order = dupstr("tp-cp-ep-dp-pp");
  const char *slash = dir_from_name ? strrchr(name, '/') : NULL;
  w->dir = slash ? malloc((size_t)(slash - name) + 1) : dupstr("");
  if (w->dir && slash) {
    memcpy(w->dir, name, (size_t)(slash - name));
    w->dir[slash - name] = 0;
  }
  if (!w->file || !w->order || !w->dir) {
    ts_workload_free(w);
    return NULL;
  }
  return w;
}

static int finish(topo_ydoc *doc, int rc, const char *name, bool is_file,
                  ts_workload **out, ts_diag *d) {
  *out = NULL;
  if (rc) return rc;
  ts_workload *w = work_new(name, is_file);
  if (!w) rc = TS_ENOMEM;
  else rc = load_doc(w, doc, d);
  topo_ydoc_free(doc);
  if (rc) {
    ts_workload_free(w);
    return rc == TS_ENOMEM ? ts_diag_set(d, rc, name, 0, 0, "out of memory")
                           : rc;
  }
  *out = w;
  return 0;
}

int ts_workload_load_file(const char *path, ts_workload **out, ts_diag *d) {
  topo_ydoc *doc = NULL;
  int rc = topo_yaml_load_file(path, &doc, d);
  return finish(doc, rc, path, true, out, d);
}

int ts_workload_load_buffer(const char *buf, size_t len, const char *name,
                            ts_workload **out, ts_diag *d) {
  topo_ydoc *doc = NULL;
  int rc = topo_yaml_parse(buf, len, name, &doc, d);
  return finish(doc, rc, name, false, out, d);
}

void ts_workload_free(ts_workload *w) {
  if (!w) return;
  free(w->name);
  free(w->file);
  free(w->dir);
  free(w->topology);
  free(w->order);
  free_placement(w->placement, w->nplacement);
  free(w);
}

static const field *find_field(const char *key) {
  const char *dot = strchr(key, '.');
  for (size_t i = 0; i < NFIELDS; i++) {
    const field *f = &fields[i];
    if (!dot && strcmp(f->key, key) == 0) return f;
    if (dot && strlen(f->section) == (size_t)(dot - key) &&
        strncmp(f->section, key, (size_t)(dot - key)) == 0 &&
        strcmp(f->key, dot + 1) == 0)
      return f;
  }
  return NULL;
}

int ts_workload_override(ts_workload *w, const char *key, const char *value,
                         ts_diag *d) {
  char where[300];
  snprintf(where, sizeof where, "override '%s=%s'", key, value);
  const field *f = find_field(key);
  if (!f)
    return ts_diag_set(d, TS_ESCHEMA, where, 0, 0,
                       "unknown workload key '%s'", key);
  /* a one-pair mapping {key: value} lets the file getters do the work */
  topo_ynode kn = {TOPO_Y_SCALAR, 0, 0, f->key, (uint32_t)strlen(f->key), 0, 0,
                   NULL};
  topo_ynode vn = {TOPO_Y_SCALAR, 0, 0, value, (uint32_t)strlen(value), 0, 0,
                   NULL};
  topo_ynode *items[2] = {&kn, &vn};
  topo_ynode map = {TOPO_Y_MAP, 0, 0, NULL, 0, 0, 1, items};
  sc_ctx c = {where, d};
  work_cfg cfg = w->cfg;
  char *dir = w->dir;
  if (f->kind == F_PLACEMENT) w->dir = (char *)""; /* relative to the cwd */
  int rc = set_field(w, &cfg, &c, &map, f);
  w->dir = dir;
  if (!rc) w->cfg = cfg;
  /* The value no longer comes from the file: its refusals name no line. */
  if (!rc) w->key_pos[field_index(f)] = (work_pos){0, 1u << 31};
  return rc;
}

int ts_workload_override_list(ts_workload *w, const char *const *kv, size_t n,
                              ts_diag *d) {
  for (size_t i = 0; i < n; i++) {
    const char *eq = strchr(kv[i], '=');
    if (!eq || eq == kv[i])
      return ts_diag_set(d, TS_ESCHEMA, "override", 0, 0,
                         "'%s' is not key=value", kv[i]);
    char key[128];
    size_t len = (size_t)(eq - kv[i]);
    if (len >= sizeof key)
      return ts_diag_set(d, TS_ESCHEMA, "override", 0, 0, "key too long");
    memcpy(key, kv[i], len);
    key[len] = 0;
    int rc = ts_workload_override(w, key, eq + 1, d);
    if (rc) return rc;
  }
  return 0;
}

const char *ts_workload_name(const ts_workload *w) { return w->name; }
const char *ts_workload_topology(const ts_workload *w) { return w->topology; }

uint32_t ts_workload_parallel(const ts_workload *w, ts_group g) {
  switch (g) {
  case TS_GROUP_TP: return w->cfg.tp;
  case TS_GROUP_CP: return w->cfg.cp;
  case TS_GROUP_EP: return w->cfg.ep;
  case TS_GROUP_DP: return w->cfg.dp;
  case TS_GROUP_PP: return w->cfg.pp;
  default: return 0;
  }
}

uint32_t ts_workload_microbatches(const ts_workload *w) {
  return work_microbatches(&w->cfg);
}

uint32_t ts_workload_global_batch(const ts_workload *w) {
  return w->cfg.global_batch;
}

void ts_workload_shape_get(const ts_workload *w, ts_workload_shape *out) {
  work_cfg c;
  work_derive(w, &c);
  memset(out, 0, sizeof *out);
  out->layers = c.layers;
  out->heads = c.heads;
  out->kv_heads = c.kv_heads;
  out->seq_len = c.seq_len;
  out->experts = c.experts;
  out->top_k = c.top_k;
  out->global_batch = c.global_batch;
  out->micro_batch = c.micro_batch;
  out->schedule = c.schedule;
  out->virtual_stages = c.virtual_stages;
  out->recompute = c.recompute;
  /* the distributed optimizer is ZeRO stage 1 (docs/workload-format.md) */
  out->zero_stage = c.zero_stage ? c.zero_stage : c.distributed_optimizer;
  out->first_stage_layers = c.first_stage_layers;
  out->last_stage_layers = c.last_stage_layers;
  out->gpus = c.gpus;
  out->memory_check = c.memory_check;
  out->order = w->order;
}

const char *ts_schedule_name(uint32_t s) {
  return s < 3 ? scheds[s] : "?";
}

const char *ts_recompute_name(uint32_t r) {
  return r < 3 ? recomps[r] : "?";
}

size_t ts_workload_settings(const ts_workload *w, ts_setting *out,
                            size_t max) {
  work_cfg c;
  work_derive(w, &c);
  size_t n = 0;
  for (size_t i = 0; i < NFIELDS; i++) {
    const field *f = &fields[i];
    if (f->kind == F_PLACEMENT) continue;
    if (n >= max) {
      n++;
      continue;
    }
    ts_setting *s = &out[n++];
    memset(s, 0, sizeof *s);
    s->section = f->section;
    s->key = f->key;
    const void *p = (const char *)&c + f->off;
    switch (f->kind) {
    case F_U32: s->kind = TS_SET_INT; s->num = *(const uint32_t *)p; break;
    case F_SIZE: s->kind = TS_SET_INT; s->num = (double)*(const uint64_t *)p; break;
    case F_REAL: s->kind = TS_SET_REAL; s->num = *(const double *)p; break;
    case F_BOOL: s->kind = TS_SET_BOOL; s->num = *(const bool *)p; break;
    case F_ENUM:
      s->kind = TS_SET_STRING;
      snprintf(s->str, sizeof s->str, "%s", f->names[*(const uint32_t *)p]);
      break;
    default:
      s->kind = TS_SET_STRING;
      snprintf(s->str, sizeof s->str, "%s", w->order);
      break;
    }
    if (s->kind == TS_SET_BOOL) snprintf(s->str, sizeof s->str, "%s", s->num ? "true" : "false");
    else if (s->kind != TS_SET_STRING) snprintf(s->str, sizeof s->str, "%.10g", s->num);
  }
  return n;
}
