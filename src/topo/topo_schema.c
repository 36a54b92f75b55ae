/* topo_schema.c - typed getters over the YAML tree (see topo_schema.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_schema.h"

int sc_err(const sc_ctx *c, const topo_ynode *n, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ts_diag_set(c->d, TS_ESCHEMA, c->file, n ? (int)n->line : 0,
                     n ? (int)n->col : 0, "%s", msg);
}

static const char *kind_name(const topo_ynode *n) {
  switch (n->kind) {
  case TOPO_Y_MAP: return "a mapping";
  case TOPO_Y_SEQ: return "a list";
  default: return "a scalar";
  }
}

int sc_expect_map(const sc_ctx *c, const topo_ynode *n, const char *what) {
  if (n->kind == TOPO_Y_MAP) return 0;
  return sc_err(c, n, "%s must be a mapping (key: value), found %s", what,
                kind_name(n));
}

int sc_expect_seq(const sc_ctx *c, const topo_ynode *n, const char *what) {
  if (n->kind == TOPO_Y_SEQ) return 0;
  return sc_err(c, n, "%s must be a list, found %s", what, kind_name(n));
}

int sc_check_keys(const sc_ctx *c, const topo_ynode *map, const char *what,
                  const char *const *allowed) {
  for (uint32_t i = 0; i < map->count; i++) {
    const topo_ynode *k = map->items[2 * i];
    bool ok = false;
    for (const char *const *a = allowed; *a && !ok; a++)
      ok = strcmp(k->str, *a) == 0;
    if (ok) continue;
    char list[400] = "";
    for (const char *const *a = allowed; *a; a++) {
      size_t len = strlen(list);
      snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", *a);
    }
    return sc_err(c, k, "unknown key '%s' in %s; expected one of: %s", k->str,
                  what, list);
  }
  return 0;
}

int sc_require(const sc_ctx *c, const topo_ynode *map, const char *key,
               const char *what, const topo_ynode **out) {
  *out = topo_ymap_get(map, key);
  if (*out) return 0;
  return sc_err(c, map, "%s is missing required key '%s'", what, key);
}

/* Looks key up; *v NULL when absent (error only if required). */
static int lookup(const sc_ctx *c, const topo_ynode *map, const char *key,
                  bool required, const topo_ynode **v) {
  *v = topo_ymap_get(map, key);
  if (!*v && required) return sc_err(c, map, "missing required key '%s'", key);
  if (*v && (*v)->kind != TOPO_Y_SCALAR)
    return sc_err(c, *v, "'%s' must be a single value, found %s", key,
                  kind_name(*v));
  return 0;
}

int sc_node_str(const sc_ctx *c, const topo_ynode *n, const char *what,
                const char **out) {
  if (n->kind != TOPO_Y_SCALAR)
    return sc_err(c, n, "%s must be a string, found %s", what, kind_name(n));
  *out = n->str;
  return 0;
}

int sc_str(const sc_ctx *c, const topo_ynode *map, const char *key,
           bool required, const char **out) {
  const topo_ynode *v;
  int rc = lookup(c, map, key, required, &v);
  if (rc || !v) return rc;
  if (v->len == 0) return sc_err(c, v, "'%s' must not be empty", key);
  *out = v->str;
  return 0;
}

int sc_node_uint(const sc_ctx *c, const topo_ynode *n, uint32_t min,
                 uint32_t max, uint32_t *out) {
  if (n->kind != TOPO_Y_SCALAR || n->quoted || n->len == 0 ||
      strspn(n->str, "0123456789") != n->len || n->len > 10)
    return sc_err(c, n, "expected a whole number, found '%s'",
                  n->kind == TOPO_Y_SCALAR ? n->str : kind_name(n));
  unsigned long long v = strtoull(n->str, NULL, 10);
  if (v < min || v > max)
    return sc_err(c, n, "%llu is out of range: expected %u to %u", v, min, max);
  *out = (uint32_t)v;
  return 0;
}

int sc_uint(const sc_ctx *c, const topo_ynode *map, const char *key,
            bool required, uint32_t min, uint32_t max, uint32_t *out) {
  const topo_ynode *v;
  int rc = lookup(c, map, key, required, &v);
  if (rc || !v) return rc;
  rc = sc_node_uint(c, v, min, max, out);
  if (rc) return sc_err(c, v, "'%s': %s", key, c->d ? c->d->msg : "bad value");
  return 0;
}

int sc_bool(const sc_ctx *c, const topo_ynode *map, const char *key,
            bool required, bool *out) {
  const topo_ynode *v;
  int rc = lookup(c, map, key, required, &v);
  if (rc || !v) return rc;
  if (!v->quoted && strcmp(v->str, "true") == 0) *out = true;
  else if (!v->quoted && strcmp(v->str, "false") == 0) *out = false;
  else return sc_err(c, v, "'%s' must be true or false, found '%s'", key, v->str);
  return 0;
}

int sc_real(const sc_ctx *c, const topo_ynode *map, const char *key,
            bool required, double min, double max, double *out) {
  const topo_ynode *v;
  int rc = lookup(c, map, key, required, &v);
  if (rc || !v) return rc;
  char *end = NULL;
  errno = 0;
  double x = v->quoted ? 0 : strtod(v->str, &end);
  if (v->quoted || end == v->str || *end || errno ||
      strspn(v->str, "0123456789.") != v->len)
    return sc_err(c, v, "'%s' must be a plain number, found '%s'", key, v->str);
  if (x < min || x > max)
    return sc_err(c, v, "'%s' = %g is out of range: expected %g to %g", key, x,
                  min, max);
  *out = x;
  return 0;
}

typedef int (*unit_parser)(const char *, void *);

static int quantity(const sc_ctx *c, const topo_ynode *map, const char *key,
                    bool required, unit_parser parse, void *out,
                    const char *expect) {
  const topo_ynode *v;
  int rc = lookup(c, map, key, required, &v);
  if (rc || !v) return rc;
  int prc = parse(v->str, out);
  if (prc == 0) return 0;
  if (prc == TS_ELIMIT)
    return sc_err(c, v, "'%s' = '%s' is out of range: expected at most 3600s",
                  key, v->str);
  if (strspn(v->str, "0123456789.") == v->len)
    return sc_err(c, v, "'%s' = %s has no unit: expected %s", key, v->str,
                  expect);
  return sc_err(c, v, "'%s' = '%s' is not a valid quantity: expected %s", key,
                v->str, expect);
}

static int parse_bw(const char *s, void *o) { return ts_parse_bandwidth(s, o); }
static int parse_lat(const char *s, void *o) { return ts_parse_latency(s, o); }
static int parse_size(const char *s, void *o) { return ts_parse_size(s, o); }
static int parse_flops(const char *s, void *o) { return ts_parse_flops(s, o); }

int sc_bandwidth(const sc_ctx *c, const topo_ynode *map, const char *key,
                 bool required, double *out) {
  double v = *out;
  int rc = quantity(c, map, key, required, parse_bw, &v,
                    "a bandwidth such as 450GB/s or 400Gb/s");
  if (rc || !topo_ymap_get(map, key)) return rc;
  if (v <= 0) /* a zero-rate link would stall every transfer over it */
    return sc_err(c, topo_ymap_get(map, key), "'%s' must be above zero", key);
  *out = v;
  return 0;
}
int sc_latency(const sc_ctx *c, const topo_ynode *map, const char *key,
               bool required, ts_time_ps *out) {
  ts_time_ps v = *out;
  int rc = quantity(c, map, key, required, parse_lat, &v,
                    "a time such as 500ns or 1.2us");
  if (rc || !topo_ymap_get(map, key)) return rc;
  if (v > TS_MAX_LATENCY_PS) /* a typo; sums of it must fit 64-bit ps */
    return sc_err(c, topo_ymap_get(map, key), "'%s' = '%s' is out of range: "
                  "expected at most 3600s", key, topo_ymap_get(map, key)->str);
  *out = v;
  return 0;
}
int sc_size(const sc_ctx *c, const topo_ynode *map, const char *key,
            bool required, uint64_t *out) {
  return quantity(c, map, key, required, parse_size, out,
                  "a size such as 80GB or 64KiB");
}
int sc_flops(const sc_ctx *c, const topo_ynode *map, const char *key,
             bool required, double *out) {
  return quantity(c, map, key, required, parse_flops, out,
                  "a compute rate such as 989TFLOP/s");
}
