/* check_metric.c - the metric vocabulary of `topsim check`: names, kinds,
 * words for people, formatting and derivation from a topology.
 *
 * Derivation reads ts_topo_stats (one O(V + E) pass) so check reports the
 * same numbers as `topsim topo`: one source of each fact. Metrics come out
 * in a fixed order (globals, then planes in file order, tiers bottom-up),
 * which is the order --update writes them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_topo_check.h"

typedef struct name_kind {
  const char *name, *words;
  ck_kind kind;
} name_kind;

static const name_kind globals[] = {
    {"gpus", "GPUs", CK_COUNT},
    {"hosts", "hosts", CK_COUNT},
    {"racks", "racks", CK_COUNT},
    {"sus", "SUs", CK_COUNT},
    {"switches", "network switches", CK_COUNT},
    {"planes", "planes", CK_LIST},
    {"scale_up_domain", "scale-up domain", CK_COUNT},
    {"max_hops", "max hops", CK_COUNT},
    {"bisection", "bisection", CK_BW},
    {NULL, NULL, CK_COUNT}};
static const name_kind plane_metrics[] = {
    {"kind", "kind", CK_TEXT},
    {"nics", "NICs", CK_COUNT},
    {"switches", "switches", CK_COUNT},
    {"bisection", "bisection", CK_BW},
    {NULL, NULL, CK_COUNT}};
static const name_kind tier_metrics[] = {
    {"switches", "switches", CK_COUNT},
    {"oversubscription", "oversubscription", CK_RATIO},
    {NULL, NULL, CK_COUNT}};

static const name_kind *lookup(const name_kind *t, const char *name) {
  for (; t->name; t++)
    if (!strcmp(t->name, name)) return t;
  return NULL;
}

static bool is_tier(const char *s) {
  return !strcmp(s, "leaf") || !strcmp(s, "spine") || !strcmp(s, "core");
}

/* Splits key at dots into at most 3 parts; returns the part count or 0. */
static int split(const char *key, char parts[3][128]) {
  int n = 0;
  const char *p = key;
  while (n < 3) {
    const char *dot = strchr(p, '.');
    size_t len = dot ? (size_t)(dot - p) : strlen(p);
    if (len == 0 || len >= 128) return 0;
    memcpy(parts[n], p, len);
    parts[n][len] = '\0';
    n++;
    if (!dot) return n;
    p = dot + 1;
  }
  return 0;
}

static const name_kind *entry_of(const char *key, char parts[3][128], int *n) {
  *n = split(key, parts);
  if (*n == 1) return lookup(globals, parts[0]);
  if (*n == 2) return lookup(plane_metrics, parts[1]);
  if (*n == 3 && is_tier(parts[1])) return lookup(tier_metrics, parts[2]);
  return NULL;
}

int check_key_kind(const char *key) {
  char parts[3][128];
  int n;
  const name_kind *e = entry_of(key, parts, &n);
  return e ? (int)e->kind : -1;
}

bool check_is_tier_metric(const char *name) { return lookup(tier_metrics, name) != NULL; }

void check_key_words(const char *key, char *buf, size_t len) {
  char parts[3][128];
  int n;
  const name_kind *e = entry_of(key, parts, &n);
  if (!e) snprintf(buf, len, "%s", key);
  else if (n == 1) snprintf(buf, len, "%s", e->words);
  else if (n == 2) snprintf(buf, len, "%s plane %s", parts[0], e->words);
  else snprintf(buf, len, "%s plane %s %s", parts[0], parts[1], e->words);
}

/* %.*f without trailing zeros: 1920.00 -> 1920, 2.50 -> 2.5. */
static void trimmed(double v, int decimals, char *buf, size_t len) {
  snprintf(buf, len, "%.*f", decimals, v);
  if (!strchr(buf, '.')) return;
  char *e = buf + strlen(buf) - 1;
  while (*e == '0') *e-- = '\0';
  if (*e == '.') *e = '\0';
}

void check_format(const ck_value *v, char *buf, size_t len) {
  char num[64];
  switch (v->kind) {
  case CK_COUNT: snprintf(buf, len, "%.0f", v->v); break;
  case CK_BW: trimmed(v->v / 1e9, 2, num, sizeof num); snprintf(buf, len, "%s GB/s", num); break;
  case CK_RATIO: trimmed(v->v, 2, num, sizeof num); snprintf(buf, len, "%s:1", num); break;
  case CK_TIME: trimmed(v->v, 6, num, sizeof num); snprintf(buf, len, "%s s", num); break;
  case CK_TEXT: snprintf(buf, len, "%s", v->s ? v->s : ""); break;
  case CK_LIST: snprintf(buf, len, "[%s]", v->s ? v->s : ""); break;
  }
}

/* The file keeps 9 significant digits so a recorded value reads back
 * within the 1e-6 relative slack check_eval allows. */
void check_format_yaml(const ck_value *v, char *buf, size_t len) {
  switch (v->kind) {
  case CK_COUNT: snprintf(buf, len, "%.0f", v->v); break;
  case CK_BW: snprintf(buf, len, "%.9gGB/s", v->v / 1e9); break;
  case CK_RATIO: snprintf(buf, len, "\"%.9g:1\"", v->v); break;
  case CK_TIME: snprintf(buf, len, "%.9gs", v->v); break;
  case CK_TEXT: snprintf(buf, len, "%s", v->s ? v->s : ""); break;
  case CK_LIST: snprintf(buf, len, "[%s]", v->s ? v->s : ""); break;
  }
}

static int parse_num(const char *s, size_t n, double *out) {
  if (n == 0 || n > 60 || strspn(s, "0123456789.") != n) return -1;
  char tmp[64];
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  char *end;
  *out = strtod(tmp, &end);
  return *end || !isfinite(*out) ? -1 : 0;
}

int check_parse_ratio(const char *s, double *out) {
  const char *colon = strchr(s, ':');
  double a, b = 1;
  if (!colon) return parse_num(s, strlen(s), out);
  if (parse_num(s, (size_t)(colon - s), &a) ||
      parse_num(colon + 1, strlen(colon + 1), &b) || b == 0)
    return -1;
  *out = a / b;
  return 0;
}

int check_parse_percent(const char *s, double *out) {
  size_t n = strlen(s);
  double v;
  if (n < 2 || s[n - 1] != '%' || parse_num(s, n - 1, &v)) return -1;
  *out = v / 100;
  return 0;
}

const char *check_unit(ck_kind k) {
  static const char *const names[] = {"count", "B/s", "ratio", "text", "list", "s"};
  return names[k];
}

int check_metrics_add(ck_metrics *m, const char *key, ck_kind kind, double v,
                      const char *s) {
  if (m->count == m->cap) {
    uint32_t cap = m->cap ? 2 * m->cap : 32;
    ck_metric *it = realloc(m->items, cap * sizeof *it);
    if (!it) return TS_ENOMEM;
    m->items = it;
    m->cap = cap;
  }
  ck_metric *e = &m->items[m->count];
  memset(e, 0, sizeof *e);
  e->key = strdup(key);
  e->val.kind = kind;
  e->val.v = v;
  e->val.s = s ? strdup(s) : NULL;
  if (!e->key || (s && !e->val.s)) {
    free(e->key);
    free(e->val.s);
    return TS_ENOMEM;
  }
  m->count++;
  return 0;
}

const ck_metric *check_metrics_find(const ck_metrics *m, const char *key) {
  for (uint32_t i = 0; i < m->count; i++)
    if (!strcmp(m->items[i].key, key)) return &m->items[i];
  return NULL;
}

void check_metrics_free(ck_metrics *m) {
  for (uint32_t i = 0; i < m->count; i++) {
    free(m->items[i].key);
    free(m->items[i].val.s);
  }
  free(m->items);
  memset(m, 0, sizeof *m);
}

/* "compute, storage, frontend" (planes in file order). */
static char *plane_list(const ts_topo *t) {
  size_t len = 1;
  for (uint32_t p = 0; p < ts_topo_plane_count(t); p++)
    len += strlen(ts_topo_plane(t, p)->name) + 2;
  char *s = malloc(len);
  if (!s) return NULL;
  s[0] = '\0';
  for (uint32_t p = 0; p < ts_topo_plane_count(t); p++) {
    if (p) strcat(s, ", ");
    strcat(s, ts_topo_plane(t, p)->name);
  }
  return s;
}

static int derive_plane(const ts_topo *t, uint32_t p, const ts_plane_stats *ps,
                        ck_metrics *out) {
  const char *pn = ts_topo_plane(t, p)->name;
  char key[160];
  int rc = 0;
#define ADD(kind, v, s, ...)                                   \
  (snprintf(key, sizeof key, __VA_ARGS__),                      \
   rc = rc ? rc : check_metrics_add(out, key, kind, v, s))
  ADD(CK_TEXT, 0, ts_plane_kind_name((ts_plane_kind)ts_topo_plane(t, p)->kind),
      "%s.kind", pn);
  ADD(CK_COUNT, ps->nics, NULL, "%s.nics", pn);
  ADD(CK_COUNT, ps->switches, NULL, "%s.switches", pn);
  for (int tier = TS_TIER_LEAF; tier <= TS_TIER_MAX; tier++) {
    const ts_tier_stats *ts = &ps->tier[tier];
    if (!ts->switches) continue;
    const char *tn = ts_tier_name((ts_tier)tier);
    ADD(CK_COUNT, ts->switches, NULL, "%s.%s.switches", pn, tn);
    if (ts->up_bw > 0) ADD(CK_RATIO, ts->oversub, NULL, "%s.%s.oversubscription", pn, tn);
  }
  if (ps->switches) ADD(CK_BW, ps->bisection_bw, NULL, "%s.bisection", pn);
#undef ADD
  return rc;
}

int check_metrics_derive(const ts_topo *t, ck_metrics *out) {
  ts_topo_stats s;
  if (ts_topo_stats_compute(t, &s)) return TS_ENOMEM;
  char *planes = plane_list(t);
  int rc = planes ? 0 : TS_ENOMEM;
  const struct { const char *k; ck_kind kind; double v; } g[] = {
      {"gpus", CK_COUNT, s.gpus},
      {"hosts", CK_COUNT, s.hosts},
      {"racks", CK_COUNT, s.racks},
      {"sus", CK_COUNT, s.sus},
      {"switches", CK_COUNT, s.nodes_by_kind[TS_NODE_SWITCH]},
      {"planes", CK_LIST, 0},
      {"scale_up_domain", CK_COUNT, s.scale_up_domain},
      {"max_hops", CK_COUNT, s.max_hops},
      {"bisection", CK_BW, s.bisection_bw}};
  for (size_t i = 0; !rc && i < sizeof g / sizeof g[0]; i++)
    rc = check_metrics_add(out, g[i].k, g[i].kind, g[i].v,
                           g[i].kind == CK_LIST ? planes : NULL);
  for (uint32_t p = 0; !rc && p < s.plane_count; p++)
    rc = derive_plane(t, p, &s.planes[p], out);
  free(planes);
  ts_topo_stats_free(&s);
  return rc;
}
