/* sweep_map.c - keys, spec parsing, mapping labels and overrides, order
 * strings and the TP-inside-NVLink check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

static const char *const key_names[TS_SWEEP_KEY_COUNT] = {
    "tp", "cp", "pp", "vp", "dp", "ep", "mb", "schedule", "recompute", "zero",
    "order"};

int ts_sweep_key_parse(const char *name, ts_sweep_key *k) {
  static const struct { const char *alias; ts_sweep_key k; } aliases[] = {
      {"virtual_stages", TS_SWEEP_VP}, {"micro_batch", TS_SWEEP_MB},
      {"zero_stage", TS_SWEEP_ZERO}};
  for (int i = 0; i < TS_SWEEP_KEY_COUNT; i++)
    if (!strcmp(name, key_names[i])) return *k = (ts_sweep_key)i, 0;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcmp(name, aliases[i].alias)) return *k = aliases[i].k, 0;
  return -1;
}

const char *ts_sweep_key_name(ts_sweep_key k) {
  return (unsigned)k < TS_SWEEP_KEY_COUNT ? key_names[k] : "?";
}

const char *ts_sweep_prune_name(ts_sweep_prune p) {
  static const char *const n[TS_PRUNE_COUNT] = {
      "gpus", "tp_heads", "tp_domain", "cp_seq", "pp_layers", "batch",
      "interleave", "ep", "memory", "other"};
  return (unsigned)p < TS_PRUNE_COUNT ? n[p] : "?";
}

void ts_sweep_spec_default(ts_sweep_spec *s) {
  memset(s, 0, sizeof *s);
  for (int k = 0; k < TS_SWEEP_KEY_COUNT; k++) s->fix[k] = -1;
  s->vary = ((1u << TS_SWEEP_KEY_COUNT) - 1) & ~(1u << TS_SWEEP_ORDER);
}

static int enum_value(const char *v, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v, names[i])) return i;
  return -1;
}

int ts_sweep_spec_fix(ts_sweep_spec *s, ts_sweep_key k, const char *value,
                      ts_diag *d) {
  static const char *const sch[] = {"gpipe", "1f1b", "interleaved"};
  static const char *const rc[] = {"none", "selective", "full"};
  if (k == TS_SWEEP_SCHEDULE || k == TS_SWEEP_RECOMPUTE) {
    int v = enum_value(value, k == TS_SWEEP_SCHEDULE ? sch : rc, 3);
    if (v < 0)
      return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "--fix %s=%s: expected %s",
                         key_names[k], value,
                         k == TS_SWEEP_SCHEDULE ? "gpipe, 1f1b or interleaved"
                                                : "none, selective or full");
    s->fix[k] = v;
    return 0;
  }
  if (k == TS_SWEEP_ORDER) {
    if (strlen(value) >= sizeof s->fix_order)
      return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "--fix order=%s: too long",
                         value);
    snprintf(s->fix_order, sizeof s->fix_order, "%s", value);
    s->fix[k] = 0;
    return 0;
  }
  char *end;
  unsigned long long v = strtoull(value, &end, 10);
  unsigned long long max = k == TS_SWEEP_ZERO ? 3 : 1u << 24;
  if (end == value || *end || v > max || (v == 0 && k != TS_SWEEP_ZERO) ||
      value[0] == '-')
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "--fix %s=%s: expected a "
                       "whole number in %u..%llu", key_names[k], value,
                       k == TS_SWEEP_ZERO ? 0 : 1, max);
  s->fix[k] = (int64_t)v;
  return 0;
}

void ts_sweep_map_label(const ts_sweep_map *m, char *buf, size_t len) {
  static const char *const sch[] = {"gpipe", "1f1b", "interleaved"};
  static const char *const rc[] = {"none", "selective", "full"};
  snprintf(buf, len, "tp%u cp%u pp%u v%u dp%u ep%u mb%u %s %s z%u %s", m->tp,
           m->cp, m->pp, m->vp, m->dp, m->ep, m->mb,
           m->schedule < 3 ? sch[m->schedule] : "?",
           m->recompute < 3 ? rc[m->recompute] : "?", m->zero, m->order);
}

int ts_sweep_apply(ts_workload *w, const ts_sweep_map *m, uint32_t gpus,
                   ts_diag *d) {
  char kv[13][48];
  snprintf(kv[0], 48, "tp=%u", m->tp);
  snprintf(kv[1], 48, "cp=%u", m->cp);
  snprintf(kv[2], 48, "pp=%u", m->pp);
  snprintf(kv[3], 48, "dp=%u", m->dp);
  snprintf(kv[4], 48, "ep=%u", m->ep);
  snprintf(kv[5], 48, "micro_batch=%u", m->mb);
  snprintf(kv[6], 48, "schedule=%s", ts_schedule_name(m->schedule));
  snprintf(kv[7], 48, "virtual_stages=%u", m->vp);
  snprintf(kv[8], 48, "recompute=%s", ts_recompute_name(m->recompute));
  snprintf(kv[9], 48, "distributed_optimizer=false");
  snprintf(kv[10], 48, "zero_stage=%u", m->zero);
  snprintf(kv[11], 48, "order=%s", m->order);
  snprintf(kv[12], 48, "gpus=%u", gpus);
  const char *v[13];
  for (int i = 0; i < 13; i++) v[i] = kv[i];
  return ts_workload_override_list(w, v, 13, d);
}

/* ---- order strings ------------------------------------------------------ */

static const char *const dim_tok[5] = {"tp", "cp", "ep", "dp", "pp"};

static void dim_sizes(const ts_sweep_map *m, uint32_t sz[5]) {
  sz[0] = m->tp, sz[1] = m->cp, sz[2] = m->ep;
  sz[3] = m->ep ? m->dp / m->ep : m->dp, sz[4] = m->pp;
}

/* Dimension index per position of the order string, inner to outer; "ep"
 * missing sits just inside "dp". Returns the count (5) or 0 if malformed. */
static int parse_order(const char *s, int dims[5]) {
  int n = 0, seen_ep = 0;
  char buf[32];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *save = NULL, *tok = strtok_r(buf, "-", &save); tok;
       tok = strtok_r(NULL, "-", &save)) {
    int k = enum_value(tok, dim_tok, 5);
    if (k < 0 || n >= 5) return 0;
    if (k == 3 && !strstr(s, "ep")) dims[n++] = 2, seen_ep = 1;
    if (n >= 5) return 0;
    dims[n++] = k;
    seen_ep |= k == 2;
  }
  return n == 5 && seen_ep ? 5 : 0;
}

uint32_t sweep_tp_stride(const ts_sweep_map *m) {
  int dims[5];
  uint32_t sz[5], stride = 1;
  if (!parse_order(m->order, dims)) return 1;
  dim_sizes(m, sz);
  for (int i = 0; i < 5 && dims[i] != 0; i++) stride *= sz[dims[i]];
  return stride;
}

static void emit(const int *dims, int n, char *out) {
  out[0] = 0;
  for (int i = 0; i < n; i++) {
    if (i) strcat(out, "-");
    strcat(out, dim_tok[dims[i]]);
  }
}

/* Heap's algorithm would do; the dims are at most 5, so plain recursion. */
static void permute(int *big, int nb, int k, const int *small, int ns,
                    char out[][24], uint32_t *cnt) {
  if (k == nb) {
    int all[5];
    memcpy(all, big, (size_t)nb * sizeof *all);
    memcpy(all + nb, small, (size_t)ns * sizeof *all);
    emit(all, nb + ns, out[(*cnt)++]);
    return;
  }
  for (int i = k; i < nb; i++) {
    int t = big[k];
    big[k] = big[i], big[i] = t;
    permute(big, nb, k + 1, small, ns, out, cnt);
    big[i] = big[k], big[k] = t;
  }
}

static int cmp_str(const void *a, const void *b) { return strcmp(a, b); }

uint32_t sweep_orders(const ts_sweep_map *m, char out[][24]) {
  uint32_t sz[5], cnt = 0;
  int big[5], small[5], nb = 0, ns = 0;
  dim_sizes(m, sz);
  for (int i = 0; i < 5; i++) {
    if (sz[i] > 1) big[nb++] = i;
    else small[ns++] = i;
  }
  permute(big, nb, 0, small, ns, out, &cnt);
  /* sorted: the same list whatever the permutation walk */
  qsort(out, cnt, sizeof out[0], cmp_str);
  return cnt;
}

/* ---- NVLink domains ----------------------------------------------------- */

static uint32_t uf_find(uint32_t *p, uint32_t x) {
  while (p[x] != x) x = p[x] = p[p[x]];
  return x;
}

int sweep_domains_init(sweep_domains *s, const ts_topo *t, uint32_t n) {
  memset(s, 0, sizeof *s);
  uint32_t nn = ts_topo_node_count(t);
  uint32_t *p = malloc((size_t)nn * sizeof *p);
  uint32_t *count = calloc(nn, sizeof *count);
  s->dom = malloc(((size_t)n + 1) * sizeof *s->dom);
  if (!p || !count || !s->dom) {
    free(p);
    free(count);
    sweep_domains_free(s);
    return TS_ENOMEM;
  }
  for (uint32_t i = 0; i < nn; i++) p[i] = i;
  for (uint32_t l = 0; l < ts_topo_link_count(t); l++) {
    const ts_link *k = ts_topo_link(t, l);
    if (k->kind == TS_LINK_NVLINK) p[uf_find(p, k->a)] = uf_find(p, k->b);
  }
  const uint32_t *g;
  ts_topo_gpus(t, &g);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t r = uf_find(p, g[i]);
    /* a GPU alone in its component has no NVLink domain */
    s->dom[i] = (int32_t)r;
    if (++count[r] > s->largest) s->largest = count[r];
  }
  for (uint32_t i = 0; i < n; i++)
    if (count[(uint32_t)s->dom[i]] == 1 && (uint32_t)s->dom[i] == g[i])
      s->dom[i] = -1;
  s->n = n;
  free(p);
  free(count);
  return 0;
}

void sweep_domains_free(sweep_domains *s) {
  free(s->dom);
  s->dom = NULL;
}

bool sweep_tp_inside(sweep_domains *s, const ts_sweep_map *m) {
  if (m->tp == 1) return true;
  uint32_t stride = sweep_tp_stride(m), tp = m->tp;
  for (uint32_t i = 0; i < s->memo_n; i++)
    if (s->memo[i][0] == tp && s->memo[i][1] == stride) return s->memo[i][2];
  bool ok = true;
  uint64_t block = (uint64_t)stride * tp;
  for (uint64_t base = 0; ok && base < s->n; base += block)
    for (uint32_t lo = 0; ok && lo < stride; lo++) {
      int32_t d0 = s->dom[base + lo];
      for (uint32_t i = 1; ok && i < tp; i++)
        ok = d0 >= 0 && s->dom[base + lo + (uint64_t)i * stride] == d0;
      ok = ok && d0 >= 0;
    }
  if (s->memo_n < 256) {
    s->memo[s->memo_n][0] = tp, s->memo[s->memo_n][1] = stride;
    s->memo[s->memo_n++][2] = ok;
  }
  return ok;
}
