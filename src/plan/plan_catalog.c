/* plan_catalog.c - parts catalog reader (format: docs/planning.md "Parts
 * catalog").
 *
 *   topsim_catalog: 1
 *   switches: [{name, ports, speed, ports_per_cage?, units?, power?, price?,
 *               source}]
 *   optics:   [{name, ports, speed, fiber, reach, power?, price?, source}]
 *   cables:   [{name, kind, fiber?, speed?, reach?, power?, price?, source}]
 *
 * Strict like the topology loader: unknown keys, missing required keys,
 * wrong types and out-of-range values are errors at file:line:column; every
 * entry must say where its figures come from (`source`). Cost: O(entries). */
#include "plan/plan_catalog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_yaml.h"
#include "topsim/ts_plan.h"
#include "topsim/ts_units.h"

typedef struct cctx {
  const char *file;
  ts_diag *d;
} cctx;

static int err(const cctx *c, const topo_ynode *n, const char *fmt,
               const char *a, const char *b) {
  char msg[200];
  snprintf(msg, sizeof msg, fmt, a, b);
  return ts_diag_set(c->d, TS_ESCHEMA, c->file, n ? (int)n->line : 0,
                     n ? (int)n->col : 0, "%s", msg);
}

static int check_keys(const cctx *c, const topo_ynode *m,
                      const char *const *keys) {
  if (m->kind != TOPO_Y_MAP)
    return err(c, m, "expected a mapping%s%s", "", "");
  for (uint32_t i = 0; i < m->count; i++) {
    const topo_ynode *k = m->items[2 * i];
    size_t j = 0;
    while (keys[j] && strcmp(keys[j], k->str)) j++;
    if (!keys[j]) return err(c, k, "unknown key '%s'%s", k->str, "");
  }
  return 0;
}

static const topo_ynode *scalar(const cctx *c, const topo_ynode *m,
                                const char *key, int need, int *rc) {
  const topo_ynode *v = topo_ymap_get(m, key);
  if (!v && need) *rc = err(c, m, "missing required key '%s'%s", key, "");
  else if (v && v->kind != TOPO_Y_SCALAR)
    *rc = err(c, v, "'%s' must be a scalar%s", key, ""), v = NULL;
  return v;
}

static int get_name(const cctx *c, const topo_ynode *m, char *out, size_t n) {
  int rc = 0;
  const topo_ynode *v = scalar(c, m, "name", 1, &rc);
  if (rc) return rc;
  if (!v->len || v->len >= n)
    return err(c, v, "name must have 1 to 47 characters%s%s", "", "");
  memcpy(out, v->str, v->len + 1);
  scalar(c, m, "source", 1, &rc); /* required: where the figures come from */
  return rc;
}

static int get_uint(const cctx *c, const topo_ynode *m, const char *key,
                    int need, uint32_t lo, uint32_t hi, uint32_t *out) {
  int rc = 0;
  const topo_ynode *v = scalar(c, m, key, need, &rc);
  if (rc || !v) return rc;
  char *e;
  unsigned long x = strtoul(v->str, &e, 10);
  if (*e || e == v->str || v->str[0] == '-' || x < lo || x > hi) {
    char range[40];
    snprintf(range, sizeof range, "%u..%u", lo, hi);
    return err(c, v, "'%s' must be a whole number in %s", key, range);
  }
  *out = (uint32_t)x;
  return 0;
}

/* kind: 'b' bandwidth, 'p' power (W), 'l' length (m), 'n' plain number. */
static int get_num(const cctx *c, const topo_ynode *m, const char *key,
                   int need, char kind, double *out) {
  int rc = 0;
  const topo_ynode *v = scalar(c, m, key, need, &rc);
  if (rc || !v) return rc;
  double x = 0;
  char *e = NULL;
  int bad = 0;
  if (kind == 'b') bad = ts_parse_bandwidth(v->str, &x) != 0;
  else if (kind == 'p') bad = ts_parse_power(v->str, &x) != 0;
  else {
    x = strtod(v->str, &e);
    bad = e == v->str || (kind == 'l' ? strcmp(e, "m") != 0 : *e != 0);
  }
  if (bad || !isfinite(x) || x < 0)
    return err(c, v, "'%s' is not a %s", key,
               kind == 'b' ? "bandwidth like 400Gb/s" : kind == 'p'
               ? "power like 17W" : kind == 'l' ? "length like 50m"
               : "number >= 0");
  *out = x;
  return 0;
}

static int get_word(const cctx *c, const topo_ynode *m, const char *key,
                    int need, const char *const *allowed, char *out) {
  int rc = 0;
  const topo_ynode *v = scalar(c, m, key, need, &rc);
  if (rc || !v) return rc;
  for (size_t i = 0; allowed[i]; i++)
    if (!strcmp(allowed[i], v->str)) {
      snprintf(out, 8, "%s", v->str);
      return 0;
    }
  return err(c, v, "'%s' must be one of the documented values, not '%s'",
             key, v->str);
}

static const char *const fibers[] = {"mmf", "smf", NULL};

static int read_switch(const cctx *c, const topo_ynode *m, cat_switch *s) {
  static const char *const keys[] = {"name", "ports", "speed", "ports_per_cage",
                                     "units", "power", "price", "source", NULL};
  s->power = s->price = -1;
  s->ports_per_cage = 1;
  int rc = check_keys(c, m, keys);
  if (!rc) rc = get_name(c, m, s->name, sizeof s->name);
  if (!rc) rc = get_uint(c, m, "ports", 1, 1, 65535, &s->ports);
  if (!rc) rc = get_num(c, m, "speed", 1, 'b', &s->speed);
  if (!rc) rc = get_uint(c, m, "ports_per_cage", 0, 1, 8, &s->ports_per_cage);
  if (!rc) rc = get_uint(c, m, "units", 0, 1, 48, &s->units);
  if (!rc) rc = get_num(c, m, "power", 0, 'p', &s->power);
  if (!rc) rc = get_num(c, m, "price", 0, 'n', &s->price);
  return rc;
}

static int read_optic(const cctx *c, const topo_ynode *m, cat_optic *o) {
  static const char *const keys[] = {"name", "ports", "speed", "fiber", "reach",
                                     "power", "price", "source", NULL};
  o->power = o->price = -1;
  int rc = check_keys(c, m, keys);
  if (!rc) rc = get_name(c, m, o->name, sizeof o->name);
  if (!rc) rc = get_uint(c, m, "ports", 1, 1, 8, &o->ports);
  if (!rc) rc = get_num(c, m, "speed", 1, 'b', &o->speed);
  if (!rc) rc = get_word(c, m, "fiber", 1, fibers, o->fiber);
  if (!rc) rc = get_num(c, m, "reach", 1, 'l', &o->reach);
  if (!rc) rc = get_num(c, m, "power", 0, 'p', &o->power);
  if (!rc) rc = get_num(c, m, "price", 0, 'n', &o->price);
  return rc;
}

static int read_cable(const cctx *c, const topo_ynode *m, cat_cable *b) {
  static const char *const keys[] = {"name", "kind", "fiber", "speed", "reach",
                                     "power", "price", "source", NULL};
  static const char *const kinds[] = {"dac", "aoc", "fiber", NULL};
  b->power = b->price = -1;
  int rc = check_keys(c, m, keys);
  if (!rc) rc = get_name(c, m, b->name, sizeof b->name);
  if (!rc) rc = get_word(c, m, "kind", 1, kinds, b->kind);
  int fiber = !rc && !strcmp(b->kind, "fiber");
  if (!rc) rc = get_word(c, m, "fiber", fiber, fibers, b->fiber);
  if (!rc) rc = get_num(c, m, "speed", 0, 'b', &b->speed);
  if (!rc) rc = get_num(c, m, "reach", !fiber, 'l', &b->reach);
  if (!rc) rc = get_num(c, m, "power", 0, 'p', &b->power);
  if (!rc) rc = get_num(c, m, "price", 0, 'n', &b->price);
  return rc;
}

typedef int (*reader)(const cctx *, const topo_ynode *, void *);

static int read_list(const cctx *c, const topo_ynode *root, const char *key,
                     void *base, size_t size, uint32_t *n, reader fn) {
  const topo_ynode *l = topo_ymap_get(root, key);
  if (!l) return 0;
  if (l->kind != TOPO_Y_SEQ) return err(c, l, "'%s' must be a list%s", key, "");
  if (l->count > CAT_MAX) {
    char max[16];
    snprintf(max, sizeof max, "%d", CAT_MAX);
    return ts_diag_set(c->d, TS_ELIMIT, c->file, (int)l->line, (int)l->col,
                       "'%s' has more than %s entries", key, max);
  }
  for (uint32_t i = 0; i < l->count; i++) {
    int rc = fn(c, l->items[i], (char *)base + i * size);
    if (rc) return rc;
  }
  *n = l->count;
  return 0;
}

static int read_doc(const cctx *c, const topo_ynode *root, plan_catalog *cat) {
  static const char *const keys[] = {"topsim_catalog", "description",
                                     "switches", "optics", "cables", NULL};
  int rc = check_keys(c, root, keys);
  uint32_t version = 0;
  if (!rc) rc = get_uint(c, root, "topsim_catalog", 1, 1, 1, &version);
  if (!rc) rc = read_list(c, root, "switches", cat->sw, sizeof cat->sw[0],
                          &cat->nsw, (reader)read_switch);
  if (!rc) rc = read_list(c, root, "optics", cat->op, sizeof cat->op[0],
                          &cat->nop, (reader)read_optic);
  if (!rc) rc = read_list(c, root, "cables", cat->cb, sizeof cat->cb[0],
                          &cat->ncb, (reader)read_cable);
  return rc;
}

int plan_catalog_load(const char *path, plan_catalog *c, ts_diag *d) {
  memset(c, 0, sizeof *c);
  topo_ydoc *doc = NULL;
  const char *file = path ? path : "<bundled catalog>";
  int rc = path ? topo_yaml_load_file(path, &doc, d)
                : topo_yaml_parse(plan_catalog_default,
                                  strlen(plan_catalog_default), file, &doc, d);
  cctx cx = {file, d};
  if (!rc) rc = read_doc(&cx, doc->root, c);
  topo_ydoc_free(doc);
  return rc;
}

const cat_switch *plan_catalog_switch(const plan_catalog *c, const char *name,
                                      uint32_t radix, double speed,
                                      uint32_t *split) {
  *split = 1;
  for (uint32_t i = 0; i < c->nsw; i++) {
    const cat_switch *s = &c->sw[i];
    if (name) {
      if (strcmp(s->name, name)) continue;
      *split = s->ports && radix % s->ports == 0 ? radix / s->ports : 1;
      return s;
    }
    for (uint32_t m = 1; m <= 2; m++)
      if (s->ports * m == radix && fabs(s->speed / m - speed) < 1e-6 * speed) {
        *split = m;
        return s;
      }
  }
  return NULL;
}

int ts_plan_catalog_write(FILE *out) {
  fputs(plan_catalog_default, out);
  return ferror(out) ? TS_EIO : 0;
}
