/* route_faults.c - fault lists (ts_faults.h): command-line words, the YAML
 * file, resolution against a topology, and the static part applied to a
 * link state.
 *
 * Grammar of the file (checked with positions by topo_schema):
 *   document := { faults: [ entry ... ] }
 *   entry    := { fail: NAME [, at: TIME] }
 *             | { degrade: NAME, factor: F }        0 < F <= 1
 *             | { straggler: GPU, factor: F }       F >= 1
 * Exactly one of fail / degrade / straggler per entry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_schema.h"
#include "topo/topo_yaml.h"
#include "topsim/ts_faults.h"

static void drop(ts_fault *x) {
  free(x->name);
  free(x->file);
}

void ts_faults_init(ts_faults *f) { memset(f, 0, sizeof *f); }

void ts_faults_free(ts_faults *f) {
  for (uint32_t i = 0; i < f->n; i++) drop(&f->v[i]);
  free(f->v);
  ts_faults_init(f);
}

/* Appends a fault (name copied); TS_ELIMIT past TS_FAULTS_MAX. */
typedef struct origin {
  const char *option, *file;
  uint32_t line, col;
} origin;

static int push(ts_faults *f, ts_fault_kind kind, const char *name,
                size_t len, double factor, ts_time_ps at, const origin *o,
                ts_diag *d) {
  if (f->n == TS_FAULTS_MAX)
    return ts_diag_set(d, TS_ELIMIT, o->file, o->line, o->col,
                       "more than %u faults", TS_FAULTS_MAX);
  if (f->n == f->cap) {
    uint32_t cap = f->cap ? f->cap * 2 : 8;
    ts_fault *v = realloc(f->v, cap * sizeof *v);
    if (!v) return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
    f->v = v;
    f->cap = cap;
  }
  ts_fault *x = &f->v[f->n];
  memset(x, 0, sizeof *x);
  x->name = malloc(len + 1);
  x->file = o->file ? strdup(o->file) : NULL;
  if (!x->name || (o->file && !x->file)) {
    free(x->name);
    free(x->file);
    return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  }
  memcpy(x->name, name, len);
  x->name[len] = '\0';
  x->kind = kind;
  x->factor = factor;
  x->at = at;
  x->option = o->option;
  x->line = o->line;
  x->col = o->col;
  f->n++;
  return 0;
}

int ts_faults_copy(ts_faults *dst, const ts_faults *src, ts_diag *d) {
  for (uint32_t i = 0; i < src->n; i++) {
    const ts_fault *x = &src->v[i];
    origin o = {x->option, x->file, x->line, x->col};
    int rc = push(dst, x->kind, x->name, strlen(x->name), x->factor, x->at,
                  &o, d);
    if (rc) return rc;
  }
  return 0;
}

/* The error for entry x: positioned when it came from a file. */
static int fault_err(const ts_fault *x, ts_diag *d, const char *msg) {
  if (x->file)
    return ts_diag_set(d, TS_ESCHEMA, x->file, x->line, x->col, "%s", msg);
  return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "%s: %s", x->option, msg);
}

/* A factor in range for the kind (degrade (0, 1], straggler [1, 1e6]). */
static int factor_ok(ts_fault_kind kind, double v) {
  if (kind == TS_FAULT_DEGRADE) return v > 0 && v <= 1;
  return v >= 1 && v <= 1e6;
}

static const char *factor_rule(ts_fault_kind kind) {
  return kind == TS_FAULT_DEGRADE ? "a factor F with 0 < F <= 1"
                                  : "a slowdown F with 1 <= F <= 1e6";
}

static int add_factor(ts_faults *f, ts_fault_kind kind, const char *arg,
                      const char *option, ts_diag *d) {
  const char *eq = strrchr(arg, '=');
  char *end = NULL;
  double v = eq ? strtod(eq + 1, &end) : NAN;
  if (!eq || eq == arg || end == eq + 1 || *end || !factor_ok(kind, v))
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "%s takes NAME=F with %s, "
                       "not '%s'", option, factor_rule(kind), arg);
  origin o = {option, NULL, 0, 0};
  return push(f, kind, arg, (size_t)(eq - arg), v, 0, &o, d);
}

static int add_timed(ts_faults *f, const char *arg, const char *option,
                     ts_diag *d) {
  const char *colon = strchr(arg, ':');
  char t[64];
  ts_time_ps at = 0;
  size_t n = colon ? (size_t)(colon - arg) : 0;
  if (colon && n > 0 && n < sizeof t) {
    memcpy(t, arg, n);
    t[n] = '\0';
  }
  if (!colon || n == 0 || n >= sizeof t || !colon[1] ||
      ts_parse_latency(t, &at))
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "%s takes TIME:NAME, e.g. "
                       "2ms:compute/spine-g0-1, not '%s'", option, arg);
  origin o = {option, NULL, 0, 0};
  return push(f, TS_FAULT_FAIL_AT, colon + 1, strlen(colon + 1), 1, at, &o,
              d);
}

int ts_faults_add(ts_faults *f, ts_fault_kind kind, const char *arg,
                  const char *option, ts_diag *d) {
  if (kind == TS_FAULT_DEGRADE || kind == TS_FAULT_STRAGGLER)
    return add_factor(f, kind, arg, option, d);
  if (kind == TS_FAULT_FAIL_AT) return add_timed(f, arg, option, d);
  if (!*arg)
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "%s needs a name", option);
  origin o = {option, NULL, 0, 0};
  return push(f, TS_FAULT_FAIL, arg, strlen(arg), 1, 0, &o, d);
}

/* ---- the file ----------------------------------------------------------- */

static int load_entry(ts_faults *f, const sc_ctx *c, const topo_ynode *e) {
  static const char *const keys[] = {"fail", "degrade", "straggler", "factor",
                                     "at", NULL};
  static const char *const kinds[] = {"fail", "degrade", "straggler"};
  if (sc_expect_map(c, e, "a fault") || sc_check_keys(c, e, "a fault", keys))
    return TS_ESCHEMA;
  int which = -1, count = 0;
  for (int k = 0; k < 3; k++)
    if (topo_ymap_get(e, kinds[k])) which = k, count++;
  if (count != 1)
    return sc_err(c, e, "expected exactly one of fail, degrade, straggler");
  const char *name = NULL;
  if (sc_str(c, e, kinds[which], true, &name)) return TS_ESCHEMA;
  ts_fault_kind kind = which == 0 ? TS_FAULT_FAIL
                       : which == 1 ? TS_FAULT_DEGRADE : TS_FAULT_STRAGGLER;
  double v = 1;
  const topo_ynode *fn = topo_ymap_get(e, "factor");
  if (kind == TS_FAULT_FAIL && fn)
    return sc_err(c, fn, "'factor' goes with degrade or straggler");
  if (kind != TS_FAULT_FAIL &&
      (sc_real(c, e, "factor", true, 0, 1e6, &v) ||
       (!factor_ok(kind, v) && sc_err(c, fn, "expected %s", factor_rule(kind)))))
    return TS_ESCHEMA;
  ts_time_ps at = 0;
  const topo_ynode *an = topo_ymap_get(e, "at");
  if (an && kind != TS_FAULT_FAIL)
    return sc_err(c, an, "'at' goes with fail only");
  if (an && sc_latency(c, e, "at", true, &at)) return TS_ESCHEMA;
  if (an) kind = TS_FAULT_FAIL_AT;
  origin o = {NULL, c->file, e->line, e->col};
  return push(f, kind, name, strlen(name), v, at, &o, c->d);
}

int ts_faults_load(ts_faults *f, const char *path, ts_diag *d) {
  topo_ydoc *doc = NULL;
  int rc = topo_yaml_load_file(path, &doc, d);
  if (rc) return rc;
  sc_ctx c = {doc->file, d};
  static const char *const top[] = {"faults", NULL};
  const topo_ynode *list = NULL;
  uint32_t before = f->n;
  rc = sc_expect_map(&c, doc->root, "a faults file");
  if (!rc) rc = sc_check_keys(&c, doc->root, "a faults file", top);
  if (!rc) rc = sc_require(&c, doc->root, "faults", "a faults file", &list);
  if (!rc) rc = sc_expect_seq(&c, list, "'faults'");
  for (uint32_t i = 0; !rc && i < list->count; i++)
    rc = load_entry(f, &c, list->items[i]);
  if (rc) {
    for (uint32_t i = before; i < f->n; i++) drop(&f->v[i]);
    f->n = before;
  }
  topo_ydoc_free(doc);
  return rc;
}

/* ---- against a topology --------------------------------------------------- */

/* Node id of a GPU given by name or ordinal (topology order), or -1. */
static int64_t gpu_node(const ts_topo *t, const char *name) {
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus), id;
  char *end;
  unsigned long long k = strtoull(name, &end, 10);
  if (*name >= '0' && *name <= '9' && !*end) return k < n ? (int64_t)gpus[k] : -1;
  if (ts_topo_find_node(t, name, &id)) return -1;
  return ts_topo_node(t, id)->kind == TS_NODE_GPU ? (int64_t)id : -1;
}

static int resolve_one(ts_fault *x, const ts_topo *t, ts_route_state *scratch,
                       ts_diag *d) {
  char msg[600];
  if (x->kind == TS_FAULT_STRAGGLER) {
    int64_t g = gpu_node(t, x->name);
    if (g >= 0) {
      x->gpu = (uint32_t)g;
      return 0;
    }
    snprintf(msg, sizeof msg, "straggler '%s' is not a GPU of '%s' (expected "
             "a GPU name or index)", x->name, ts_topo_name(t));
    return fault_err(x, d, msg);
  }
  ts_diag why;
  ts_diag_clear(&why);
  if (ts_route_fail_by_name(scratch, t, x->name, &why) == 0) return 0;
  return fault_err(x, d, why.msg);
}

int ts_faults_resolve(ts_faults *f, const ts_topo *t, ts_diag *d) {
  if (!f->n) return 0;
  ts_route_state *scratch;
  if (ts_route_state_new(t, &scratch))
    return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  int rc = 0;
  for (uint32_t i = 0; !rc && i < f->n; i++)
    rc = resolve_one(&f->v[i], t, scratch, d);
  ts_route_state_free(scratch);
  return rc;
}

int ts_faults_apply(const ts_faults *f, const ts_topo *t, ts_route_state *s,
                    ts_diag *d) {
  for (uint32_t i = 0; i < f->n; i++) {
    const ts_fault *x = &f->v[i];
    ts_diag why;
    int rc = 0;
    if (x->kind == TS_FAULT_FAIL) rc = ts_route_fail_by_name(s, t, x->name, &why);
    if (x->kind == TS_FAULT_DEGRADE)
      rc = ts_route_degrade_by_name(s, t, x->name, x->factor, &why);
    if (rc) return fault_err(x, d, why.msg);
  }
  return 0;
}

int ts_faults_has(const ts_faults *f, ts_fault_kind kind) {
  for (uint32_t i = 0; i < f->n; i++)
    if (f->v[i].kind == kind) return 1;
  return 0;
}
