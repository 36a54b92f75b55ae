/* exec_step_fast.c - the step's exact shortcut: collectives of a group that
 * owns its links run once in isolation and are replayed as a timer.
 *
 * Why it is exact. The network model couples flows only through the link
 * directions they share. A group whose members sit on one host and talk
 * over NVLink (a TP group filling a DGX, say) uses only NVLink directions
 * incident to its member GPUs. If no other traffic of the step can ever
 * cross those directions (no other group has a member there, no pipeline
 * send or PXN hop moves through those GPUs' NVLinks), every collective of
 * the group runs alone on its links: the group's stream runs one instance
 * at a time, and an instance starts only after the previous one's last
 * byte arrived. Its duration and its per-direction bytes and busy time are
 * then a function of its plan alone, the same at every instance: one
 * isolated run on a scratch runtime (same topology, faults, fidelity)
 * gives them, and every instance becomes one timer plus counter updates.
 *
 * Ownership is decided before the run, conservatively, per GPU: every
 * other user claims the GPUs whose NVLinks it may cross. Intra-host groups
 * claim their members; a multi-host group claims the GPUs at the ends of
 * NVLink hops on the routes between its members (all ordered pairs up to
 * 16 members; beyond that, when all members share a rail and a sampled
 * route crosses no NVLink, the members with a host peer, else every GPU of
 * every member host); a pipeline send claims the NVLink-hop GPUs of its
 * route. A candidate group is exclusive when no one else claims any of its
 * GPUs. Anything doubtful claims more, which only turns the shortcut off.
 *
 * Off with ts_step_opts.exact (`topsim run --exact`), with free_comm,
 * while tracing (trace counters sample busy time as it accrues) and with
 * timed failures (--fail-at: capacities change mid-run). Static failures
 * and stragglers are fine: the scratch runtime has the same faults, and a
 * straggler only stretches compute.
 * Cost: O(groups x members) claims plus O(pairs) routes up front; one
 * isolated run per distinct plan of an exclusive group, or per class of
 * plans whose routes are images of each other (memo_share, below: two
 * routings of the plan instead); O(directions of the plan) per replayed
 * instance. */
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/exec_path.h"

#define FAST_PAIRS_MAX 16u
#define CLAIM_MANY UINT32_MAX

typedef struct claims {
  const ts_topo *t;
  ts_route *rt;
  uint32_t *owner;          /* per node: 0 none, user + 1, or CLAIM_MANY */
  uint32_t *host_off, *host_gpu; /* GPUs by host (CSR) */
  uint32_t nhosts;
} claims;

static uint32_t user_id(uint32_t g, uint32_t id) { return (g << 27) | id; }

static void claim(claims *C, uint32_t node, uint32_t user) {
  uint32_t *o = &C->owner[node];
  if (*o == 0) *o = user + 1;
  else if (*o != user + 1) *o = CLAIM_MANY;
}

static void claim_host(claims *C, int32_t host, uint32_t user) {
  if (host < 0 || (uint32_t)host >= C->nhosts) return;
  for (uint32_t i = C->host_off[host]; i < C->host_off[host + 1]; i++)
    claim(C, C->host_gpu[i], user);
}

/* Claims the GPU ends of NVLink hops on the route a -> b; returns 1 if the
 * route crossed an NVLink. Without a route: the whole of both hosts (the
 * run itself will report the missing route). */
static int claim_route(claims *C, uint32_t a, uint32_t b, uint32_t user) {
  ts_path p;
  ts_diag d;
  if (ts_route_path(C->rt, a, b, 0, &p, &d)) {
    claim_host(C, ts_topo_node(C->t, a)->host, user);
    claim_host(C, ts_topo_node(C->t, b)->host, user);
    return 1;
  }
  int nvl = 0;
  for (uint32_t i = 0; i < p.len; i++) {
    const ts_link *l = ts_topo_link(C->t, p.dir[i] >> 1);
    if (l->kind != TS_LINK_NVLINK) continue;
    nvl = 1;
    if (ts_topo_node(C->t, l->a)->kind == TS_NODE_GPU) claim(C, l->a, user);
    if (ts_topo_node(C->t, l->b)->kind == TS_NODE_GPU) claim(C, l->b, user);
  }
  return nvl;
}

static int claims_init(claims *C, const ts_exec *x) {
  memset(C, 0, sizeof *C);
  C->t = ts_exec_topo(x);
  C->rt = ts_exec_route(x);
  const uint32_t *gpus;
  uint32_t ng = ts_topo_gpus(C->t, &gpus);
  for (uint32_t i = 0; i < ng; i++) {
    int32_t h = ts_topo_node(C->t, gpus[i])->host;
    if (h >= 0 && (uint32_t)h + 1 > C->nhosts) C->nhosts = (uint32_t)h + 1;
  }
  C->owner = calloc(ts_topo_node_count(C->t) + 1, sizeof *C->owner);
  C->host_off = calloc(C->nhosts + 2, sizeof *C->host_off);
  C->host_gpu = malloc(((size_t)ng + 1) * sizeof *C->host_gpu);
  if (!C->owner || !C->host_off || !C->host_gpu) return TS_ENOMEM;
  for (uint32_t i = 0; i < ng; i++) {
    int32_t h = ts_topo_node(C->t, gpus[i])->host;
    if (h >= 0) C->host_off[h + 2]++;
  }
  for (uint32_t h = 0; h < C->nhosts; h++) C->host_off[h + 2] += C->host_off[h + 1];
  for (uint32_t i = 0; i < ng; i++) {
    int32_t h = ts_topo_node(C->t, gpus[i])->host;
    if (h >= 0) C->host_gpu[C->host_off[h + 1]++] = gpus[i];
  }
  return 0;
}

static void claims_free(claims *C) {
  free(C->owner);
  free(C->host_off);
  free(C->host_gpu);
}

static const ts_rank_label *member(const ts_mapping *m, ts_group g,
                                   uint32_t id, uint32_t i) {
  return ts_mapping_rank(m, ts_mapping_group_member(m, g, id, i));
}

/* 1 when every member of (g, id) is on the first member's host. */
static int one_host(const ts_mapping *m, ts_group g, uint32_t id, uint32_t n) {
  int32_t h = member(m, g, id, 0)->host;
  for (uint32_t i = 1; i < n; i++)
    if (member(m, g, id, i)->host != h) return 0;
  return 1;
}

/* Claims of a group spanning hosts (see the file comment). */
static void claim_spread(claims *C, const ts_mapping *m, ts_group g,
                         uint32_t id, uint32_t n, uint32_t user) {
  if (n <= FAST_PAIRS_MAX) {
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < n; j++)
        if (i != j) claim_route(C, member(m, g, id, i)->gpu,
                                member(m, g, id, j)->gpu, user);
    return;
  }
  const ts_rank_label *a = member(m, g, id, 0);
  int same_rail = a->rail != TS_NONE;
  uint32_t other = 0;
  for (uint32_t i = 1; i < n; i++) {
    const ts_rank_label *b = member(m, g, id, i);
    same_rail &= b->rail == a->rail;
    if (!other && b->host != a->host) other = i;
  }
  if (same_rail && other && !claim_route(C, a->gpu, member(m, g, id, other)->gpu, user)) {
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < n; j++)
        if (i != j && member(m, g, id, i)->host == member(m, g, id, j)->host)
          claim(C, member(m, g, id, i)->gpu, user);
    return;
  }
  for (uint32_t i = 0; i < n; i++) claim_host(C, member(m, g, id, i)->host, user);
}

static void claim_groups(claims *C, const ts_mapping *m, uint8_t *cand[]) {
  for (uint32_t g = 0; g < TS_GROUP_COUNT; g++) {
    if (g == TS_GROUP_PP) continue;
    uint32_t n = ts_mapping_group_size(m, (ts_group)g);
    if (n < 2) continue;
    for (uint32_t id = 0; id < ts_mapping_group_count(m, (ts_group)g); id++) {
      uint32_t user = user_id(g, id);
      if (!one_host(m, (ts_group)g, id, n)) {
        claim_spread(C, m, (ts_group)g, id, n, user);
        continue;
      }
      for (uint32_t i = 0; i < n; i++) claim(C, member(m, (ts_group)g, id, i)->gpu, user);
      /* NVLink between members, or the group is no candidate. */
      cand[g][id] = (uint8_t)claim_route(C, member(m, (ts_group)g, id, 0)->gpu,
                                         member(m, (ts_group)g, id, 1)->gpu, user);
    }
  }
}

/* Pipeline sends: every (rank, destination stage) its program sends to,
 * each pair routed once (claims are idempotent; an interleaved program
 * alternates between its two neighbours, so a "same as the last peer"
 * test routed nearly every send). 0 or TS_ENOMEM. */
static int claim_pp(claims *C, const ts_mapping *m, const ts_step_progs *sp) {
  uint32_t user = user_id(TS_GROUP_PP, 0);
  uint32_t pp = ts_mapping_group_size(m, TS_GROUP_PP);
  uint32_t *seen = calloc((size_t)pp + 1, sizeof *seen); /* stage: r + 1 */
  if (!seen) return TS_ENOMEM;
  for (uint32_t r = 0; r < ts_mapping_ranks(m); r++) {
    const ts_step_prog *p = ts_step_progs_rank(sp, m, r);
    const ts_rank_label *lb = ts_mapping_rank(m, r);
    for (uint32_t i = 0; i < p->n; i++) {
      uint32_t peer = p->ins[i].peer;
      if (p->ins[i].op != TS_SI_SEND || peer >= pp || seen[peer] == r + 1)
        continue;
      seen[peer] = r + 1;
      const ts_rank_label *q = member(m, TS_GROUP_PP, lb->group[TS_GROUP_PP], peer);
      claim_route(C, lb->gpu, q->gpu, user);
    }
  }
  free(seen);
  return 0;
}

static int exclusive(const claims *C, const ts_mapping *m, uint32_t g,
                     uint32_t id) {
  uint32_t n = ts_mapping_group_size(m, (ts_group)g);
  for (uint32_t i = 0; i < n; i++)
    if (C->owner[member(m, (ts_group)g, id, i)->gpu] != user_id(g, id) + 1) return 0;
  return 1;
}

/* Most collectives any program issues on stream g before waiting for the
 * oldest (issued minus waited-for, at each issue). */
static uint32_t outstanding(const ts_step_progs *sp, uint32_t g) {
  uint32_t most = 0;
  for (uint32_t i = 0; i < sp->nprogs; i++) {
    const ts_step_prog *p = &sp->prog[i];
    uint32_t issued = 0, waited = 0;
    for (uint32_t k = 0; k < p->n; k++) {
      const ts_step_ins *in = &p->ins[k];
      if (in->group != g) continue;
      if (in->op == TS_SI_COLL && ++issued - waited > most) most = issued - waited;
      if (in->op == TS_SI_WAIT && in->ord + 1 > waited) waited = in->ord + 1;
    }
  }
  return most;
}

int exec_fast_init(exec_fast *F, const ts_exec *x, const ts_mapping *m,
                   const ts_step_progs *sp, const ts_step_opts *o) {
  memset(F, 0, sizeof *F);
  /* Timed failures change capacities mid-run: no isolated run holds. */
  if (o->exact || o->free_comm || o->ntrace_ranks ||
      (o->faults && ts_faults_has(o->faults, TS_FAULT_FAIL_AT)))
    return 0;
  claims C;
  int rc = claims_init(&C, x);
  for (uint32_t g = 0; !rc && g < TS_GROUP_COUNT; g++) {
    F->excl[g] = calloc(ts_mapping_group_count(m, (ts_group)g) + 1, 1);
    if (!F->excl[g]) rc = TS_ENOMEM;
  }
  if (!rc) {
    claim_groups(&C, m, F->excl);
    rc = claim_pp(&C, m, sp);
  }
  if (!rc) {
    for (uint32_t g = 0; g < TS_GROUP_COUNT; g++) {
      int fits = outstanding(sp, g) < EXEC_AHEAD_RING;
      for (uint32_t id = 0; id < ts_mapping_group_count(m, (ts_group)g); id++)
        if (F->excl[g][id]) F->excl[g][id] = (uint8_t)(fits && exclusive(&C, m, g, id));
    }
    F->on = 1;
  }
  claims_free(&C);
  return rc;
}

void exec_fast_free(exec_fast *F) {
  for (int g = 0; g < TS_GROUP_COUNT; g++) free(F->excl[g]);
  ts_exec_free(F->scratch);
  free(F->base_bytes);
  free(F->base_busy);
  free(F->memos);
  free(F->map);
  free(F->rmap);
  free(F->mst);
  free(F->rst);
  free(F->pa);
  memset(F, 0, sizeof *F);
}

void exec_memo_free(exec_memo *M) {
  if (!M) return;
  free(M->dir);
  free(M->bytes);
  free(M->busy);
  free(M->peak);
  free(M->end);
  free(M);
}

typedef struct memo_done {
  ts_sim *sim;
  ts_time_ps end;
  int done;
} memo_done;

static void on_memo_done(void *ctx, uint64_t tag) {
  (void)tag;
  memo_done *c = ctx;
  c->end = ts_sim_now(c->sim);
  c->done = 1;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static int scratch_new(exec_fast *F, const ts_exec *x, const ts_step_opts *o,
                       ts_diag *d) {
  ts_exec_opts eo = {o->net, o->route, o->state, o->faults};
  int rc = ts_exec_create(ts_exec_topo(x), &eo, &F->scratch, d);
  if (rc) return rc;
  uint32_t nd = 2 * ts_topo_link_count(ts_exec_topo(x));
  F->base_bytes = calloc(nd + 1, sizeof *F->base_bytes);
  F->base_busy = calloc(nd + 1, sizeof *F->base_busy);
  return F->base_bytes && F->base_busy ? 0 : TS_ENOMEM;
}

/* The per-direction result of the isolated run just finished. */
static int memo_dirs(exec_fast *F, exec_memo *M, ts_time_ps start) {
  ts_exec *s = F->scratch;
  qsort(s->rec, s->nrec, sizeof *s->rec, cmp_u32);
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->nrec; i++)
    if (!i || s->rec[i] != s->rec[i - 1]) s->rec[n++] = s->rec[i];
  M->dir = malloc(((size_t)n + 1) * sizeof *M->dir);
  M->bytes = malloc(((size_t)n + 1) * sizeof *M->bytes);
  M->busy = malloc(((size_t)n + 1) * sizeof *M->busy);
  M->peak = malloc(((size_t)n + 1) * sizeof *M->peak);
  M->end = malloc(((size_t)n + 1) * sizeof *M->end);
  if (!M->dir || !M->bytes || !M->busy || !M->peak || !M->end)
    return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t dir = s->rec[i];
    ts_net_dir_stats st;
    ts_net_dir_stats_get(ts_exec_net(s), dir, &st);
    M->dir[i] = dir;
    M->bytes[i] = st.bytes - F->base_bytes[dir];
    M->busy[i] = st.busy_ps - F->base_busy[dir];
    M->peak[i] = st.peak_flows;
    /* a direction only zero-byte flows crossed was never entered */
    M->end[i] = st.idle_at > start ? st.idle_at - start : 0;
    F->base_bytes[dir] = st.bytes;
    F->base_busy[dir] = st.busy_ps;
  }
  M->n = n;
  return 0;
}

/* ---- memos shared between images ------------------------------------
 *
 * Two plans whose transfers agree in everything but their endpoints (rank
 * indices, bytes, latency terms, steps, flags, dependencies, algorithm and
 * protocol) run alike when their routes are images: a bijection of
 * directions maps every path of one onto the same path of the other, hop
 * by hop, between directions of equal bandwidth, with equal path
 * latencies and switch overheads. If the bijection also keeps the order of direction ids (the
 * flow solver breaks ties between directions by id; nothing else in the
 * network or the executor looks at an id but to index), the isolated run
 * of the second is the first's with its directions renamed, event for
 * event and bit for bit: its memo is the first's, renamed. The EP
 * all-to-alls of groups on different hosts are such images. */

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

/* Hash of everything but the endpoints that the executor reads. */
static uint64_t memo_sig(const ts_coll_plan *pl) {
  uint32_t n = ts_coll_plan_count(pl);
  const ts_coll_xfer *x = ts_coll_plan_xfers(pl);
  uint64_t h = mix(mix(n, ts_coll_plan_algo(pl)), ts_coll_plan_proto(pl));
  for (uint32_t i = 0; i < n; i++) {
    h = mix(h, (uint64_t)(uint32_t)x[i].src_rank << 32 | (uint32_t)x[i].dst_rank);
    h = mix(mix(mix(h, x[i].bytes), x[i].wire_bytes), x[i].reduce_bytes);
    h = mix(mix(mix(h, x[i].alpha), x[i].steps), x[i].channel);
    h = mix(mix(h, x[i].flags), x[i].ndeps);
  }
  return h;
}

static bool same_but_ends(const ts_coll_plan *a, const ts_coll_plan *b) {
  uint32_t n = ts_coll_plan_count(a);
  if (n != ts_coll_plan_count(b) || ts_coll_plan_algo(a) != ts_coll_plan_algo(b) ||
      ts_coll_plan_proto(a) != ts_coll_plan_proto(b))
    return false;
  const ts_coll_xfer *x = ts_coll_plan_xfers(a), *y = ts_coll_plan_xfers(b);
  const uint32_t *da = ts_coll_plan_deps(a), *db = ts_coll_plan_deps(b);
  for (uint32_t i = 0; i < n; i++) {
    if (x[i].src_rank != y[i].src_rank || x[i].dst_rank != y[i].dst_rank ||
        x[i].bytes != y[i].bytes || x[i].wire_bytes != y[i].wire_bytes ||
        x[i].reduce_bytes != y[i].reduce_bytes || x[i].alpha != y[i].alpha ||
        x[i].steps != y[i].steps || x[i].channel != y[i].channel ||
        x[i].flags != y[i].flags || x[i].ndeps != y[i].ndeps)
      return false;
    for (uint32_t j = 0; j < x[i].ndeps; j++)
      if (da[x[i].dep_first + j] != db[y[i].dep_first + j]) return false;
  }
  return true;
}

static ts_time_ps lat_of(const ts_topo *t, const ts_path *p) {
  ts_time_ps lat = 0;
  for (uint32_t h = 0; h < p->len; h++) lat += ts_topo_link(t, p->dir[h] >> 1)->latency;
  return lat;
}

/* Extends the bijection by a -> b; false if it contradicts it or the two
 * directions differ in bandwidth. */
static bool map_dir(exec_fast *F, const ts_net *net, uint32_t a, uint32_t b) {
  if (F->mst[a] == F->stamp) return F->map[a] == b;
  if (F->rst[b] == F->stamp) return false;
  if (ts_net_dir_bandwidth(net, a) != ts_net_dir_bandwidth(net, b)) return false;
  F->mst[a] = F->rst[b] = F->stamp;
  F->map[a] = b;
  F->rmap[b] = a;
  return true;
}

/* 1 when plan is an image of A's plan (above), with F->map the renaming;
 * 0 when not; an error with d set. Routes both plans on the scratch
 * runtime (the same routes as the step's: same topology, router, faults). */
static int is_image(exec_fast *F, const exec_memo *A, const ts_coll_plan *plan,
                    ts_diag *d) {
  ts_exec *s = F->scratch;
  const ts_net *net = ts_exec_net(s);
  if (!same_but_ends(A->plan, plan)) return 0;
  if (!F->map) {
    size_t nd = 2 * (size_t)ts_topo_link_count(ts_exec_topo(s)) + 1;
    F->map = malloc(nd * sizeof *F->map);
    F->rmap = malloc(nd * sizeof *F->rmap);
    F->mst = calloc(nd, sizeof *F->mst);
    F->rst = calloc(nd, sizeof *F->rst);
    F->pa = malloc(EXEC_PATH_STRIPES * sizeof *F->pa);
    if (!F->map || !F->rmap || !F->mst || !F->rst || !F->pa) return TS_ENOMEM;
  }
  if (++F->stamp == 0) {
    size_t nd = 2 * (size_t)ts_topo_link_count(ts_exec_topo(s)) + 1;
    memset(F->mst, 0, nd * sizeof *F->mst);
    memset(F->rst, 0, nd * sizeof *F->rst);
    F->stamp = 1;
  }
  const ts_coll_xfer *xa = ts_coll_plan_xfers(A->plan), *xb = ts_coll_plan_xfers(plan);
  for (uint32_t i = 0; i < ts_coll_plan_count(plan); i++) {
    uint32_t ka = 0, kb = 0;
    int rc = exec_xfer_paths(s, &xa[i], &ka, d);
    if (rc) return rc;
    memcpy(F->pa, s->paths, ka * sizeof *F->pa);
    ts_time_ps alpha_a = exec_xfer_alpha(s, &xa[i]);
    rc = exec_xfer_paths(s, &xb[i], &kb, d);
    if (rc) return rc;
    if (ka != kb || alpha_a != exec_xfer_alpha(s, &xb[i])) return 0;
    for (uint32_t p = 0; p < ka; p++) {
      const ts_path *pa = &F->pa[p], *pb = &s->paths[p];
      if (pa->len != pb->len || lat_of(s->t, pa) != lat_of(s->t, pb) ||
          exec_path_alpha(s->t, pa) != exec_path_alpha(s->t, pb))
        return 0;
      for (uint32_t h = 0; h < pa->len; h++)
        if (!map_dir(F, net, pa->dir[h], pb->dir[h])) return 0;
    }
  }
  /* ids in the same order: A's directions are sorted (memo_dirs) */
  for (uint32_t i = 1; i < A->n; i++)
    if (F->map[A->dir[i - 1]] >= F->map[A->dir[i]]) return 0;
  return 1;
}

/* A's memo with its directions renamed by F->map, for plan. */
static exec_memo *memo_rename(const exec_fast *F, const exec_memo *A,
                              const ts_coll_plan *plan) {
  exec_memo *M = calloc(1, sizeof *M);
  size_t n = (size_t)A->n + 1;
  if (!M) return NULL;
  *M = *A;
  M->dir = malloc(n * sizeof *M->dir);
  M->bytes = malloc(n * sizeof *M->bytes);
  M->busy = malloc(n * sizeof *M->busy);
  M->peak = malloc(n * sizeof *M->peak);
  M->end = malloc(n * sizeof *M->end);
  if (!M->dir || !M->bytes || !M->busy || !M->peak || !M->end) {
    exec_memo_free(M);
    return NULL;
  }
  for (uint32_t i = 0; i < A->n; i++) M->dir[i] = F->map[A->dir[i]];
  memcpy(M->bytes, A->bytes, A->n * sizeof *M->bytes);
  memcpy(M->busy, A->busy, A->n * sizeof *M->busy);
  memcpy(M->peak, A->peak, A->n * sizeof *M->peak);
  memcpy(M->end, A->end, A->n * sizeof *M->end);
  M->plan = plan;
  M->replays = 0;
  return M;
}

static int memo_keep(exec_fast *F, exec_memo *M) {
  if (F->nmemos == F->capmemos) {
    uint32_t cap = F->capmemos ? 2 * F->capmemos : 64;
    exec_memo **v = realloc(F->memos, cap * sizeof *v);
    if (!v) return TS_ENOMEM;
    F->memos = v;
    F->capmemos = cap;
  }
  F->memos[F->nmemos++] = M;
  return 0;
}

/* An image's memo renamed into *out (1), none found (0), or an error. */
static int memo_share(exec_fast *F, const ts_coll_plan *plan, uint64_t sig,
                      exec_memo **out, ts_diag *d) {
  for (uint32_t i = 0; i < F->nmemos; i++) {
    const exec_memo *A = F->memos[i];
    if (A->sig != sig) continue;
    int rc = is_image(F, A, plan, d);
    if (rc == 0) continue;
    if (rc < 0 || rc > 1) return rc;
    /* not kept for later searches: an image of M is one of A (the
     * renamings compose, order kept), found at A first */
    exec_memo *M = memo_rename(F, A, plan);
    if (!M) return TS_ENOMEM;
    F->shared++;
    *out = M;
    return 1;
  }
  return 0;
}

int exec_fast_memo(exec_fast *F, const ts_exec *x, const ts_step_opts *o,
                   const ts_coll_plan *plan, double hbm_bw, exec_memo **out,
                   ts_diag *d) {
  int rc = F->scratch ? 0 : scratch_new(F, x, o, d);
  uint64_t sig = memo_sig(plan);
  if (!rc) rc = memo_share(F, plan, sig, out, d);
  if (rc == 1) return 0;
  exec_memo *M = rc ? NULL : calloc(1, sizeof *M);
  if (!rc && !M) rc = TS_ENOMEM;
  if (rc) {
    free(M);
    return rc;
  }
  M->plan = plan;
  M->sig = sig;
  ts_exec *s = F->scratch;
  uint64_t t0 = s->transfers, w0 = s->wire_bytes;
  memo_done c = {s->sim, 0, 0};
  ts_time_ps start = ts_sim_now(s->sim);
  s->recording = 1;
  s->nrec = 0;
  rc = ts_exec_coll_start(s, plan, hbm_bw, on_memo_done, &c, 0);
  if (!rc) rc = ts_sim_run(s->sim);
  if (!rc) rc = ts_exec_status(s, d);
  if (!rc && !c.done)
    rc = ts_diag_set(d, TS_EINTERNAL, NULL, 0, 0, "an isolated collective "
                     "did not complete");
  s->recording = 0;
  if (!rc) rc = s->rec_fail ? TS_ENOMEM : memo_dirs(F, M, start);
  if (!rc) rc = memo_keep(F, M);
  if (rc) {
    exec_memo_free(M);
    return rc;
  }
  M->dur = c.end - start;
  M->transfers = s->transfers - t0;
  M->wire = s->wire_bytes - w0;
  F->runs++;
  *out = M;
  return 0;
}

void exec_fast_apply(ts_exec *x, const exec_memo *M, const uint32_t *rep) {
  uint64_t k = M->replays;
  if (!k) return;
  for (uint32_t i = 0; i < M->n; i++) {
    uint32_t d = M->dir[i];
    if (rep && rep[d] != UINT32_MAX) d = rep[d];
    ts_net_dir_account(x->net, d, M->bytes[i] * k, M->busy[i] * k,
                       M->peak[i]);
  }
  x->transfers += M->transfers * k;
  x->wire_bytes += M->wire * k;
}
