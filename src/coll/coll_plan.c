/* coll_plan.c - communicators, the plan builder (DAG of transfers) and the
 * ts_coll_lower dispatcher.
 *
 * Invariants of a plan: every dependency index is smaller than the index of
 * the transfer holding it (the array is a topological order, so the DAG is
 * acyclic); a step's k chunks are consecutive. Costs: coll_xfer is amortised
 * O(ndeps) (arrays grow by doubling); a lowering is linear in its output.
 * The simple choice is one flat dependency array (CSR); a plan that must be
 * streamed to the engine could later emit transfers through a callback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "topsim/ts_budget.h"

uint64_t coll_part(uint64_t total, uint64_t n, uint64_t i) {
  /* 64-bit when total * n fits (the same quotients, i < n), which is every
   * realistic size: 128-bit division dominated closed-form step rings. */
  if (n == 1) return total;
  if (total <= UINT64_MAX / n) return total * (i + 1) / n - total * i / n;
  /* 128-bit products so S * i cannot overflow for any 64-bit S. */
  unsigned __int128 lo = (unsigned __int128)total * i / n;
  unsigned __int128 hi = (unsigned __int128)total * (i + 1) / n;
  return (uint64_t)(hi - lo);
}

int coll_is_pow2(int p) { return p > 0 && (p & (p - 1)) == 0; }

int coll_log2_ceil(int p) {
  int l = 0;
  while ((1 << l) < p) l++;
  return l;
}

/* ---- communicator --------------------------------------------------- */

/* f[i] = the first index j with v[j] == v[i]: O(n log n) by sorting
 * (value, index) pairs, so communicators of 100k ranks stay cheap. */
typedef struct val_idx {
  int v, i;
} val_idx;

static int by_value(const void *a, const void *b) {
  const val_idx *x = a, *y = b;
  if (x->v != y->v) return x->v < y->v ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

static int *first_occurrence(const int *v, int n) {
  val_idx *p = malloc(sizeof *p * (size_t)n);
  int *f = malloc(sizeof(int) * (size_t)n);
  if (!p || !f) {
    free(p), free(f);
    return NULL;
  }
  for (int i = 0; i < n; i++) p[i] = (val_idx){v[i], i};
  qsort(p, (size_t)n, sizeof *p, by_value);
  for (int k = 0; k < n; k++)
    f[p[k].i] = k && p[k].v == p[k - 1].v ? f[p[k - 1].i] : p[k].i;
  free(p);
  return f;
}

int ts_coll_comm_new(const int *gpus, int n, ts_coll_comm **out) {
  *out = NULL;
  if (n < 1 || !gpus) return TS_EUSAGE;
  int *f = first_occurrence(gpus, n);
  if (!f) return TS_ENOMEM;
  int dup = 0;
  for (int i = 0; i < n && !dup; i++) dup = f[i] != i;
  free(f);
  if (dup) return TS_EUSAGE;
  ts_coll_comm *c = calloc(1, sizeof *c);
  if (!c) return TS_ENOMEM;
  c->n = n;
  c->gpu = malloc(sizeof(int) * (size_t)n);
  c->label = calloc((size_t)n, sizeof(int));
  if (!c->gpu || !c->label) {
    ts_coll_comm_free(c);
    return TS_ENOMEM;
  }
  memcpy(c->gpu, gpus, sizeof(int) * (size_t)n);
  int rc = ts_coll_comm_set_hosts(c, c->label);
  if (rc) {
    ts_coll_comm_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* Dense host indices in order of first appearance; O(n log n). */
int ts_coll_comm_set_hosts(ts_coll_comm *c, const int *hosts) {
  if (!c || !hosts) return TS_EUSAGE;
  int n = c->n;
  int *host = malloc(sizeof(int) * (size_t)n);
  int *local = malloc(sizeof(int) * (size_t)n);
  int *label = malloc(sizeof(int) * (size_t)n);
  int *size = calloc((size_t)n, sizeof(int));
  int *nvls = malloc(sizeof(int) * (size_t)n);
  int *first = first_occurrence(hosts, n);
  if (!host || !local || !label || !size || !nvls || !first) {
    free(host), free(local), free(label), free(size), free(nvls), free(first);
    return TS_ENOMEM;
  }
  int nh = 0;
  for (int i = 0; i < n; i++) {
    int h = first[i] == i ? nh++ : host[first[i]];
    host[i] = h;
    local[i] = size[h]++;
    label[i] = hosts[i];
  }
  for (int h = 0; h < n; h++) nvls[h] = -1;
  free(first);
  free(c->host), free(c->local), free(c->label), free(c->host_size);
  free(c->nvls_ep);
  c->host = host, c->local = local, c->label = label, c->host_size = size;
  c->nvls_ep = nvls, c->nhosts = nh;
  return 0;
}

int ts_coll_comm_set_nvls(ts_coll_comm *c, int host, int switch_ep) {
  if (!c) return TS_EUSAGE;
  for (int i = 0; i < c->n; i++)
    if (c->label[i] == host) {
      c->nvls_ep[c->host[i]] = switch_ep;
      return 0;
    }
  return TS_EUSAGE;
}

int ts_coll_comm_size(const ts_coll_comm *c) { return c->n; }
int ts_coll_comm_nhosts(const ts_coll_comm *c) { return c->nhosts; }

void ts_coll_comm_free(ts_coll_comm *c) {
  if (!c) return;
  free(c->gpu), free(c->host), free(c->local), free(c->label);
  free(c->host_size), free(c->nvls_ep);
  free(c);
}

/* ---- builder -------------------------------------------------------- */

static int plan_grow(ts_coll_plan *pl, uint32_t ndeps) {
  if (pl->n >= ts_budget_get()->descriptors) return TS_ELIMIT; /* ts_budget.h */
  if (pl->n == pl->cap) {
    if (pl->cap >= COLL_MAX_XFERS) return TS_ELIMIT;
    uint32_t cap = pl->cap ? pl->cap * 2 : 256;
    ts_coll_xfer *x = realloc(pl->x, sizeof *x * cap);
    if (!x) return TS_ENOMEM;
    pl->x = x, pl->cap = cap;
  }
  if (pl->ndeps + ndeps > pl->dcap) {
    uint64_t cap = pl->dcap ? pl->dcap : 512;
    while (cap < pl->ndeps + ndeps) cap *= 2;
    if (cap > UINT32_MAX) return TS_ELIMIT;
    uint32_t *d = realloc(pl->deps, sizeof *d * cap);
    if (!d) return TS_ENOMEM;
    pl->deps = d, pl->dcap = cap;
  }
  return 0;
}

uint64_t coll_wire(double eff, uint64_t bytes) {
  return eff >= 1.0 ? bytes : (uint64_t)((double)bytes / eff + 0.999999);
}

static ts_time_ps xfer_alpha(const coll_ctx *c, int src, int dst) {
  const ts_coll_comm *m = c->comm;
  int inter = src >= 0 && dst >= 0 && m->host[src] != m->host[dst];
  ts_coll_proto q = c->plan->proto;
  if (c->plan->algo == TS_COLL_TREE && coll_nccl(c->prm))
    return inter ? c->prm->tree_alpha_inter[q] : c->prm->tree_alpha_intra[q];
  return inter ? c->prm->alpha_inter[q]
               : coll_alpha_intra(m, c->prm, c->plan->algo, q);
}

uint32_t coll_xfer(coll_ctx *c, int src, int src_ep, int dst, int dst_ep,
                   uint64_t bytes, uint64_t reduce_bytes, uint32_t channel,
                   const uint32_t *deps, uint32_t ndeps) {
  ts_coll_plan *pl = c->plan;
  if (pl->err) return COLL_NONE;
  int rc = plan_grow(pl, ndeps);
  if (rc) {
    pl->err = rc;
    return COLL_NONE;
  }
  ts_coll_xfer *x = &pl->x[pl->n];
  memset(x, 0, sizeof *x);
  x->src_rank = src, x->dst_rank = dst;
  x->src = src >= 0 ? c->comm->gpu[src] : src_ep;
  x->dst = dst >= 0 ? c->comm->gpu[dst] : dst_ep;
  x->bytes = bytes;
  x->wire_bytes = coll_wire(c->prm->efficiency[pl->proto], bytes);
  x->reduce_bytes = reduce_bytes;
  x->alpha = xfer_alpha(c, src, dst);
  x->steps = 1;
  x->channel = channel;
  x->dep_first = (uint32_t)pl->ndeps;
  for (uint32_t i = 0; i < ndeps; i++) {
    if (deps[i] >= pl->n) { /* a forward or dangling dep is a bug */
      pl->err = TS_EINTERNAL;
      return COLL_NONE;
    }
    pl->deps[pl->ndeps++] = deps[i];
  }
  x->ndeps = ndeps;
  return pl->n++;
}

/* Builds chunk j's dependency list into buf (caller sizes it). */
static uint32_t chunk_deps(const coll_ctx *c, uint32_t j, const uint32_t *deps,
                           uint32_t ndeps, const uint32_t *gates,
                           uint32_t ngates, uint32_t *buf) {
  uint32_t k = c->plan->k, m = 0;
  for (uint32_t i = 0; i < ndeps; i++)
    if (deps[i] != COLL_NONE) buf[m++] = deps[i] + j;
  for (uint32_t i = 0; i < ngates; i++)
    if (gates[i] != COLL_NONE)
      for (uint32_t q = 0; q < k; q++) buf[m++] = gates[i] + q;
  return m;
}

static uint32_t step_any(coll_ctx *c, int src, int src_ep, int dst, int dst_ep,
                         uint64_t bytes, uint64_t reduce_bytes,
                         uint32_t channel, const uint32_t *deps, uint32_t ndeps,
                         const uint32_t *gates, uint32_t ngates) {
  uint32_t k = c->plan->k, first = COLL_NONE, prev = COLL_NONE;
  size_t cap = (size_t)ndeps + (size_t)ngates * k + 1;
  uint32_t stackbuf[64];
  uint32_t *buf = cap <= 64 ? stackbuf : malloc(sizeof *buf * cap);
  if (!buf) {
    c->plan->err = TS_ENOMEM;
    return COLL_NONE;
  }
  for (uint32_t j = 0; j < k; j++) {
    uint32_t m = chunk_deps(c, j, deps, ndeps, gates, ngates, buf);
    /* A channel sends its slices in order (NCCL's slice loop): chunk j
     * waits for chunk j-1 of the same step, so chunks pipeline across
     * steps instead of all sharing the link at once. */
    if (prev != COLL_NONE) buf[m++] = prev;
    uint32_t i = coll_xfer(c, src, src_ep, dst, dst_ep, coll_part(bytes, k, j),
                           coll_part(reduce_bytes, k, j), channel, buf, m);
    if (j == 0) first = i;
    prev = i;
  }
  if (buf != stackbuf) free(buf);
  return c->plan->err ? COLL_NONE : first;
}

uint32_t coll_step(coll_ctx *c, int src, int dst, uint64_t bytes,
                   uint64_t reduce_bytes, uint32_t channel,
                   const uint32_t *deps, uint32_t ndeps) {
  return step_any(c, src, -1, dst, -1, bytes, reduce_bytes, channel, deps,
                  ndeps, NULL, 0);
}

uint32_t coll_step_gate(coll_ctx *c, int src, int dst, uint64_t bytes,
                        uint64_t reduce_bytes, uint32_t channel,
                        const uint32_t *deps, uint32_t ndeps,
                        const uint32_t *gates, uint32_t ngates) {
  return step_any(c, src, -1, dst, -1, bytes, reduce_bytes, channel, deps,
                  ndeps, gates, ngates);
}

uint32_t coll_switch_step(coll_ctx *c, int src, int dst, int ep,
                          uint64_t bytes, uint64_t reduce_bytes,
                          const uint32_t *deps, uint32_t ndeps) {
  return step_any(c, src, ep, dst, ep, bytes, reduce_bytes, 0, deps, ndeps,
                  NULL, 0);
}

uint32_t coll_join(coll_ctx *c, int ep, const uint32_t *deps, uint32_t ndeps) {
  uint32_t first = step_any(c, -1, ep, -1, ep, 0, 0, 0, deps, ndeps, NULL, 0);
  if (first == COLL_NONE) return first;
  for (uint32_t j = 0; j < c->plan->k; j++) {
    c->plan->x[first + j].alpha = 0;
    c->plan->x[first + j].flags |= TS_COLL_XFER_JOIN;
  }
  return first;
}

void coll_set_chunks(coll_ctx *c, uint64_t largest_step) {
  uint64_t ch = c->prm->chunk_bytes, k = 1;
  if (ch > 0 && largest_step > ch) k = (largest_step + ch - 1) / ch;
  c->plan->k = k > COLL_MAX_XFERS ? COLL_MAX_XFERS : (uint32_t)k;
}

/* ---- accessors ------------------------------------------------------ */

uint32_t ts_coll_plan_count(const ts_coll_plan *pl) { return pl->n; }
const ts_coll_xfer *ts_coll_plan_xfers(const ts_coll_plan *pl) { return pl->x; }
const uint32_t *ts_coll_plan_deps(const ts_coll_plan *pl) { return pl->deps; }
ts_coll_algo ts_coll_plan_algo(const ts_coll_plan *pl) { return pl->algo; }
ts_coll_proto ts_coll_plan_proto(const ts_coll_plan *pl) { return pl->proto; }
double ts_coll_plan_predicted_s(const ts_coll_plan *pl) {
  return pl->predicted_s;
}
uint32_t ts_coll_plan_chunks(const ts_coll_plan *pl) { return pl->k; }

void ts_coll_plan_free(ts_coll_plan *pl) {
  if (!pl) return;
  free(pl->x);
  free(pl->deps);
  free(pl);
}

int ts_coll_plan_subset(const ts_coll_plan *pl, const uint32_t *keep,
                        uint32_t n, const uint32_t *to, ts_coll_plan **out) {
  *out = NULL;
  ts_coll_plan *q = calloc(1, sizeof *q);
  uint64_t nd = 0;
  for (uint32_t i = 0; i < n; i++) nd += pl->x[keep[i]].ndeps;
  if (q) {
    q->x = malloc(sizeof *q->x * ((size_t)n + 1));
    q->deps = malloc(sizeof *q->deps * ((size_t)nd + 1));
  }
  if (!q || !q->x || !q->deps) {
    ts_coll_plan_free(q);
    return TS_ENOMEM;
  }
  q->n = q->cap = n;
  q->dcap = nd;
  q->algo = pl->algo;
  q->proto = pl->proto;
  q->predicted_s = pl->predicted_s;
  q->k = pl->k;
  for (uint32_t i = 0; i < n; i++) {
    const ts_coll_xfer *a = &pl->x[keep[i]];
    q->x[i] = *a;
    q->x[i].dep_first = (uint32_t)q->ndeps;
    for (uint32_t j = 0; j < a->ndeps; j++) {
      uint32_t t = to[pl->deps[a->dep_first + j]];
      if (t >= i) { /* deps point backwards; anything else is no subset */
        ts_coll_plan_free(q);
        return TS_EINVALID;
      }
      q->deps[q->ndeps++] = t;
    }
  }
  *out = q;
  return 0;
}

/* ---- dispatcher ----------------------------------------------------- */

static int (*const lowerers[TS_COLL_ALGO_COUNT])(coll_ctx *) = {
    [TS_COLL_RING] = coll_ring_lower, [TS_COLL_TREE] = coll_tree_lower,
    [TS_COLL_HD] = coll_hd_lower,     [TS_COLL_DIRECT] = coll_direct_lower,
    [TS_COLL_HIER] = coll_hier_lower, [TS_COLL_NVLS] = coll_nvls_lower};

static int check_args(const ts_coll_comm *comm, ts_coll_op op,
                      const ts_coll_params *p, ts_diag *d) {
  if (!comm || (unsigned)op >= TS_COLL_OP_COUNT)
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "coll: bad communicator or op");
  if (p->channels < 1)
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "coll: channels must be >= 1");
  if ((op == TS_COLL_BROADCAST || op == TS_COLL_REDUCE ||
       op == TS_COLL_SEND_RECV) && (p->root < 0 || p->root >= comm->n))
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "coll: root %d out of range",
                       p->root);
  if (op == TS_COLL_SEND_RECV &&
      (p->peer < 0 || p->peer >= comm->n || p->peer == p->root))
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "coll: bad send_recv peer");
  if (op == TS_COLL_ALL_TO_ALLV && !p->matrix)
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0,
                       "coll: all_to_allv needs a byte matrix");
  for (int q = 0; q < TS_COLL_PROTO_COUNT; q++)
    if (!(p->efficiency[q] > 0.0 && p->efficiency[q] <= 1.0))
      return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0,
                         "coll: protocol efficiency must be in (0, 1]");
  return 0;
}

/* The once-per-operation latency (launch, base latency, NVLS latency)
 * delays every transfer that starts the operation: those without
 * dependencies. Joins carry none (they complete with their deps). */
static void add_startup(ts_coll_plan *pl, ts_time_ps t0) {
  if (t0 <= 0) return;
  for (uint32_t i = 0; i < pl->n; i++)
    if (pl->x[i].ndeps == 0 && !(pl->x[i].flags & TS_COLL_XFER_JOIN))
      pl->x[i].alpha += t0;
}

/* What ts_coll_lower and ts_coll_ring_describe share: argument checks,
 * the (algorithm, protocol) choice and the parameters the lowering sees,
 * with the effective efficiency of the chosen pair (NCCL's caps), so the
 * simulated time matches the choice that was made. */
static int lower_begin(const ts_coll_comm *comm, ts_coll_op op, uint64_t bytes,
                       const ts_coll_params *params, ts_coll_algo *algo,
                       ts_coll_proto *proto, double *t, ts_coll_params *eff,
                       ts_diag *d) {
  int rc = check_args(comm, op, params, d);
  if (rc) return rc;
  rc = ts_coll_choose(comm, op, bytes, params, algo, proto, t);
  if (rc) {
    const char *why = "no algorithm in auto_mask can run it";
    if (params->algo != TS_COLL_AUTO)
      coll_supported(comm, op, params->algo, params, &why);
    return ts_diag_set(d, rc, NULL, 0, 0, "coll: %s %s: %s",
                       ts_coll_algo_name(params->algo), ts_coll_op_name(op),
                       why);
  }
  *eff = *params;
  eff->efficiency[*proto] = coll_eff(comm, params, op, *algo, *proto, bytes);
  return 0;
}

int ts_coll_ring_describe(const ts_coll_comm *comm, ts_coll_op op,
                          uint64_t bytes, const ts_coll_params *params,
                          unsigned flags, ts_coll_ring *out, ts_diag *d) {
  ts_coll_params defaults, eff;
  memset(out, 0, sizeof *out);
  if (!params) {
    ts_coll_params_default(&defaults);
    params = &defaults;
  }
  double t;
  int rc = lower_begin(comm, op, bytes, params, &out->algo, &out->proto, &t,
                       &eff, d);
  if (rc) return rc;
  if (out->algo != TS_COLL_RING || (flags & TS_COLL_COMPACT) || comm->n < 2 ||
      (op != TS_COLL_ALL_REDUCE && op != TS_COLL_ALL_GATHER &&
       op != TS_COLL_REDUCE_SCATTER))
    return 1;
  coll_ring_setup(comm, op, bytes, &eff, out);
  out->predicted_s = t;
  out->startup = coll_startup(params, out->algo, out->proto);
  return 0;
}

int ts_coll_lower(const ts_coll_comm *comm, ts_coll_op op, uint64_t bytes,
                  const ts_coll_params *params, unsigned flags,
                  ts_coll_plan **out, ts_diag *d) {
  ts_coll_params defaults, eff;
  *out = NULL;
  if (!params) {
    ts_coll_params_default(&defaults);
    params = &defaults;
  }
  ts_coll_algo algo;
  ts_coll_proto proto;
  double t;
  int rc = lower_begin(comm, op, bytes, params, &algo, &proto, &t, &eff, d);
  if (rc) return rc;
  ts_coll_plan *pl = calloc(1, sizeof *pl);
  if (!pl) return TS_ENOMEM;
  pl->algo = algo, pl->proto = proto, pl->predicted_s = t, pl->k = 1;
  coll_ctx c = {comm, &eff, pl, op, bytes, flags, d};
  rc = lowerers[algo](&c);
  if (!rc) rc = pl->err;
  if (!rc) /* direct ops are NCCL's p2p: their pipeline fill too */
    add_startup(pl, coll_startup(params, algo, proto) +
                        (algo == TS_COLL_DIRECT ? coll_p2p_fill(comm, params, op, bytes) : 0));
  if (rc == TS_ELIMIT && pl->n >= ts_budget_get()->descriptors) {
    char what[160];
    snprintf(what, sizeof what, "%s of %llu bytes lowers to more than %u "
             "transfers", ts_coll_op_name(op), (unsigned long long)bytes, pl->n);
    ts_coll_plan_free(pl);
    return ts_budget_refuse(d, TS_BUDGET_DESCRIPTORS, NULL, 0, 0, what);
  }
  if (rc) {
    ts_coll_plan_free(pl);
    if (rc == TS_ENOMEM || rc == TS_ELIMIT || rc == TS_EINTERNAL)
      ts_diag_set(d, rc, NULL, 0, 0, "coll: lowering %s failed: %s",
                  ts_coll_op_name(op), ts_strerror(rc));
    return rc;
  }
  *out = pl;
  return 0;
}
