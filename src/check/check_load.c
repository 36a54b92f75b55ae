/* check_load.c - baseline format v1: YAML -> ts_check_baseline.
 *
 * Grammar (docs/check.md is the full reference):
 *
 *   topsim_check: 1                 format version (required)
 *   rules: [RULE, ...]              site rules for every topology
 *   topologies:                     (required, non-empty)
 *     - file: PATH                  relative to the baseline (required)
 *       rules: [RULE, ...]          rules for this topology
 *       tolerance: {KEY: PCT, ...}  per recorded metric, e.g. 5%
 *       metrics: {KEY: VALUE, ...}  recorded values (--update writes them)
 *       bench: [{op, size, nodes, algo, busbw, tolerance}, ...]
 *       run: [{workload, set, step_time, tolerance}, ...]
 *
 *   RULE = "METRIC OP VALUE", OP one of <= < >= > == !=, METRIC a metric
 *   key (check.h) or a per-tier metric alone ("oversubscription": every
 *   tier with uplinks of every backend plane) or PLANE.TIER-METRIC (every
 *   tier of PLANE).
 *
 * Everything is checked here, with file:line:column, before any topology
 * is read: metric names, value units, rule syntax, operations. Cost:
 * O(baseline size). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "topo/topo_schema.h"
#include "topo/topo_yaml.h"

typedef struct ld {
  sc_ctx c;
  const char *dir;      /* baseline directory with trailing '/', or "" */
} ld;

/* Removes "SEG/../" pairs in place (lexically: "topologies/check/../x"
 * -> "topologies/x"), so reports name files as a person would. */
static void collapse(char *s) {
  char *p;
  while ((p = strstr(s, "/../")) != NULL) {
    char *seg = p;
    while (seg > s && seg[-1] != '/') seg--;
    if ((size_t)(p - seg) == 2 && !strncmp(seg, "..", 2)) return;
    if (p - seg == 0) return;
    memmove(seg, p + 4, strlen(p + 4) + 1);
  }
}

/* PATH joined to the baseline's directory unless absolute. */
static char *resolve(const ld *l, const char *p) {
  if (p[0] == '/' || !l->dir[0]) return strdup(p);
  size_t n = strlen(l->dir) + strlen(p) + 1;
  char *s = malloc(n);
  if (s) {
    snprintf(s, n, "%s%s", l->dir, p);
    collapse(s);
  }
  return s;
}

static int oom(const ld *l, const topo_ynode *n) {
  return ts_diag_set(l->c.d, TS_ENOMEM, l->c.file, n ? (int)n->line : 0,
                     n ? (int)n->col : 0, "out of memory");
}

/* Parses a scalar into a value of the given kind. */
static int parse_value(const ld *l, const topo_ynode *n, ck_kind kind,
                       const char *what, ck_value *v) {
  const char *s;
  if (kind == CK_LIST) {
    if (sc_expect_seq(&l->c, n, what)) return TS_ESCHEMA;
    size_t len = 1;
    for (uint32_t i = 0; i < n->count; i++) {
      if (sc_node_str(&l->c, n->items[i], what, &s)) return TS_ESCHEMA;
      len += strlen(s) + 2;
    }
    v->s = malloc(len);
    if (!v->s) return oom(l, n);
    v->s[0] = '\0';
    for (uint32_t i = 0; i < n->count; i++) {
      if (i) strcat(v->s, ", ");
      strcat(v->s, n->items[i]->str);
    }
    v->kind = kind;
    return 0;
  }
  if (sc_node_str(&l->c, n, what, &s)) return TS_ESCHEMA;
  v->kind = kind;
  ts_time_ps ps;
  uint32_t u;
  switch (kind) {
  case CK_COUNT:
    if (sc_node_uint(&l->c, n, 0, UINT32_MAX, &u)) return TS_ESCHEMA;
    v->v = u;
    return 0;
  case CK_BW:
    if (!ts_parse_bandwidth(s, &v->v)) return 0;
    return sc_err(&l->c, n, "%s '%s': expected a bandwidth such as 1920GB/s", what, s);
  case CK_RATIO:
    if (!check_parse_ratio(s, &v->v)) return 0;
    return sc_err(&l->c, n, "%s '%s': expected a ratio such as 1:1 or 2:1", what, s);
  case CK_TIME:
    if (!ts_parse_latency(s, &ps)) {
      v->v = ts_ps_to_s(ps);
      return 0;
    }
    return sc_err(&l->c, n, "%s '%s': expected a time such as 1.32s or 850ms", what, s);
  default:
    v->s = strdup(s);
    return v->s ? 0 : oom(l, n);
  }
}

static int parse_op(const char *s, ck_op *op) {
  static const char *const ops[] = {"<=", "<", ">=", ">", "==", "!="};
  for (int i = 0; i < 6; i++)
    if (!strcmp(s, ops[i])) {
      *op = (ck_op)i;
      return 0;
    }
  return -1;
}

/* Kind of a rule's metric: a key, a bare per-tier metric (wildcard over
 * backend planes) or PLANE.per-tier-metric (wildcard over PLANE's tiers). */
static int rule_kind(const char *m, ck_rule *r) {
  int k = check_key_kind(m);
  if (k >= 0) return k;
  const char *dot = strrchr(m, '.');
  const char *last = dot ? dot + 1 : m;
  if (!check_is_tier_metric(last) || (dot && strchr(m, '.') != dot)) return -1;
  r->wildcard = true;
  char key[200];
  snprintf(key, sizeof key, "p.leaf.%s", last);
  return check_key_kind(key);
}

static int parse_rule(const ld *l, const topo_ynode *n, ck_rule *r) {
  const char *s;
  if (sc_node_str(&l->c, n, "a rule", &s)) return TS_ESCHEMA;
  char m[160], op[8], val[96], extra[2];
  if (sscanf(s, "%159s %7s %95s %1s", m, op, val, extra) != 3 || parse_op(op, &r->op))
    return sc_err(&l->c, n, "rule '%s': expected METRIC OP VALUE, e.g. "
                  "'oversubscription <= 1:1' (OP: <= < >= > == !=)", s);
  int k = rule_kind(m, r);
  if (k < 0)
    return sc_err(&l->c, n, "rule '%s': unknown metric '%s' (docs/check.md lists "
                  "them: gpus, bisection, PLANE.TIER.oversubscription ...)", s, m);
  if (k == CK_TEXT || k == CK_LIST)
    return sc_err(&l->c, n, "rule '%s': '%s' is not a number; rules compare "
                  "numbers (record it under metrics: instead)", s, m);
  r->kind = (ck_kind)k;
  topo_ynode vn = *n;
  vn.str = val;
  vn.len = (uint32_t)strlen(val);
  vn.quoted = 0;
  ck_value v = {0};
  char what[200];
  snprintf(what, sizeof what, "rule '%s': value", s);
  if (parse_value(l, &vn, r->kind, what, &v)) return TS_ESCHEMA;
  r->v = v.v;
  r->src = strdup(s);
  r->metric = strdup(m);
  r->value_src = strdup(val);
  return r->src && r->metric && r->value_src ? 0 : oom(l, n);
}

static int parse_rules(const ld *l, const topo_ynode *n, ck_rule **out,
                       uint32_t *count) {
  if (!n) return 0;
  if (sc_expect_seq(&l->c, n, "rules")) return TS_ESCHEMA;
  *out = calloc(n->count + 1, sizeof **out);
  if (!*out) return oom(l, n);
  for (uint32_t i = 0; i < n->count; i++, (*count)++)
    if (parse_rule(l, n->items[i], &(*out)[i])) {
      (*count)++; /* free the partial rule too */
      return TS_ESCHEMA;
    }
  return 0;
}

static int parse_percent(const ld *l, const topo_ynode *n, double *out) {
  const char *s;
  if (sc_node_str(&l->c, n, "a tolerance", &s)) return TS_ESCHEMA;
  if (!check_parse_percent(s, out)) return 0;
  return sc_err(&l->c, n, "tolerance '%s': expected a percentage such as 5%%", s);
}

static int unknown_metric(const ld *l, const topo_ynode *k) {
  return sc_err(&l->c, k, "unknown metric '%s'; expected gpus, hosts, racks, sus, "
                "switches, planes, scale_up_domain, max_hops, bisection, "
                "PLANE.(kind|nics|switches|bisection) or "
                "PLANE.(leaf|spine|core).(switches|oversubscription)", k->str);
}

static int parse_tols(const ld *l, const topo_ynode *n, ck_entry *e) {
  if (!n) return 0;
  if (sc_expect_map(&l->c, n, "tolerance")) return TS_ESCHEMA;
  e->tols = calloc(n->count + 1, sizeof *e->tols);
  if (!e->tols) return oom(l, n);
  for (uint32_t i = 0; i < n->count; i++) {
    const topo_ynode *k = n->items[2 * i];
    if (check_key_kind(k->str) < 0) return unknown_metric(l, k);
    ck_tol *t = &e->tols[e->ntols];
    if (parse_percent(l, n->items[2 * i + 1], &t->frac)) return TS_ESCHEMA;
    if (!(t->key = strdup(k->str))) return oom(l, k);
    e->ntols++;
  }
  return 0;
}

static int parse_metrics(const ld *l, const topo_ynode *n, ck_entry *e) {
  if (!n) return 0;
  if (sc_expect_map(&l->c, n, "metrics")) return TS_ESCHEMA;
  for (uint32_t i = 0; i < n->count; i++) {
    const topo_ynode *k = n->items[2 * i];
    int kind = check_key_kind(k->str);
    if (kind < 0) return unknown_metric(l, k);
    ck_value v = {0};
    char what[200];
    snprintf(what, sizeof what, "metric '%s'", k->str);
    if (parse_value(l, n->items[2 * i + 1], (ck_kind)kind, what, &v)) {
      free(v.s);
      return TS_ESCHEMA;
    }
    int rc = check_metrics_add(&e->recorded, k->str, v.kind, v.v, v.s);
    free(v.s);
    if (rc) return oom(l, k);
    e->recorded.items[e->recorded.count - 1].line = k->line;
    e->recorded.items[e->recorded.count - 1].col = k->col;
  }
  return 0;
}

static int parse_bench_op(const ld *l, const topo_ynode *n, ck_bench *b) {
  const char *s;
  if (sc_str(&l->c, n, "op", true, &s)) return TS_ESCHEMA;
  for (int i = 0; i < TS_COLL_OP_COUNT; i++)
    if (!strcmp(s, ts_coll_op_name((ts_coll_op)i))) {
      b->op = (ts_coll_op)i;
      return 0;
    }
  return sc_err(&l->c, topo_ymap_get(n, "op"), "op '%s': expected all_reduce, "
                "all_gather, reduce_scatter, broadcast, reduce or all_to_all", s);
}

static int parse_bench_algo(const ld *l, const topo_ynode *n, ck_bench *b) {
  const char *s = "auto";
  if (sc_str(&l->c, n, "algo", false, &s)) return TS_ESCHEMA;
  for (int i = 0; i < TS_COLL_ALGO_COUNT; i++)
    if (!strcmp(s, ts_coll_algo_name((ts_coll_algo)i))) {
      b->algo = (ts_coll_algo)i;
      return 0;
    }
  return sc_err(&l->c, topo_ymap_get(n, "algo"), "algo '%s': expected auto, "
                "ring, tree, hd, direct, hier or nvls", s);
}

/* size: a bare byte count or a size with a unit (128MiB, 8B). */
static int parse_bench_size(const ld *l, const topo_ynode *n, ck_bench *b) {
  const topo_ynode *v;
  const char *s;
  if (sc_require(&l->c, n, "size", "a bench prediction", &v) ||
      sc_node_str(&l->c, v, "size", &s))
    return TS_ESCHEMA;
  char *end;
  unsigned long long u = strtoull(s, &end, 10);
  if (end != s && !*end && s[0] != '-') b->size = u;
  else if (ts_parse_size(s, &b->size))
    return sc_err(&l->c, v, "size '%s': expected bytes such as 8, 1MiB or 128MiB", s);
  if (b->size == 0) return sc_err(&l->c, v, "size must be at least 1 byte");
  b->size_src = strdup(s);
  return b->size_src ? 0 : oom(l, v);
}

static int parse_bench(const ld *l, const topo_ynode *n, ck_bench *b) {
  static const char *const keys[] = {"op", "size", "nodes", "algo", "busbw",
                                     "tolerance", NULL};
  b->busbw = NAN;
  if (sc_expect_map(&l->c, n, "a bench prediction") ||
      sc_check_keys(&l->c, n, "a bench prediction", keys) || parse_bench_op(l, n, b) ||
      parse_bench_size(l, n, b) || parse_bench_algo(l, n, b) ||
      sc_uint(&l->c, n, "nodes", false, 1, UINT32_MAX, &b->nodes))
    return TS_ESCHEMA;
  const topo_ynode *v = topo_ymap_get(n, "busbw");
  if (v) {
    ck_value val = {0};
    if (parse_value(l, v, CK_BW, "busbw", &val)) return TS_ESCHEMA;
    b->busbw = val.v;
  }
  v = topo_ymap_get(n, "tolerance");
  b->has_tol = v != NULL;
  return v ? parse_percent(l, v, &b->tol) : 0;
}

static int parse_sets(const ld *l, const topo_ynode *n, ck_run *r) {
  if (!n) return 0;
  if (sc_expect_seq(&l->c, n, "set")) return TS_ESCHEMA;
  r->sets = calloc(n->count + 1, sizeof *r->sets);
  if (!r->sets) return oom(l, n);
  for (uint32_t i = 0; i < n->count; i++) {
    const char *s;
    if (sc_node_str(&l->c, n->items[i], "a set entry", &s)) return TS_ESCHEMA;
    if (!strchr(s, '='))
      return sc_err(&l->c, n->items[i], "set '%s': expected KEY=VALUE, e.g. "
                    "global_batch=16", s);
    if (!(r->sets[r->nsets] = strdup(s))) return oom(l, n);
    r->nsets++;
  }
  return 0;
}

static int parse_run(const ld *l, const topo_ynode *n, ck_run *r) {
  static const char *const keys[] = {"workload", "set", "step_time", "tolerance", NULL};
  const char *w;
  r->step_time = NAN;
  if (sc_expect_map(&l->c, n, "a run prediction") ||
      sc_check_keys(&l->c, n, "a run prediction", keys) ||
      sc_str(&l->c, n, "workload", true, &w) ||
      parse_sets(l, topo_ymap_get(n, "set"), r))
    return TS_ESCHEMA;
  r->workload_src = strdup(w);
  r->workload = resolve(l, w);
  if (!r->workload_src || !r->workload) return oom(l, n);
  const topo_ynode *v = topo_ymap_get(n, "step_time");
  if (v) {
    ck_value val = {0};
    if (parse_value(l, v, CK_TIME, "step_time", &val)) return TS_ESCHEMA;
    r->step_time = val.v;
  }
  v = topo_ymap_get(n, "tolerance");
  r->has_tol = v != NULL;
  return v ? parse_percent(l, v, &r->tol) : 0;
}

static int parse_predictions(const ld *l, const topo_ynode *entry, ck_entry *e) {
  const topo_ynode *b = topo_ymap_get(entry, "bench");
  const topo_ynode *r = topo_ymap_get(entry, "run");
  if ((b && sc_expect_seq(&l->c, b, "bench")) || (r && sc_expect_seq(&l->c, r, "run")))
    return TS_ESCHEMA;
  e->bench = calloc((b ? b->count : 0) + 1, sizeof *e->bench);
  e->run = calloc((r ? r->count : 0) + 1, sizeof *e->run);
  if (!e->bench || !e->run) return oom(l, entry);
  for (uint32_t i = 0; b && i < b->count; i++)
    if (e->nbench++, parse_bench(l, b->items[i], &e->bench[i])) return TS_ESCHEMA;
  for (uint32_t i = 0; r && i < r->count; i++)
    if (e->nrun++, parse_run(l, r->items[i], &e->run[i])) return TS_ESCHEMA;
  return 0;
}

static int parse_entry(const ld *l, const topo_ynode *n, ck_entry *e) {
  static const char *const keys[] = {"file", "rules", "tolerance", "metrics",
                                     "bench", "run", NULL};
  const char *f;
  if (sc_expect_map(&l->c, n, "a topologies entry") ||
      sc_check_keys(&l->c, n, "a topologies entry", keys) ||
      sc_str(&l->c, n, "file", true, &f))
    return TS_ESCHEMA;
  e->file_src = strdup(f);
  e->file = resolve(l, f);
  e->line = topo_ymap_get(n, "file")->line;
  e->col = topo_ymap_get(n, "file")->col;
  if (!e->file_src || !e->file) return oom(l, n);
  int rc = parse_rules(l, topo_ymap_get(n, "rules"), &e->rules, &e->nrules);
  if (!rc) rc = parse_tols(l, topo_ymap_get(n, "tolerance"), e);
  if (!rc) rc = parse_metrics(l, topo_ymap_get(n, "metrics"), e);
  if (!rc) rc = parse_predictions(l, n, e);
  return rc;
}

static int parse_doc(const ld *l, const topo_ynode *root, ts_check_baseline *b) {
  static const char *const keys[] = {"topsim_check", "rules", "topologies", NULL};
  const topo_ynode *v, *list;
  uint32_t version;
  if (sc_expect_map(&l->c, root, "the baseline")) return TS_ESCHEMA;
  if (topo_ymap_get(root, "topsim") && !topo_ymap_get(root, "topsim_check"))
    return sc_err(&l->c, root, "this is a topology or workload file (topsim: 1); "
                  "topsim check takes a baseline starting with topsim_check: 1 "
                  "(docs/check.md)");
  if (sc_check_keys(&l->c, root, "the baseline", keys) ||
      sc_uint(&l->c, root, "topsim_check", true, 1, UINT32_MAX, &version))
    return TS_ESCHEMA;
  if (version != 1) {
    v = topo_ymap_get(root, "topsim_check");
    return sc_err(&l->c, v, "topsim_check: %u is not supported: this topsim reads "
                  "version 1", version);
  }
  if (parse_rules(l, topo_ymap_get(root, "rules"), &b->rules, &b->nrules) ||
      sc_require(&l->c, root, "topologies", "the baseline", &list) ||
      sc_expect_seq(&l->c, list, "topologies"))
    return TS_ESCHEMA;
  if (list->count == 0) return sc_err(&l->c, list, "topologies is empty");
  b->entries = calloc(list->count, sizeof *b->entries);
  if (!b->entries) return oom(l, list);
  for (uint32_t i = 0; i < list->count; i++)
    if (b->nentries++, parse_entry(l, list->items[i], &b->entries[i])) return TS_ESCHEMA;
  return 0;
}

int ts_check_baseline_load(const char *path, ts_check_baseline **out, ts_diag *d) {
  *out = NULL;
  topo_ydoc *doc = NULL;
  int rc = topo_yaml_load_file(path, &doc, d);
  if (rc) return rc;
  ts_check_baseline *b = calloc(1, sizeof *b);
  char *dir = strdup(path);
  if (!b || !dir || !(b->path = strdup(path))) {
    free(dir);
    ts_check_baseline_free(b);
    topo_ydoc_free(doc);
    return ts_diag_set(d, TS_ENOMEM, path, 0, 0, "out of memory");
  }
  char *slash = strrchr(dir, '/');
  if (slash) slash[1] = '\0';
  else dir[0] = '\0';
  ld l = {{doc->file, d}, dir};
  rc = parse_doc(&l, doc->root, b);
  free(dir);
  topo_ydoc_free(doc);
  if (rc) {
    ts_check_baseline_free(b);
    return rc;
  }
  *out = b;
  return 0;
}

static void free_rules(ck_rule *r, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    free(r[i].src);
    free(r[i].metric);
    free(r[i].value_src);
  }
  free(r);
}

static void free_entry(ck_entry *e) {
  free(e->file_src);
  free(e->file);
  free_rules(e->rules, e->nrules);
  for (uint32_t i = 0; i < e->ntols; i++) free(e->tols[i].key);
  free(e->tols);
  check_metrics_free(&e->recorded);
  for (uint32_t i = 0; i < e->nbench; i++) free(e->bench[i].size_src);
  free(e->bench);
  for (uint32_t i = 0; i < e->nrun; i++) {
    free(e->run[i].workload_src);
    free(e->run[i].workload);
    for (uint32_t k = 0; k < e->run[i].nsets; k++) free(e->run[i].sets[k]);
    free(e->run[i].sets);
  }
  free(e->run);
}

void ts_check_baseline_free(ts_check_baseline *b) {
  if (!b) return;
  free(b->path);
  free_rules(b->rules, b->nrules);
  for (uint32_t i = 0; i < b->nentries; i++) free_entry(&b->entries[i]);
  free(b->entries);
  free(b);
}
