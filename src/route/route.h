/* route.h - private layout of the router and the link-state overlay, and
 * the pieces the route_*.c stages share.
 *
 * Stages: route_host.c builds per-node tables once and walks inside a host
 * (NVLink, PCIe); route_fabric.c walks a network plane from NIC to NIC;
 * route_path.c picks endpoints, planes and NICs (rail policy) and glues the
 * pieces into a path. Every walk appends to one route_walk. */
#ifndef TOPSIM_ROUTE_H
#define TOPSIM_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

#include "topo/topo_graph.h"
#include "topsim/ts_route.h"

#define ROUTE_NONE UINT32_MAX
/* Nodes an in-host PCIe search may visit; a bigger host is an error. */
#define ROUTE_HOST_MAX 1024

struct ts_route_state {
  uint32_t link_count;
  uint8_t *down;     /* 1: link down, both directions */
  float *factor;     /* bandwidth factor in (0, 1] */
};

struct ts_route {
  const ts_topo *t;
  const ts_route_state *state;   /* NULL: all up */
  ts_route_opts opts;
  uint32_t planes;
  /* per node: GPU -> its ordinal in ts_topo_gpus; NIC -> PXN proxy GPU
   * (the GPU whose NIC it is on its plane) or ROUTE_NONE */
  uint32_t *aux;
  uint32_t *gpu_nic;             /* [ordinal * planes + plane]: NIC or NONE */
  uint32_t *host_off, *host_nodes;  /* CSR: host -> its nodes, id order */
  uint32_t hosts;
  uint32_t *stamp, gen;          /* per-node visit marks, one gen per use */
  uint32_t *cand;                /* 4 candidate buffers of max_deg each */
  uint32_t max_deg;
  uint32_t *bfs_node, *bfs_from; /* plane BFS queue, bfs_cap entries */
  /* Cache-friendly copies for the fabric scans, which would otherwise miss
   * the cache on every link and node record of a 128-port switch:
   * adj_head[i] = head of adj[i]; nclass[n] = route_class of node n. */
  uint32_t *adj_head;
  uint32_t *nclass;
  uint32_t *down_dir;            /* fabric: switch -> dir down to the dst leaf */
  uint32_t bfs_cap;
  uint32_t *npos;                /* D-mod-k: NIC -> position in its tree */
  bool dmodk_backend;            /* every backend plane routes D-mod-k */
};

/* Decision points: ECMP hashes, spray enumerates (see route_choose). */
typedef struct route_pick {
  uint64_t hash;     /* mix of (src, dst, flow) */
  uint64_t index;    /* spray: path number */
  uint64_t prod;     /* spray: product of the radices met so far */
  uint32_t level;    /* decisions made so far */
  bool spray;
  bool dmodk;        /* choices are digits of dpos, not hashes */
  uint64_t dpos;     /* D-mod-k: destination position (route_dmodk.c) */
  uint64_t dprod;    /* D-mod-k: product of the radices met so far */
} route_pick;

typedef struct route_walk {
  ts_route *r;
  const ts_topo *t;
  ts_path *p;
  route_pick pick;
  uint32_t src, dst;
  ts_diag *d;
} route_walk;

/* Index in [0, n) for the next decision among n candidates (n >= 1). */
uint32_t route_choose(route_pick *k, uint32_t n);

/* Appends a direction; TS_EINVALID past TS_ROUTE_MAX_HOPS. */
int route_append(route_walk *w, uint32_t dir);

/* Formats the standard "no route from A to B: why" error. */
int route_fail(route_walk *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A fresh stamp generation (wraps by clearing the stamps). */
uint32_t route_new_gen(ts_route *r);

/* kind | tier << 4 | plane << 16 of a node. */
static inline uint32_t route_class(uint32_t kind, uint32_t tier,
                                   uint32_t plane) {
  return kind | tier << 4 | plane << 16;
}
#define ROUTE_CLASS_PLANE_KIND 0xFFFF000Fu
#define ROUTE_CLASS_TIER(c) (((c) >> 4) & 0xFu)

static inline bool route_live(const ts_route *r, uint32_t link) {
  return !r->state || !r->state->down[link];
}

static inline uint32_t route_tail(const ts_topo *t, uint32_t dir) {
  return topo_dir_head(t, dir ^ 1u);
}

/* route_host.c */
int route_tables_build(ts_route *r);
void route_tables_free(ts_route *r);
/* GPU a -> GPU b over NVLink (direct, or one NVSwitch both reach): 1 if
 * appended, 0 if there is no live NVLink route, < 0 on error. */
int route_nvlink(route_walk *w, uint32_t a, uint32_t b);
/* Shortest in-host path a -> b over PCIe, C2C and socket links, through
 * PCIe switches and CPUs only. 0 or TS_EINVALID. */
int route_host_path(route_walk *w, uint32_t a, uint32_t b);
/* NIC of host `host` on `plane` with rail `rail` (or, rails unlabelled,
 * local index `local`), or ROUTE_NONE. */
uint32_t route_host_nic(const ts_route *r, int32_t host, uint16_t plane,
                        int16_t rail, int16_t local);

/* 1 if the NIC has a live link into its plane and (if it has any) a live
 * link to its host. */
bool route_nic_usable(const ts_route *r, uint32_t nic);
/* The NIC a GPU uses on `plane`: its own when usable, else the host's
 * nearest usable one (failover); ROUTE_NONE when the host has no NIC on the
 * plane or none is usable. */
uint32_t route_live_nic(const ts_route *r, uint32_t gpu, uint16_t plane);

/* route_dmodk.c: NIC positions when a plane routes D-mod-k (0 or
 * TS_ENOMEM); whether plane routes D-mod-k (after the override). */
int route_dmodk_build(ts_route *r);
bool route_dmodk_plane(const ts_route *r, uint16_t plane);

/* route_fabric.c: NIC a -> NIC b over their plane. 0 or TS_EINVALID. */
int route_fabric(route_walk *w, uint32_t nic_a, uint32_t nic_b);

#endif
