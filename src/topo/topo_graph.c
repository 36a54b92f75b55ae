/* topo_graph.c - building and querying the flat topology graph.
 *
 * Costs: add_node/add_link O(1) amortized (arrays double); finalize O(V + E)
 * (counting sort of directions into CSR, one pass for the name index);
 * find_node O(1) expected (open addressing, FNV-1a hash). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_graph.h"
#include "topsim/ts_budget.h"

/* Grows *arr (elements of size sz) so that index `need` fits. */
static bool grow(void **arr, uint32_t *cap, uint32_t need, size_t sz) {
  if (need < *cap) return true;
  uint32_t ncap = *cap ? *cap : 64;
  while (ncap <= need) ncap *= 2;
  void *p = realloc(*arr, (size_t)ncap * sz);
  if (!p) return false;
  *arr = p;
  *cap = ncap;
  return true;
}

ts_topo *topo_new(const char *source) {
  ts_topo *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->source = strdup(source ? source : "<input>");
  t->name = strdup("");
  if (!t->source || !t->name) {
    ts_topo_free(t);
    return NULL;
  }
  topo_push_mark(t, 0, 0);
  return t->oom ? (ts_topo_free(t), NULL) : t;
}

void ts_topo_free(ts_topo *t) {
  if (!t) return;
  for (uint32_t i = 0; i < t->string_count; i++) free(t->strings[i]);
  free(t->strings);
  free(t->name);
  free(t->source);
  free(t->nodes);
  free(t->node_mark);
  free(t->port_bw);
  free(t->links);
  free(t->names);
  free(t->marks);
  free(t->planes);
  free(t->plane_marks);
  free(t->models);
  free(t->adj_off);
  free(t->adj);
  free(t->gpus);
  free(t->name_slots);
  free(t->aff_node);
  free(t->aff_mask);
  free(t->by_plane_off);
  free(t->by_plane);
  free(t);
}

const char *topo_strdup(ts_topo *t, const char *s) {
  if (!grow((void **)&t->strings, &t->string_cap, t->string_count,
            sizeof *t->strings)) {
    t->oom = true;
    return NULL;
  }
  char *c = strdup(s ? s : "");
  if (!c) {
    t->oom = true;
    return NULL;
  }
  t->strings[t->string_count++] = c;
  return c;
}

uint32_t topo_push_mark(ts_topo *t, uint32_t line, uint32_t col) {
  if (!grow((void **)&t->marks, &t->mark_cap, t->mark_count, sizeof *t->marks)) {
    t->oom = true;
    return 0;
  }
  t->marks[t->mark_count] = (topo_mark){line, col};
  t->cur_mark = t->mark_count;
  return t->mark_count++;
}

ts_node topo_node_proto(ts_node_kind kind) {
  ts_node n;
  memset(&n, 0, sizeof n);
  n.kind = (uint8_t)kind;
  n.tier = TS_TIER_NONE;
  n.plane = TS_NO_PLANE;
  n.host = n.rack = n.su = n.group = TS_NONE;
  n.numa = n.rail = n.local = TS_NONE;
  return n;
}

/* Appends a formatted name to the arena; returns its offset. */
static uint32_t add_name(ts_topo *t, const char *fmt, va_list ap) {
  char buf[256];
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
  size_t need = t->names_len + (size_t)n + 1;
  if (need > UINT32_MAX) {
    t->oom = true;
    return 0;
  }
  if (need > t->names_cap) {
    size_t ncap = t->names_cap ? t->names_cap : 4096;
    while (ncap < need) ncap *= 2;
    char *p = realloc(t->names, ncap);
    if (!p) {
      t->oom = true;
      return 0;
    }
    t->names = p;
    t->names_cap = ncap;
  }
  uint32_t off = (uint32_t)t->names_len;
  memcpy(t->names + off, buf, (size_t)n + 1);
  t->names_len = need;
  return off;
}

/* Grows the three per-node arrays together so they always share node_cap. */
static bool grow_nodes(ts_topo *t) {
  if (t->node_count < t->node_cap) return true;
  uint32_t ncap = t->node_cap ? t->node_cap * 2 : 256;
  ts_node *nodes = realloc(t->nodes, (size_t)ncap * sizeof *nodes);
  if (nodes) t->nodes = nodes;
  uint32_t *marks = realloc(t->node_mark, (size_t)ncap * sizeof *marks);
  if (marks) t->node_mark = marks;
  double *bw = realloc(t->port_bw, (size_t)ncap * sizeof *bw);
  if (bw) t->port_bw = bw;
  if (!nodes || !marks || !bw) return false;
  t->node_cap = ncap;
  return true;
}

/* Refuses growth past a budget (checked before allocating): a generator
 * asked for more; sets oom so later appends are no-ops, as on ENOMEM. */
static bool over_budget(ts_topo *t, uint32_t count, int which) {
  const ts_budget *b = ts_budget_get();
  if (count < (which == TS_BUDGET_DEVICES ? b->devices : b->links)) return false;
  t->oom = true;
  if (!t->over_budget) t->over_budget = (uint8_t)(which + 1);
  return true;
}

uint32_t topo_add_node(ts_topo *t, const ts_node *proto, const char *fmt, ...) {
  if (t->oom || over_budget(t, t->node_count, TS_BUDGET_DEVICES)) return TOPO_BAD_ID;
  if (!grow_nodes(t)) {
    t->oom = true;
    return TOPO_BAD_ID;
  }
  va_list ap;
  va_start(ap, fmt);
  uint32_t name = add_name(t, fmt, ap);
  va_end(ap);
  if (t->oom) return TOPO_BAD_ID;
  uint32_t id = t->node_count++;
  if (proto->kind == TS_NODE_NIC) t->nic_added = true;
  t->nodes[id] = *proto;
  t->nodes[id].name = name;
  t->node_mark[id] = t->cur_mark;
  t->port_bw[id] = 0.0;
  return id;
}

uint32_t topo_add_link(ts_topo *t, uint32_t a, uint32_t b, ts_link_kind kind,
                       uint16_t width, double bandwidth, ts_time_ps latency,
                       uint16_t plane) {
  if (t->oom || a >= t->node_count || b >= t->node_count ||
      over_budget(t, t->link_count, TS_BUDGET_LINKS))
    return TOPO_BAD_ID;
  if (!grow((void **)&t->links, &t->link_cap, t->link_count, sizeof *t->links)) {
    t->oom = true;
    return TOPO_BAD_ID;
  }
  ts_link *l = &t->links[t->link_count];
  memset(l, 0, sizeof *l);
  l->a = a;
  l->b = b;
  l->kind = (uint8_t)kind;
  l->width = width ? width : 1;
  l->bandwidth = bandwidth;
  l->latency = latency;
  l->plane = plane;
  return t->link_count++;
}

uint16_t topo_add_plane(ts_topo *t, const ts_plane *proto, topo_mark mark) {
  if (t->plane_count >= TS_NO_PLANE - 1) goto oom;
  if (t->plane_count == t->plane_cap) {
    uint32_t ncap = t->plane_cap ? t->plane_cap * 2 : 8;
    ts_plane *p = realloc(t->planes, (size_t)ncap * sizeof *p);
    if (p) t->planes = p;
    topo_mark *m = realloc(t->plane_marks, (size_t)ncap * sizeof *m);
    if (m) t->plane_marks = m;
    if (!p || !m) goto oom;
    t->plane_cap = ncap;
  }
  t->planes[t->plane_count] = *proto;
  t->plane_marks[t->plane_count] = mark;
  return (uint16_t)t->plane_count++;
oom:
  t->oom = true;
  return TS_NO_PLANE;
}

uint16_t topo_add_model(ts_topo *t, const ts_gpu_model *proto) {
  if (t->model_count >= UINT16_MAX - 1 ||
      !grow((void **)&t->models, &t->model_cap, t->model_count,
            sizeof *t->models)) {
    t->oom = true;
    return UINT16_MAX;
  }
  t->models[t->model_count] = *proto;
  return (uint16_t)t->model_count++;
}

/* FNV-1a: simple, good enough spread for generated names. */
static uint32_t hash_name(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

static int build_csr(ts_topo *t) {
  uint32_t n = t->node_count;
  t->adj_off = calloc((size_t)n + 1, sizeof *t->adj_off);
  t->adj = malloc(((size_t)t->link_count * 2 + 1) * sizeof *t->adj);
  if (!t->adj_off || !t->adj) return TS_ENOMEM;
  for (uint32_t l = 0; l < t->link_count; l++) {
    t->adj_off[t->links[l].a + 1]++;
    t->adj_off[t->links[l].b + 1]++;
  }
  for (uint32_t i = 0; i < n; i++) t->adj_off[i + 1] += t->adj_off[i];
  uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
  if (!fill) return TS_ENOMEM;
  memcpy(fill, t->adj_off, ((size_t)n + 1) * sizeof *fill);
  /* Directions are visited in increasing id, so each row comes out sorted. */
  for (uint32_t l = 0; l < t->link_count; l++) {
    t->adj[fill[t->links[l].a]++] = 2 * l;
    t->adj[fill[t->links[l].b]++] = 2 * l + 1;
  }
  free(fill);
  return 0;
}

/* Incremental: only nodes added since the last call are inserted, and the
 * table is rebuilt (doubling) only when it would pass half full, so calling
 * it once per explicit plane costs O(nodes) amortized over the whole load,
 * not O(nodes) per plane. */
int topo_index_names(ts_topo *t, ts_diag *d) {
  uint64_t want = (uint64_t)t->node_count * 2u + 2u;
  if (!t->name_slots || t->name_slot_count < want) {
    uint64_t slots = 64;
    while (slots < want) slots *= 2;
    if (slots > UINT32_MAX) return TS_ENOMEM;
    free(t->name_slots);
    t->name_slots = malloc((size_t)slots * sizeof *t->name_slots);
    if (!t->name_slots) return TS_ENOMEM;
    memset(t->name_slots, 0xff, (size_t)slots * sizeof *t->name_slots);
    t->name_slot_count = (uint32_t)slots;
    t->name_indexed = 0;
  }
  uint32_t slots = t->name_slot_count;
  for (uint32_t id = t->name_indexed; id < t->node_count; id++) {
    const char *nm = t->names + t->nodes[id].name;
    uint32_t s = hash_name(nm) & (slots - 1);
    while (t->name_slots[s] != TOPO_BAD_ID) {
      uint32_t other = t->name_slots[s];
      if (strcmp(t->names + t->nodes[other].name, nm) == 0) {
        topo_mark m = topo_node_mark(t, id);
        return ts_diag_set(d, TS_ESCHEMA, t->source, (int)m.line, (int)m.col,
                           "duplicate name '%s': every device and switch "
                           "needs a unique name", nm);
      }
      s = (s + 1) & (slots - 1);
    }
    t->name_slots[s] = id;
    t->name_indexed = id + 1;
  }
  return 0;
}

static int build_gpu_list(ts_topo *t) {
  uint32_t count = 0;
  for (uint32_t i = 0; i < t->node_count; i++)
    count += t->nodes[i].kind == TS_NODE_GPU;
  t->gpus = malloc(((size_t)count + 1) * sizeof *t->gpus);
  if (!t->gpus) return TS_ENOMEM;
  t->gpu_count = 0;
  for (uint32_t i = 0; i < t->node_count; i++)
    if (t->nodes[i].kind == TS_NODE_GPU) t->gpus[t->gpu_count++] = i;
  return 0;
}

int topo_finalize(ts_topo *t, ts_diag *d) {
  if (t->oom)
    return ts_diag_set(d, TS_ENOMEM, t->source, 0, 0,
                       "out of memory while building the graph");
  int rc = build_csr(t);
  if (!rc) rc = build_gpu_list(t);
  if (!rc) rc = topo_index_names(t, d);
  if (rc == TS_ENOMEM)
    ts_diag_set(d, rc, t->source, 0, 0, "out of memory while indexing the graph");
  return rc;
}

topo_mark topo_node_mark(const ts_topo *t, uint32_t id) {
  if (id >= t->node_count) return (topo_mark){0, 0};
  return t->marks[t->node_mark[id]];
}

uint32_t topo_ports_used(const ts_topo *t, uint32_t id) {
  uint32_t ports = 0;
  for (uint32_t i = t->adj_off[id]; i < t->adj_off[id + 1]; i++) {
    const ts_link *l = &t->links[t->adj[i] >> 1];
    if (l->kind == TS_LINK_NET || l->kind == TS_LINK_NVLINK) ports += l->width;
  }
  return ports;
}

/* ---- public accessors ---- */

void topo_add_affinity(ts_topo *t, uint32_t id, const char *mask) {
  if (t->oom || !mask) return;
  uint32_t cap = t->aff_cap;
  if (!grow((void **)&t->aff_node, &cap, t->aff_count + 1, sizeof *t->aff_node) ||
      !grow((void **)&t->aff_mask, &t->aff_cap, t->aff_count + 1, sizeof *t->aff_mask)) {
    t->oom = true;
    return;
  }
  t->aff_node[t->aff_count] = id;
  t->aff_mask[t->aff_count++] = mask;
}

/* Binary search: aff_node is ascending because hosts are built in order. */
const char *ts_topo_cpu_affinity(const ts_topo *t, uint32_t id) {
  uint32_t lo = 0, hi = t->aff_count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (t->aff_node[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < t->aff_count && t->aff_node[lo] == id ? t->aff_mask[lo] : NULL;
}

const char *ts_topo_name(const ts_topo *t) { return t->name; }
uint32_t ts_topo_node_count(const ts_topo *t) { return t->node_count; }
uint32_t ts_topo_link_count(const ts_topo *t) { return t->link_count; }
uint32_t ts_topo_host_count(const ts_topo *t) { return t->host_count; }
uint32_t ts_topo_plane_count(const ts_topo *t) { return t->plane_count; }
uint32_t ts_topo_gpu_model_count(const ts_topo *t) { return t->model_count; }

const ts_node *ts_topo_node(const ts_topo *t, uint32_t id) {
  return id < t->node_count ? &t->nodes[id] : NULL;
}
const ts_link *ts_topo_link(const ts_topo *t, uint32_t id) {
  return id < t->link_count ? &t->links[id] : NULL;
}
const ts_plane *ts_topo_plane(const ts_topo *t, uint32_t id) {
  return id < t->plane_count ? &t->planes[id] : NULL;
}
const ts_gpu_model *ts_topo_gpu_model(const ts_topo *t, uint32_t id) {
  return id < t->model_count ? &t->models[id] : NULL;
}
const char *ts_topo_node_name(const ts_topo *t, uint32_t id) {
  return id < t->node_count ? t->names + t->nodes[id].name : NULL;
}
uint32_t ts_topo_degree(const ts_topo *t, uint32_t id) {
  return t->adj_off[id + 1] - t->adj_off[id];
}
const uint32_t *ts_topo_adj(const ts_topo *t, uint32_t id) {
  return t->adj + t->adj_off[id];
}
uint32_t ts_topo_dir_head(const ts_topo *t, uint32_t dir) {
  return topo_dir_head(t, dir);
}

int ts_topo_find_node(const ts_topo *t, const char *name, uint32_t *id) {
  if (!t->name_slots) return TS_ESCHEMA;
  uint32_t mask = t->name_slot_count - 1;
  for (uint32_t s = hash_name(name) & mask; t->name_slots[s] != TOPO_BAD_ID;
       s = (s + 1) & mask) {
    uint32_t cand = t->name_slots[s];
    if (strcmp(t->names + t->nodes[cand].name, name) == 0) {
      *id = cand;
      return 0;
    }
  }
  return TS_ESCHEMA;
}

uint32_t ts_topo_gpus(const ts_topo *t, const uint32_t **ids) {
  *ids = t->gpus;
  return t->gpu_count;
}

int ts_topo_plane_find(const ts_topo *t, const char *name) {
  for (uint32_t i = 0; i < t->plane_count; i++)
    if (strcmp(t->planes[i].name, name) == 0) return (int)i;
  return -1;
}

const char *ts_node_kind_name(ts_node_kind k) {
  static const char *n[] = {"gpu", "cpu", "pcie_switch", "nvswitch", "nic",
                            "switch"};
  return (unsigned)k < TS_NODE_KIND_COUNT ? n[k] : "?";
}
const char *ts_link_kind_name(ts_link_kind k) {
  static const char *n[] = {"nvlink", "pcie", "cpu", "c2c", "net"};
  return (unsigned)k < TS_LINK_KIND_COUNT ? n[k] : "?";
}
const char *ts_plane_kind_name(ts_plane_kind k) {
  static const char *n[] = {"scale_up", "backend", "frontend", "storage", "oob"};
  return (unsigned)k < TS_PLANE_KIND_COUNT ? n[k] : "?";
}
const char *ts_tier_name(ts_tier t) {
  static const char *n[] = {"none", "leaf", "spine", "core"};
  return (unsigned)t <= TS_TIER_MAX ? n[t] : "?";
}

/* Counting sort of n items by key (keys >= planes are skipped). */
static int group_by_plane(uint32_t planes, uint32_t n, const void *base,
                          size_t stride, size_t key_off, uint32_t **off,
                          uint32_t **ids) {
  *off = calloc((size_t)planes + 2, sizeof **off);
  *ids = malloc(((size_t)n + 1) * sizeof **ids);
  if (!*off || !*ids) return TS_ENOMEM;
  const char *b = base;
  for (uint32_t i = 0; i < n; i++) {
    uint16_t p = *(const uint16_t *)(b + i * stride + key_off);
    if (p < planes) (*off)[p + 1]++;
  }
  for (uint32_t p = 0; p < planes; p++) (*off)[p + 1] += (*off)[p];
  uint32_t *fill = malloc(((size_t)planes + 1) * sizeof *fill);
  if (!fill) return TS_ENOMEM;
  memcpy(fill, *off, (size_t)planes * sizeof *fill);
  for (uint32_t i = 0; i < n; i++) {
    uint16_t p = *(const uint16_t *)(b + i * stride + key_off);
    if (p < planes) (*ids)[fill[p]++] = i;
  }
  free(fill);
  return 0;
}

int topo_plane_csr_build(const ts_topo *t, topo_plane_csr *c) {
  memset(c, 0, sizeof *c);
  int rc = group_by_plane(t->plane_count, t->node_count, t->nodes, sizeof *t->nodes,
                          offsetof(ts_node, plane), &c->node_off, &c->nodes);
  if (!rc)
    rc = group_by_plane(t->plane_count, t->link_count, t->links, sizeof *t->links,
                        offsetof(ts_link, plane), &c->link_off, &c->links);
  if (rc) topo_plane_csr_free(c);
  return rc;
}

void topo_plane_csr_free(topo_plane_csr *c) {
  free(c->node_off);
  free(c->nodes);
  free(c->link_off);
  free(c->links);
  memset(c, 0, sizeof *c);
}

uint32_t *topo_plane_nics(ts_topo *t, uint16_t p, uint32_t *count) {
  *count = 0;
  if (!t->by_plane || t->nic_added) {
    free(t->by_plane_off);
    free(t->by_plane);
    t->by_plane_off = t->by_plane = NULL;
    if (group_by_plane(t->plane_count, t->node_count, t->nodes, sizeof *t->nodes,
                       offsetof(ts_node, plane), &t->by_plane_off, &t->by_plane)) {
      free(t->by_plane_off);
      free(t->by_plane);
      t->by_plane_off = t->by_plane = NULL;
      return NULL;
    }
    t->by_plane_nodes = t->node_count;
    t->nic_added = false;
  }
  uint32_t lo = p < t->plane_count ? t->by_plane_off[p] : 0;
  uint32_t hi = p < t->plane_count ? t->by_plane_off[p + 1] : 0;
  uint32_t *ids = malloc(((size_t)(hi - lo) + 1) * sizeof *ids);
  if (!ids) return NULL;
  for (uint32_t k = lo; k < hi; k++)
    if (t->nodes[t->by_plane[k]].kind == TS_NODE_NIC) ids[(*count)++] = t->by_plane[k];
  return ids;
}
