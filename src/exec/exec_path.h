/* exec_path.h - turning endpoint pairs into the path sets the network model
 * runs, shared by point-to-point runs and collective execution.
 *
 * NVSwitch traffic is striped over every chip (hardware and NCCL both
 * spread NVLink traffic), so a route through an NVSwitch becomes the set of
 * equal-cost paths that differ only in their NVLink hops; the network part
 * keeps its single hashed route. Cost: one route, plus one multi-path route
 * when the path crosses an NVSwitch. */
#ifndef TOPSIM_EXEC_PATH_H
#define TOPSIM_EXEC_PATH_H

#include <stdint.h>

#include "topsim/ts_net.h"
#include "topsim/ts_route.h"

/* Most paths a set may hold: the router's cap (NVL72 has 18 chips). */
#define EXEC_PATH_STRIPES TS_ROUTE_MAX_PATHS
/* Paths enumerated to find NVSwitch stripes (NVL72 has 18 chips). */
#define EXEC_NVSWITCH_STRIPES 64

/* Routes src -> dst into paths[0..*k): spray > 0 asks for up to spray
 * equal-cost paths; 0 means ECMP with NVSwitch hops either moved onto the
 * GPU's bundle chip (when net bundles NVSwitch links, ts_net.h) or striped
 * over every chip (cap stripes). Returns 0 or the router's error (d set). */
int exec_path_route(const ts_topo *t, const ts_net *net, ts_route *rt,
                    uint32_t src, uint32_t dst, uint64_t flow, uint32_t spray,
                    ts_path *paths, uint32_t cap, uint32_t *k, ts_diag *d);

/* False when the failure overlay downs or degrades an NVLink: NVSwitch
 * bundles assume healthy chips, so callers then turn bundling off. */
int exec_path_bundle_ok(const ts_topo *t, const ts_route_state *state);

/* One-hop paths from a GPU to every NVSwitch chip of switch_node's host (or
 * the reverse when to_gpu): NVLS traffic uses all chips. Returns the count
 * (0 when the GPU links to none). */
uint32_t exec_path_nvswitch(const ts_topo *t, const ts_net *net, uint32_t gpu,
                            uint32_t switch_node, int to_gpu, ts_path *paths,
                            uint32_t cap);

/* Sends bytes over paths[0..k) (split evenly when k > 1). The paths must
 * come from exec_path_route or exec_path_nvswitch on net's topology (or be
 * hop-by-hop images of such paths): their contiguity is not rechecked
 * (ts_net_send_routed). */
int exec_path_send(ts_net *net, const ts_path *paths, uint32_t k,
                   uint64_t bytes, ts_time_ps alpha, ts_net_done_fn fn,
                   void *ctx, uint64_t tag);

/* Largest software overhead of the network planes a path crosses (0 when
 * it stays inside a node). */
ts_time_ps exec_path_alpha(const ts_topo *t, const ts_path *p);

/* The rate k paths give a transfer alone: the sum of their bottlenecks
 * (bytes/s). */
double exec_path_rate(const ts_net *net, const ts_path *paths, uint32_t k);

#endif
