/* sweep_enum.c - candidate mappings and the checks that prune them.
 *
 * Loops run outer to inner over tp, cp, pp (divisors of the GPUs), ep
 * (divisors of dp), schedule with its virtual stages, micro-batch
 * (divisors of the global batch), recompute, ZeRO stage and order. Each
 * leaf is one candidate; cheap integer checks (docs/workload-format.md,
 * "Refusals") run first so the count per reason is exact and fast, then
 * ts_work_validate as the authority, then the memory model per stage
 * against the smallest HBM among the GPUs used. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

typedef struct vals {
  uint32_t v[64];
  uint32_t n;
} vals;

typedef struct ctx {
  ts_workload *w;
  const ts_sweep_spec *spec;
  ts_workload_shape sh;
  ts_sweep_set *out;
  uint32_t cap;
  uint64_t hbm, min_over; /* smallest HBM; smallest memory-pruned need */
  char min_over_label[160];
  sweep_domains dom;
  ts_sweep_map cur;
  uint32_t file[TS_SWEEP_KEY_COUNT]; /* the workload's tp, cp, pp, ep */
  char file_order[24]; /* copied: overrides free the workload's string */
} ctx;

static void divisors(uint64_t n, uint32_t limit, vals *o) {
  o->n = 0;
  for (uint64_t d = 1; d <= n && o->n < 64; d++)
    if (n % d == 0 && (!limit || d <= limit)) o->v[o->n++] = (uint32_t)d;
}

static void one(uint32_t v, vals *o) {
  o->v[0] = v;
  o->n = 1;
}

/* Values a key takes: fixed, the file's, or `all` when varied. */
static void pick(const ctx *c, ts_sweep_key k, uint32_t file, const vals *all,
                 vals *o) {
  if (c->spec->fix[k] >= 0) one((uint32_t)c->spec->fix[k], o);
  else if (c->spec->vary >> k & 1) *o = *all;
  else one(file, o);
}

static int varied(const ctx *c, ts_sweep_key k) {
  return c->spec->fix[k] < 0 && (c->spec->vary >> k & 1);
}

static void prune(ctx *c, ts_sweep_prune p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void prune(ctx *c, ts_sweep_prune p, const char *fmt, ...) {
  if (!c->out->pruned[p]++) {
    char lab[128];
    ts_sweep_map_label(&c->cur, lab, sizeof lab);
    va_list ap;
    va_start(ap, fmt);
    char msg[200];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (p == TS_PRUNE_GPUS) /* the rest of the mapping is not chosen yet */
      snprintf(c->out->example[p], sizeof c->out->example[p], "%s", msg);
    else
      snprintf(c->out->example[p], sizeof c->out->example[p], "%s: %s", lab, msg);
  }
}

static int push(ctx *c) {
  ts_sweep_set *o = c->out;
  if (o->n == c->cap) {
    uint32_t cap = c->cap ? 2 * c->cap : 256;
    ts_sweep_map *m = realloc(o->maps, (size_t)cap * sizeof *m);
    if (!m) return TS_ENOMEM;
    o->maps = m;
    c->cap = cap;
  }
  o->maps[o->n++] = c->cur;
  return 0;
}

/* Integer checks in the order of ts_sweep_prune; 1 when pruned. */
static int pruned_cheap(ctx *c) {
  const ts_sweep_map *m = &c->cur;
  const ts_workload_shape *s = &c->sh;
  if (s->heads % m->tp || s->kv_heads % m->tp) {
    prune(c, TS_PRUNE_TP_HEADS, "heads %u / kv_heads %u not divisible by tp %u",
          s->heads, s->kv_heads, m->tp);
    return 1;
  }
  if (!c->spec->allow_cross_node_tp && !sweep_tp_inside(&c->dom, m)) {
    prune(c, TS_PRUNE_TP_DOMAIN, "a TP group of %u spans more than one "
          "NVLink domain (largest %u GPUs; --allow-cross-node-tp allows it)",
          m->tp, c->dom.largest);
    return 1;
  }
  if (s->seq_len % m->cp) {
    prune(c, TS_PRUNE_CP_SEQ, "seq_len %u not divisible by cp %u", s->seq_len, m->cp);
    return 1;
  }
  uint32_t stages = m->pp * (m->schedule == SWEEP_INTERLEAVED ? m->vp : 1);
  if (!s->first_stage_layers && !s->last_stage_layers && s->layers % stages) {
    prune(c, TS_PRUNE_PP_LAYERS, "layers %u not divisible by pp x virtual "
          "stages = %u", s->layers, stages);
    return 1;
  }
  uint64_t per = (uint64_t)m->mb * m->dp;
  if (s->global_batch % per) {
    prune(c, TS_PRUNE_BATCH, "global_batch %u not divisible by micro_batch x "
          "dp = %llu", s->global_batch, (unsigned long long)per);
    return 1;
  }
  uint64_t micro = s->global_batch / per;
  if (m->schedule == SWEEP_INTERLEAVED && m->pp > 1 && micro % m->pp) {
    prune(c, TS_PRUNE_INTERLEAVE, "interleaved needs micro-batches (%llu) "
          "divisible by pp %u", (unsigned long long)micro, m->pp);
    return 1;
  }
  if ((!s->experts && m->ep > 1) || m->dp % m->ep ||
      (s->experts && s->experts % m->ep)) {
    prune(c, TS_PRUNE_EP, "ep %u does not fit experts %u and dp %u", m->ep,
          s->experts, m->dp);
    return 1;
  }
  return 0;
}

/* Authoritative checks on the overridden workload, then memory. */
static int check_leaf(ctx *c) {
  c->out->candidates++;
  if (pruned_cheap(c)) return 0;
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_sweep_apply(c->w, &c->cur, c->out->gpus, &d) ||
      ts_work_validate(c->w, &d)) {
    prune(c, TS_PRUNE_OTHER, "%s", d.msg);
    return 0;
  }
  uint64_t need = 0;
  for (uint32_t st = 0; st < c->cur.pp; st++) {
    ts_mem_breakdown b;
    if (ts_work_memory(c->w, st, &b) == 0 && b.total > need) need = b.total;
  }
  c->cur.mem_bytes = need;
  if (need > c->hbm && !c->sh.memory_check) { /* warn: kept, as run does */
    prune(c, TS_PRUNE_MEMORY, "needs %.1f GiB per GPU, HBM holds %.1f GiB",
          need / 1073741824.0, c->hbm / 1073741824.0);
    if (!c->min_over || need < c->min_over) {
      c->min_over = need;
      ts_sweep_map_label(&c->cur, c->min_over_label, sizeof c->min_over_label);
    }
    return 0;
  }
  return push(c);
}

static int loop_orders(ctx *c) {
  if (!varied(c, TS_SWEEP_ORDER)) {
    const char *o = c->spec->fix[TS_SWEEP_ORDER] >= 0 ? c->spec->fix_order
                                                       : c->file_order;
    snprintf(c->cur.order, sizeof c->cur.order, "%.23s", o);
    return check_leaf(c);
  }
  char orders[SWEEP_MAX_ORDERS][24];
  uint32_t n = sweep_orders(&c->cur, orders);
  for (uint32_t i = 0; i < n; i++) {
    memcpy(c->cur.order, orders[i], sizeof c->cur.order);
    int rc = check_leaf(c);
    if (rc) return rc;
  }
  return 0;
}

static int loop_zero(ctx *c) {
  vals all = {{0, 1, 2, 3}, 4}, z;
  if (c->cur.dp * c->cur.cp == 1) all.n = 1; /* nothing to shard */
  pick(c, TS_SWEEP_ZERO, c->sh.zero_stage, &all, &z);
  for (uint32_t i = 0; i < z.n; i++) {
    c->cur.zero = (uint8_t)z.v[i];
    int rc = loop_orders(c);
    if (rc) return rc;
  }
  return 0;
}

static int loop_recompute(ctx *c) {
  vals all = {{0, 1, 2}, 3}, r;
  pick(c, TS_SWEEP_RECOMPUTE, c->sh.recompute, &all, &r);
  for (uint32_t i = 0; i < r.n; i++) {
    c->cur.recompute = (uint8_t)r.v[i];
    int rc = loop_zero(c);
    if (rc) return rc;
  }
  return 0;
}

static int loop_mb(ctx *c) {
  vals all, mb;
  divisors(c->sh.global_batch, 0, &all);
  pick(c, TS_SWEEP_MB, c->sh.micro_batch, &all, &mb);
  for (uint32_t i = 0; i < mb.n; i++) {
    c->cur.mb = mb.v[i];
    int rc = loop_recompute(c);
    if (rc) return rc;
  }
  return 0;
}

/* Schedules 1f1b, interleaved (each virtual-stage count), gpipe. */
static int loop_schedule(ctx *c) {
  static const vals order = {{SWEEP_1F1B, SWEEP_INTERLEAVED, SWEEP_GPIPE}, 3};
  vals sch;
  pick(c, TS_SWEEP_SCHEDULE, c->sh.schedule, &order, &sch);
  if (varied(c, TS_SWEEP_SCHEDULE) && c->cur.pp == 1) one(SWEEP_1F1B, &sch);
  for (uint32_t i = 0; i < sch.n; i++) {
    c->cur.schedule = (uint8_t)sch.v[i];
    vals vp, all;
    if (sch.v[i] == SWEEP_INTERLEAVED) {
      uint32_t per = c->sh.layers % c->cur.pp ? 2 : c->sh.layers / c->cur.pp;
      divisors(per, 0, &all);
      if (all.n > 1) memmove(all.v, all.v + 1, --all.n * sizeof all.v[0]);
      pick(c, TS_SWEEP_VP, c->sh.virtual_stages, &all, &vp);
      /* interleaved with one chunk is 1f1b: not a mapping of its own */
      if (varied(c, TS_SWEEP_SCHEDULE)) {
        uint32_t k = 0;
        for (uint32_t j = 0; j < vp.n; j++)
          if (vp.v[j] > 1) vp.v[k++] = vp.v[j];
        vp.n = k;
      }
    } else {
      one(1, &vp);
    }
    for (uint32_t j = 0; j < vp.n; j++) {
      c->cur.vp = vp.v[j];
      int rc = loop_mb(c);
      if (rc) return rc;
    }
  }
  return 0;
}

static int loop_ep(ctx *c) {
  vals all, ep;
  if (c->sh.experts) divisors(c->cur.dp, c->sh.experts, &all);
  else one(1, &all);
  pick(c, TS_SWEEP_EP, c->file[TS_SWEEP_EP], &all, &ep);
  for (uint32_t i = 0; i < ep.n; i++) {
    c->cur.ep = ep.v[i];
    int rc = loop_schedule(c);
    if (rc) return rc;
  }
  return 0;
}

static int loop_pp(ctx *c, uint32_t rest) {
  vals all, pp;
  divisors(rest, 0, &all);
  pick(c, TS_SWEEP_PP, c->file[TS_SWEEP_PP], &all, &pp);
  for (uint32_t i = 0; i < pp.n; i++) {
    c->cur.pp = pp.v[i];
    if (rest % pp.v[i]) { /* only a fixed or file value gets here */
      c->out->candidates++;
      prune(c, TS_PRUNE_GPUS, "tp x cp x pp = %u does not divide the %u GPUs",
            c->cur.tp * c->cur.cp * pp.v[i], c->out->gpus);
      continue;
    }
    c->cur.dp = rest / pp.v[i];
    int64_t fdp = c->spec->fix[TS_SWEEP_DP];
    if (fdp >= 0 && (uint32_t)fdp != c->cur.dp) continue;
    int rc = loop_ep(c);
    if (rc) return rc;
  }
  return 0;
}

static int loop_tp_cp(ctx *c) {
  uint32_t n = c->out->gpus;
  vals all, tp, cp;
  divisors(n, 0, &all);
  pick(c, TS_SWEEP_TP, c->file[TS_SWEEP_TP], &all, &tp);
  for (uint32_t i = 0; i < tp.n; i++) {
    c->cur.tp = tp.v[i];
    if (n % tp.v[i]) {
      c->out->candidates++;
      prune(c, TS_PRUNE_GPUS, "tp %u does not divide the %u GPUs", tp.v[i], n);
      continue;
    }
    divisors(n / tp.v[i], 0, &all);
    pick(c, TS_SWEEP_CP, c->file[TS_SWEEP_CP], &all, &cp);
    for (uint32_t j = 0; j < cp.n; j++) {
      c->cur.cp = cp.v[j];
      if ((n / tp.v[i]) % cp.v[j]) {
        c->out->candidates++;
        prune(c, TS_PRUNE_GPUS, "tp x cp = %u does not divide the %u GPUs",
              tp.v[i] * cp.v[j], n);
        continue;
      }
      int rc = loop_pp(c, n / tp.v[i] / cp.v[j]);
      if (rc) return rc;
    }
  }
  return 0;
}

/* Smallest HBM among the first n GPUs. */
static uint64_t smallest_hbm(const ts_topo *t, uint32_t n) {
  const uint32_t *g;
  ts_topo_gpus(t, &g);
  uint64_t h = UINT64_MAX;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t b = ts_topo_gpu_model(t, ts_topo_node(t, g[i])->model)->hbm_bytes;
    if (b < h) h = b;
  }
  return h;
}

int ts_sweep_enumerate(ts_workload *w, const ts_topo *t,
                       const ts_sweep_spec *spec, ts_sweep_set *out,
                       ts_diag *d) {
  memset(out, 0, sizeof *out);
  const uint32_t *g;
  uint32_t avail = ts_topo_gpus(t, &g);
  ctx c;
  memset(&c, 0, sizeof c);
  c.w = w;
  c.spec = spec;
  c.out = out;
  ts_workload_shape_get(w, &c.sh);
  snprintf(c.file_order, sizeof c.file_order, "%.23s", c.sh.order);
  c.sh.order = NULL;
  out->gpus = spec->gpus ? spec->gpus : c.sh.gpus ? c.sh.gpus : avail;
  if (out->gpus > avail || out->gpus == 0)
    return ts_diag_set(d, TS_EINVALID, NULL, 0, 0, "the sweep asks for %u "
                       "GPUs but topology '%s' has %u", out->gpus,
                       ts_topo_name(t), avail);
  c.file[TS_SWEEP_TP] = ts_workload_parallel(w, TS_GROUP_TP);
  c.file[TS_SWEEP_CP] = ts_workload_parallel(w, TS_GROUP_CP);
  c.file[TS_SWEEP_PP] = ts_workload_parallel(w, TS_GROUP_PP);
  c.file[TS_SWEEP_EP] = ts_workload_parallel(w, TS_GROUP_EP);
  c.hbm = smallest_hbm(t, out->gpus);
  int rc = sweep_domains_init(&c.dom, t, out->gpus);
  if (!rc) rc = loop_tp_cp(&c);
  sweep_domains_free(&c.dom);
  if (rc) {
    ts_sweep_set_free(out);
    return ts_diag_set(d, rc, NULL, 0, 0, "out of memory");
  }
  if (c.min_over)
    snprintf(out->min_memory, sizeof out->min_memory, "%.1f GiB per GPU (%s)",
             c.min_over / 1073741824.0, c.min_over_label);
  out->hbm_bytes = c.hbm;
  return 0;
}

void ts_sweep_set_free(ts_sweep_set *s) {
  if (!s) return;
  free(s->maps);
  s->maps = NULL;
  s->n = 0;
}
