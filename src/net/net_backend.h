/* net_backend.h - private layout of ts_net and the backend vtable.
 *
 * net.c owns what both fidelities share: the configuration, per-direction
 * capacity (bandwidth x factor) and counters, path validation, and the
 * request table that turns k delivered flows into one user callback.
 * A backend (net_flow.c, net_chunk.c) owns how bytes move. It receives
 * validated flows and reports each delivery with net_flow_delivered().
 *
 * Requests live in a pool (array + free list, index handles), so a send
 * does no malloc once the pool has grown to the peak number in flight. */
#ifndef TOPSIM_NET_BACKEND_H
#define TOPSIM_NET_BACKEND_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_assert.h"
#include "topsim/ts_net.h"

#define NET_NONE UINT32_MAX

/* Loud stop for a broken invariant (a topsim bug, never bad input): the
 * engine's macro, so every module fails the same way. */
#define NET_ASSERT(cond, what) SIM_ASSERT(cond, what)

/* Relative tolerance for comparing doubles (rates, byte counts, times in
 * ps before rounding). Two rates within NET_EPS of each other are equal:
 * the flow keeps its old rate and its completion event is not moved. */
#define NET_EPS 1e-9
/* Longest transfer time net_ps_for_bytes returns (2^62 ps): see net.c. */
#define NET_MAX_PS (1ULL << 62)

typedef struct net_backend net_backend;

/* One user transfer: k flows outstanding, one callback. */
typedef struct net_req {
  ts_net_done_fn fn;
  void *ctx;
  uint64_t tag;
  uint32_t pending;   /* flows not yet delivered; next free when free */
} net_req;

/* Per-direction state shared by both backends. */
typedef struct net_dir {
  double cap;             /* bytes/s now: bandwidth x factor */
  ts_time_ps lat;         /* hop latency */
  uint64_t bytes;         /* carried */
  ts_time_ps busy_ps;     /* closed busy periods */
  ts_time_ps busy_since;  /* start of the open period (if active > 0) */
  ts_time_ps idle_at;     /* end of the last closed period */
  uint32_t active;        /* flow: flows crossing; chunk: 1 while sending */
  uint32_t peak_flows;
  uint64_t peak_queue;
} net_dir;

struct ts_net {
  const ts_topo *topo;
  ts_sim *sim;
  ts_net_config cfg;
  const net_backend *be;
  void *bstate;           /* backend-private state */
  uint32_t ndirs;
  net_dir *dirs;
  double *factor;         /* per link */
  double *link_bw;        /* per link: bandwidth before the factor (an
                             NVSwitch bundle's representative holds the
                             sum of its members) */
  ts_net_reroute_fn reroute;  /* NULL: flows on a down link stall */
  void *reroute_ctx;
  net_req *reqs;
  uint32_t nreqs, reqs_cap, req_free;
  ts_net_stats st;
};

struct net_backend {
  const char *name;
  /* Allocates net->bstate; TS_ENOMEM. */
  int (*init)(ts_net *net);
  void (*fini)(ts_net *net);
  /* Makes room so that `flows` more flows with `hops` directions in total
   * and `bytes` in total can start without failing; TS_ENOMEM. */
  int (*reserve)(ts_net *net, uint32_t flows, uint32_t hops, uint64_t bytes);
  /* Starts one flow of request req at now + alpha over a validated path
   * (copied). Cannot fail after a successful reserve. */
  void (*start)(ts_net *net, uint32_t req, const uint32_t *path,
                uint32_t hops, uint64_t bytes, ts_time_ps alpha);
  /* Direction dir's capacity changed (factor); re-rate or kick it. */
  void (*capacity_changed)(ts_net *net, uint32_t dir);
};

extern const net_backend net_flow_backend;
extern const net_backend net_chunk_backend;

/* Backend -> common: one flow of req delivered `bytes` now. Fires the
 * user callback when it was the request's last flow. */
void net_flow_delivered(ts_net *net, uint32_t req, uint64_t bytes);

/* 0 if path is a valid, contiguous, live path; TS_EUSAGE (empty),
 * TS_ELIMIT (too long) or TS_EINVALID otherwise. */
int net_path_check(const ts_net *net, const uint32_t *path, uint32_t hops);

/* Busy-period bookkeeping: a direction gains / loses one user. */
void net_dir_enter(ts_net *net, uint32_t dir);
void net_dir_leave(ts_net *net, uint32_t dir);

/* Grows a pool array to hold at least need items of size sz, doubling;
 * returns 0 or TS_ENOMEM (array unchanged). */
int net_grow(void **arr, uint32_t *cap, uint32_t need, size_t sz);

/* ceil(bytes * 1e12 / rate) picoseconds, snapped to the nearest integer
 * when within NET_EPS (so 1 MiB at 25 GB/s is exactly 41,943,040 ps and
 * never 41,943,041 from rounding noise). rate must be > 0. */
ts_time_ps net_ps_for_bytes(double bytes, double rate);

#endif
