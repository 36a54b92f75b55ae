/* topo_load.c - topology format v1: document -> graph.
 *
 * Schema summary (docs/topology-format.md is the full reference):
 *
 *   topsim: 1                       format version (required)
 *   name: STRING                    (required)
 *   description: STRING
 *   gpu_models:                     MODEL -> {bf16, fp8?, hbm, hbm_bandwidth, sms?}
 *   planes:                         list of {name, kind, technology?,
 *                                   bandwidth?, efficiency?, latency?,
 *                                   overhead?, generator? | switches?,
 *                                   links?, attach_nics?}
 *   templates:                      NAME -> {gpu_model?, cpus?, cpu_link?,
 *                                   pcie_switches?, gpus?, nics?, nvlink?,
 *                                   power?}
 *   nodes:                          list of {name, template, count,
 *                                   per_rack?, per_su?}
 *
 * Stages, each in its own file: YAML tree (topo_yaml.c) -> GPU models and
 * plane declarations (here, topo_plane.c) -> templates (topo_template.c) ->
 * hosts stamped out in order (here) -> plane fabrics (topo_plane.c and the
 * generators) -> CSR and indexes (topo_graph.c). Cost: O(input) parsing plus
 * O(nodes + links) building. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_load.h"
#include "topsim/ts_budget.h"
#include "topsim/ts_checked.h"

static const char *const top_keys[] = {"topsim", "name", "description",
                                       "gpu_models", "planes", "templates",
                                       "nodes", NULL};

int topo_key_name(const sc_ctx *c, const topo_ynode *key, const char *what) {
  if (key->len > TOPO_MAX_NAME)
    return sc_err(c, key, "%s name is %u bytes long: at most %u", what,
                  key->len, TOPO_MAX_NAME);
  return 0;
}

int topo_name(const sc_ctx *c, const topo_ynode *map, const char *key,
              const char *what, bool no_slash, const char **out) {
  if (sc_str(c, map, key, true, out)) return TS_ESCHEMA;
  const topo_ynode *v = topo_ymap_get(map, key);
  if (topo_key_name(c, v, what)) return TS_ESCHEMA;
  if (no_slash && strchr(*out, '/'))
    return sc_err(c, v, "%s name '%s' must not contain '/'", what, *out);
  return 0;
}

/* Indexes GPU models by name once they are all declared. */
static int index_models(topo_loader *L) {
  uint32_t n = L->t->model_count;
  topo_name_ent *e = malloc(((size_t)n + 1) * sizeof *e);
  if (!e) return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++) e[i] = (topo_name_ent){L->t->models[i].name, i};
  topo_nameidx_build(&L->model_idx, e, n);
  return 0;
}

static int parse_models(topo_loader *L, const topo_ynode *map) {
  const sc_ctx *c = &L->sc;
  static const char *const keys[] = {"bf16", "fp8", "hbm", "hbm_bandwidth", "sms", NULL};
  if (sc_expect_map(c, map, "'gpu_models'")) return TS_ESCHEMA;
  if (map->count > TOPO_MAX_MODELS) /* before allocating any of them */
    return sc_err(c, map->items[2 * TOPO_MAX_MODELS], "more than %u GPU models",
                  TOPO_MAX_MODELS);
  for (uint32_t i = 0; i < map->count; i++) {
    const topo_ynode *k = map->items[2 * i], *m = map->items[2 * i + 1];
    ts_gpu_model g;
    memset(&g, 0, sizeof g);
    char what[160];
    snprintf(what, sizeof what, "gpu model '%.100s'", k->str);
    if (topo_key_name(c, k, "GPU model") || sc_expect_map(c, m, what) || sc_check_keys(c, m, what, keys) ||
        sc_flops(c, m, "bf16", true, &g.bf16_flops) ||
        sc_flops(c, m, "fp8", false, &g.fp8_flops) ||
        sc_size(c, m, "hbm", true, &g.hbm_bytes) ||
        sc_bandwidth(c, m, "hbm_bandwidth", true, &g.hbm_bandwidth) ||
        sc_uint(c, m, "sms", false, 1, 4096, &g.sms))
      return TS_ESCHEMA;
    g.name = topo_strdup(L->t, k->str);
    if (topo_add_model(L->t, &g) == UINT16_MAX) return TS_ENOMEM;
  }
  return index_models(L);
}

static const topo_tmpl *find_template(const topo_loader *L, const char *name) {
  int64_t i = topo_nameidx_find(&L->tmpl_idx, name);
  return i < 0 ? NULL : &L->tmpls[i];
}

typedef struct group_in {
  const char *name;
  const topo_tmpl *tm;
  uint32_t count, per_rack, per_su;
} group_in;

static int parse_group(topo_loader *L, const topo_ynode *m, group_in *g) {
  const sc_ctx *c = &L->sc;
  static const char *const keys[] = {"name", "template", "count", "per_rack",
                                     "per_su", NULL};
  const char *tname;
  if (sc_expect_map(c, m, "a node group") || sc_check_keys(c, m, "node group", keys) ||
      topo_name(c, m, "name", "node", true, &g->name) ||
      sc_str(c, m, "template", true, &tname) ||
      sc_uint(c, m, "count", true, 1, 1u << 22, &g->count))
    return TS_ESCHEMA;
  g->per_rack = 1;
  g->per_su = 0; /* no SU label unless asked: generators then use host order */
  if (sc_uint(c, m, "per_rack", false, 1, 1u << 22, &g->per_rack) ||
      sc_uint(c, m, "per_su", false, 1, 1u << 22, &g->per_su))
    return TS_ESCHEMA;
  g->tm = find_template(L, tname);
  if (!g->tm)
    return sc_err(c, topo_ymap_get(m, "template"), "template '%s' is not "
                  "defined under 'templates'", tname);
  return 0;
}

/* Adds a group's devices and links to the running totals and refuses, at the
 * group's position and before any of its hosts is built, a total over the
 * device or link budget (ts_budget.h). Checked arithmetic: 4194304 hosts of
 * 1024 GPUs is 2^32 devices, past uint32. */
static int budget_group(topo_loader *L, const topo_ynode *at, const group_in *g,
                        uint64_t *devices, uint64_t *links) {
  uint64_t dev, lnk, d, l;
  topo_template_size(g->tm, &dev, &lnk);
  const ts_budget *b = ts_budget_get();
  int over_d = ts_mul_u64(dev, g->count, &d) || ts_add_u64(*devices, d, &d) ||
               d > b->devices;
  int over_l = ts_mul_u64(lnk, g->count, &l) || ts_add_u64(*links, l, &l) ||
               l > b->links;
  if (over_d || over_l) {
    char what[200];
    snprintf(what, sizeof what, "node group '%.100s' (%u hosts of %llu devices "
             "and %llu links) brings the topology to %s", g->name, g->count,
             (unsigned long long)dev, (unsigned long long)lnk,
             over_d ? "too many devices" : "too many links");
    return ts_budget_refuse(L->sc.d, over_d ? TS_BUDGET_DEVICES : TS_BUDGET_LINKS,
                            L->sc.file, (int)at->line, (int)at->col, what);
  }
  *devices = d;
  *links = l;
  return 0;
}

/* Hosts are numbered across groups; racks and SUs continue from the last. */
static int build_nodes(topo_loader *L, const topo_ynode *seq) {
  if (sc_expect_seq(&L->sc, seq, "'nodes'")) return TS_ESCHEMA;
  int32_t rack0 = 0, su0 = 0, host = 0;
  uint64_t devices = 0, links = 0;
  for (uint32_t i = 0; i < seq->count; i++) {
    group_in g;
    int rc = parse_group(L, seq->items[i], &g);
    if (rc) return rc;
    if ((uint64_t)host + g.count > (1u << 22))
      return sc_err(&L->sc, seq->items[i], "more than %u nodes", 1u << 22);
    rc = budget_group(L, seq->items[i], &g, &devices, &links);
    if (rc) return rc;
    topo_push_mark(L->t, seq->items[i]->line, seq->items[i]->col);
    for (uint32_t k = 0; k < g.count; k++) {
      char name[160];
      snprintf(name, sizeof name, "%s%u", g.name, k);
      int32_t su = g.per_su ? su0 + (int32_t)(k / g.per_su) : TS_NONE;
      rc = topo_template_instantiate(L, g.tm, name, host++,
                                     rack0 + (int32_t)(k / g.per_rack), su);
      if (rc) return rc;
    }
    rack0 += (int32_t)((g.count + g.per_rack - 1) / g.per_rack);
    if (g.per_su) su0 += (int32_t)((g.count + g.per_su - 1) / g.per_su);
  }
  L->t->host_count = (uint32_t)host;
  return 0;
}

static int parse_header(topo_loader *L, const topo_ynode *root) {
  const sc_ctx *c = &L->sc;
  uint32_t version = 0;
  const char *name;
  if (sc_expect_map(c, root, "the document") ||
      sc_check_keys(c, root, "the document", top_keys) ||
      sc_uint(c, root, "topsim", true, 1, 1000, &version))
    return TS_ESCHEMA;
  if (version != 1)
    return sc_err(c, topo_ymap_get(root, "topsim"), "format version %u is not "
                  "supported: this topsim reads version 1", version);
  if (sc_str(c, root, "name", true, &name)) return TS_ESCHEMA;
  char *copy = strdup(name);
  if (!copy) return TS_ENOMEM;
  free(L->t->name);
  L->t->name = copy;
  const char *desc = NULL;
  return sc_str(c, root, "description", false, &desc);
}

static int load_doc(topo_loader *L, const topo_ynode *root) {
  const topo_ynode *v;
  int rc = parse_header(L, root);
  if (!rc && (v = topo_ymap_get(root, "gpu_models"))) rc = parse_models(L, v);
  if (!rc && (v = topo_ymap_get(root, "planes"))) rc = topo_planes_declare(L, v);
  if (!rc && (v = topo_ymap_get(root, "templates"))) rc = topo_templates_parse(L, v);
  if (!rc) rc = sc_require(&L->sc, root, "nodes", "the document", &v);
  if (!rc) rc = build_nodes(L, v);
  if (!rc) rc = topo_planes_build(L);
  if (!rc) rc = topo_finalize(L->t, L->sc.d);
  if (rc == TS_ENOMEM && L->t->over_budget) {
    topo_mark m = L->t->marks[L->t->cur_mark]; /* the generator or group */
    return ts_budget_refuse(L->sc.d, L->t->over_budget - 1, L->sc.file,
                            (int)m.line, (int)m.col,
                            "the fabric this generator builds is too large");
  }
  if (rc == TS_ENOMEM)
    ts_diag_set(L->sc.d, rc, L->sc.file, 0, 0, "out of memory building the topology");
  return rc;
}

static int load_tree(const topo_ydoc *doc, const char *file, ts_topo **out,
                     ts_diag *d) {
  topo_loader L;
  memset(&L, 0, sizeof L);
  L.sc.file = file;
  L.sc.d = d;
  L.t = topo_new(file);
  if (!L.t) return ts_diag_set(d, TS_ENOMEM, file, 0, 0, "out of memory");
  int rc = load_doc(&L, doc->root);
  topo_templates_free(&L);
  free(L.planes);
  topo_nameidx_free(&L.model_idx);
  topo_nameidx_free(&L.plane_idx);
  topo_nameidx_free(&L.tmpl_idx);
  if (rc) {
    ts_topo_free(L.t);
    return rc;
  }
  *out = L.t;
  return 0;
}

int ts_topo_load_buffer(const char *buf, size_t len, const char *name,
                        ts_topo **out, ts_diag *d) {
  *out = NULL;
  topo_ydoc *doc = NULL;
  int rc = topo_yaml_parse(buf, len, name, &doc, d);
  if (rc) return rc;
  rc = load_tree(doc, name, out, d);
  topo_ydoc_free(doc);
  return rc;
}

/* True if the file's first non-blank byte (after a UTF-8 BOM) is '<'. */
static bool looks_like_xml(const char *path) {
  char buf[512];
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof buf, f), i = 0;
  fclose(f);
  if (n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) i = 3;
  while (i < n && strchr(" \t\r\n", buf[i])) i++;
  return i < n && buf[i] == '<';
}

/* Writes s as a double-quoted YAML scalar. */
static void yaml_quoted(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* The small YAML an XML import stands for: one template from the file,
 * `hosts` copies of it, their NICs on plane `net` (rail-optimized over
 * `fabric` with 64-port switches split 1:1, or uncabled when fabric is
 * NULL). It is loaded by the ordinary YAML path under the XML's own name,
 * so the template's relative nccl_topo resolves back to the file. */
static int xml_wrapper(const char *path, uint32_t hosts, const char *fabric,
                       uint32_t tiers, char **buf, size_t *len) {
  FILE *f = open_memstream(buf, len);
  if (!f) return TS_ENOMEM;
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  fprintf(f, "topsim: 1\nname: ");
  yaml_quoted(f, base);
  fprintf(f, "\nplanes:\n  - name: net\n    kind: backend\n");
  if (!fabric) {
    fprintf(f, "    bandwidth: 100Gb/s\n    latency: 1us\n");
  } else {
    fprintf(f, "    technology: %s\n    generator:\n      type: rail_optimized\n"
            "      tiers: %u\n      leaf: {radix: 64}\n", fabric, tiers);
    if (tiers >= 2) fprintf(f, "      spine: {radix: 64}\n");
    if (tiers >= 3) fprintf(f, "      core: {radix: 64}\n");
  }
  fprintf(f, "templates:\n  node: {nccl_topo: ");
  yaml_quoted(f, base);
  fprintf(f, "}\nnodes:\n  - {name: node, template: node, count: %u", hosts);
  if (tiers >= 2) fprintf(f, ", per_su: 32");
  fprintf(f, "}\n");
  return fclose(f) ? TS_ENOMEM : 0;
}

static int load_xml_tiers(const char *path, uint32_t hosts, const char *fabric,
                          uint32_t tiers, ts_topo **out, ts_diag *d) {
  char *buf = NULL, name[1200];
  size_t len = 0;
  /* The wrapper's own (unlikely) errors name it, not the XML's lines; the
   * label has no '/', so nccl_topo still resolves beside the XML file. */
  if (fabric) snprintf(name, sizeof name, "%s [as %u hosts on %s, %u tiers]", path,
                       hosts, fabric, tiers);
  else snprintf(name, sizeof name, "%s [as %u hosts]", path, hosts);
  int rc = xml_wrapper(path, hosts, fabric, tiers, &buf, &len);
  if (rc) rc = ts_diag_set(d, rc, path, 0, 0, "out of memory");
  else rc = ts_topo_load_buffer(buf, len, name, out, d);
  free(buf);
  return rc;
}

int ts_topo_load_nccl_xml(const char *path, uint32_t hosts, const char *fabric,
                          ts_topo **out, ts_diag *d) {
  *out = NULL;
  if (hosts < 1 || hosts > (1u << 22))
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "--hosts must be 1 to %u", 1u << 22);
  if (!looks_like_xml(path)) {
    FILE *f = fopen(path, "rb");
    if (!f) return ts_diag_set(d, TS_ENOINPUT, path, 0, 0, "cannot open");
    fclose(f);
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "--hosts and --fabric apply "
                       "to an NCCL topology XML; '%s' is not XML (a YAML "
                       "topology gives its hosts under 'nodes')", path);
  }
  if (fabric && !topo_net_preset_find(fabric))
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "--fabric '%s' is not one of: %s",
                       fabric, topo_net_preset_names());
  if (!fabric) return load_xml_tiers(path, hosts, NULL, 0, out, d);
  /* The fewest tiers the Clos sizing rules accept for this many hosts. */
  int rc = TS_ESCHEMA;
  for (uint32_t tiers = hosts <= 64 ? 1 : 2; tiers <= 3; tiers++) {
    ts_diag_clear(d);
    rc = load_xml_tiers(path, hosts, fabric, tiers, out, d);
    if (rc != TS_ESCHEMA) break;
  }
  return rc;
}

int ts_topo_load_file(const char *path, ts_topo **out, ts_diag *d) {
  *out = NULL;
  if (looks_like_xml(path)) return ts_topo_load_nccl_xml(path, 1, NULL, out, d);
  topo_ydoc *doc = NULL;
  int rc = topo_yaml_load_file(path, &doc, d);
  if (rc) return rc;
  rc = load_tree(doc, path, out, d);
  topo_ydoc_free(doc);
  return rc;
}
