/* plan_templates.c - node templates for the planner.
 *
 * One table holds the built-ins (name -> a small topology document: the GPU
 * model, the backend plane, the template with its compute NICs only). The
 * figures are those of topologies/dgx-a100.yaml, dgx-h100.yaml, hgx-b200.yaml
 * and hgx-b300.yaml, whose comments cite the datasheets; test_plan checks
 * the two agree. `--template FILE:NAME` takes the same path through any
 * topology file: both are parsed with the hardened YAML reader and reduced
 * to a plan_tmpl by one function.
 *
 * Reduction: the template's NIC groups on backend planes must name exactly
 * one plane; rails = the sum of their counts; speed = the group's `speed`,
 * else the plane's `bandwidth`, else its technology preset's line rate.
 * The YAML kept for emission is re-serialised in flow style from the tree,
 * with NIC groups of other planes (storage, frontend, OOB) dropped: the plan
 * covers the compute fabric only. Cost: O(document) per load. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "topo/topo_preset.h"
#include "topo/topo_yaml.h"
#include "topsim/ts_units.h"

#define PLAN_ERR(d, ...) ts_diag_set((d), TS_EUSAGE, NULL, 0, 0, __VA_ARGS__)

typedef struct builtin {
  const char *name;
  const char *doc;
} builtin;

static const builtin builtins[] = {
    {"dgx-a100",
     "gpu_models:\n"
     "  A100-SXM4-80GB: {bf16: 312TFLOP/s, hbm: 80GB, hbm_bandwidth: 2039GB/s}\n"
     "planes:\n"
     "  - {name: compute, kind: backend, technology: ib_hdr}\n"
     "templates:\n"
     "  dgx-a100:\n"
     "    gpu_model: A100-SXM4-80GB\n"
     "    power: 6.5kW\n"
     "    cpus: 2\n"
     "    cpu_link: {type: xgmi, bandwidth: 64GB/s, latency: 200ns}\n"
     "    pcie_switches: {count: 4, attach: [cpu0, cpu1], gen: 4, width: 16}\n"
     "    gpus: {count: 8, attach: [pcie0, pcie1, pcie2, pcie3], gen: 4, width: 16}\n"
     "    nvlink: {link_bandwidth: 25GB/s, efficiency: 0.8, switches: 6, links_per_switch: 2, "
     "switch_radix: 36}\n"
     "    nics:\n"
     "      - {plane: compute, count: 8, attach: [pcie0, pcie1, pcie2, pcie3], "
     "speed: 200Gb/s}\n"},
    {"dgx-h100",
     "gpu_models:\n"
     "  H100-SXM5-80GB: {bf16: 989TFLOP/s, fp8: 1979TFLOP/s, hbm: 80GB, "
     "hbm_bandwidth: 3350GB/s}\n"
     "planes:\n"
     "  - {name: compute, kind: backend, technology: ib_ndr}\n"
     "templates:\n"
     "  dgx-h100:\n"
     "    gpu_model: H100-SXM5-80GB\n"
     "    power: 10.2kW\n"
     "    cpus: 2\n"
     "    cpu_link: {type: upi, bandwidth: 83GB/s, latency: 150ns}\n"
     "    pcie_switches: {count: 4, attach: [cpu0, cpu1], gen: 5, width: 16}\n"
     "    gpus: {count: 8, attach: [pcie0, pcie1, pcie2, pcie3], gen: 5, width: 16}\n"
     "    nvlink: {link_bandwidth: 25GB/s, efficiency: 0.8, switches: 4, "
     "links_per_switch: [5, 4, 4, 5], switch_radix: 64}\n"
     "    nics:\n"
     "      - {plane: compute, count: 8, attach: [pcie0, pcie1, pcie2, pcie3], "
     "speed: 400Gb/s, gen: 5}\n"},
    {"hgx-b200",
     "gpu_models:\n"
     "  B200-SXM-180GB: {bf16: 2250TFLOP/s, fp8: 4500TFLOP/s, hbm: 180GB, "
     "hbm_bandwidth: 8000GB/s}\n"
     "planes:\n"
     "  - {name: compute, kind: backend, technology: ib_ndr}\n"
     "templates:\n"
     "  hgx-b200:\n"
     "    gpu_model: B200-SXM-180GB\n"
     "    power: 14.3kW\n"
     "    cpus: 2\n"
     "    cpu_link: {type: upi, bandwidth: 96GB/s, latency: 150ns}\n"
     "    pcie_switches: {count: 4, attach: [cpu0, cpu1], gen: 5, width: 16}\n"
     "    gpus: {count: 8, attach: [pcie0, pcie1, pcie2, pcie3], gen: 5, width: 16}\n"
     "    nvlink: {link_bandwidth: 50GB/s, efficiency: 0.8, switches: 2, links_per_switch: 9, "
     "switch_radix: 72}\n"
     "    nics:\n"
     "      - {plane: compute, count: 8, attach: [pcie0, pcie1, pcie2, pcie3], "
     "speed: 400Gb/s, gen: 5}\n"},
    {"hgx-b300",
     "gpu_models:\n"
     "  B300-SXM: {bf16: 2250TFLOP/s, fp8: 4500TFLOP/s, hbm: 288GB, "
     "hbm_bandwidth: 8000GB/s}\n"
     "planes:\n"
     "  - {name: compute, kind: backend, technology: ib_xdr}\n"
     "templates:\n"
     "  hgx-b300:\n"
     "    gpu_model: B300-SXM\n"
     "    power: 14.5kW\n"
     "    cpus: 2\n"
     "    cpu_link: {type: upi, bandwidth: 96GB/s, latency: 150ns}\n"
     "    pcie_switches: {count: 8, attach: [cpu0, cpu1], gen: 6, width: 16}\n"
     "    gpus: {count: 8, attach: [pcie0, pcie1, pcie2, pcie3, pcie4, pcie5, "
     "pcie6, pcie7], gen: 6, width: 16}\n"
     "    nvlink: {link_bandwidth: 50GB/s, efficiency: 0.8, switches: 2, links_per_switch: 9, "
     "switch_radix: 72}\n"
     "    nics:\n"
     "      - {plane: compute, count: 8, attach: [pcie0, pcie1, pcie2, pcie3, "
     "pcie4, pcie5, pcie6, pcie7], speed: 800Gb/s, gen: 6}\n"},
};
#define BUILTIN_COUNT (sizeof builtins / sizeof builtins[0])

const char *ts_plan_template_names(void) {
  return "dgx-a100, dgx-h100, hgx-b200, hgx-b300";
}

/* ---- a growable string and a flow-style serialiser ---- */

typedef struct sbuf {
  char *s;
  size_t len, cap;
  int oom;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->oom || n < 0) return;
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = (b->len + (size_t)n + 1) * 2;
    char *s = realloc(b->s, cap);
    if (!s) { b->oom = 1; return; }
    b->s = s;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* Plain when the scalar is made of safe characters and was not quoted. */
static void sb_scalar(sbuf *b, const topo_ynode *n) {
  int plain = !n->quoted && n->len > 0;
  for (uint32_t i = 0; plain && i < n->len; i++)
    plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789_./+-", n->str[i]) != NULL;
  if (plain) { sb_add(b, "%s", n->str); return; }
  sb_add(b, "\"");
  for (uint32_t i = 0; i < n->len; i++) {
    unsigned char c = (unsigned char)n->str[i];
    if (c == '"' || c == '\\') sb_add(b, "\\%c", c);
    else if (c < 0x20) sb_add(b, "\\x%02x", c);
    else sb_add(b, "%c", c);
  }
  sb_add(b, "\"");
}

/* Override of one key of one mapping while serialising. */
typedef struct ovr {
  const topo_ynode *map;   /* the mapping concerned, or NULL */
  const char *key;
  const char *value;
} ovr;

typedef struct ser_ctx {
  sbuf *b;
  const char *drop_plane;  /* drop NIC groups whose plane differs */
  const char *skip[5];     /* keys dropped from the top mapping */
  ovr o[2];
} ser_ctx;

static void ser(ser_ctx *c, const topo_ynode *n, int top);

static const char *ovr_find(const ser_ctx *c, const topo_ynode *map,
                            const char *key) {
  for (int i = 0; i < 2; i++)
    if (c->o[i].map == map && !strcmp(c->o[i].key, key)) return c->o[i].value;
  return NULL;
}

static int skipped(const ser_ctx *c, const char *key) {
  for (int i = 0; i < 5 && c->skip[i]; i++)
    if (!strcmp(c->skip[i], key)) return 1;
  return 0;
}

static void ser_map(ser_ctx *c, const topo_ynode *n, int top) {
  sb_add(c->b, "{");
  int first = 1;
  for (uint32_t i = 0; i < n->count; i++) {
    const topo_ynode *k = n->items[2 * i], *v = n->items[2 * i + 1];
    if (top && skipped(c, k->str)) continue;
    sb_add(c->b, first ? "" : ", ");
    first = 0;
    sb_scalar(c->b, k);
    sb_add(c->b, ": ");
    const char *o = ovr_find(c, n, k->str);
    if (o) sb_add(c->b, "%s", o);
    else ser(c, v, 0);
  }
  sb_add(c->b, "}");
}

/* A NIC group of another plane, dropped from the template's nics list. */
static int dropped(const ser_ctx *c, const topo_ynode *item) {
  const topo_ynode *p = topo_ymap_get(item, "plane");
  return c->drop_plane && p && p->kind == TOPO_Y_SCALAR &&
         strcmp(p->str, c->drop_plane) != 0;
}

static void ser(ser_ctx *c, const topo_ynode *n, int top) {
  if (n->kind == TOPO_Y_SCALAR) { sb_scalar(c->b, n); return; }
  if (n->kind == TOPO_Y_MAP) { ser_map(c, n, top); return; }
  sb_add(c->b, "[");
  int first = 1;
  for (uint32_t i = 0; i < n->count; i++) {
    if (dropped(c, n->items[i])) continue;
    sb_add(c->b, first ? "" : ", ");
    first = 0;
    ser(c, n->items[i], 0);
  }
  sb_add(c->b, "]");
}

/* ---- reduction of a document to a plan_tmpl ---- */

static const char *scalar(const topo_ynode *map, const char *key) {
  const topo_ynode *v = topo_ymap_get(map, key);
  return v && v->kind == TOPO_Y_SCALAR ? v->str : NULL;
}

/* Plane entry named `name` of the document, or NULL. */
static const topo_ynode *find_plane(const topo_ynode *root, const char *name) {
  const topo_ynode *ps = topo_ymap_get(root, "planes");
  for (uint32_t i = 0; ps && ps->kind == TOPO_Y_SEQ && i < ps->count; i++) {
    const char *pn = scalar(ps->items[i], "name");
    if (pn && !strcmp(pn, name)) return ps->items[i];
  }
  return NULL;
}

static int is_backend(const topo_ynode *root, const char *plane) {
  const topo_ynode *p = find_plane(root, plane);
  const char *k = p ? scalar(p, "kind") : NULL;
  return k && !strcmp(k, "backend");
}

typedef struct nic_scan {
  const char *plane;
  const topo_ynode *group;  /* the one backend group, NULL if several */
  uint32_t groups, rails;
} nic_scan;

static int scan_nics(const topo_ynode *root, const topo_ynode *tm,
                     nic_scan *s, ts_diag *d) {
  const topo_ynode *nics = topo_ymap_get(tm, "nics");
  memset(s, 0, sizeof *s);
  for (uint32_t i = 0; nics && nics->kind == TOPO_Y_SEQ && i < nics->count; i++) {
    const char *p = scalar(nics->items[i], "plane");
    const char *cnt = scalar(nics->items[i], "count");
    if (!p || !is_backend(root, p)) continue;
    if (s->plane && strcmp(s->plane, p))
      return PLAN_ERR(d, "template has NICs on backend planes '%s' and '%s': "
                      "the planner sizes one backend fabric", s->plane, p);
    s->plane = p;
    s->group = s->groups++ ? NULL : nics->items[i];
    s->rails += cnt ? (uint32_t)strtoul(cnt, NULL, 10) : 0;
  }
  if (!s->plane || !s->rails)
    return PLAN_ERR(d, "template has no NICs on a backend plane (kind: "
                    "backend) to plan a fabric for");
  return 0;
}

/* Nominal speed and efficiency of the backend NICs. */
static int nic_speed(const topo_ynode *plane, const nic_scan *s,
                     plan_tmpl *t, ts_diag *d) {
  const char *tech = scalar(plane, "technology");
  const topo_net_preset *pr = tech ? topo_net_preset_find(tech) : NULL;
  const char *bw = s->group ? scalar(s->group, "speed") : NULL;
  const char *pbw = scalar(plane, "bandwidth");
  const char *eff = scalar(plane, "efficiency");
  t->speed = pr ? pr->line_rate : 0;
  t->efficiency = pr ? pr->efficiency : 1.0;
  if (eff) t->efficiency = strtod(eff, NULL);
  if (pbw && ts_parse_bandwidth(pbw, &t->speed))
    return PLAN_ERR(d, "plane '%s': bad bandwidth '%s'", s->plane, pbw);
  if (bw && ts_parse_bandwidth(bw, &t->speed))
    return PLAN_ERR(d, "template NICs: bad speed '%s'", bw);
  if (t->speed <= 0)
    return PLAN_ERR(d, "cannot tell the speed of the NICs on plane '%s'",
                    s->plane);
  snprintf(t->technology, sizeof t->technology, "%s", pr ? tech : "");
  return 0;
}

static char *ser_text(const topo_ynode *n, ser_ctx *c) {
  sbuf b = {0};
  c->b = &b;
  ser(c, n, 1);
  if (b.oom) { free(b.s); return NULL; }
  return b.s;
}

/* "count" of the NIC group may change only when attach divides it. */
static int rails_override(const nic_scan *s, uint32_t rails, ts_diag *d) {
  if (!s->group)
    return PLAN_ERR(d, "--rails %u needs a template with one compute NIC "
                    "group, not %u", rails, s->groups);
  const topo_ynode *a = topo_ymap_get(s->group, "attach");
  if (a && a->kind == TOPO_Y_SEQ && a->count && rails % a->count)
    return PLAN_ERR(d, "--rails %u: the template attaches its compute NICs "
                    "to %u devices, which must divide the rail count", rails,
                    a->count);
  return 0;
}

static int emit_texts(const topo_ynode *model, const topo_ynode *plane,
                      const topo_ynode *tm, const nic_scan *s, uint32_t rails,
                      double speed, plan_tmpl *t, ts_diag *d) {
  char rs[16], sp[32];
  snprintf(rs, sizeof rs, "%u", rails);
  snprintf(sp, sizeof sp, "%.6gGb/s", speed * 8 / 1e9);
  ser_ctx pc = {.skip = {"generator", "switches", "links", "attach_nics",
                         "bandwidth"}};
  ser_ctx mc = {0};
  ser_ctx tc = {.drop_plane = s->plane,
                .o = {{rails ? s->group : NULL, "count", rs},
                      {speed > 0 ? s->group : NULL, "speed", sp}}};
  t->model_yaml = ser_text(model, &mc);
  t->plane_yaml = ser_text(plane, &pc);
  t->tmpl_yaml = ser_text(tm, &tc);
  if (!t->model_yaml || !t->plane_yaml || !t->tmpl_yaml)
    return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  if (speed > 0 && (!s->group || !topo_ymap_get(s->group, "speed")))
    return PLAN_ERR(d, "--port-speed needs the template's compute NIC group "
                    "to state its speed");
  return 0;
}

static int reduce(const topo_ynode *root, const char *name, uint32_t rails,
                  double speed, plan_tmpl *t, ts_diag *d) {
  const topo_ynode *tm = topo_ymap_get(topo_ymap_get(root, "templates"), name);
  if (!tm || tm->kind != TOPO_Y_MAP)
    return PLAN_ERR(d, "no template '%s' in the file", name);
  const char *model = scalar(tm, "gpu_model");
  const char *g = scalar(topo_ymap_get(tm, "gpus"), "count");
  const topo_ynode *mnode =
      model ? topo_ymap_get(topo_ymap_get(root, "gpu_models"), model) : NULL;
  if (!model || !g || !mnode)
    return PLAN_ERR(d, "template '%s' has no GPUs with a GPU model declared "
                    "under 'gpu_models'", name);
  nic_scan s;
  int rc = scan_nics(root, tm, &s, d);
  if (!rc && rails && rails != s.rails) rc = rails_override(&s, rails, d);
  const topo_ynode *plane = s.plane ? find_plane(root, s.plane) : NULL;
  if (!rc) rc = nic_speed(plane, &s, t, d);
  if (rc) return rc;
  snprintf(t->name, sizeof t->name, "%s", name);
  snprintf(t->model, sizeof t->model, "%s", model);
  snprintf(t->plane, sizeof t->plane, "%s", s.plane);
  t->gpus = (uint32_t)strtoul(g, NULL, 10);
  t->rails = s.rails;
  const char *pw = scalar(tm, "power");
  if (pw && ts_parse_power(pw, &t->power))
    return PLAN_ERR(d, "template '%s': bad power '%s'", name, pw);
  return emit_texts(mnode, plane, tm, &s, rails != s.rails ? rails : 0,
                    speed != t->speed ? speed : 0, t, d);
}

/* Parses the document (built-in or file) and reduces template `name`. */
static int load_doc(const char *text, const char *file, const char *name,
                    uint32_t rails, double speed, plan_tmpl *t, ts_diag *d) {
  topo_ydoc *doc = NULL;
  int rc = text ? topo_yaml_parse(text, strlen(text), file, &doc, d)
                : topo_yaml_load_file(file, &doc, d);
  if (!rc) rc = reduce(doc->root, name, rails, speed, t, d);
  topo_ydoc_free(doc);
  return rc;
}

int plan_tmpl_load(const char *spec, uint32_t rails, double speed,
                   plan_tmpl *out, ts_diag *d) {
  memset(out, 0, sizeof *out);
  const char *colon = strrchr(spec, ':');
  int rc;
  if (colon) {
    char path[1024];
    snprintf(path, sizeof path, "%.*s", (int)(colon - spec), spec);
    rc = load_doc(NULL, path, colon + 1, rails, speed, out, d);
  } else {
    size_t i = 0;
    while (i < BUILTIN_COUNT && strcmp(builtins[i].name, spec)) i++;
    if (i == BUILTIN_COUNT)
      return PLAN_ERR(d, "unknown template '%s'; built-ins: %s, or FILE:NAME",
                      spec, ts_plan_template_names());
    rc = load_doc(builtins[i].doc, builtins[i].name, spec, rails, speed, out,
                  d);
  }
  if (rc) plan_tmpl_free(out);
  return rc;
}

void plan_tmpl_free(plan_tmpl *t) {
  if (!t) return;
  free(t->model_yaml);
  free(t->plane_yaml);
  free(t->tmpl_yaml);
  t->model_yaml = t->plane_yaml = t->tmpl_yaml = NULL;
}
