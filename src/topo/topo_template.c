/* topo_template.c - node templates: parsed once, stamped out per host.
 *
 * A template describes one server (or tray): CPU sockets (one NUMA domain
 * each) joined by a socket link, PCIe switches under CPUs, GPUs under PCIe
 * switches or CPUs (PCIe or NVLink-C2C), NIC groups on named planes, and the
 * NVLink fabric (through NVSwitch chips, or bridges between GPU pairs).
 * `attach` lists are block-distributed: k parents for n children (k divides
 * n) give child i the parent i / (n / k). Instantiation is O(devices +
 * links) per host with no lookups, which is what lets a 16k-host fabric
 * build in well under a second. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_load.h"

static const char *const tmpl_keys[] = {"gpu_model", "cpus", "cpu_link",
                                        "cpu_p2p_bandwidth", "pcie_switches", "gpus", "nics",
                                        "nvlink", "power", "description", NULL};

/* Parses "cpu3" / "pcie1" into a reference checked against the counts. */
static int parse_ref(const sc_ctx *c, const topo_ynode *n, uint32_t cpus,
                     uint32_t pcie, bool allow_pcie, att_ref *out) {
  const char *s;
  if (sc_node_str(c, n, "attach target", &s)) return TS_ESCHEMA;
  const char *digits = NULL;
  uint32_t limit = 0;
  if (strncmp(s, "cpu", 3) == 0) {
    out->kind = ATT_CPU;
    digits = s + 3;
    limit = cpus;
  } else if (allow_pcie && strncmp(s, "pcie", 4) == 0) {
    out->kind = ATT_PCIE;
    digits = s + 4;
    limit = pcie;
  }
  if (!digits || !*digits || strspn(digits, "0123456789") != strlen(digits))
    return sc_err(c, n, "attach target '%s' is not %s", s,
                  allow_pcie ? "cpuN or pcieN" : "cpuN");
  out->index = (uint32_t)strtoul(digits, NULL, 10);
  if (out->index >= limit)
    return sc_err(c, n, "attach target '%s' does not exist: the template has "
                  "%u %s", s, limit, out->kind == ATT_CPU ? "cpus" : "pcie switches");
  return 0;
}

/* Fills out[0..count) from a scalar or a list distributed in blocks. */
static int parse_attach(const sc_ctx *c, const topo_ynode *map, uint32_t count,
                        uint32_t cpus, uint32_t pcie, bool allow_pcie,
                        att_ref **out) {
  const topo_ynode *v = topo_ymap_get(map, "attach");
  *out = calloc(count ? count : 1, sizeof **out);
  if (!*out) return ts_diag_set(c->d, TS_ENOMEM, c->file, 0, 0, "out of memory");
  if (!v) {
    if (cpus == 0) return sc_err(c, map, "'attach' is required: there is no cpu");
    return 0; /* default: everything under cpu0 */
  }
  if (v->kind == TOPO_Y_SCALAR) {
    att_ref r;
    if (parse_ref(c, v, cpus, pcie, allow_pcie, &r)) return TS_ESCHEMA;
    for (uint32_t i = 0; i < count; i++) (*out)[i] = r;
    return 0;
  }
  if (sc_expect_seq(c, v, "'attach'")) return TS_ESCHEMA;
  if (v->count == 0 || count % v->count)
    return sc_err(c, v, "'attach' lists %u targets for %u devices: the count "
                  "must divide evenly", v->count, count);
  uint32_t block = count / v->count;
  for (uint32_t k = 0; k < v->count; k++) {
    att_ref r;
    if (parse_ref(c, v->items[k], cpus, pcie, allow_pcie, &r)) return TS_ESCHEMA;
    for (uint32_t i = 0; i < block; i++) (*out)[k * block + i] = r;
  }
  return 0;
}

/* Host-side link: `link: pcie` (gen x width, or bandwidth) or `link: c2c`. */
static int parse_link(const sc_ctx *c, const topo_ynode *map, link_params *lp) {
  const char *kind = "pcie";
  if (sc_str(c, map, "link", false, &kind)) return TS_ESCHEMA;
  memset(lp, 0, sizeof *lp);
  lp->latency = TOPO_PCIE_HOP_LATENCY_PS;
  if (strcmp(kind, "c2c") == 0) {
    lp->kind = TS_LINK_C2C;
    if (sc_bandwidth(c, map, "bandwidth", true, &lp->bandwidth)) return TS_ESCHEMA;
  } else if (strcmp(kind, "pcie") == 0) {
    uint32_t gen = 4, width = 16;
    lp->kind = TS_LINK_PCIE;
    if (sc_uint(c, map, "gen", false, 1, 6, &gen) ||
        sc_uint(c, map, "width", false, 1, 32, &width))
      return TS_ESCHEMA;
    lp->gen = (uint8_t)gen;
    lp->width = (uint16_t)width;
    lp->bandwidth = topo_pcie_lane_rate(gen) * width * TOPO_PCIE_EFFICIENCY;
    if (sc_bandwidth(c, map, "bandwidth", false, &lp->bandwidth)) return TS_ESCHEMA;
  } else {
    return sc_err(c, topo_ymap_get(map, "link"),
                  "link '%s' is not one of: pcie, c2c", kind);
  }
  return sc_latency(c, map, "latency", false, &lp->latency);
}

static int parse_cpus(topo_loader *L, const topo_ynode *m, topo_tmpl *tm) {
  const sc_ctx *c = &L->sc;
  tm->cpus = 1;
  if (sc_uint(c, m, "cpus", false, 1, 64, &tm->cpus) ||
      sc_bandwidth(c, m, "cpu_p2p_bandwidth", false, &tm->cpu_p2p_bw))
    return TS_ESCHEMA;
  const topo_ynode *cl = topo_ymap_get(m, "cpu_link");
  if (!cl) {
    if (tm->cpus > 1)
      return sc_err(c, m, "template '%s' has %u cpus but no 'cpu_link' "
                    "(UPI / Infinity Fabric bandwidth and latency)", tm->name,
                    tm->cpus);
    return 0;
  }
  static const char *const keys[] = {"type", "bandwidth", "latency", NULL};
  const char *type;
  if (sc_expect_map(c, cl, "'cpu_link'") || sc_check_keys(c, cl, "cpu_link", keys) ||
      sc_str(c, cl, "type", true, &type))
    return TS_ESCHEMA;
  if (strcmp(type, "upi") && strcmp(type, "xgmi") && strcmp(type, "nvlink_c2c"))
    return sc_err(c, topo_ymap_get(cl, "type"),
                  "cpu_link type '%s' is not one of: upi, xgmi, nvlink_c2c", type);
  tm->cpu_link.kind = TS_LINK_CPU;
  tm->cpu_link.width = 1;
  tm->cpu_amd = strcmp(type, "xgmi") == 0;
  return sc_bandwidth(c, cl, "bandwidth", true, &tm->cpu_link.bandwidth) ||
                 sc_latency(c, cl, "latency", true, &tm->cpu_link.latency)
             ? TS_ESCHEMA
             : 0;
}

static int parse_pcie(topo_loader *L, const topo_ynode *m, topo_tmpl *tm) {
  const sc_ctx *c = &L->sc;
  const topo_ynode *p = topo_ymap_get(m, "pcie_switches");
  if (!p) return 0;
  static const char *const keys[] = {"count", "attach", "link", "gen", "width",
                                     "bandwidth", "latency", NULL};
  if (sc_expect_map(c, p, "'pcie_switches'") ||
      sc_check_keys(c, p, "pcie_switches", keys) ||
      sc_uint(c, p, "count", true, 1, 256, &tm->pcie_count) ||
      parse_attach(c, p, tm->pcie_count, tm->cpus, tm->pcie_count, true,
                   &tm->pcie_attach))
    return TS_ESCHEMA;
  /* Cascaded switches must hang off an earlier one: the tree stays acyclic
   * and NUMA labels propagate in one pass. */
  for (uint32_t i = 0; i < tm->pcie_count; i++)
    if (tm->pcie_attach[i].kind == ATT_PCIE && tm->pcie_attach[i].index >= i)
      return sc_err(c, topo_ymap_get(p, "attach"), "pcie%u attaches to pcie%u: "
                    "a PCIe switch may only hang off a lower-numbered one", i,
                    tm->pcie_attach[i].index);
  return parse_link(c, p, &tm->pcie_link);
}

static int parse_gpus(topo_loader *L, const topo_ynode *m, topo_tmpl *tm) {
  const sc_ctx *c = &L->sc;
  const topo_ynode *g = topo_ymap_get(m, "gpus");
  if (!g) return 0;
  static const char *const keys[] = {"count", "attach", "link", "gen", "width",
                                     "bandwidth", "latency", NULL};
  if (sc_expect_map(c, g, "'gpus'") || sc_check_keys(c, g, "gpus", keys) ||
      sc_uint(c, g, "count", true, 1, 1024, &tm->gpu_count) ||
      parse_attach(c, g, tm->gpu_count, tm->cpus, tm->pcie_count, true,
                   &tm->gpu_attach) ||
      parse_link(c, g, &tm->gpu_link))
    return TS_ESCHEMA;
  if (tm->model == UINT16_MAX)
    return sc_err(c, m, "template '%s' has gpus but no 'gpu_model'", tm->name);
  return 0;
}

static int parse_nic_group(topo_loader *L, const topo_ynode *n, topo_tmpl *tm,
                           nic_group *ng) {
  const sc_ctx *c = &L->sc;
  static const char *const keys[] = {"plane", "count", "attach", "speed", "name",
                                     "link", "gen", "width", "bandwidth",
                                     "latency", NULL};
  const char *plane;
  if (sc_expect_map(c, n, "a NIC group") || sc_check_keys(c, n, "NIC group", keys) ||
      sc_str(c, n, "plane", true, &plane) ||
      sc_uint(c, n, "count", true, 1, 1024, &ng->count) ||
      parse_attach(c, n, ng->count, tm->cpus, tm->pcie_count, true, &ng->attach) ||
      parse_link(c, n, &ng->link))
    return TS_ESCHEMA;
  int p = (int)topo_nameidx_find(&L->plane_idx, plane);
  if (p < 0)
    return sc_err(c, topo_ymap_get(n, "plane"), "NIC group names plane '%s', "
                  "which is not declared under 'planes'", plane);
  ng->plane = (uint16_t)p;
  const plane_in *pi = &L->planes[p];
  ng->speed = pi->line_rate; /* the plane's rate unless the group says */
  if (sc_bandwidth(c, n, "speed", pi->line_rate <= 0, &ng->speed)) return TS_ESCHEMA;
  ng->speed *= pi->efficiency;
  ng->rails = strcmp(L->t->planes[p].generator, "rail_optimized") == 0;
  char prefix[TOPO_MAX_NAME + 1];
  const char *name = NULL;
  if (sc_str(c, n, "name", false, &name) ||
      (name && topo_key_name(c, topo_ymap_get(n, "name"), "NIC group")))
    return TS_ESCHEMA;
  if (name && strchr(name, '/'))
    return sc_err(c, topo_ymap_get(n, "name"), "NIC group name '%s' must not "
                  "contain '/'", name);
  snprintf(prefix, sizeof prefix, "%s", name ? name : plane);
  ng->prefix = topo_strdup(L->t, prefix);
  return ng->prefix ? 0 : TS_ENOMEM;
}

static int parse_nics(topo_loader *L, const topo_ynode *m, topo_tmpl *tm) {
  const topo_ynode *s = topo_ymap_get(m, "nics");
  if (!s) return 0;
  if (sc_expect_seq(&L->sc, s, "'nics'")) return TS_ESCHEMA;
  tm->nics = calloc(s->count ? s->count : 1, sizeof *tm->nics);
  if (!tm->nics) return TS_ENOMEM;
  for (uint32_t i = 0; i < s->count; i++) {
    tm->nic_groups = i + 1;
    int rc = parse_nic_group(L, s->items[i], tm, &tm->nics[i]);
    if (rc) return rc;
    for (uint32_t j = 0; j < i; j++)
      if (strcmp(tm->nics[j].prefix, tm->nics[i].prefix) == 0)
        return sc_err(&L->sc, s->items[i], "two NIC groups are both named '%s': "
                      "give one a distinct 'name'", tm->nics[i].prefix);
  }
  return 0;
}

static int parse_pairs(topo_loader *L, const topo_ynode *v, topo_tmpl *tm) {
  const sc_ctx *c = &L->sc;
  if (sc_expect_seq(c, v, "'pairs'")) return TS_ESCHEMA;
  tm->pairs = calloc(v->count ? v->count : 1, sizeof *tm->pairs);
  if (!tm->pairs) return TS_ENOMEM;
  tm->pair_count = v->count;
  for (uint32_t i = 0; i < v->count; i++) {
    const topo_ynode *p = v->items[i];
    if (p->kind != TOPO_Y_SEQ || p->count != 2)
      return sc_err(c, p, "each NVLink pair must be a list of two GPU indices");
    for (int k = 0; k < 2; k++)
      if (sc_node_uint(c, p->items[k], 0, tm->gpu_count ? tm->gpu_count - 1 : 0,
                       &tm->pairs[i][k]))
        return TS_ESCHEMA;
    if (tm->pairs[i][0] == tm->pairs[i][1])
      return sc_err(c, p, "an NVLink pair joins two different GPUs");
  }
  return 0;
}

/* links_per_switch: one number for all switches, or one per switch (DGX H100
 * runs 5, 4, 4 and 5 NVLinks from each GPU to its four NVSwitch chips). */
static int parse_per_switch(topo_loader *L, const topo_ynode *n, topo_tmpl *tm) {
  const sc_ctx *c = &L->sc;
  const topo_ynode *v;
  if (sc_require(c, n, "links_per_switch", "'nvlink'", &v)) return TS_ESCHEMA;
  tm->nvl_per_switch = calloc(tm->nvl_switches, sizeof *tm->nvl_per_switch);
  if (!tm->nvl_per_switch) return TS_ENOMEM;
  if (v->kind != TOPO_Y_SEQ) {
    uint32_t w;
    if (sc_node_uint(c, v, 1, 64, &w)) return TS_ESCHEMA;
    for (uint32_t s = 0; s < tm->nvl_switches; s++) tm->nvl_per_switch[s] = w;
    return 0;
  }
  if (v->count != tm->nvl_switches)
    return sc_err(c, v, "'links_per_switch' lists %u values for %u switches",
                  v->count, tm->nvl_switches);
  for (uint32_t s = 0; s < v->count; s++)
    if (sc_node_uint(c, v->items[s], 1, 64, &tm->nvl_per_switch[s])) return TS_ESCHEMA;
  return 0;
}

static int parse_nvlink(topo_loader *L, const topo_ynode *m, topo_tmpl *tm) {
  const sc_ctx *c = &L->sc;
  const topo_ynode *n = topo_ymap_get(m, "nvlink");
  if (!n) return 0;
  static const char *const keys[] = {"link_bandwidth", "efficiency", "latency",
                                     "switches", "links_per_switch",
                                     "switch_radix", "pairs", "links_per_pair",
                                     "nvls", NULL};
  if (sc_expect_map(c, n, "'nvlink'") || sc_check_keys(c, n, "nvlink", keys) ||
      sc_bandwidth(c, n, "link_bandwidth", true, &tm->nvl_bw))
    return TS_ESCHEMA;
  /* Achievable fraction of the line rate: NVLink packets carry headers
   * (NCCL maintainers measure ~20 of 25 GB/s per NVLink3/4 link). */
  double eff = 1.0;
  if (sc_real(c, n, "efficiency", false, 0.01, 1.0, &eff)) return TS_ESCHEMA;
  tm->nvl_bw *= eff;
  tm->nvl_lat = TOPO_NVLINK_HOP_LATENCY_PS;
  if (sc_latency(c, n, "latency", false, &tm->nvl_lat)) return TS_ESCHEMA;
  const topo_ynode *pairs = topo_ymap_get(n, "pairs");
  if (pairs && topo_ymap_get(n, "switches"))
    return sc_err(c, n, "'nvlink' takes either 'switches' or 'pairs', not both");
  if (pairs) {
    tm->nvl = NVL_PAIRS;
    return sc_uint(c, n, "links_per_pair", true, 1, 64, &tm->nvl_links) ||
                   parse_pairs(L, pairs, tm) ? TS_ESCHEMA : 0;
  }
  tm->nvl = NVL_SWITCH;
  if (sc_uint(c, n, "switches", true, 1, 256, &tm->nvl_switches) ||
      sc_uint(c, n, "switch_radix", false, 1, 65535, &tm->nvl_radix) ||
      sc_bool(c, n, "nvls", false, &tm->nvls))
    return TS_ESCHEMA;
  return parse_per_switch(L, n, tm);
}

/* Directory of the YAML file + rel, unless rel is absolute. */
static void resolve_path(const char *yaml, const char *rel, char *out, size_t len) {
  const char *slash = strrchr(yaml, '/');
  if (rel[0] == '/' || !slash) snprintf(out, len, "%s", rel);
  else snprintf(out, len, "%.*s/%s", (int)(slash - yaml), yaml, rel);
}

/* `nccl_topo: FILE.xml`: the server comes from an NCCL topology dump; only
 * the GPU model, the NIC plane, power and a description may be added. */
static int parse_xml_template(topo_loader *L, const topo_ynode *m, topo_tmpl *tm) {
  const sc_ctx *c = &L->sc;
  static const char *const keys[] = {"nccl_topo", "gpu_model", "plane", "power",
                                     "description", NULL};
  const char *file, *model = NULL, *plane = NULL;
  char what[160], path[1024];
  snprintf(what, sizeof what, "template '%s' (with nccl_topo)", tm->name);
  if (sc_check_keys(c, m, what, keys) || sc_str(c, m, "nccl_topo", true, &file) ||
      sc_str(c, m, "gpu_model", false, &model) || sc_str(c, m, "plane", false, &plane))
    return TS_ESCHEMA;
  uint16_t p = TS_NO_PLANE;
  for (uint32_t i = 0; !plane && i < L->t->plane_count && p == TS_NO_PLANE; i++)
    if (L->t->planes[i].kind == TS_PLANE_BACKEND) p = (uint16_t)i;
  if (plane) {
    int k = ts_topo_plane_find(L->t, plane);
    if (k < 0)
      return sc_err(c, topo_ymap_get(m, "plane"), "plane '%s' is not declared "
                    "under 'planes'", plane);
    p = (uint16_t)k;
  }
  resolve_path(c->file, file, path, sizeof path);
  return topo_xml_template(L, path, p, model, tm);
}

static int parse_one(topo_loader *L, const topo_ynode *key, const topo_ynode *m,
                     topo_tmpl *tm) {
  const sc_ctx *c = &L->sc;
  tm->name = key->str;
  tm->model = UINT16_MAX;
  char what[160];
  snprintf(what, sizeof what, "template '%s'", key->str);
  if (sc_expect_map(c, m, what)) return TS_ESCHEMA;
  if (topo_ymap_get(m, "nccl_topo")) return parse_xml_template(L, m, tm);
  if (sc_check_keys(c, m, what, tmpl_keys)) return TS_ESCHEMA;
  const char *model = NULL;
  if (sc_str(c, m, "gpu_model", false, &model)) return TS_ESCHEMA;
  int64_t mi = model ? topo_nameidx_find(&L->model_idx, model) : -1;
  if (mi >= 0) tm->model = (uint16_t)mi;
  if (model && tm->model == UINT16_MAX)
    return sc_err(c, topo_ymap_get(m, "gpu_model"),
                  "gpu_model '%s' is not defined under 'gpu_models'", model);
  const char *power = NULL;
  double watts;
  if (sc_str(c, m, "power", false, &power)) return TS_ESCHEMA;
  if (power && ts_parse_power(power, &watts))
    return sc_err(c, topo_ymap_get(m, "power"),
                  "'power' = '%s' is not a power such as 14.5kW", power);
  int rc = parse_cpus(L, m, tm);
  if (!rc) rc = parse_pcie(L, m, tm);
  if (!rc) rc = parse_gpus(L, m, tm);
  if (!rc) rc = parse_nics(L, m, tm);
  if (!rc) rc = parse_nvlink(L, m, tm);
  return rc;
}

int topo_templates_parse(topo_loader *L, const topo_ynode *map) {
  if (sc_expect_map(&L->sc, map, "'templates'")) return TS_ESCHEMA;
  L->tmpls = calloc(map->count ? map->count : 1, sizeof *L->tmpls);
  if (!L->tmpls) return TS_ENOMEM;
  for (uint32_t i = 0; i < map->count; i++) {
    L->tmpl_count = i + 1;
    int rc = topo_key_name(&L->sc, map->items[2 * i], "template");
    if (!rc) rc = parse_one(L, map->items[2 * i], map->items[2 * i + 1], &L->tmpls[i]);
    if (rc) return rc;
  }
  /* Index by name so node groups find their template in O(log T). */
  topo_name_ent *e = malloc(((size_t)L->tmpl_count + 1) * sizeof *e);
  if (!e) return TS_ENOMEM;
  for (uint32_t i = 0; i < L->tmpl_count; i++) e[i] = (topo_name_ent){L->tmpls[i].name, i};
  topo_nameidx_build(&L->tmpl_idx, e, L->tmpl_count);
  return 0;
}

void topo_tmpl_free_arrays(topo_tmpl *tm) {
  free(tm->pcie_attach);
  free(tm->gpu_attach);
  for (uint32_t g = 0; g < tm->nic_groups; g++) {
    free(tm->nics[g].attach);
    free(tm->nics[g].links);
    free(tm->nics[g].speeds);
    free(tm->nics[g].names);
  }
  free(tm->nics);
  free(tm->pairs);
  free(tm->nvl_per_switch);
  free(tm->cpu_numa);
  free(tm->cpu_affinity);
  free(tm->pcie_links);
  free(tm->gpu_links);
  free(tm->pair_links);
  free(tm->nvl_gpu_switch);
}

void topo_templates_free(topo_loader *L) {
  for (uint32_t i = 0; i < L->tmpl_count; i++) topo_tmpl_free_arrays(&L->tmpls[i]);
  free(L->tmpls);
  L->tmpls = NULL;
  L->tmpl_count = 0;
}

/* ---- instantiation ---- */

typedef struct host_ids {
  uint32_t cpu0, pcie0, gpu0; /* first id of each device kind */
} host_ids;

static uint32_t parent_id(const host_ids *h, att_ref r) {
  return r.kind == ATT_CPU ? h->cpu0 + r.index : h->pcie0 + r.index;
}

static ts_node host_proto(ts_node_kind kind, int32_t host, int32_t rack,
                          int32_t su, uint32_t local) {
  ts_node p = topo_node_proto(kind);
  p.host = host;
  p.rack = rack;
  p.su = su;
  p.local = (int16_t)local;
  return p;
}

static void link_up(ts_topo *t, uint32_t child, uint32_t parent,
                    const link_params *lp) {
  uint32_t l = topo_add_link(t, child, parent, lp->kind, lp->width ? lp->width : 1,
                             lp->bandwidth, lp->latency, TS_NO_PLANE);
  if (l != TOPO_BAD_ID) t->links[l].pcie_gen = lp->gen;
}

/* NUMA domain of a device attached at r. */
static int16_t numa_of(const ts_topo *t, const host_ids *h, att_ref r) {
  uint32_t id = parent_id(h, r);
  return id < t->node_count ? t->nodes[id].numa : TS_NONE;
}

static void add_cpus_and_pcie(ts_topo *t, const topo_tmpl *tm, const char *name,
                              const ts_node *base, host_ids *h) {
  h->cpu0 = t->node_count;
  for (uint32_t i = 0; i < tm->cpus; i++) {
    ts_node p = *base;
    p.kind = TS_NODE_CPU;
    p.flags = tm->cpu_amd ? TS_NODE_F_CPU_AMD : 0;
    p.local = p.numa = (int16_t)i;
    if (tm->cpu_numa) p.numa = tm->cpu_numa[i];
    uint32_t id = topo_add_node(t, &p, "%s/cpu%u", name, i);
    if (id != TOPO_BAD_ID && tm->cpu_affinity) topo_add_affinity(t, id, tm->cpu_affinity[i]);
  }
  /* Sockets in a chain (0-1, 1-2 ...); NCCL XML: every pair, as NCCL
   * itself joins every pair of CPUs with one SMP link. */
  for (uint32_t i = 1; i < tm->cpus; i++)
    for (uint32_t j = tm->cpu_mesh ? 0 : i - 1; j < i; j++)
      link_up(t, h->cpu0 + i, h->cpu0 + j, &tm->cpu_link);
  h->pcie0 = t->node_count;
  for (uint32_t i = 0; i < tm->pcie_count; i++) {
    ts_node p = *base;
    p.kind = TS_NODE_PCIE_SW;
    p.local = (int16_t)i;
    p.numa = numa_of(t, h, tm->pcie_attach[i]);
    uint32_t id = topo_add_node(t, &p, "%s/pcie%u", name, i);
    if (id != TOPO_BAD_ID)
      link_up(t, id, parent_id(h, tm->pcie_attach[i]),
              tm->pcie_links ? &tm->pcie_links[i] : &tm->pcie_link);
  }
}

/* One root-complex P2P node per CPU (TS_NODE_F_ROOT_COMPLEX), linked to it
 * at cpu_p2p_bw, when the template declares the limit. Added after every
 * other device so the local indices of PCIe switches stay as they were. */
static void add_root_complexes(ts_topo *t, const topo_tmpl *tm, const char *name,
                               const ts_node *base, const host_ids *h) {
  if (!(tm->cpu_p2p_bw > 0)) return;
  for (uint32_t i = 0; i < tm->cpus; i++) {
    ts_node p = *base;
    p.kind = TS_NODE_PCIE_SW;
    p.local = (int16_t)(tm->pcie_count + i);
    p.numa = t->nodes[h->cpu0 + i].numa;
    p.flags = TS_NODE_F_ROOT_COMPLEX;
    uint32_t id = topo_add_node(t, &p, "%s/cpu%u-p2p", name, i);
    if (id == TOPO_BAD_ID) return;
    topo_add_link(t, id, h->cpu0 + i, TS_LINK_PCIE, 1, tm->cpu_p2p_bw, 0, TS_NO_PLANE);
  }
}

static void add_gpus(ts_topo *t, const topo_tmpl *tm, const char *name,
                     const ts_node *base, host_ids *h) {
  h->gpu0 = t->node_count;
  for (uint32_t i = 0; i < tm->gpu_count; i++) {
    ts_node p = *base;
    p.kind = TS_NODE_GPU;
    p.local = (int16_t)i;
    p.model = tm->model;
    p.numa = numa_of(t, h, tm->gpu_attach[i]);
    uint32_t id = topo_add_node(t, &p, "%s/gpu%u", name, i);
    if (id != TOPO_BAD_ID)
      link_up(t, id, parent_id(h, tm->gpu_attach[i]),
              tm->gpu_links ? &tm->gpu_links[i] : &tm->gpu_link);
  }
}

static void add_nics(ts_topo *t, const topo_tmpl *tm, const char *name,
                     const ts_node *base, const host_ids *h) {
  for (uint32_t g = 0; g < tm->nic_groups; g++) {
    const nic_group *ng = &tm->nics[g];
    for (uint32_t i = 0; i < ng->count; i++) {
      ts_node p = *base;
      p.kind = TS_NODE_NIC;
      p.local = (int16_t)i;
      p.plane = ng->plane;
      p.rail = ng->rails ? (int16_t)i : TS_NONE;
      p.numa = numa_of(t, h, ng->attach[i]);
      uint32_t id = ng->names ? topo_add_node(t, &p, "%s/%s", name, ng->names[i])
                              : topo_add_node(t, &p, "%s/%s%u", name, ng->prefix, i);
      if (id == TOPO_BAD_ID) return;
      t->port_bw[id] = ng->speeds ? ng->speeds[i] : ng->speed;
      link_up(t, id, parent_id(h, ng->attach[i]), ng->links ? &ng->links[i] : &ng->link);
    }
  }
}

static void add_nvlink(ts_topo *t, const topo_tmpl *tm, const char *name,
                       const ts_node *base, const host_ids *h) {
  /* YAML gives pairs or switches; NCCL XML may give both. */
  for (uint32_t i = 0; i < tm->pair_count; i++) {
    uint16_t w = (uint16_t)(tm->pair_links ? tm->pair_links[i] : tm->nvl_links);
    topo_add_link(t, h->gpu0 + tm->pairs[i][0], h->gpu0 + tm->pairs[i][1],
                  TS_LINK_NVLINK, w, tm->nvl_bw * w, tm->nvl_lat, TS_NO_PLANE);
  }
  for (uint32_t s = 0; tm->nvl == NVL_SWITCH && s < tm->nvl_switches; s++) {
    ts_node p = *base;
    p.kind = TS_NODE_NVSWITCH;
    p.local = (int16_t)s;
    p.radix = tm->nvl_radix;
    p.flags = tm->nvls ? TS_NODE_F_NVLS : 0;
    uint32_t sw = topo_add_node(t, &p, "%s/nvsw%u", name, s);
    if (sw == TOPO_BAD_ID) return;
    for (uint32_t g = 0; g < tm->gpu_count; g++) {
      uint16_t ws = (uint16_t)(tm->nvl_gpu_switch
                                   ? tm->nvl_gpu_switch[g * tm->nvl_switches + s]
                                   : tm->nvl_per_switch[s]);
      if (ws)
        topo_add_link(t, h->gpu0 + g, sw, TS_LINK_NVLINK, ws, tm->nvl_bw * ws,
                      tm->nvl_lat, TS_NO_PLANE);
    }
  }
}

void topo_template_size(const topo_tmpl *tm, uint64_t *devices, uint64_t *links) {
  uint64_t nics = 0;
  for (uint32_t g = 0; g < tm->nic_groups; g++) nics += tm->nics[g].count;
  uint64_t sw = tm->nvl == NVL_SWITCH ? tm->nvl_switches : 0;
  uint64_t rc = tm->cpu_p2p_bw > 0 ? tm->cpus : 0;
  *devices = (uint64_t)tm->cpus + tm->pcie_count + tm->gpu_count + nics + sw + rc;
  *links = rc + (tm->cpus ? tm->cpus - 1u : 0u) + (uint64_t)tm->pcie_count +
           tm->gpu_count + nics +
           (tm->nvl == NVL_PAIRS ? tm->pair_count : sw * tm->gpu_count);
}

int topo_template_instantiate(topo_loader *L, const topo_tmpl *tm,
                              const char *name, int32_t host, int32_t rack,
                              int32_t su) {
  ts_topo *t = L->t;
  ts_node base = host_proto(TS_NODE_CPU, host, rack, su, 0);
  host_ids h = {0, 0, 0};
  add_cpus_and_pcie(t, tm, name, &base, &h);
  add_gpus(t, tm, name, &base, &h);
  add_nics(t, tm, name, &base, &h);
  add_nvlink(t, tm, name, &base, &h);
  add_root_complexes(t, tm, name, &base, &h);
  return t->oom ? TS_ENOMEM : 0;
}
