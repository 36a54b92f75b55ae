/* topo_plane.c - planes: their technology and how their fabric is built.
 *
 * Declaration (before templates) records each plane's name, kind and
 * technology so NIC groups can name it. Building (after hosts exist) runs
 * the plane's generator (rail_optimized, fat_tree, nvlink_domain) or creates
 * its explicitly listed switches and links. Achievable cable bandwidth is
 * the technology's line rate (or `bandwidth`) times its efficiency. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_gen.h"
#include "topo/topo_load.h"

static const char *const plane_keys[] = {
    "name", "kind", "technology", "bandwidth", "efficiency", "latency",
    "overhead", "generator", "switches", "links", "attach_nics",
    "description", "routing", NULL};

static int plane_kind(const sc_ctx *c, const topo_ynode *m, uint8_t *kind) {
  static const char *names[] = {"scale_up", "backend", "frontend", "storage", "oob"};
  const char *k;
  if (sc_str(c, m, "kind", true, &k)) return TS_ESCHEMA;
  for (uint8_t i = 0; i < TS_PLANE_KIND_COUNT; i++)
    if (strcmp(k, names[i]) == 0) {
      *kind = i;
      return 0;
    }
  return sc_err(c, topo_ymap_get(m, "kind"), "plane kind '%s' is not one of: "
                "scale_up, backend, frontend, storage, oob", k);
}

static int plane_technology(topo_loader *L, const topo_ynode *m, ts_plane *p,
                            plane_in *pi) {
  const sc_ctx *c = &L->sc;
  const char *tech = NULL;
  if (sc_str(c, m, "technology", false, &tech)) return TS_ESCHEMA;
  pi->efficiency = 1.0;
  if (tech) {
    pi->preset = topo_net_preset_find(tech);
    if (!pi->preset)
      return sc_err(c, topo_ymap_get(m, "technology"), "unknown technology "
                    "'%s'; expected one of: %s", tech, topo_net_preset_names());
    pi->cable_bw = pi->preset->line_rate;
    pi->efficiency = pi->preset->efficiency;
    pi->hop_latency = pi->preset->hop_latency;
    p->sw_overhead = pi->preset->sw_overhead;
    p->host_copy = pi->preset->host_copy;
  }
  p->link_preset = topo_strdup(L->t, tech ? tech : "");
  bool need = !tech && p->kind != TS_PLANE_SCALE_UP;
  if (sc_bandwidth(c, m, "bandwidth", need, &pi->cable_bw) ||
      sc_real(c, m, "efficiency", false, 0.01, 1.0, &pi->efficiency) ||
      sc_latency(c, m, "latency", need, &pi->hop_latency) ||
      sc_latency(c, m, "overhead", false, &p->sw_overhead))
    return TS_ESCHEMA;
  pi->line_rate = pi->cable_bw;
  pi->cable_bw *= pi->efficiency;
  return p->link_preset ? 0 : TS_ENOMEM;
}

/* `routing: ecmp_hash | dmodk` (default ecmp_hash). */
static int plane_routing(const sc_ctx *c, const topo_ynode *m, ts_plane *p) {
  const char *v = NULL;
  if (sc_str(c, m, "routing", false, &v)) return TS_ESCHEMA;
  if (!v || strcmp(v, "ecmp_hash") == 0) return 0;
  if (strcmp(v, "dmodk") == 0) {
    p->routing = TS_ROUTING_DMODK;
    return 0;
  }
  return sc_err(c, topo_ymap_get(m, "routing"), "routing '%s' is not one of: "
                "ecmp_hash, dmodk", v);
}

static int generator_type(const sc_ctx *c, const topo_ynode *m, const char **type) {
  const topo_ynode *g = topo_ymap_get(m, "generator");
  *type = "explicit";
  if (!g) return 0;
  if (topo_ymap_get(m, "switches") || topo_ymap_get(m, "links"))
    return sc_err(c, g, "a plane has either a 'generator' or explicit "
                  "'switches'/'links', not both");
  if (sc_expect_map(c, g, "'generator'") || sc_str(c, g, "type", true, type))
    return TS_ESCHEMA;
  if (strcmp(*type, "rail_optimized") && strcmp(*type, "fat_tree") &&
      strcmp(*type, "nvlink_domain"))
    return sc_err(c, topo_ymap_get(g, "type"), "generator '%s' is not one of: "
                  "rail_optimized, fat_tree, nvlink_domain", *type);
  return 0;
}

static int declare_one(topo_loader *L, const topo_ynode *m, uint32_t index) {
  const sc_ctx *c = &L->sc;
  ts_plane p;
  memset(&p, 0, sizeof p);
  const char *name, *gen;
  if (sc_expect_map(c, m, "a plane") || sc_check_keys(c, m, "plane", plane_keys) ||
      topo_name(c, m, "name", "plane", true, &name) || plane_kind(c, m, &p.kind) ||
      generator_type(c, m, &gen) || plane_routing(c, m, &p))
    return TS_ESCHEMA;
  int64_t first = topo_nameidx_find(&L->plane_idx, name);
  if (first >= 0 && first < index)
    return sc_err(c, topo_ymap_get(m, "name"), "duplicate plane name '%s'", name);
  p.name = topo_strdup(L->t, name);
  p.generator = topo_strdup(L->t, gen);
  plane_in *pi = &L->planes[index];
  pi->node = m;
  int rc = plane_technology(L, m, &p, pi);
  if (rc) return rc;
  if (topo_add_plane(L->t, &p, (topo_mark){m->line, m->col}) == TS_NO_PLANE)
    return TS_ENOMEM;
  return 0;
}

/* Name index over the planes as written (before any is parsed), so the
 * duplicate check and NIC groups' plane references are O(log P) each
 * instead of a scan over the planes. Entries without a scalar name are left
 * out: declare_one reports them. */
static int index_planes(topo_loader *L, const topo_ynode *seq) {
  topo_name_ent *e = malloc(((size_t)seq->count + 1) * sizeof *e);
  uint32_t n = 0;
  if (!e) return TS_ENOMEM;
  for (uint32_t i = 0; i < seq->count; i++) {
    const topo_ynode *m = seq->items[i], *v;
    if (m->kind == TOPO_Y_MAP && (v = topo_ymap_get(m, "name")) &&
        v->kind == TOPO_Y_SCALAR)
      e[n++] = (topo_name_ent){v->str, i};
  }
  topo_nameidx_build(&L->plane_idx, e, n);
  return 0;
}

int topo_planes_declare(topo_loader *L, const topo_ynode *seq) {
  if (sc_expect_seq(&L->sc, seq, "'planes'")) return TS_ESCHEMA;
  if (seq->count > TOPO_MAX_PLANES) /* plane ids are 16-bit */
    return sc_err(&L->sc, seq->items[TOPO_MAX_PLANES], "more than %u planes",
                  TOPO_MAX_PLANES);
  L->planes = calloc(seq->count ? seq->count : 1, sizeof *L->planes);
  if (!L->planes || index_planes(L, seq)) return TS_ENOMEM;
  for (uint32_t i = 0; i < seq->count; i++) {
    int rc = declare_one(L, seq->items[i], i);
    if (rc) return rc;
  }
  return 0;
}

/* ---- generators ---- */

static int switch_spec(const sc_ctx *c, const topo_ynode *g, const char *key,
                       bool required, topo_switch_spec *s) {
  const topo_ynode *m = topo_ymap_get(g, key);
  if (!m) return required ? sc_err(c, g, "generator needs '%s'", key) : 0;
  static const char *const keys[] = {"radix", "down", "up", NULL};
  if (sc_expect_map(c, m, key) || sc_check_keys(c, m, key, keys) ||
      sc_uint(c, m, "radix", true, 2, 65535, &s->radix) ||
      sc_uint(c, m, "down", false, 1, 65535, &s->down) ||
      sc_uint(c, m, "up", false, 0, 65535, &s->up))
    return TS_ESCHEMA;
  if (s->down + s->up > s->radix)
    return sc_err(c, m, "%s: down %u + up %u ports exceed the radix %u", key,
                  s->down, s->up, s->radix);
  if (!topo_ymap_get(m, "down") != !topo_ymap_get(m, "up"))
    return sc_err(c, m, "%s: give both 'down' and 'up', or neither", key);
  return 0;
}

/* Largest number of hosts sharing one SU label among hosts on this plane. */
static uint32_t hosts_per_su(const ts_topo *t, uint16_t plane) {
  uint32_t best = 0, run = 0;
  int32_t su = TS_NONE, host = TS_NONE;
  for (uint32_t i = 0; i < t->node_count; i++) {
    const ts_node *n = &t->nodes[i];
    if (n->kind != TS_NODE_NIC || n->plane != plane || n->host == host) continue;
    host = n->host;
    run = n->su == su ? run + 1 : 1;
    su = n->su;
    if (run > best) best = run;
  }
  return best;
}

static int gen_rail(topo_loader *L, uint16_t plane, const topo_ynode *g,
                    const plane_in *pi) {
  const sc_ctx *c = &L->sc;
  static const char *const keys[] = {"type", "tiers", "leaf", "spine", "core",
                                     "spines", "cores", NULL};
  topo_rail_spec s;
  memset(&s, 0, sizeof s);
  s.clos.tiers = 2;
  if (sc_check_keys(c, g, "rail_optimized generator", keys) ||
      sc_uint(c, g, "tiers", false, 1, 3, &s.clos.tiers) ||
      switch_spec(c, g, "leaf", true, &s.clos.leaf) ||
      switch_spec(c, g, "spine", s.clos.tiers > 1, &s.clos.spine) ||
      switch_spec(c, g, "core", s.clos.tiers > 2, &s.clos.core) ||
      sc_uint(c, g, "spines", false, 1, 1u << 20, &s.clos.spines) ||
      sc_uint(c, g, "cores", false, 1, 1u << 20, &s.clos.cores))
    return TS_ESCHEMA;
  s.clos.hosts_per_su = hosts_per_su(L->t, plane);
  s.link_bw = pi->cable_bw;
  s.link_latency = pi->hop_latency;
  return topo_gen_rail_optimized(L->t, plane, &s, L->sc.d);
}

static int gen_fat_tree(topo_loader *L, uint16_t plane, const topo_ynode *g,
                        const plane_in *pi) {
  static const char *const keys[] = {"type", "k", NULL};
  topo_fat_tree_spec s = {0, pi->cable_bw, pi->hop_latency};
  if (sc_check_keys(&L->sc, g, "fat_tree generator", keys) ||
      sc_uint(&L->sc, g, "k", true, 2, 256, &s.k))
    return TS_ESCHEMA;
  if (s.k % 2) return sc_err(&L->sc, topo_ymap_get(g, "k"), "fat_tree k must be even");
  return topo_gen_fat_tree(L->t, plane, &s, L->sc.d);
}

static int gen_nvl(topo_loader *L, uint16_t plane, const topo_ynode *g) {
  const sc_ctx *c = &L->sc;
  static const char *const keys[] = {"type", "gpus_per_domain", "switches",
                                     "links_per_switch", "switch_radix",
                                     "link_bandwidth", "efficiency", "latency",
                                     "nvls", NULL};
  topo_nvl_spec s;
  bool nvls = false;
  memset(&s, 0, sizeof s);
  s.link_latency = TOPO_NVLINK_HOP_LATENCY_PS;
  if (sc_check_keys(c, g, "nvlink_domain generator", keys) ||
      sc_uint(c, g, "gpus_per_domain", true, 1, 1u << 20, &s.gpus_per_domain) ||
      sc_uint(c, g, "switches", true, 1, 4096, &s.switches) ||
      sc_uint(c, g, "links_per_switch", true, 1, 64, &s.links_per_switch) ||
      sc_uint(c, g, "switch_radix", false, 1, 65535, &s.switch_radix) ||
      sc_bandwidth(c, g, "link_bandwidth", true, &s.link_bw) ||
      sc_latency(c, g, "latency", false, &s.link_latency) ||
      sc_bool(c, g, "nvls", false, &nvls))
    return TS_ESCHEMA;
  double eff = 1.0;
  if (sc_real(c, g, "efficiency", false, 0.01, 1.0, &eff)) return TS_ESCHEMA;
  s.link_bw *= eff;
  s.nvls = nvls;
  return topo_gen_nvlink_domain(L->t, plane, &s, L->sc.d);
}

/* ---- explicit switches and links ---- */

static int tier_of(const sc_ctx *c, const topo_ynode *m, uint8_t *tier) {
  const char *s = "leaf";
  if (sc_str(c, m, "tier", false, &s)) return TS_ESCHEMA;
  for (uint8_t i = TS_TIER_LEAF; i <= TS_TIER_MAX; i++)
    if (strcmp(s, ts_tier_name(i)) == 0) {
      *tier = i;
      return 0;
    }
  return sc_err(c, topo_ymap_get(m, "tier"), "tier '%s' is not one of: leaf, "
                "spine, core", s);
}

static int add_switches(topo_loader *L, uint16_t plane, const topo_ynode *seq) {
  const sc_ctx *c = &L->sc;
  static const char *const keys[] = {"name", "count", "tier", "radix", NULL};
  if (sc_expect_seq(c, seq, "'switches'")) return TS_ESCHEMA;
  const char *pname = L->t->planes[plane].name;
  for (uint32_t i = 0; i < seq->count; i++) {
    const topo_ynode *m = seq->items[i];
    const char *name;
    uint32_t count = 0, radix = 0;
    ts_node p = topo_node_proto(TS_NODE_SWITCH);
    if (sc_expect_map(c, m, "a switch") || sc_check_keys(c, m, "switch", keys) ||
        topo_name(c, m, "name", "switch", true, &name) || tier_of(c, m, &p.tier) ||
        sc_uint(c, m, "count", false, 1, 1u << 20, &count) ||
        sc_uint(c, m, "radix", true, 1, 65535, &radix))
      return TS_ESCHEMA;
    p.plane = plane;
    p.radix = radix;
    topo_push_mark(L->t, m->line, m->col);
    if (!count) topo_add_node(L->t, &p, "%s/%s", pname, name);
    for (uint32_t k = 0; k < count; k++) {
      p.local = (int16_t)k;
      topo_add_node(L->t, &p, "%s/%s%u", pname, name, k);
    }
  }
  return L->t->oom ? TS_ENOMEM : 0;
}

/* Resolves a plane-local switch name first, then a full device name. */
static int resolve(topo_loader *L, uint16_t plane, const topo_ynode *n,
                   uint32_t *id) {
  const char *s;
  if (sc_node_str(&L->sc, n, "a link end", &s)) return TS_ESCHEMA;
  char full[320];
  snprintf(full, sizeof full, "%s/%s", L->t->planes[plane].name, s);
  if (ts_topo_find_node(L->t, full, id) == 0 || ts_topo_find_node(L->t, s, id) == 0)
    return 0;
  return sc_err(&L->sc, n, "link end '%s' names no switch of plane '%s' and no "
                "device", s, L->t->planes[plane].name);
}

static int add_links(topo_loader *L, uint16_t plane, const topo_ynode *seq,
                     const plane_in *pi) {
  const sc_ctx *c = &L->sc;
  static const char *const keys[] = {"a", "b", "cables", "bandwidth", "latency", NULL};
  if (sc_expect_seq(c, seq, "'links'")) return TS_ESCHEMA;
  for (uint32_t i = 0; i < seq->count; i++) {
    const topo_ynode *m = seq->items[i], *a, *b;
    uint32_t ia, ib, cables = 1;
    double bw = pi->cable_bw;
    ts_time_ps lat = pi->hop_latency;
    if (sc_expect_map(c, m, "a link") || sc_check_keys(c, m, "link", keys) ||
        sc_require(c, m, "a", "link", &a) || sc_require(c, m, "b", "link", &b) ||
        resolve(L, plane, a, &ia) || resolve(L, plane, b, &ib) ||
        sc_uint(c, m, "cables", false, 1, 65535, &cables) ||
        sc_bandwidth(c, m, "bandwidth", false, &bw) ||
        sc_latency(c, m, "latency", false, &lat))
      return TS_ESCHEMA;
    if (ia == ib) return sc_err(c, m, "a link must join two different nodes");
    /* A written bandwidth is a line rate, like the plane's: efficiency
     * applies to every network cable. */
    if (topo_ymap_get(m, "bandwidth")) bw *= pi->efficiency;
    topo_add_link(L->t, ia, ib, TS_LINK_NET, (uint16_t)cables, bw * cables, lat,
                  plane);
  }
  return L->t->oom ? TS_ENOMEM : 0;
}

/* Distributes the plane's NICs over the listed switches in equal blocks. */
static int attach_nics(topo_loader *L, uint16_t plane, const topo_ynode *seq,
                       const plane_in *pi) {
  if (sc_expect_seq(&L->sc, seq, "'attach_nics'")) return TS_ESCHEMA;
  if (seq->count == 0) return sc_err(&L->sc, seq, "'attach_nics' is empty");
  ts_topo *t = L->t;
  uint32_t nics = 0;
  for (uint32_t i = 0; i < t->node_count; i++)
    nics += t->nodes[i].kind == TS_NODE_NIC && t->nodes[i].plane == plane;
  uint32_t block = (nics + seq->count - 1) / seq->count, k = 0;
  uint32_t *sw = calloc(seq->count, sizeof *sw);
  if (!sw) return TS_ENOMEM;
  for (uint32_t s = 0; s < seq->count; s++)
    if (resolve(L, plane, seq->items[s], &sw[s])) {
      free(sw);
      return TS_ESCHEMA;
    }
  uint32_t count = t->node_count;
  for (uint32_t i = 0; i < count; i++) {
    if (t->nodes[i].kind != TS_NODE_NIC || t->nodes[i].plane != plane) continue;
    double bw = t->port_bw[i] > 0 ? t->port_bw[i] : pi->cable_bw;
    topo_add_link(t, i, sw[k++ / block], TS_LINK_NET, 1, bw, pi->hop_latency, plane);
  }
  free(sw);
  return t->oom ? TS_ENOMEM : 0;
}

static int build_explicit(topo_loader *L, uint16_t plane, const plane_in *pi) {
  const topo_ynode *m = pi->node, *v;
  int rc = 0;
  if ((v = topo_ymap_get(m, "switches"))) rc = add_switches(L, plane, v);
  if (!rc) rc = topo_index_names(L->t, L->sc.d);
  if (!rc && (v = topo_ymap_get(m, "links"))) rc = add_links(L, plane, v, pi);
  if (!rc && (v = topo_ymap_get(m, "attach_nics"))) rc = attach_nics(L, plane, v, pi);
  return rc;
}

/* Every plane's highest switch tier in one pass over the nodes: O(nodes +
 * planes), where a pass per plane was O(nodes x planes). */
static void set_tiers(ts_topo *t) {
  for (uint32_t p = 0; p < t->plane_count; p++) t->planes[p].tiers = 0;
  for (uint32_t i = 0; i < t->node_count; i++) {
    const ts_node *n = &t->nodes[i];
    if (n->plane < t->plane_count && n->tier != TS_TIER_NONE &&
        n->tier > t->planes[n->plane].tiers)
      t->planes[n->plane].tiers = n->tier;
  }
}

int topo_planes_build(topo_loader *L) {
  ts_topo *t = L->t;
  for (uint16_t p = 0; p < t->plane_count; p++) {
    const plane_in *pi = &L->planes[p];
    const topo_ynode *g = topo_ymap_get(pi->node, "generator");
    const char *type = t->planes[p].generator;
    topo_push_mark(t, g ? g->line : pi->node->line, g ? g->col : pi->node->col);
    int rc;
    if (strcmp(type, "rail_optimized") == 0) rc = gen_rail(L, p, g, pi);
    else if (strcmp(type, "fat_tree") == 0) rc = gen_fat_tree(L, p, g, pi);
    else if (strcmp(type, "nvlink_domain") == 0) rc = gen_nvl(L, p, g);
    else rc = build_explicit(L, p, pi);
    if (rc) return rc;
  }
  set_tiers(t);
  return t->oom ? TS_ENOMEM : 0;
}
