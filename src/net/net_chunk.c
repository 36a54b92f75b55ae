/* net_chunk.c - chunk fidelity: store-and-forward chunks through FIFO
 * output ports, for small-scale congestion studies (docs/model.md,
 * "Chunk fidelity"). Learned from htsim's queue/pipe split, not copied.
 *
 * A transfer is cut into chunks of cfg.chunk_bytes (the last one shorter;
 * a 0-byte transfer sends one empty chunk). After alpha_sw all its chunks
 * join the FIFO of the first hop's output port. A port serialises its head
 * chunk for bytes / bandwidth, then the chunk propagates for the hop's
 * latency and joins the next hop's FIFO; the last hop delivers it.
 *
 * With cfg.port_buffer_bytes = B > 0, every port after the first hop holds
 * at most B bytes, counting chunks queued there plus chunks already
 * reserved on their way to it (credit-based, as InfiniBand). A port whose
 * head chunk finds no room downstream stops (head-of-line blocking) and
 * joins that port's FIFO of waiters; each departure wakes the waiters.
 * The first hop's queue is the sender's memory and is never limited.
 *
 * Invariants: a port is busy (one pending tx-done event) iff it is
 * serialising its head chunk; qbytes = bytes of chunks in its FIFO;
 * qbytes + resv <= B for limited ports; a transfer's chunks stay in order
 * (one path, FIFO ports), so its last chunk is delivered last.
 * Costs: two events per chunk per hop (tx done, arrival; arrival is
 * inline when the hop latency is 0); O(1) per event plus the waiters
 * woken. Memory: one chunk record per chunk in flight (pooled). */
#include <stdlib.h>
#include <string.h>

#include "net/net_backend.h"

typedef struct chunk {
  uint32_t xfer;
  uint32_t bytes;
  uint32_t next;      /* FIFO / pending chain / free list */
  uint32_t hop;
} chunk;

typedef struct cxfer {
  uint32_t req;
  uint32_t hops;
  uint32_t left;      /* chunks not yet delivered; next free when free */
  uint32_t first, last; /* chunks waiting for alpha_sw */
  uint64_t bytes;
  uint32_t path[TS_NET_MAX_HOPS];
} cxfer;

typedef struct port {
  uint32_t qhead, qtail;
  uint64_t qbytes;     /* bytes in the FIFO (including the one in service) */
  uint64_t resv;       /* bytes reserved by chunks travelling to it */
  uint32_t whead, wtail; /* ports waiting for room here */
  uint32_t wnext;      /* link in the waiter list this port sits in */
  uint8_t busy, waiting;
} port;

typedef struct chunk_state {
  chunk *chunks;
  uint32_t nchunks, chunks_cap, chunk_free;
  cxfer *xfers;
  uint32_t nxfers, xfers_cap, xfer_free;
  port *ports;
} chunk_state;

static chunk_state *cs_of(ts_net *net) { return net->bstate; }

static int chunk_reserve(ts_net *net, uint32_t flows, uint32_t hops,
                         uint64_t bytes) {
  chunk_state *s = cs_of(net);
  uint64_t need = bytes / net->cfg.chunk_bytes + flows;
  if (need > UINT32_MAX / 2) return TS_ENOMEM;
  if (net_grow((void **)&s->chunks, &s->chunks_cap,
               s->nchunks + (uint32_t)need, sizeof *s->chunks) ||
      net_grow((void **)&s->xfers, &s->xfers_cap, s->nxfers + flows,
               sizeof *s->xfers))
    return TS_ENOMEM;
  return 0;
}

static uint32_t chunk_alloc(chunk_state *s) {
  uint32_t c = s->chunk_free;
  if (c != NET_NONE) {
    s->chunk_free = s->chunks[c].next;
    return c;
  }
  NET_ASSERT(s->nchunks < s->chunks_cap, "chunk pool not reserved");
  return s->nchunks++;
}

static void chunk_try_send(ts_net *net, uint32_t p);

static void port_push(ts_net *net, uint32_t p, uint32_t c) {
  chunk_state *s = cs_of(net);
  port *pt = &s->ports[p];
  s->chunks[c].next = NET_NONE;
  if (pt->qtail != NET_NONE) s->chunks[pt->qtail].next = c;
  else pt->qhead = c;
  pt->qtail = c;
  pt->qbytes += s->chunks[c].bytes;
  if (pt->qbytes > net->dirs[p].peak_queue) net->dirs[p].peak_queue = pt->qbytes;
}

static void chunk_arrive(ts_net *net, uint32_t c) {
  chunk_state *s = cs_of(net);
  chunk *ch = &s->chunks[c];
  cxfer *x = &s->xfers[ch->xfer];
  if (++ch->hop < x->hops) {
    uint32_t p = x->path[ch->hop];
    s->ports[p].resv -= net->cfg.port_buffer_bytes ? ch->bytes : 0;
    port_push(net, p, c);
    chunk_try_send(net, p);
    return;
  }
  uint32_t xi = ch->xfer;
  ch->next = s->chunk_free;
  s->chunk_free = c;
  if (--x->left) return;
  uint32_t req = x->req;
  uint64_t bytes = x->bytes;
  x->left = s->xfer_free;
  s->xfer_free = xi;
  net_flow_delivered(net, req, bytes); /* may send: pointers are stale */
}

static void chunk_arrive_ev(ts_sim *sim, void *ctx, uint64_t arg) {
  chunk_arrive(ctx, (uint32_t)arg);
}

/* Wakes every port waiting for room at p (FIFO order). */
static void port_wake(ts_net *net, uint32_t p) {
  chunk_state *s = cs_of(net);
  uint32_t w = s->ports[p].whead;
  s->ports[p].whead = s->ports[p].wtail = NET_NONE;
  while (w != NET_NONE) {
    uint32_t next = s->ports[w].wnext;
    s->ports[w].waiting = 0;
    chunk_try_send(net, w);
    w = next;
  }
}

static void chunk_tx_done_ev(ts_sim *sim, void *ctx, uint64_t arg) {
  ts_net *net = ctx;
  chunk_state *s = cs_of(net);
  uint32_t p = (uint32_t)arg;
  port *pt = &s->ports[p];
  uint32_t c = pt->qhead;
  pt->qhead = s->chunks[c].next;
  if (pt->qhead == NET_NONE) pt->qtail = NET_NONE;
  pt->qbytes -= s->chunks[c].bytes;
  pt->busy = 0;
  if (net->dirs[p].lat == 0) {
    chunk_arrive(net, c);
  } else {
    int rc = ts_sim_schedule_in(sim, net->dirs[p].lat, chunk_arrive_ev, net,
                                c, NULL);
    NET_ASSERT(rc == 0, "engine refused an arrival event");
  }
  if (net->cfg.port_buffer_bytes) port_wake(net, p);
  chunk_try_send(net, p);
}

/* True if the head chunk may leave p now; otherwise p waits downstream. */
static int chunk_room_next(ts_net *net, uint32_t p, const chunk *ch) {
  chunk_state *s = cs_of(net);
  const cxfer *x = &s->xfers[ch->xfer];
  uint64_t buf = net->cfg.port_buffer_bytes;
  if (!buf || ch->hop + 1 >= x->hops) return 1;
  uint32_t np = x->path[ch->hop + 1];
  port *n = &s->ports[np];
  if (n->qbytes + n->resv + ch->bytes <= buf) {
    n->resv += ch->bytes;
    return 1;
  }
  s->ports[p].waiting = 1;
  s->ports[p].wnext = NET_NONE;
  if (n->wtail != NET_NONE) s->ports[n->wtail].wnext = p;
  else n->whead = p;
  n->wtail = p;
  net->st.backpressure_waits++;
  return 0;
}

static void chunk_try_send(ts_net *net, uint32_t p) {
  chunk_state *s = cs_of(net);
  port *pt = &s->ports[p];
  if (pt->busy || pt->waiting || pt->qhead == NET_NONE) return;
  if (net->dirs[p].cap <= 0) return; /* link down: resumes on restore */
  const chunk *ch = &s->chunks[pt->qhead];
  if (!chunk_room_next(net, p, ch)) return;
  ts_time_ps t = net_ps_for_bytes(ch->bytes, net->dirs[p].cap);
  pt->busy = 1;
  net->dirs[p].bytes += ch->bytes;
  net->dirs[p].busy_ps += t;
  net->st.chunks_sent++;
  int rc = ts_sim_schedule_in(net->sim, t, chunk_tx_done_ev, net, p, NULL);
  NET_ASSERT(rc == 0, "engine refused a tx-done event");
}

static void chunk_inject_ev(ts_sim *sim, void *ctx, uint64_t arg) {
  ts_net *net = ctx;
  chunk_state *s = cs_of(net);
  cxfer *x = &s->xfers[arg];
  uint32_t p = x->path[0];
  for (uint32_t c = x->first; c != NET_NONE;) {
    uint32_t next = s->chunks[c].next;
    port_push(net, p, c);
    c = next;
  }
  chunk_try_send(net, p);
}

static void chunk_start(ts_net *net, uint32_t req, const uint32_t *path,
                        uint32_t hops, uint64_t bytes, ts_time_ps alpha) {
  chunk_state *s = cs_of(net);
  uint32_t xi = s->xfer_free;
  if (xi != NET_NONE) s->xfer_free = s->xfers[xi].left;
  else xi = s->nxfers++;
  NET_ASSERT(xi < s->xfers_cap, "transfer pool not reserved");
  cxfer *x = &s->xfers[xi];
  x->req = req;
  x->hops = hops;
  x->bytes = bytes;
  memcpy(x->path, path, hops * sizeof *path);
  uint64_t cb = net->cfg.chunk_bytes;
  uint64_t n = bytes ? (bytes + cb - 1) / cb : 1;
  x->left = (uint32_t)n;
  x->first = x->last = NET_NONE;
  for (uint64_t i = 0; i < n; i++) {
    uint32_t c = chunk_alloc(s);
    uint64_t off = i * cb;
    s->chunks[c] = (chunk){xi, (uint32_t)(bytes - off < cb ? bytes - off : cb),
                           NET_NONE, 0};
    if (x->last != NET_NONE) s->chunks[x->last].next = c;
    else x->first = c;
    x->last = c;
  }
  if (alpha == 0) {
    chunk_inject_ev(net->sim, net, xi);
    return;
  }
  int rc = ts_sim_schedule_in(net->sim, alpha, chunk_inject_ev, net, xi, NULL);
  NET_ASSERT(rc == 0, "engine refused an inject event");
}

static void chunk_capacity_changed(ts_net *net, uint32_t dir) {
  chunk_try_send(net, dir);
}

static int chunk_init(ts_net *net) {
  if (net->cfg.chunk_bytes > UINT32_MAX) return TS_EUSAGE;
  if (net->cfg.port_buffer_bytes &&
      net->cfg.port_buffer_bytes < net->cfg.chunk_bytes)
    return TS_EUSAGE; /* a chunk that never fits would deadlock */
  chunk_state *s = calloc(1, sizeof *s);
  if (!s) return TS_ENOMEM;
  net->bstate = s;
  s->chunk_free = s->xfer_free = NET_NONE;
  s->ports = malloc((net->ndirs ? net->ndirs : 1) * sizeof *s->ports);
  if (!s->ports) return TS_ENOMEM;
  for (uint32_t d = 0; d < net->ndirs; d++)
    s->ports[d] = (port){NET_NONE, NET_NONE, 0, 0, NET_NONE, NET_NONE,
                         NET_NONE, 0, 0};
  return 0;
}

static void chunk_fini(ts_net *net) {
  chunk_state *s = cs_of(net);
  free(s->chunks);
  free(s->xfers);
  free(s->ports);
  free(s);
  net->bstate = NULL;
}

const net_backend net_chunk_backend = {
    "chunk", chunk_init, chunk_fini, chunk_reserve, chunk_start,
    chunk_capacity_changed,
};
