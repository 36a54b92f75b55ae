/* ts_p2p.h - point-to-point traffic patterns run over routes and the
 * network model: the library side of `topsim bench --op sendrecv`.
 *
 * A pattern turns an ordered set of GPUs into (source, destination) pairs;
 * ts_p2p_run routes every pair (ts_route), starts every transfer at time 0
 * on a fresh engine and network model, runs to completion and reports the
 * time the last byte arrived. Each run is independent and deterministic:
 * the same inputs give the same pairs, paths and times. Cost: one route per
 * pair (O(path length x radix)) plus the network model's own cost. */
#ifndef TOPSIM_TS_P2P_H
#define TOPSIM_TS_P2P_H

#include <stdint.h>

#include "topsim/ts_error.h"
#include "topsim/ts_faults.h"
#include "topsim/ts_net.h"
#include "topsim/ts_route.h"
#include "topsim/ts_topo.h"

typedef enum ts_p2p_pattern {
  TS_P2P_SENDRECV,     /* one pair: gpus[0] -> gpus[1] */
  TS_P2P_PERMUTATION,  /* random cyclic permutation (no GPU sends to itself) */
  TS_P2P_SHIFT,        /* gpus[i] -> gpus[(i + k) mod n] */
  TS_P2P_INCAST,       /* groups of k+1: the first receives from the other k */
  TS_P2P_BISECTION     /* first half <-> second half, both directions */
} ts_p2p_pattern;

typedef struct ts_p2p_pairs {
  uint32_t *src, *dst;  /* GPU node ids */
  uint32_t count;
} ts_p2p_pairs;

/* Builds the pairs of pattern over gpus[0..n) (k: shift or incast size;
 * seed: permutation). TS_EUSAGE with a message in d when the set cannot
 * form the pattern (fewer than 2 GPUs, k out of range, odd n for
 * bisection); TS_ENOMEM. Free with ts_p2p_pairs_free. */
int ts_p2p_make_pairs(ts_p2p_pattern pattern, const uint32_t *gpus,
                      uint32_t n, uint32_t k, uint64_t seed,
                      ts_p2p_pairs *out, ts_diag *d);
void ts_p2p_pairs_free(ts_p2p_pairs *p);

typedef struct ts_p2p_opts {
  ts_net_config net;        /* fidelity, chunk size, port buffers */
  ts_route_opts route;      /* PXN or not */
  const ts_route_state *state; /* failed/degraded links, or NULL */
  const ts_faults *faults;     /* resolved what-if (ts_faults.h), or NULL:
                                  fail/degrade on top of state, stragglers,
                                  timed failures; borrowed */
  uint32_t spray;           /* 0: ECMP (one path); k > 0: split each
                               transfer over up to k equal-cost paths */
  int64_t alpha_ps;         /* per-message overhead; < 0: the largest
                               sw_overhead of the planes the path crosses
                               (0 inside a node) */
  int nccl_ranks;           /* >= 2: each send runs on the channels NCCL
                               gives a peer in a communicator of this many
                               ranks, at most channels x 14 GB/s
                               (ts_coll_p2p_cap); 0: the links' rate */
} ts_p2p_opts;

/* Defaults: flow fidelity, PXN, no failures, ECMP, alpha from the planes,
 * no NCCL channel limit. */
void ts_p2p_opts_default(ts_p2p_opts *o);

typedef struct ts_p2p_result {
  ts_time_ps time;          /* last delivery (all transfers start at 0) */
  ts_time_ps min_time;      /* first delivery */
  uint64_t bytes;           /* bytes delivered in all */
  ts_net_stats net;         /* the network model's counters */
  ts_sim_stats sim;         /* the engine's counters (events, wall time) */
} ts_p2p_result;

/* Runs every pair with `bytes` each. TS_EINVALID (with d naming the pair)
 * when a pair has no route, TS_EUSAGE for bad options, TS_ENOMEM. */
int ts_p2p_run(const ts_topo *t, const ts_p2p_pairs *pairs, uint64_t bytes,
               const ts_p2p_opts *o, ts_p2p_result *out, ts_diag *d);

#endif
