/* topo_graph.h - private layout of ts_topo and the builder every loader and
 * generator uses.
 *
 * Invariants after topo_finalize():
 *   - nodes[0..node_count) and links[0..link_count) are dense arrays;
 *   - adj_off has node_count+1 entries; adj[adj_off[n]..adj_off[n+1]) are the
 *     directions (2*l for a->b, 2*l+1 for b->a) leaving n, sorted by
 *     direction id so iteration order is deterministic;
 *   - gpus[] lists GPU ids in id order (host-major because hosts are
 *     instantiated in order);
 *   - the name index maps every node name to its id (open addressing).
 * Building: topo_add_node/topo_add_link append in O(1) amortized; an
 * allocation failure sets t->oom and later calls become no-ops, so generators
 * need not check every call; topo_finalize reports it once. */
#ifndef TOPSIM_TOPO_GRAPH_H
#define TOPSIM_TOPO_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "topsim/ts_topo.h"

#define TOPO_BAD_ID UINT32_MAX

/* Where in the input a node, link or plane came from (1-based; 0 unknown). */
typedef struct topo_mark {
  uint32_t line, col;
} topo_mark;

struct ts_topo {
  char *name;
  char *source;               /* file name used in diagnostics */

  ts_node *nodes;
  uint32_t node_count, node_cap;
  uint32_t *node_mark;        /* index into marks[] per node */
  double *port_bw;            /* NIC port speed in bytes/s, 0 elsewhere */

  ts_link *links;
  uint32_t link_count, link_cap;

  char *names;                /* arena of NUL-terminated node names */
  size_t names_len, names_cap;

  topo_mark *marks;
  uint32_t mark_count, mark_cap;
  uint32_t cur_mark;          /* mark given to nodes added from now on */

  ts_plane *planes;
  topo_mark *plane_marks;
  uint32_t plane_count, plane_cap;

  ts_gpu_model *models;
  uint32_t model_count, model_cap;

  uint32_t host_count;

  /* built by topo_finalize */
  uint32_t *adj_off;
  uint32_t *adj;
  uint32_t *gpus;
  uint32_t gpu_count;
  uint32_t *name_slots;       /* open-addressing table of node ids */
  uint32_t name_slot_count;   /* power of two */
  uint32_t name_indexed;      /* nodes [0, name_indexed) are in name_slots */

  /* CPU affinity masks (NCCL XML `affinity`), sorted by CPU node id because
   * hosts are built in order; only CPUs that have one are listed. */
  uint32_t *aff_node;
  const char **aff_mask;      /* strings owned by `strings` */
  uint32_t aff_count, aff_cap;

  char **strings;             /* owned strings (plane names, presets...) */
  uint32_t string_count, string_cap;

  bool oom;
  uint8_t over_budget;        /* 0, or TS_BUDGET_DEVICES/LINKS + 1 (oom set too) */
  /* Nodes by plane over nodes [0, by_plane_nodes), for the generators'
   * per-plane NIC lookups (topo_gen_collect); nic_added is set when a NIC
   * is added later, which makes the cache stale. */
  uint32_t *by_plane_off, *by_plane;
  uint32_t by_plane_nodes;
  bool nic_added;
};

/* Allocates an empty topology (NULL on ENOMEM). */
ts_topo *topo_new(const char *source);

/* Copies s into storage owned by t; returns the copy (NULL on ENOMEM). */
const char *topo_strdup(ts_topo *t, const char *s);

/* Records a source position and makes it current; returns its index. */
uint32_t topo_push_mark(ts_topo *t, uint32_t line, uint32_t col);

/* Appends a node copied from proto with a printf-formatted name; returns its
 * id, or TOPO_BAD_ID on ENOMEM (t->oom set). */
uint32_t topo_add_node(ts_topo *t, const ts_node *proto, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends a full-duplex link; returns its id or TOPO_BAD_ID on ENOMEM. */
uint32_t topo_add_link(ts_topo *t, uint32_t a, uint32_t b, ts_link_kind kind,
                       uint16_t width, double bandwidth, ts_time_ps latency,
                       uint16_t plane);

/* Records the affinity mask of CPU node id (ids must grow); mask must be
 * owned by t (topo_strdup). Sets t->oom on ENOMEM. */
void topo_add_affinity(ts_topo *t, uint32_t id, const char *mask);

/* Appends a plane; returns its index or TS_NO_PLANE on ENOMEM. */
uint16_t topo_add_plane(ts_topo *t, const ts_plane *proto, topo_mark mark);

/* Appends a GPU model; returns its index or UINT16_MAX on ENOMEM. */
uint16_t topo_add_model(ts_topo *t, const ts_gpu_model *proto);

/* A node prototype with every label TS_NONE and no plane. */
ts_node topo_node_proto(ts_node_kind kind);

/* Builds CSR adjacency, the GPU list and the name index. Returns TS_ENOMEM
 * if any earlier append failed, TS_ESCHEMA (with d set) on duplicate node
 * names, else 0. */
int topo_finalize(ts_topo *t, ts_diag *d);

/* (Re)builds the name index over the nodes added so far, so explicit links
 * can name devices before finalize. TS_ESCHEMA on a duplicate name. */
int topo_index_names(ts_topo *t, ts_diag *d);

/* Nodes and links grouped by plane (counting sort, O(V + E + P)), so a
 * per-plane pass costs the plane's size instead of the whole graph's:
 * nodes[node_off[p] .. node_off[p+1]) are plane p's nodes in id order, the
 * same for links. Nodes/links without a plane are left out. */
typedef struct topo_plane_csr {
  uint32_t *node_off, *nodes, *link_off, *links;
} topo_plane_csr;

/* Plane p's NICs, in id order, into a malloc'ed array (*count entries;
 * NULL on ENOMEM). O(plane size) after a one-time O(V + P) grouping that is
 * redone only when a NIC was added since (switches added by generators do
 * not matter: only NICs are asked for). */
uint32_t *topo_plane_nics(ts_topo *t, uint16_t p, uint32_t *count);

/* Builds the grouping of t as it is now. TS_ENOMEM (all freed) or 0. */
int topo_plane_csr_build(const ts_topo *t, topo_plane_csr *c);
/* Frees it (safe on a zeroed one). */
void topo_plane_csr_free(topo_plane_csr *c);

/* Source position of a node / plane for diagnostics. */
topo_mark topo_node_mark(const ts_topo *t, uint32_t id);

/* Ports a switch uses: sum of link widths over its network links. */
uint32_t topo_ports_used(const ts_topo *t, uint32_t id);

/* Node at the other end of direction dir (same as ts_topo_dir_head). */
static inline uint32_t topo_dir_head(const ts_topo *t, uint32_t dir) {
  const ts_link *l = &t->links[dir >> 1];
  return (dir & 1u) ? l->a : l->b;
}

#endif
