/* ts_net.h - the link model: transfers over paths of link directions.
 *
 * A transfer moves `bytes` from the tail of path[0] to the head of
 * path[hops-1] along link directions (2*l a->b, 2*l+1 b->a; see ts_topo.h).
 * The path comes from the caller (the route module) and is copied: the
 * caller's array may be freed as soon as the send call returns.
 *
 * Alone on a path a transfer completes after
 *     alpha_sw + sum(hop latencies) + bytes / min(hop bandwidth x factor)
 * (cut-through: the bytes pipeline through every hop, so only the
 * bottleneck's serialisation counts). Under contention two fidelities share
 * this interface and are chosen at ts_net_new (docs/model.md):
 *   TS_NET_FLOW  (default) max-min fair fluid flows, solved incrementally;
 *   TS_NET_CHUNK store-and-forward chunks in FIFO port queues, optional
 *                finite port buffers with backpressure.
 *
 * Completion: fn(net, ctx, tag) runs from inside a ts_sim event at the
 * simulated completion time (read it with ts_sim_now). It may start new
 * transfers. ctx is borrowed, never freed by the model.
 *
 * Memory: flows, chunks and queue entries come from pools that grow by
 * doubling and are recycled; nothing returned needs freeing except the
 * model itself (ts_net_free). Not thread-safe; one model per engine. */
#ifndef TOPSIM_TS_NET_H
#define TOPSIM_TS_NET_H

#include <stdint.h>
#include <stdio.h>

#include "topsim/ts_error.h"
#include "topsim/ts_sim.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_units.h"

typedef struct ts_net ts_net;

typedef enum ts_net_fidelity {
  TS_NET_FLOW = 0,  /* max-min fair fluid flows (default) */
  TS_NET_CHUNK = 1  /* store-and-forward chunks with port queues */
} ts_net_fidelity;

/* Longest path a transfer may take (a 3-tier Clos GPU->GPU path is 10). */
#define TS_NET_MAX_HOPS 64u

typedef struct ts_net_config {
  ts_net_fidelity fidelity;
  uint64_t chunk_bytes;       /* chunk: chunk size; default 64 KiB */
  uint64_t port_buffer_bytes; /* chunk: per-port buffer, 0 = unlimited */
  int full_solve;             /* flow, debug: re-solve every flow on every
                                 change through the heap, no shortcuts
                                 (differential tests only) */
  int no_local;               /* flow, debug: re-rate after departures by
                                 the component walk, not the localized
                                 filling (differential tests only) */
  int local_rounds;           /* flow, debug: rounds the localized filling
                                 may take before it falls back to the
                                 component walk; 0 = the default (8) */
  int bundle_nvswitch;        /* a GPU's NVLinks to its NVSwitch chips act
                                 as one resource (see below); default on */
} ts_net_config;

/* Completion callback: runs at the transfer's completion time. */
typedef void (*ts_net_done_fn)(ts_net *net, void *ctx, uint64_t tag);

/* Per-direction counters. */
typedef struct ts_net_dir_stats {
  uint64_t bytes;            /* bytes carried (flow: counted when a flow
                                finishes; chunk: when a chunk is sent) */
  ts_time_ps busy_ps;        /* flow: time with >= 1 flow crossing;
                                chunk: time spent serialising */
  uint32_t peak_flows;       /* flow: most flows crossing at once */
  ts_time_ps idle_at;        /* flow: when the last busy period ended (the
                                last flow left; 0: none ended yet) */
  uint64_t peak_queue_bytes; /* chunk: deepest port queue, bytes */
} ts_net_dir_stats;

/* Global counters since ts_net_new. */
typedef struct ts_net_stats {
  uint64_t transfers_started, transfers_finished; /* split = one transfer */
  uint64_t flows_started, flows_finished;         /* split k = k flows */
  uint64_t bytes_sent, bytes_delivered;
  uint64_t active_flows;       /* flows started but not finished */
  uint64_t solves;             /* flow: rate solves (batched) */
  uint64_t solves_skipped;     /* flow: departure batches that freed no
                                  bottleneck (rates provably unchanged) */
  uint64_t local_solves;       /* flow: solves done by the localized
                                  filling after departures */
  uint64_t flows_touched;      /* flow: sum of flows re-rated per solve */
  uint64_t max_flows_touched;  /* flow: largest single solve */
  uint64_t rate_changes;       /* flow: flows whose rate actually changed */
  uint64_t chunks_sent;        /* chunk: chunk-hops serialised */
  uint64_t backpressure_waits; /* chunk: times a port waited for space */
  uint64_t reroutes;           /* flow: flows moved off a link that went
                                  down (ts_net_set_reroute) */
} ts_net_stats;

/* Fills *c with the defaults (flow fidelity, 64 KiB chunks, no limit). */
void ts_net_config_default(ts_net_config *c);

/* Creates a model over t, scheduling on sim, into *out. t and sim are
 * borrowed and must outlive the model. cfg NULL means defaults.
 * TS_EUSAGE (bad config: chunk_bytes 0, unknown fidelity), TS_ENOMEM;
 * on error *out = NULL. Free with ts_net_free. */
int ts_net_new(const ts_topo *t, ts_sim *sim, const ts_net_config *cfg,
               ts_net **out);

/* Frees the model (NULL is fine). Pending completions never fire; events
 * the model scheduled must not run afterwards: free the engine too, or
 * free the model only once ts_sim_run has returned with no transfer
 * active. */
void ts_net_free(ts_net *net);

/* Starts a transfer now: completion at now + alpha_sw + ... (see above).
 * TS_EINVALID if a direction is out of range, the path is not contiguous
 * (head of hop i != tail of hop i+1) or crosses a down link (factor 0);
 * TS_ELIMIT if hops > TS_NET_MAX_HOPS; TS_EUSAGE if fn is NULL or hops is 0;
 * TS_ENOMEM. On error nothing is started. */
int ts_net_send(ts_net *net, const uint32_t *path, uint32_t hops,
                uint64_t bytes, ts_time_ps alpha_sw, ts_net_done_fn fn,
                void *ctx, uint64_t tag);

/* Starts one transfer spread evenly over k paths (packet spraying, ECMP
 * over k routes): k flows of bytes/k (the first bytes%k get one more
 * byte), each paying alpha_sw; fn fires once, when the last flow is
 * delivered. paths[i] has hops[i] directions. Errors as ts_net_send, plus
 * TS_EUSAGE if k is 0; on error nothing is started. */
int ts_net_send_split(ts_net *net, const uint32_t *const *paths,
                      const uint32_t *hops, uint32_t k, uint64_t bytes,
                      ts_time_ps alpha_sw, ts_net_done_fn fn, void *ctx,
                      uint64_t tag);

/* As ts_net_send_split, with flow i carrying a share of bytes proportional
 * to weights[i] (all > 0; the rounding remainder goes one byte each to the
 * first flows): weights equal to the paths' bottleneck bandwidths make the
 * stripes of an unloaded transfer finish together. weights NULL is an even
 * split. TS_EUSAGE for a weight <= 0, else errors as ts_net_send_split. */
int ts_net_send_weighted(ts_net *net, const uint32_t *const *paths,
                         const uint32_t *hops, const double *weights,
                         uint32_t k, uint64_t bytes, ts_time_ps alpha_sw,
                         ts_net_done_fn fn, void *ctx, uint64_t tag);

/* As ts_net_send_weighted for paths a router built on this network's
 * topology (ts_route, or hops read off its adjacency): contiguity is
 * trusted, not rechecked; range, hop count and down links are. The same
 * flows, events and results as ts_net_send_weighted on valid paths. */
int ts_net_send_routed(ts_net *net, const uint32_t *const *paths,
                       const uint32_t *hops, const double *weights, uint32_t k,
                       uint64_t bytes, ts_time_ps alpha_sw, ts_net_done_fn fn,
                       void *ctx, uint64_t tag);

/* NVSwitch bundles. Hardware and NCCL stripe NVLink traffic over every
 * NVSwitch chip a GPU links to, so those links always carry the same share
 * of it. With bundle_nvswitch on, the model represents them as one
 * resource: the GPU's NVLink to its lowest-id NVSwitch carries the summed
 * bandwidth of all of them, and callers send NVSwitch traffic through that
 * chip as one flow instead of one flow per chip (the same rates, a chip
 * count fewer flows). Returns the GPU's bundle switch, or UINT32_MAX when
 * bundling is off or the GPU links to fewer than two NVSwitch chips.
 * Bundles assume the chips are healthy: callers that fail or degrade an
 * NVLink must turn bundling off. */
uint32_t ts_net_nvswitch_bundle(const ts_net *net, uint32_t gpu);

/* Sets link `link`'s bandwidth factor (both directions) from now on:
 * 1 nominal, 0.5 degraded to half, 0 down. Flows already crossing it are
 * re-rated (a down link stalls them until it comes back); new sends over a
 * down link fail. TS_EINVALID if link is out of range or factor is not in
 * [0, 1]. */
int ts_net_set_link_factor(ts_net *net, uint32_t link, double factor);

/* Reroute hook: writes a live path from node src to node dst (at most
 * TS_NET_MAX_HOPS directions) into path and returns its length, or 0 when
 * there is none. salt distinguishes flows between the same ends (ECMP). */
typedef uint32_t (*ts_net_reroute_fn)(void *ctx, uint32_t src, uint32_t dst,
                                      uint64_t salt, uint32_t *path);
/* Installs the hook used when a link's factor drops to 0: every flow
 * crossing it (and every flow still in its alpha wait whose path does)
 * moves to the hook's path with the bytes it has left, as adaptive routing
 * or a transport retry would; the per-direction byte counters credit each
 * path with what it carried. Without a hook (the default, fn NULL) such
 * flows stall until the link comes back, and so do flows the hook finds no
 * path for. Flow fidelity only: TS_EUSAGE under chunk fidelity. */
int ts_net_set_reroute(ts_net *net, ts_net_reroute_fn fn, void *ctx);
/* Effective bandwidth of direction dir now (bytes/s, factor applied);
 * 0 for an out-of-range dir. */
double ts_net_dir_bandwidth(const ts_net *net, uint32_t dir);

/* Flows crossing direction dir now (flow fidelity; chunk: 1 while a
 * chunk is serialised), 0 when dir is out of range. */
uint32_t ts_net_dir_active(const ts_net *net, uint32_t dir);

/* Sum and maximum of the rates (bytes/s) of the flows active on direction
 * dir now, into *sum and *max: 0; 1 when a solve is due there (a flow
 * entered or left at this instant: the rates are not settled); TS_EUSAGE
 * under chunk fidelity or for an out-of-range dir (both 0). */
int ts_net_dir_rates(const ts_net *net, uint32_t dir, double *sum,
                     double *max);

/* Copies direction dir's counters to *out (busy time includes a busy
 * period still open at now). TS_EINVALID if dir is out of range. */
int ts_net_dir_stats_get(const ts_net *net, uint32_t dir,
                         ts_net_dir_stats *out);

/* Adds traffic simulated elsewhere to direction dir's counters: bytes,
 * busy time and a peak flow count (kept if higher). For a caller that
 * reuses the result of an isolated run of the same traffic (ts_exec's
 * step fast path) instead of replaying it; the rates of flows crossing
 * dir are not touched. TS_EINVALID if dir is out of range. */
/* Counts n transfers of one flow each, `bytes` in all, that a caller
 * computed in closed form (ts_exec's step ring) as started and delivered,
 * so the totals of ts_net_stats still add up; solves are not touched. */
void ts_net_credit(ts_net *net, uint64_t n, uint64_t bytes);

/* Picoseconds a flow of `bytes` alone at `rate` bytes/s takes to drain,
 * rounded exactly as the flow model rounds its drain events. */
ts_time_ps ts_net_ps_for_bytes(double bytes, double rate);

int ts_net_dir_account(ts_net *net, uint32_t dir, uint64_t bytes,
                       ts_time_ps busy, uint32_t peak_flows);

/* Copies the global counters to *out. */
void ts_net_stats_get(const ts_net *net, ts_net_stats *out);

/* Prints the global counters as "name: value" lines; TS_EIO on a failed
 * write. */
int ts_net_stats_print(const ts_net *net, FILE *f);

/* The fidelity the model runs with. */
ts_net_fidelity ts_net_fidelity_of(const ts_net *net);

#endif
