/* ts_coll.h - collective operations lowered to a DAG of transfers.
 *
 * A collective (all-reduce, all-gather, ...) on a communicator is lowered by
 * an algorithm (ring, double binary tree, halving-doubling, direct,
 * hierarchical, NVLS) into a plan: an array of point-to-point transfers, each
 * with the indices of earlier transfers that must finish before it may start.
 * The plan knows nothing about routes or the network engine; a later stage
 * maps each transfer's endpoints to a path and runs it. Dependencies always
 * point backwards (dep index < own index), so the array order is a
 * topological order and the DAG is acyclic by construction.
 *
 * Sizes follow the nccl-tests "size" column (see ts_coll_nccltests_size):
 *   all_reduce, broadcast, reduce, send_recv: S = the buffer;
 *   all_gather: S = the total OUTPUT (each rank contributes S/p);
 *   reduce_scatter: S = the total INPUT (each rank keeps S/p);
 *   all_to_all: S = each rank's whole send buffer (S/p to every peer);
 *   all_to_allv: the per-pair byte matrix (S is ignored).
 * A split of S into p (or C, or k) parts gives part i the bytes
 * [S*i/n, S*(i+1)/n): parts differ by at most one byte and always sum to S.
 *
 * Transfer cost, for any executor: the sender may start once every dependency
 * has finished; it first spends reduce_bytes / hbm_bw on a local reduction
 * (reads and writes of the data it is about to send), then the transfer takes
 * alpha + wire_bytes / bandwidth on its path. wire_bytes = bytes / protocol
 * efficiency (LL carries 4 flag bytes per 8, LL128 8 per 128).
 *
 * Pipelining: with chunk_bytes > 0 every algorithm step is split into the
 * same number k = ceil(largest step / chunk_bytes) of chunk transfers, each
 * with its own alpha; chunk j of a step depends on chunk j of the steps it
 * forwards (NCCL's slice loop), so different hops overlap. chunk_bytes = 0
 * means one transfer per step (k = 1).
 *
 * Join transfers (TS_COLL_XFER_JOIN): src == dst, zero bytes, zero alpha:
 * pure synchronisation points (the NVSwitch reduction of chunk j, a phase
 * barrier of the hierarchical algorithm); an executor completes one as soon
 * as its dependencies have.
 *
 * Cost of lowering: O(number of transfers + dependencies); the step ring is
 * O(C * steps * p * k), the compact ring O(C * p).
 *
 * Ownership: ts_coll_comm_new and ts_coll_lower hand out objects the caller
 * frees (ts_coll_comm_free, ts_coll_plan_free); pointers returned by the
 * accessors stay valid until the plan is freed. Not thread-safe per object. */
#ifndef TOPSIM_TS_COLL_H
#define TOPSIM_TS_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "topsim/ts_coll_op.h"
#include "topsim/ts_error.h"
#include "topsim/ts_units.h"


typedef enum ts_coll_algo {
  TS_COLL_AUTO,   /* lowest predicted time among params.auto_mask */
  TS_COLL_RING,   /* C rings; also the pipelined chain for bcast/reduce */
  TS_COLL_TREE,   /* NCCL double binary tree (all_reduce) */
  TS_COLL_HD,     /* recursive halving-doubling (Rabenseifner) */
  TS_COLL_DIRECT, /* one-shot: every rank to every rank */
  TS_COLL_HIER,   /* intra-host RS, per-rail inter-host AR, intra-host AG */
  TS_COLL_NVLS,   /* NVSwitch reduction/multicast (across hosts: NVLS-tree) */
  TS_COLL_ALGO_COUNT
} ts_coll_algo;

typedef enum ts_coll_proto {
  TS_COLL_LL,
  TS_COLL_LL128,
  TS_COLL_SIMPLE,
  TS_COLL_PROTO_COUNT,
  TS_COLL_PROTO_AUTO = TS_COLL_PROTO_COUNT
} ts_coll_proto;

/* Ring order of channel c. SAME: every channel uses the communicator order
 * (NCCL duplicates its rings this way on NVLink). ALTERNATE: odd channels run
 * the reversed order, so the two directions of every ring link carry half
 * of the channels each. ROTATE: hosts in order, and inside every host the
 * ranks rotated by c, so channel c enters and leaves each host through
 * local rank c: with one NIC per GPU, C channels cross hosts on C distinct
 * rails (as NCCL's rings use every NIC of a node). */
enum { TS_COLL_RING_SAME = 0, TS_COLL_RING_ALTERNATE = 1, TS_COLL_RING_ROTATE = 2 };

/* ts_coll_lower flags. */
enum {
  /* Ring all-reduce/all-gather/reduce-scatter: one long-lived flow per ring
   * neighbour pair and channel, carrying that rank's whole ring traffic, with
   * alpha = the latencies of every step it stands for. O(C p) transfers. */
  TS_COLL_COMPACT = 1u << 0
};

typedef struct ts_coll_params {
  ts_coll_algo algo;   /* requested algorithm (TS_COLL_AUTO: cost model) */
  ts_coll_proto proto; /* protocol (TS_COLL_PROTO_AUTO: cost model) */
  uint32_t channels;   /* ring channels C >= 1 */
  int ring_order;      /* TS_COLL_RING_SAME or TS_COLL_RING_ALTERNATE */
  uint64_t chunk_bytes; /* pipelining chunk; 0 = one transfer per step */
  int root;            /* rank index: broadcast/reduce root, send_recv src */
  int peer;            /* rank index: send_recv destination */
  const uint64_t *matrix; /* all_to_allv: p*p bytes, [src*p + dst] */
  unsigned auto_mask;  /* bit (1u << algo) for each algorithm auto may pick */
  /* Per-step latency by protocol: between GPUs of one host, across hosts. */
  ts_time_ps alpha_intra[TS_COLL_PROTO_COUNT];
  ts_time_ps alpha_inter[TS_COLL_PROTO_COUNT];
  double efficiency[TS_COLL_PROTO_COUNT]; /* payload / wire bytes */
  /* Cost model bandwidths (bytes/s, one direction, per GPU). */
  double bw_intra;  /* GPU to GPU inside a host */
  double bw_inter;  /* GPU to GPU across hosts (its NIC) */
  double bw_nvls;   /* GPU to NVSwitch for NVLS */
  double hbm_bw;    /* local reduction: bytes read+written per s; 0 = free */
  double tree_efficiency; /* NCCL's tree busBw factor (0.92) */
  /* NCCL's per-operation cost structure, used when cost_model is
   * TS_COLL_COST_NCCL (values and sources: ts_coll_params_nccl,
   * src/coll/coll_nccl.c). */
  int cost_model;         /* ts_coll_cost_model */
  ts_time_ps launch;      /* kernel launch + enqueue, once per operation */
  /* NCCL baseLat: once per operation, by algorithm and protocol. */
  ts_time_ps base_latency[TS_COLL_ALGO_COUNT][TS_COLL_PROTO_COUNT];
  double ll_max_bw[3];    /* LL busBw cap (bytes/s): 1 host, 2 hosts, more */
  ts_time_ps nvls_latency; /* NVLS hardware latency, once per operation */
  double nvls_efficiency; /* NVLS rate / NVLink rate (switch reduction) */
  /* NCCL's channels (0 = not modelled): the most it runs on one host, the
   * per-channel busBw limit by protocol (0 = none beyond the channel's
   * share of the links), NVLS channels and the cost of one NVLS chunk. */
  uint32_t max_channels;  /* coll channels (NCCL_MAX_NCHANNELS) */
  double per_ch_bw[TS_COLL_PROTO_COUNT]; /* bytes/s busBw per ring channel */
  uint32_t nvls_channels; /* NVLS channels (NCCL_NVLS_NCHANNELS) */
  ts_time_ps nvls_chunk_cost; /* per NVLS chunk per channel (sync) */
  ts_time_ps nvls_tree_latency; /* NVLS-tree: per tree level and direction */
  /* NVLS-tree busBw per channel (NCCL perChMaxNVLSTreeBws, bytes/s) for
   * 1, 2 and more hosts; a channel per NVLS head (one per GPU:NIC pair of
   * a host); 0 = no cap. */
  double nvls_tree_ch_bw[3];
  /* NCCL's network overhead per ring step (tuning.cc getNetOverhead: the
   * proxy's per-step work; 1 us Intel, 2 us AMD, x 3 for Simple): the
   * least an in-host step of a multi-host ring takes, by protocol; 0 off. */
  ts_time_ps net_overhead[TS_COLL_PROTO_COUNT];
  /* NCCL's tree (a chain in each host, a double binary tree across hosts):
   * per-step latencies hwLat[NVLINK][TREE] and hwLat[NET][TREE] by protocol,
   * and the per-channel busBw caps perChMaxTreeBws (Simple) and
   * perChMaxTreeLL128Bws (LL128) for 1, 2 and more hosts (0 = none). */
  ts_time_ps tree_alpha_intra[TS_COLL_PROTO_COUNT];
  ts_time_ps tree_alpha_inter[TS_COLL_PROTO_COUNT];
  double tree_ch_bw[3][TS_COLL_PROTO_COUNT];
  uint32_t p2p_channels;  /* NCCL p2p channels (per peer on NVLink); 0 off */
  double p2p_ch_bw;       /* bytes/s one p2p channel moves */
} ts_coll_params;

/* Cost structure of a parameter set. DEFAULT is the alpha-beta model for
 * ts_coll_lower; ts_coll_run replaces DEFAULT with the topology's
 * NCCL parameters (ts_coll_params_from_topo). ALPHA_BETA keeps the pure
 * alpha-beta model everywhere. */
typedef enum ts_coll_cost_model {
  TS_COLL_COST_DEFAULT,
  TS_COLL_COST_ALPHA_BETA,
  TS_COLL_COST_NCCL
} ts_coll_cost_model;

/* GPU generations whose NCCL tuning constants differ. */
typedef enum ts_coll_gpu_gen {
  TS_COLL_GEN_OTHER,
  TS_COLL_GEN_AMPERE,
  TS_COLL_GEN_HOPPER,
  TS_COLL_GEN_BLACKWELL
} ts_coll_gpu_gen;

/* Generation from a GPU model name ("A100-SXM4-80GB", "H100...", "GB200"):
 * A100/A800/A30/A10 Ampere, H100/H800/H200/H20/GH200 Hopper, B200/B300/GB200/
 * GB300 Blackwell, anything else OTHER. NULL is OTHER. */
ts_coll_gpu_gen ts_coll_gpu_gen_from_name(const char *model);

/* Switches p to NCCL's cost structure for a GPU generation: launch
 * overhead, base latency per (algorithm, protocol), LL128 0.92, the LL
 * bandwidth cap and the NVLS efficiency of that generation. Bandwidths and
 * per-step latencies are left as they are. */
void ts_coll_params_nccl(ts_coll_params *p, ts_coll_gpu_gen gen);

/* The least once-per-operation latency (launch, base latency, NVLS
 * latency) any algorithm and protocol pays under p: every transfer of a
 * plan lowered with p starts at least this long after the operation
 * does (0 outside NCCL's cost structure). */
ts_time_ps ts_coll_min_startup(const ts_coll_params *p);

/* Sets NCCL's per-step network overhead of multi-host rings (tuning.cc
 * getNetOverhead): 1 us per step (2 us on AMD hosts, amd != 0), three
 * times that for Simple. */
void ts_coll_params_net_overhead(ts_coll_params *p, int amd);

/* NCCL's channels for one send of `bytes` to a peer, in a communicator of
 * nranks ranks, on the same host (NVLink/PCIe) or across hosts (its NIC):
 * the p2p schedule of NCCL 2.18 (enqueue.cc; docs/model.md
 * "Point-to-point channels"). 0 when p has no p2p channel model. */
uint32_t ts_coll_p2p_channels(const ts_coll_params *p, int nranks,
                              int same_host, uint64_t bytes);

/* The throughput NCCL can give that send: channels x p2p_ch_bw, bytes/s,
 * on one host; 0 (no limit) across hosts, where the NIC binds. */
double ts_coll_p2p_cap(const ts_coll_params *p, int nranks, int same_host,
                       uint64_t bytes);

/* Seconds before that send's receiver sees its first step: one p2p step
 * (512 KiB, or the channel's part when smaller) copied into the sender's
 * FIFO at p2p_ch_bw (docs/model.md "Point-to-point channels"); 0 across
 * hosts, for 0 bytes or without the p2p channel model. */
double ts_coll_p2p_fill(const ts_coll_params *p, int nranks, int same_host,
                        uint64_t bytes);

/* Fills *p with the documented defaults (docs in ts_coll_params_default's
 * definition, src/coll/coll_cost.c): AUTO, PROTO_AUTO, 1 channel, no
 * chunking, NCCL's NVLink/NET ring step latencies, LL 0.5, LL128 120/128,
 * Simple 1.0, auto_mask = ring | tree | nvls | hier. */
void ts_coll_params_default(ts_coll_params *p);

/* ---- communicator --------------------------------------------------- */

typedef struct ts_coll_comm ts_coll_comm;

/* Creates a communicator of n >= 1 ranks; rank i is GPU endpoint gpus[i]
 * (caller's ids, copied). No host labels: every rank on host 0. TS_EUSAGE
 * for n < 1 or a repeated GPU id, TS_ENOMEM; *out NULL on error. */
int ts_coll_comm_new(const int *gpus, int n, ts_coll_comm **out);

/* Labels rank i with host hosts[i] (any ints; equal = same host). Ranks of a
 * host keep communicator order as their local index. 0, or TS_EUSAGE for a
 * NULL array (comm unchanged). */
int ts_coll_comm_set_hosts(ts_coll_comm *c, const int *hosts);

/* Declares that host `host` has an NVSwitch able to reduce (NVLS), reached
 * as endpoint id switch_ep. 0, TS_EUSAGE if no rank has that host,
 * TS_ENOMEM. */
int ts_coll_comm_set_nvls(ts_coll_comm *c, int host, int switch_ep);

int ts_coll_comm_size(const ts_coll_comm *c);
/* Number of distinct hosts. */
int ts_coll_comm_nhosts(const ts_coll_comm *c);
/* NULL is a no-op. */
void ts_coll_comm_free(ts_coll_comm *c);

/* ---- plan ----------------------------------------------------------- */

enum { TS_COLL_XFER_JOIN = 1u << 0, TS_COLL_XFER_COMPACT = 1u << 1 };

typedef struct ts_coll_xfer {
  int32_t src, dst;        /* endpoints: GPU ids or an NVSwitch endpoint */
  int32_t src_rank, dst_rank; /* rank indices, -1 for a switch endpoint */
  uint64_t bytes;          /* payload */
  uint64_t wire_bytes;     /* payload / protocol efficiency, rounded up */
  uint64_t reduce_bytes;   /* local HBM traffic before sending */
  ts_time_ps alpha;        /* latency charged once for this transfer */
  uint32_t steps;          /* algorithm steps this transfer stands for */
  uint32_t channel;        /* ring channel / tree index, else 0 */
  uint32_t flags;          /* TS_COLL_XFER_* */
  uint32_t dep_first;      /* deps are ts_coll_plan_deps()[first..+ndeps) */
  uint32_t ndeps;
} ts_coll_xfer;

typedef struct ts_coll_plan ts_coll_plan;

/* A step ring (ring all_reduce, all_gather or reduce_scatter lowered
 * without TS_COLL_COMPACT) described instead of built: an executor that can
 * run it in closed form generates each transfer on demand with
 * ts_coll_ring_xfer, field for field the transfer ts_coll_lower would
 * build, in O(channels x members) memory instead of O(transfers).
 * Channel ch's ring is ts_coll_ring_members order m; its step s has every
 * member i send chunk j = 0..chunks-1 to m[i+1]; chunk (i, s, j) depends on
 * (i-1, s-1, j) (the data it forwards), (i, s-window, j) (the channel's
 * buffer slots) and (i, s, j-1) (slices in order), each when it exists. */
typedef struct ts_coll_ring {
  const ts_coll_comm *comm;  /* borrowed */
  ts_coll_op op;
  ts_coll_algo algo;         /* TS_COLL_RING */
  ts_coll_proto proto;
  double predicted_s;
  uint64_t bytes;
  uint32_t channels, chunks; /* C, chunks per step k */
  uint32_t window;           /* steps in flight per channel */
  uint32_t steps;            /* steps per channel */
  int reduce_until;          /* steps 1..reduce_until send reduced data */
  int ring_order;
  double efficiency;         /* payload / wire bytes of proto */
  ts_time_ps alpha_intra, alpha_inter, startup;
} ts_coll_ring;

/* 0 with *out filled when ts_coll_lower(comm, op, bytes, params, flags)
 * would build a step ring of at least 2 members; 1 when it would build
 * anything else (lower it instead); the errors of ts_coll_lower (d set)
 * otherwise. O(n) for the choice, no transfers. */
int ts_coll_ring_describe(const ts_coll_comm *comm, ts_coll_op op,
                          uint64_t bytes, const ts_coll_params *params,
                          unsigned flags, ts_coll_ring *out, ts_diag *d);
/* Channel ch's ring order into m[0..n) (rank indices). O(n). */
void ts_coll_ring_members(const ts_coll_ring *r, uint32_t ch, int *m);
/* Chunk j of member i's step s on channel ch (m from ts_coll_ring_members)
 * into *out: endpoints, bytes, wire and reduction bytes, alpha (with the
 * startup latency on (s 0, chunk 0)), channel, and ndeps = how many of the
 * three dependencies exist (dep_first is 0). O(1). */
void ts_coll_ring_xfer(const ts_coll_ring *r, const int *m, uint32_t ch,
                       uint32_t s, uint32_t i, uint32_t j, ts_coll_xfer *out);

/* Lowers op of S bytes on comm with params (NULL = defaults) into *out.
 * flags: TS_COLL_COMPACT (rings, including the three ring phases of the
 * hierarchical algorithm; others ignore it). Errors, with
 * *out = NULL and a message in d (may be NULL): TS_EUSAGE for an algorithm
 * that cannot run op on this communicator (e.g. NVLS without a switch,
 * HIER with unequal hosts, HD all-gather on a non-power of two, a root out
 * of range, a missing all_to_allv matrix), TS_ELIMIT past 2^31 transfers,
 * TS_ENOMEM. */
int ts_coll_lower(const ts_coll_comm *comm, ts_coll_op op, uint64_t bytes,
                  const ts_coll_params *params, unsigned flags,
                  ts_coll_plan **out, ts_diag *d);

uint32_t ts_coll_plan_count(const ts_coll_plan *pl);
const ts_coll_xfer *ts_coll_plan_xfers(const ts_coll_plan *pl);
/* Flat dependency array, indexed by xfer.dep_first. */
const uint32_t *ts_coll_plan_deps(const ts_coll_plan *pl);
/* Algorithm and protocol actually used (after auto). */
ts_coll_algo ts_coll_plan_algo(const ts_coll_plan *pl);
ts_coll_proto ts_coll_plan_proto(const ts_coll_plan *pl);
/* Cost-model prediction of the chosen (algo, proto), seconds. */
double ts_coll_plan_predicted_s(const ts_coll_plan *pl);
/* Chunks per step k. */
uint32_t ts_coll_plan_chunks(const ts_coll_plan *pl);
void ts_coll_plan_free(ts_coll_plan *pl);
/* A plan of pl's transfers keep[0..n), in that order, each dependency u
 * renamed to[u] (an index into the new plan, below the dependent's: used
 * by symmetric-rank folding to run one member's share of a symmetric
 * plan). 0, TS_EINVALID (a dependency that does not point backwards) or
 * TS_ENOMEM; *out NULL on error. */
int ts_coll_plan_subset(const ts_coll_plan *pl, const uint32_t *keep,
                        uint32_t n, const uint32_t *to, ts_coll_plan **out);

/* ---- cost model ----------------------------------------------------- */

/* Predicted seconds of op on comm with (algo, proto) from the alpha-beta
 * model (formulas in src/coll/coll_cost.c); a negative value when the pair
 * cannot run op on comm. algo must not be AUTO nor proto PROTO_AUTO. */
double ts_coll_predict(const ts_coll_comm *comm, ts_coll_op op, uint64_t bytes,
                       const ts_coll_params *params, ts_coll_algo algo,
                       ts_coll_proto proto);

/* Chooses the (algo, proto) of lowest predicted time, honouring a fixed
 * params->algo or params->proto; ties go to the lower enum value. 0, or
 * TS_EUSAGE when nothing can run op. */
int ts_coll_choose(const ts_coll_comm *comm, ts_coll_op op, uint64_t bytes,
                   const ts_coll_params *params, ts_coll_algo *algo,
                   ts_coll_proto *proto, double *seconds);

const char *ts_coll_algo_name(ts_coll_algo a);
const char *ts_coll_proto_name(ts_coll_proto p);

/* ---- nccl-tests compatibility ---------------------------------------- */

/* busbw / algbw as nccl-tests defines it: all_reduce 2(p-1)/p; all_gather,
 * reduce_scatter, all_to_all(v) (p-1)/p; broadcast, reduce, send_recv 1. */
double ts_coll_busbw_factor(ts_coll_op op, int p);
/* algbw = size / seconds (bytes/s), size in the nccl-tests convention. */
double ts_coll_algbw(uint64_t size, double seconds);
double ts_coll_busbw(ts_coll_op op, int p, uint64_t size, double seconds);
/* The "size" column nccl-tests prints for its -b/-e size argument:
 * max(send bytes, receive bytes) after rounding to whole elements per rank. */
uint64_t ts_coll_nccltests_size(ts_coll_op op, int p, uint64_t arg_bytes,
                                uint32_t type_size);
/* The "count" column: elements passed to the NCCL call (per rank for
 * all_gather and reduce_scatter, per peer for all_to_all). */
uint64_t ts_coll_nccltests_count(ts_coll_op op, int p, uint64_t arg_bytes,
                                 uint32_t type_size);
/* Element size of an nccl-tests -d type name ("float" 4, "bfloat16" 2,
 * "f8e4m3" 1 ...): 0 and *size set, or -1 for an unknown name. */
int ts_coll_nccltests_type(const char *name, uint32_t *size);
/* The accepted type names, comma-separated, for messages. */
const char *ts_coll_nccltests_type_names(void);
/* v right-aligned in exactly `width` columns as nccl-tests prints time and
 * bandwidth: %.2f if it fits, else %.1f, %.0f, then %.1e (%.0e below 7). */
void ts_coll_nccltests_num(double v, int width, char *buf, size_t len);

#endif
