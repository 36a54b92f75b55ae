/* ts_route.h - routes between endpoints, computed on demand.
 *
 * A route is a path of direction ids (2*link + side, see ts_topo.h) from a
 * source endpoint to a destination endpoint; that array is the contract with
 * the network model, which charges each direction as its own resource.
 * Endpoints are GPUs and NICs (a NIC stands for its host on that NIC's
 * plane: checkpoint traffic to a storage server, say).
 *
 * There are no all-pairs tables: a router holds O(nodes) per-node data
 * (GPU -> NIC per plane, NIC -> PXN proxy GPU, hosts' devices) built once in
 * O(nodes + links), and each route costs O(path length x switch degree) on a
 * tiered Clos (see route_fabric.c for the up-down walk and its assumptions;
 * hand-written planes that are not up-down shaped fall back to a BFS over
 * that plane's switches only, O(switches + links of the plane)).
 *
 * What a route looks like:
 *   same NVLink domain  GPU -> GPU (direct NVLink) or GPU -> NVSwitch -> GPU,
 *                       also across hosts of an NVL72-style scale-up plane;
 *   same host, no NVLink  up the PCIe tree to the lowest common PCIe switch or
 *                       CPU, across the socket link(s), down to the target;
 *   other host          GPU -> PCIe -> NIC -> leaf [-> spine [-> core ->
 *                       spine] ] -> leaf -> NIC -> PCIe -> GPU, on a backend
 *                       plane for GPU-to-GPU traffic, on the plane the NIC
 *                       endpoint belongs to otherwise (a storage burst never
 *                       touches backend links).
 * Rail policy (GPU-to-GPU over a backend plane): by default rail-aligned
 * with PXN, as NCCL does: the destination receives on its own NIC; the
 * source host sends from its NIC on that NIC's rail, first moving the data
 * over NVLink to the GPU that NIC belongs to when that is not the source.
 * With no_pxn the source sends from its own NIC and the fabric crosses rails.
 * "The GPU's NIC" on a plane: the NIC under the same PCIe switch (or CPU)
 * with the same rank in id order (DGX: GPU i <-> NIC i); else a NIC of the
 * same NUMA domain; else any NIC of the host on that plane (rank modulo
 * count each time).
 *
 * Equal-cost choices (several NVSwitches, uplinks, planes) are made at
 * "decision points". ts_route_path (ECMP) hashes (src, dst, flow, decision
 * number) to pick one candidate; ts_route_paths (spray) enumerates distinct
 * combinations, up to a cap: k paths each meant to carry 1/k of the flow.
 * Dead links (ts_route_state) are never candidates, so ECMP rehashes over
 * the survivors. Everything is deterministic: same inputs, same paths.
 *
 * A router is not thread-safe (it keeps scratch space); use one per thread.
 * It reads the state it was given at every call, so failing a link between
 * calls reroutes later flows. */
#ifndef TOPSIM_TS_ROUTE_H
#define TOPSIM_TS_ROUTE_H

#include <stdint.h>

#include "topsim/ts_error.h"
#include "topsim/ts_topo.h"

/* Longest path a route may have. Generated fabrics need at most 12
 * (PXN NVLink hop 2 + PCIe 2 + NIC..core..NIC 6 + PCIe 2); a longer
 * hand-written path is reported as TS_EINVALID. */
#define TS_ROUTE_MAX_HOPS 48
/* Most paths ts_route_paths returns for one flow. */
#define TS_ROUTE_MAX_PATHS 256

typedef struct ts_path {
  uint32_t len;                      /* directions used */
  uint32_t dir[TS_ROUTE_MAX_HOPS];   /* source first */
} ts_path;

/* ---- link-state overlay ---- */

typedef struct ts_route_state ts_route_state;

/* A state for t with every link up at factor 1. Returns 0 and sets *out
 * (free with ts_route_state_free), or TS_ENOMEM with *out = NULL. */
int ts_route_state_new(const ts_topo *t, ts_route_state **out);
void ts_route_state_free(ts_route_state *s);
/* Every link up again at factor 1. */
void ts_route_state_reset(ts_route_state *s);

/* Downs the links named by `name`: a node name ("compute/spine-g0-1") downs
 * every link of that node; "nodeA--nodeB" downs every link joining the two.
 * Returns 0, or TS_ESCHEMA with d set (d may be NULL) when no node has that
 * name or no link joins the two nodes; nothing changes on error. */
int ts_route_fail_by_name(ts_route_state *s, const ts_topo *t,
                          const char *name, ts_diag *d);
/* Same names; sets the links' bandwidth factor to `factor` in (0, 1]
 * (replacing, not compounding, an earlier factor; the links stay as up or
 * down as they were). TS_ESCHEMA as above, or for a factor outside (0, 1]. */
int ts_route_degrade_by_name(ts_route_state *s, const ts_topo *t,
                             const char *name, double factor, ts_diag *d);

/* Direct edits by link id (ids past the end are ignored). */
void ts_route_state_set(ts_route_state *s, uint32_t link, int up,
                        double factor);
/* 1 if the link is up (NULL state: all up). */
int ts_route_link_up(const ts_route_state *s, uint32_t link);
/* Usable fraction of the link's bandwidth: 0 when down, else its factor
 * (NULL state: 1). The network model multiplies link bandwidth by it. */
double ts_route_link_factor(const ts_route_state *s, uint32_t link);

/* ---- router ---- */

typedef struct ts_route ts_route;

typedef struct ts_route_opts {
  int no_pxn;   /* 0: rail-aligned with PXN (default); 1: own NIC */
  /* 0: each plane's `routing` (topology); else 1 + ts_routing for every
   * plane (the --routing override). */
  int routing;
} ts_route_opts;

/* Builds a router over t (which must outlive it). opts NULL = defaults;
 * state NULL = every link up; the state must outlive the router or be
 * replaced first. Returns 0 and *out, or TS_ENOMEM, or TS_EINVALID (d set)
 * when the state belongs to a topology with another link count. */
int ts_route_new(const ts_topo *t, const ts_route_opts *opts,
                 const ts_route_state *state, ts_route **out, ts_diag *d);
void ts_route_free(ts_route *r);
/* Replaces the overlay (NULL: all up). TS_EINVALID if it does not fit. */
int ts_route_set_state(ts_route *r, const ts_route_state *state, ts_diag *d);

/* One path from src to dst (ECMP): equal-cost choices are picked by a hash
 * of (src, dst, flow), or on a plane routed D-mod-k by the destination's
 * position (the flow then does not matter). src == dst gives an empty path. Returns 0 and fills
 * *out; TS_EINVALID with d naming the endpoints and where the walk stopped
 * when src or dst is not a GPU or NIC, when they share no plane, or when
 * every candidate is dead (destination unreachable). Never loops: every
 * walk is bounded by degrees and TS_ROUTE_MAX_HOPS. */
int ts_route_path(ts_route *r, uint32_t src, uint32_t dst, uint64_t flow,
                  ts_path *out, ts_diag *d);

/* Spray: up to max_paths (capped at TS_ROUTE_MAX_PATHS) distinct
 * equal-cost paths into out[0 .. *count); the flow is meant to be split
 * evenly, 1 / *count each. With every spine equal that is the number of
 * usable uplinks (4 on one DGX A100 SU crossing rails without PXN). When
 * there are more combinations than max_paths, the first decision varies
 * fastest, so uplinks stay evenly covered; `flow` rotates which are taken.
 * Errors as ts_route_path (*count = 0). */
int ts_route_paths(ts_route *r, uint32_t src, uint32_t dst, uint64_t flow,
                   uint32_t max_paths, ts_path *out, uint32_t *count,
                   ts_diag *d);

/* Node a direction leaves from (its tail); ts_topo_dir_head gives the
 * node it arrives at. */
uint32_t ts_route_dir_tail(const ts_topo *t, uint32_t dir);

#endif
