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

static const char *const top_keys[] = {"topsim", "name", "description",
                                       "gpu_models", "planes", "templates",
                                       "nodes", NULL};

static int parse_models(topo_loader *L, const topo_ynode *map) {
  const sc_ctx *c = &L->sc;
  static const char *const keys[] = {"bf16", "fp8", "hbm", "hbm_bandwidth", "sms", NULL};
  if (sc_expect_map(c, map, "'gpu_models'")) return TS_ESCHEMA;
  for (uint32_t i = 0; i < map->count; i++) {
    const topo_ynode *k = map->items[2 * i], *m = map->items[2 * i + 1];
    ts_gpu_model g;
    memset(&g, 0, sizeof g);
    char what[160];
    snprintf(what, sizeof what, "gpu model '%s'", k->str);
    if (sc_expect_map(c, m, what) || sc_check_keys(c, m, what, keys) ||
        sc_flops(c, m, "bf16", true, &g.bf16_flops) ||
        sc_flops(c, m, "fp8", false, &g.fp8_flops) ||
        sc_size(c, m, "hbm", true, &g.hbm_bytes) ||
        sc_bandwidth(c, m, "hbm_bandwidth", true, &g.hbm_bandwidth) ||
        sc_uint(c, m, "sms", false, 1, 4096, &g.sms))
      return TS_ESCHEMA;
    g.name = topo_strdup(L->t, k->str);
    if (topo_add_model(L->t, &g) == UINT16_MAX) return TS_ENOMEM;
  }
  return 0;
}

static const topo_tmpl *find_template(const topo_loader *L, const char *name) {
  for (uint32_t i = 0; i < L->tmpl_count; i++)
    if (strcmp(L->tmpls[i].name, name) == 0) return &L->tmpls[i];
  return NULL;
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
      sc_str(c, m, "name", true, &g->name) ||
      sc_str(c, m, "template", true, &tname) ||
      sc_uint(c, m, "count", true, 1, 1u << 22, &g->count))
    return TS_ESCHEMA;
  g->per_rack = 1;
  g->per_su = 0; /* no SU label unless asked: generators then use host order */
  if (sc_uint(c, m, "per_rack", false, 1, 1u << 22, &g->per_rack) ||
      sc_uint(c, m, "per_su", false, 1, 1u << 22, &g->per_su))
    return TS_ESCHEMA;
  if (strchr(g->name, '/'))
    return sc_err(c, topo_ymap_get(m, "name"), "node name '%s' must not "
                  "contain '/'", g->name);
  g->tm = find_template(L, tname);
  if (!g->tm)
    return sc_err(c, topo_ymap_get(m, "template"), "template '%s' is not "
                  "defined under 'templates'", tname);
  return 0;
}

/* Hosts are numbered across groups; racks and SUs continue from the last. */
static int build_nodes(topo_loader *L, const topo_ynode *seq) {
  if (sc_expect_seq(&L->sc, seq, "'nodes'")) return TS_ESCHEMA;
  int32_t rack0 = 0, su0 = 0, host = 0;
  for (uint32_t i = 0; i < seq->count; i++) {
    group_in g;
    int rc = parse_group(L, seq->items[i], &g);
    if (rc) return rc;
    if ((uint64_t)host + g.count > (1u << 22))
      return sc_err(&L->sc, seq->items[i], "more than %u nodes", 1u << 22);
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

int ts_topo_load_file(const char *path, ts_topo **out, ts_diag *d) {
  *out = NULL;
  topo_ydoc *doc = NULL;
  int rc = topo_yaml_load_file(path, &doc, d);
  if (rc) return rc;
  rc = load_tree(doc, path, out, d);
  topo_ydoc_free(doc);
  return rc;
}
