/* report_dot.c - Graphviz drawing of a topology at four granularities
 * (ts_report_dot).
 *
 * Every node maps to a vertex key (class << 32 | index): class 0 is the node
 * itself, 1 a host, 2 a rack, 3 an SU. Above TS_DOT_DEVICE a host device
 * maps to the coarsest group label it carries up to the level (falling back
 * to finer labels when a coarser one is TS_NONE); network switches keep
 * their own vertex except leaves at TS_DOT_SU, which join their SU. Edges
 * are (key, key) pairs sorted and merged, so parallel links become one edge
 * with a count and a total bandwidth. Sorting keys makes the output
 * deterministic. Cost: O((V + E) log(V + E)) time, O(V + E) memory. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_report.h"

enum { V_NODE, V_HOST, V_RACK, V_SU };
static const char *const class_name[] = {"", "host", "rack", "su"};

#define VKEY(c, i) (((uint64_t)(c) << 32) | (uint32_t)(i))

typedef struct dot_edge {
  uint64_t a, b;
  uint32_t count;
  double bw;
} dot_edge;

static uint64_t host_group(const ts_node *n, ts_dot_level level, uint32_t id) {
  if (level >= TS_DOT_SU && n->su >= 0) return VKEY(V_SU, n->su);
  if (level >= TS_DOT_RACK && n->rack >= 0) return VKEY(V_RACK, n->rack);
  if (n->host >= 0) return VKEY(V_HOST, n->host);
  return VKEY(V_NODE, id);
}

static uint64_t vertex_of(const ts_topo *t, uint32_t id, ts_dot_level level) {
  const ts_node *n = ts_topo_node(t, id);
  if (level == TS_DOT_DEVICE) return VKEY(V_NODE, id);
  if (n->kind == TS_NODE_SWITCH) {
    if (level == TS_DOT_SU && n->tier == TS_TIER_LEAF && n->su >= 0)
      return VKEY(V_SU, n->su);
    return VKEY(V_NODE, id);
  }
  return host_group(n, level, id);
}

static void put_quoted(const char *s, FILE *out) {
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', out);
    if (*s == '\n') fputs("\\n", out);
    else fputc(*s, out);
  }
  fputc('"', out);
}

static void put_vertex_id(const ts_topo *t, uint64_t key, FILE *out) {
  uint32_t cls = (uint32_t)(key >> 32), idx = (uint32_t)key;
  if (cls == V_NODE) {
    put_quoted(ts_topo_node_name(t, idx), out);
    return;
  }
  fprintf(out, "\"%s:%u\"", class_name[cls], idx);
}

static void put_vertex(const ts_topo *t, uint64_t key, const char *indent,
                       FILE *out) {
  uint32_t cls = (uint32_t)(key >> 32), idx = (uint32_t)key;
  fputs(indent, out);
  put_vertex_id(t, key, out);
  if (cls == V_NODE)
    fprintf(out, " [label=\"%s\\n%s\"];\n", "\\N",
            ts_node_kind_name(ts_topo_node(t, idx)->kind));
  else
    fprintf(out, " [shape=box3d, label=\"%s %u\"];\n", class_name[cls], idx);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int cmp_edge(const void *a, const void *b) {
  const dot_edge *x = a, *y = b;
  if (x->a != y->a) return x->a < y->a ? -1 : 1;
  return (x->b > y->b) - (x->b < y->b);
}

static bool in_cluster(const ts_node *n) {
  return n->host >= 0 && n->kind != TS_NODE_SWITCH;
}

/* DEVICE level: clusters per host, then the nodes of no host. */
static int device_vertices(const ts_topo *t, FILE *out) {
  uint32_t n = ts_topo_node_count(t), m = 0;
  uint64_t *hid = malloc(((size_t)n + 1) * sizeof *hid); /* host << 32 | id */
  if (!hid) return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++)
    if (in_cluster(ts_topo_node(t, i)))
      hid[m++] = VKEY(ts_topo_node(t, i)->host, i);
  qsort(hid, m, sizeof *hid, cmp_u64);
  for (uint32_t i = 0; i < m; i++) {
    uint32_t h = (uint32_t)(hid[i] >> 32);
    if (i == 0 || (uint32_t)(hid[i - 1] >> 32) != h)
      fprintf(out, "  subgraph \"cluster_host%u\" {\n    label=\"host %u\";\n",
              h, h);
    put_vertex(t, VKEY(V_NODE, (uint32_t)hid[i]), "    ", out);
    if (i + 1 == m || (uint32_t)(hid[i + 1] >> 32) != h) fputs("  }\n", out);
  }
  for (uint32_t i = 0; i < n; i++)
    if (!in_cluster(ts_topo_node(t, i))) put_vertex(t, VKEY(V_NODE, i), "  ", out);
  free(hid);
  return 0;
}

static int grouped_vertices(const ts_topo *t, ts_dot_level level, FILE *out) {
  uint32_t n = ts_topo_node_count(t);
  uint64_t *keys = malloc(((size_t)n + 1) * sizeof *keys);
  if (!keys) return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++) keys[i] = vertex_of(t, i, level);
  qsort(keys, n, sizeof *keys, cmp_u64);
  for (uint32_t i = 0; i < n; i++)
    if (i == 0 || keys[i] != keys[i - 1]) put_vertex(t, keys[i], "  ", out);
  free(keys);
  return 0;
}

static void put_edge(const ts_topo *t, const dot_edge *e, FILE *out) {
  fputs("  ", out);
  put_vertex_id(t, e->a, out);
  fputs(" -- ", out);
  put_vertex_id(t, e->b, out);
  fprintf(out, " [label=\"%u link%s, %.4g GB/s\"];\n", e->count,
          e->count == 1 ? "" : "s", e->bw / 1e9);
}

static void device_edges(const ts_topo *t, FILE *out) {
  for (uint32_t l = 0; l < ts_topo_link_count(t); l++) {
    const ts_link *k = ts_topo_link(t, l);
    fputs("  ", out);
    put_vertex_id(t, VKEY(V_NODE, k->a), out);
    fputs(" -- ", out);
    put_vertex_id(t, VKEY(V_NODE, k->b), out);
    fprintf(out, " [label=\"%s x%u, %.4g GB/s\"];\n",
            ts_link_kind_name(k->kind), k->width, k->bandwidth / 1e9);
  }
}

static int grouped_edges(const ts_topo *t, ts_dot_level level, FILE *out) {
  uint32_t nl = ts_topo_link_count(t), m = 0;
  dot_edge *e = malloc(((size_t)nl + 1) * sizeof *e);
  if (!e) return TS_ENOMEM;
  for (uint32_t l = 0; l < nl; l++) {
    const ts_link *k = ts_topo_link(t, l);
    uint64_t a = vertex_of(t, k->a, level), b = vertex_of(t, k->b, level);
    if (a == b) continue;
    e[m++] = (dot_edge){a < b ? a : b, a < b ? b : a, 1, k->bandwidth};
  }
  qsort(e, m, sizeof *e, cmp_edge);
  for (uint32_t i = 0; i < m;) {
    dot_edge sum = e[i];
    for (i++; i < m && e[i].a == sum.a && e[i].b == sum.b; i++) {
      sum.count++;
      sum.bw += e[i].bw;
    }
    put_edge(t, &sum, out);
  }
  free(e);
  return 0;
}

int ts_report_dot(const ts_topo *t, ts_dot_level level, FILE *out) {
  if (level == TS_DOT_TIER) return ts_report_tiers(t, 0, out);
  if (level < TS_DOT_DEVICE || level > TS_DOT_SU) return TS_EUSAGE;
  const char *name = ts_topo_name(t);
  fputs("graph ", out);
  put_quoted(name && *name ? name : "topology", out);
  fputs(" {\n  node [shape=box];\n", out);
  int rc = level == TS_DOT_DEVICE ? device_vertices(t, out)
                                  : grouped_vertices(t, level, out);
  if (!rc && level == TS_DOT_DEVICE) device_edges(t, out);
  else if (!rc) rc = grouped_edges(t, level, out);
  if (rc) return rc;
  fputs("}\n", out);
  return ferror(out) ? TS_EIO : 0;
}
