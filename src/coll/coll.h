/* coll.h - private layout of communicators and plans, and the builder the
 * algorithm files share (coll_plan.c).
 *
 * Builder model: an algorithm emits *steps*. A step is one logical send
 * (src -> dst, bytes) split into k chunk transfers stored consecutively, so a
 * step is named by the index of its first chunk. A step's dependencies are
 * other steps; chunk j depends on chunk j of each (coll_step), or on every
 * chunk of each (coll_step_gate: used across phases whose data layouts
 * differ). Allocation failures are sticky: the builder records the first
 * error in the plan and every later call is a no-op returning COLL_NONE, so
 * algorithms check once at the end. */
#ifndef TOPSIM_COLL_H
#define TOPSIM_COLL_H

#include <stdint.h>

#include "topsim/ts_coll.h"

#define COLL_NONE UINT32_MAX
#define COLL_MAX_XFERS (1u << 31)

struct ts_coll_comm {
  int n;
  int *gpu;      /* endpoint id per rank */
  int *host;     /* dense host index per rank (0..nhosts-1) */
  int *local;    /* index of the rank within its host */
  int *label;    /* caller's host label per rank */
  int nhosts;
  int *host_size; /* ranks per dense host */
  int *nvls_ep;   /* per dense host: switch endpoint, -1 none */
};

struct ts_coll_plan {
  ts_coll_xfer *x;
  uint32_t n, cap;
  uint32_t *deps;
  uint64_t ndeps, dcap;
  int err;
  ts_coll_algo algo;
  ts_coll_proto proto;
  double predicted_s;
  uint32_t k; /* chunks per step */
};

/* Everything an algorithm needs while lowering. */
typedef struct coll_ctx {
  const ts_coll_comm *comm;
  const ts_coll_params *prm;
  ts_coll_plan *plan;
  ts_coll_op op;
  uint64_t bytes;
  unsigned flags;
  ts_diag *d;
} coll_ctx;

/* Wire bytes of a payload at protocol efficiency eff (rounded up). */
uint64_t coll_wire(double eff, uint64_t bytes);

/* Fills the step-ring fields of *r (channels, chunks, window, steps,
 * efficiency, latencies, order) for op of `bytes` on comm with the
 * lowering's parameters p (coll_ring.c; r->proto already chosen). */
void coll_ring_setup(const ts_coll_comm *comm, ts_coll_op op, uint64_t bytes,
                     const ts_coll_params *p, ts_coll_ring *r);

/* Part i of n of total bytes: [total*i/n, total*(i+1)/n). */
uint64_t coll_part(uint64_t total, uint64_t n, uint64_t i);

/* Adds one transfer between rank indices (-1 with an explicit endpoint for a
 * switch: src_ep/dst_ep used only when the rank is -1). Returns its index or
 * COLL_NONE after an error. deps copied. */
uint32_t coll_xfer(coll_ctx *c, int src, int src_ep, int dst, int dst_ep,
                   uint64_t bytes, uint64_t reduce_bytes, uint32_t channel,
                   const uint32_t *deps, uint32_t ndeps);

/* Adds a step of k chunks; chunk j depends on chunk j of each dep step.
 * Returns the first chunk's index (COLL_NONE on error). A dep of COLL_NONE
 * is skipped. */
uint32_t coll_step(coll_ctx *c, int src, int dst, uint64_t bytes,
                   uint64_t reduce_bytes, uint32_t channel,
                   const uint32_t *deps, uint32_t ndeps);

/* As coll_step, with every chunk depending on all k chunks of each gate
 * step in addition to the chunk-aligned deps. */
uint32_t coll_step_gate(coll_ctx *c, int src, int dst, uint64_t bytes,
                        uint64_t reduce_bytes, uint32_t channel,
                        const uint32_t *deps, uint32_t ndeps,
                        const uint32_t *gates, uint32_t ngates);

/* A switch step: src or dst is a switch endpoint (rank -1, endpoint ep). */
uint32_t coll_switch_step(coll_ctx *c, int src, int dst, int ep,
                          uint64_t bytes, uint64_t reduce_bytes,
                          const uint32_t *deps, uint32_t ndeps);

/* A join step at endpoint ep (k zero-byte join transfers, chunk-aligned). */
uint32_t coll_join(coll_ctx *c, int ep, const uint32_t *deps, uint32_t ndeps);

/* Sets the chunk count from the largest step of the lowering. */
void coll_set_chunks(coll_ctx *c, uint64_t largest_step);

/* Local reduction traffic to reduce `fan_in` incoming buffers of b bytes
 * into the local one: read fan_in + 1, write 1. */
static inline uint64_t coll_reduce_cost(uint64_t b, uint32_t fan_in) {
  return b * (fan_in + 2u);
}

int coll_is_pow2(int p);
int coll_log2_ceil(int p);
/* NCCL's binary tree over n ranks: how many nodes on the path from its
 * deepest leaf to the root have two children (coll_tree.c). */
int coll_btree_forks(int n);
/* Most hosts on which auto ranks NCCL's tree (beyond: the hierarchical
 * stand-in): a bound on the tree lowering's size, not a physical limit;
 * 8 is the most the published multi-host curves check (coll_cost.c). */
#define COLL_TREE_AUTO_MAX_HOSTS 8

/* Ring phases. */
typedef enum { COLL_RS, COLL_AG, COLL_AR } coll_ring_kind;

/* Ring over members[0..n) (rank indices, in ring order) moving `bytes` of a
 * kind; gates[m] (or NULL / COLL_NONE) is a step that must complete (all
 * chunks) before member m sends anything. On return last_in[m] (if non-NULL)
 * is the last step received by member m, or gates[m] when nothing arrives. */
void coll_ring_run(coll_ctx *c, const int *members, int n, uint64_t bytes,
                   coll_ring_kind kind, uint32_t channel, const uint32_t *gates,
                   uint32_t *last_in);

/* Algorithm entry points: each returns 0 or a TS_E* code (message in c->d). */
int coll_ring_lower(coll_ctx *c);
int coll_tree_lower(coll_ctx *c);
int coll_hd_lower(coll_ctx *c);
int coll_direct_lower(coll_ctx *c);
int coll_hier_lower(coll_ctx *c);
int coll_nvls_lower(coll_ctx *c);

/* NCCL cost structure (coll_nccl.c). coll_nccl: whether p uses it.
 * coll_eff: the protocol's payload fraction of the wire for algorithm a on
 * m moving `bytes`, with NCCL's caps (channels by size included) when p uses them (LL busBw cap, tree LL / LL128
 * factors, NVLS efficiency); the lowering and the cost model both use it.
 * coll_startup: latency paid once per operation (launch + base latency, and
 * the NVLS latency), 0 without the NCCL structure. */
/* NCCL_STEPS: buffer slots per channel, the steps a channel keeps in flight. */
#define COLL_NCCL_STEPS 8
int coll_nccl(const ts_coll_params *p);
/* Per-step latency of an in-host hop of algorithm a: alpha_intra, or for
 * a ring over several hosts under NCCL's structure at least the network
 * overhead (ts_coll_params.net_overhead). */
ts_time_ps coll_alpha_intra(const ts_coll_comm *m, const ts_coll_params *p,
                            ts_coll_algo a, ts_coll_proto q);
double coll_eff(const ts_coll_comm *m, const ts_coll_params *p,
                ts_coll_op op, ts_coll_algo a, ts_coll_proto q,
                uint64_t bytes);
/* The ring's aggregate bandwidth per GPU: bw_intra on one host; across
 * hosts min(bw_intra, bw_inter x the NICs its channels cross). */
double coll_ring_bw(const ts_coll_comm *m, const ts_coll_params *p);
/* NVLS under NCCL's structure: the Simple efficiency x nvls_efficiency x
 * the chunk factor by size, before the NVLS-tree cap (what the NVLink and
 * NIC transfers run at on their links). */
double coll_nvls_link_eff(const ts_coll_comm *m, const ts_coll_params *p,
                          uint64_t bytes);
/* NVLS-tree: the factor (<= 1) on the NVLS efficiency e that NCCL's
 * per-channel NVLS-tree busBw cap imposes (1 on one host or uncapped). */
double coll_nvls_tree_cap(const ts_coll_comm *m, const ts_coll_params *p,
                          double e);
/* NCCL's channel count for a ring/tree operation of `bytes` (enqueue.cc):
 * max_channels, less one while bytes < nc x threads x per-thread bytes. */
uint32_t coll_channels(const ts_coll_comm *m, const ts_coll_params *p,
                       ts_coll_algo a, ts_coll_proto q, uint64_t bytes);
/* NCCL's NVLS chunk size for `bytes` (16-128 KiB). */
uint64_t coll_nvls_chunk(const ts_coll_comm *m, const ts_coll_params *p,
                         uint64_t bytes);
ts_time_ps coll_startup(const ts_coll_params *p, ts_coll_algo a,
                        ts_coll_proto q);
/* The fill of NCCL's p2p pipeline for a direct op (send_recv on one host,
 * all_to_all(v) on one host): ts_coll_p2p_fill of its largest send, ps;
 * 0 without the NCCL structure. Paid once per operation, like startup. */
ts_time_ps coll_p2p_fill(const ts_coll_comm *m, const ts_coll_params *p,
                         ts_coll_op op, uint64_t bytes);

/* NCCL's tree (coll_nccl.c). Channels: one per NIC the hosts' chains leave
 * by (the ring's graph channels), p->channels on one host. */
uint32_t coll_ntree_channels(const ts_coll_comm *m, const ts_coll_params *p);
/* NCCL's tree chunk for an all-reduce of `bytes` (enqueue.cc). */
uint64_t coll_ntree_chunk(const ts_coll_comm *m, const ts_coll_params *p,
                          ts_coll_proto q, uint64_t bytes);
/* NCCL's tree algbw (bytes/s, tuning.cc busBw / 2) with protocol q. */
double coll_ntree_algbw(const ts_coll_comm *m, const ts_coll_params *p,
                        ts_coll_proto q);
/* Seconds NCCL's tree all-reduce of `bytes` takes (the lowering's closed
 * form: startup, hop latencies, pipeline fill, bytes at algbw). */
double coll_ntree_cost(const ts_coll_comm *m, const ts_coll_params *p,
                       ts_coll_proto q, uint64_t bytes);

/* Whether (algo) can run op on comm; 0 yes, else TS_EUSAGE with a reason. */
int coll_supported(const ts_coll_comm *comm, ts_coll_op op, ts_coll_algo a,
                   const ts_coll_params *prm, const char **why);

#endif
