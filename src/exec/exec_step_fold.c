/* exec_step_fold.c - symmetric-rank folding: the members of a TP group run
 * the same program, so when their traffic is provably isomorphic only
 * member 0 of every TP group (the representative) is simulated and the
 * others' results are copies.
 *
 * Classes. Class k is the set of ranks at index k of their TP group. Every
 * other group (PP, DP, CP, EP) must lie inside one class and map onto a
 * group of class 0 member by member (rank r <-> member 0 of r's TP group),
 * every rank must run its representative's program and have its straggler
 * factor. When every TP group is replayed (exec_step_fast.c: it owns its
 * NVLinks, so its collectives never meet other traffic and its members
 * arrive together when their programs and inputs are equal), the classes
 * must use disjoint links (below). Otherwise the TP groups run live
 * (F->live), see "Live TP groups" at the end of this comment.
 *
 * Proof on the real routes, before the run. Every plan class 0 will run
 * (each rank's first pipeline send per direction, each collective of each
 * class-0 group at every stream ordinal) is lowered, with the same plan of
 * every other class, and each transfer of class k is routed exactly as
 * the executor would route it (ECMP hashes the GPU ids, so class k may well
 * cross another spine than class 0). Hop h of class k's path must map to
 * hop h of class 0's: the map phi (image direction -> class-0 direction)
 * must stay a function, injective per class, between directions of equal
 * bandwidth (faults applied) and latency, paths of equal software
 * overhead, and no direction may be used by two classes. Then the flows of
 * class k are an isomorphic image of class 0's on disjoint links: the same
 * rates, the same times. The first transfer that breaks this refuses the
 * fold (F->why names it) and the step runs unfolded. A plan first lowered
 * during the run (none should be) is proven then; if that refuses,
 * ts_step_run starts the step again without folding.
 *
 * Mirroring. Rank finishes, breakdowns and bytes are copied from the
 * representative; every image direction receives its class-0 direction's
 * bytes, busy time and peak flows (ts_net_dir_account) before TP replays
 * are added; counters of collectives and transfers are scaled by the
 * class count. Off with ts_step_opts.exact, chunk fidelity and whenever the
 * fast path is off (tracing, free_comm, timed failures).
 *
 * Live TP groups (two or four TP groups per host, crossed by DP ring hops
 * or pipeline sends). The step is symmetric under rotating the TP index
 * (member i -> i + c of every TP group at once). Each TP plan must split
 * into one share per member, member c's p-th transfer being member 0's
 * p-th rotated by c (dependencies rotated alike, paths images hop by hop);
 * member 0's share (dependencies renamed to member 0's same-position
 * transfer, which ends at the same time) is e->fplan. The image map is
 * sigma_c (class-0 direction -> class-c direction), a function, injective
 * per class, between alike directions, but a direction may serve several
 * classes. seal() then requires every class-0 direction r to have T
 * distinct images and two image sets to be equal or disjoint: they are
 * the orbits, T directions each. For a direction d of orbit O, the full
 * run's flows on d are exactly one image of each class-0 flow hop in O,
 * so the network that keeps one representative per orbit and sends each
 * class-0 hop over its orbit's representative (x->dir_rep) gives every
 * class-0 flow its full-run rate (no class-0 path may cross an orbit
 * twice, or the quotient would count one flow twice). Mirroring copies a
 * representative's counters to its orbit.
 * Cost: O(ranks x group kinds + collective ordinals x members) checks up
 * front; per distinct plan, one
 * route per transfer per class (what the full run routes anyway);
 * O(directions) to mirror. Memory: 6 bytes per direction (live: 8 more,
 * plus the class-0 paths kept for the orbit check). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/exec_path.h"

/* Says why the fold is off (the first reason only; it replaces "on: ...").
 * Returns 0. */
static int why(exec_fold *F, const char *fmt, ...) {
  if (F->why[0] && strncmp(F->why, "on:", 3)) return 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(F->why, sizeof F->why, fmt, ap);
  va_end(ap);
  return 0;
}

/* "a -> b" of direction d, for a reason. */
static const char *dir_name(const ts_exec *x, uint32_t d, char *buf, size_t n) {
  const ts_topo *t = ts_exec_topo(x);
  const ts_link *l = ts_topo_link(t, d >> 1);
  uint32_t a = d & 1 ? l->b : l->a, b = d & 1 ? l->a : l->b;
  snprintf(buf, n, "%s -> %s", ts_topo_node_name(t, a), ts_topo_node_name(t, b));
  return buf;
}

uint32_t exec_fold_rep(const ts_mapping *m, uint32_t r) {
  return ts_mapping_group_member(m, TS_GROUP_TP,
                                 ts_mapping_rank(m, r)->group[TS_GROUP_TP], 0);
}

/* Rank at index k of r's TP group. */
static uint32_t image(const ts_mapping *m, uint32_t r, uint32_t k) {
  return ts_mapping_group_member(m, TS_GROUP_TP,
                                 ts_mapping_rank(m, r)->group[TS_GROUP_TP], k);
}

/* Every non-TP group maps member by member onto a group of class 0. */
static int groups_fold(exec_fold *F, const ts_mapping *m) {
  for (uint32_t g = 0; g < TS_GROUP_COUNT; g++) {
    if (g == TS_GROUP_TP) continue;
    uint32_t n = ts_mapping_group_size(m, (ts_group)g);
    for (uint32_t id = 0; id < ts_mapping_group_count(m, (ts_group)g); id++) {
      uint32_t r0 = ts_mapping_group_member(m, (ts_group)g, id, 0);
      uint32_t k = ts_mapping_rank(m, r0)->index[TS_GROUP_TP];
      uint32_t g0 = ts_mapping_rank(m, exec_fold_rep(m, r0))->group[g];
      for (uint32_t i = 0; i < n; i++) {
        uint32_t r = ts_mapping_group_member(m, (ts_group)g, id, i);
        if (ts_mapping_rank(m, r)->index[TS_GROUP_TP] != k ||
            exec_fold_rep(m, r) != ts_mapping_group_member(m, (ts_group)g, g0, i))
          return why(F, "refused: %s group %u is no image of a group of TP "
                     "index 0", ts_group_name((ts_group)g), id);
      }
    }
  }
  return 1;
}

/* Same program and same straggler factor as the representative. */
static int ranks_fold(exec_fold *F, const ts_exec *x, const ts_mapping *m,
                      const ts_step_progs *sp) {
  for (uint32_t r = 0; r < ts_mapping_ranks(m); r++) {
    uint32_t q = exec_fold_rep(m, r);
    if (ts_step_progs_rank(sp, m, r) != ts_step_progs_rank(sp, m, q) ||
        ts_exec_straggler(x, ts_mapping_rank(m, r)->gpu) !=
            ts_exec_straggler(x, ts_mapping_rank(m, q)->gpu))
      return why(F, "refused: rank %u runs another program or straggler "
                 "factor than rank %u", r, q);
  }
  return 1;
}

static int check_sends(exec_fold *F, exec_colls *k, ts_exec *x);
static void map_free(exec_fold_map *M);
static int check_groups(exec_fold *F, exec_colls *k, ts_exec *x,
                        const exec_fast *fast);
static int seal(exec_fold *F, ts_exec *x);

int exec_fold_init(exec_fold *F, exec_colls *k, ts_exec *x,
                   const exec_fast *fast, const ts_step_opts *o) {
  memset(F, 0, sizeof *F);
  const ts_mapping *m = k->m;
  const ts_step_progs *sp = k->sp;
  uint32_t T = ts_mapping_group_size(m, TS_GROUP_TP);
  if (o->exact) return why(F, "off: --exact");
  if (!fast->on) return why(F, "off: shortcuts off (trace, free comm or timed failures)");
  if (o->net.fidelity != TS_NET_FLOW || o->net.full_solve)
    return why(F, "off: chunk fidelity or full solve");
  if (T < 2 || T > 65534) return why(F, "off: TP %u", T);
  /* A TP group that is not replayed (other traffic may cross its
   * NVLinks) runs live: member 0's share, on the quotient network. */
  for (uint32_t id = 0; id < ts_mapping_group_count(m, TS_GROUP_TP); id++)
    if (!fast->excl[TS_GROUP_TP][id]) F->live = 1;
  if (!ranks_fold(F, x, m, sp) || !groups_fold(F, m)) return 0;
  F->T = T;
  F->nd = 2 * ts_topo_link_count(ts_exec_topo(x));
  F->phi = malloc(((size_t)F->nd + 1) * sizeof *F->phi);
  F->cls = calloc((size_t)F->nd + 1, sizeof *F->cls);
  F->pp_checked = calloc((size_t)ts_mapping_ranks(m) * 2 + 1, 1);
  F->p0 = malloc(EXEC_PATH_STRIPES * sizeof *F->p0);
  if (!F->phi || !F->cls || !F->pp_checked || !F->p0) return TS_ENOMEM;
  F->nsim = ts_mapping_ranks(m) / T;
  F->on = 1;
  snprintf(F->why, sizeof F->why, "on: %u of %u ranks simulated%s", F->nsim,
           ts_mapping_ranks(m), F->live ? ", TP groups live" : "");
  /* Every plan is known now: prove them all before the run, so the usual
   * refusal (ECMP sending two classes' images apart) costs no rerun. */
  int rc = check_sends(F, k, x);
  if (!rc) rc = check_groups(F, k, x, fast);
  if (!rc && F->live) rc = seal(F, x);
  if (rc && F->refused) {
    exec_fold_free(F);
    return 0;
  }
  return rc;
}

/* Frees F; its reason stays. */
void exec_fold_free(exec_fold *F) {
  char keep[sizeof F->why];
  memcpy(keep, F->why, sizeof keep);
  free(F->phi);
  free(F->cls);
  map_free(&F->inv);
  map_free(&F->img);
  free(F->rep);
  free(F->qp);
  free(F->pp_checked);
  free(F->p0);
  memset(F, 0, sizeof *F);
  memcpy(F->why, keep, sizeof keep);
}

/* ---- the map phi --------------------------------------------------- */

static uint64_t inv_hash(uint64_t key) {
  key *= 0x9E3779B97F4A7C15ULL;
  return key ^ (key >> 29);
}

static int map_grow(exec_fold_map *M) {
  uint32_t cap = M->cap ? M->cap * 2 : 1024;
  uint64_t *key = calloc(cap, sizeof *key);
  uint32_t *val = malloc((size_t)cap * sizeof *val);
  if (!key || !val) {
    free(key);
    free(val);
    return TS_ENOMEM;
  }
  for (uint32_t i = 0; i < M->cap; i++) {
    if (!M->key[i]) continue;
    uint32_t h = (uint32_t)(inv_hash(M->key[i]) & (cap - 1));
    while (key[h]) h = (h + 1) & (cap - 1);
    key[h] = M->key[i];
    val[h] = M->val[i];
  }
  free(M->key);
  free(M->val);
  M->key = key;
  M->val = val;
  M->cap = cap;
  return 0;
}

/* Maps (r, class c) to d: 1 when that is new or agrees with what is
 * known, 0 when (r, c) already maps elsewhere, <0 on no memory. */
static int map_put(exec_fold_map *M, uint32_t r, uint32_t c, uint32_t d) {
  if (2 * (M->n + 1) > M->cap && map_grow(M)) return TS_ENOMEM;
  uint64_t key = ((uint64_t)r << 16 | c) + 1;
  uint32_t h = (uint32_t)(inv_hash(key) & (M->cap - 1));
  for (; M->key[h]; h = (h + 1) & (M->cap - 1))
    if (M->key[h] == key) return M->val[h] == d;
  M->key[h] = key;
  M->val[h] = d;
  M->n++;
  return 1;
}

/* What (r, c) maps to, or UINT32_MAX. */
static uint32_t map_get(const exec_fold_map *M, uint32_t r, uint32_t c) {
  if (!M->cap) return UINT32_MAX;
  uint64_t key = ((uint64_t)r << 16 | c) + 1;
  for (uint32_t h = (uint32_t)(inv_hash(key) & (M->cap - 1)); M->key[h];
       h = (h + 1) & (M->cap - 1))
    if (M->key[h] == key) return M->val[h];
  return UINT32_MAX;
}

static void map_free(exec_fold_map *M) {
  free(M->key);
  free(M->val);
  memset(M, 0, sizeof *M);
}

/* Directions the network treats alike: bandwidth now (faults applied) and
 * hop latency. */
static int same_dir(const ts_exec *x, uint32_t a, uint32_t b) {
  const ts_topo *t = ts_exec_topo(x);
  return ts_net_dir_bandwidth(ts_exec_net(x), a) ==
             ts_net_dir_bandwidth(ts_exec_net(x), b) &&
         ts_topo_link(t, a >> 1)->latency == ts_topo_link(t, b >> 1)->latency;
}

/* Live TP (directions may serve several classes): records sigma_c(r) = d,
 * which must stay a function and injective per class; the orbits are
 * checked once everything is recorded (seal). */
static int dmap_live(exec_fold *F, const ts_exec *x, uint32_t d, uint32_t r,
                     uint32_t c) {
  char a[600], b[600];
  if (!c) {
    F->cls[r] = 1;
    return 1;
  }
  if (!same_dir(x, d, r))
    return why(F, "refused: %s (TP index %u) and %s differ in bandwidth or "
               "latency", dir_name(x, d, a, sizeof a), c, dir_name(x, r, b, sizeof b));
  int rc = map_put(&F->inv, r, c, d);
  if (rc == 0)
    return why(F, "refused: TP index %u's images of %s are two directions "
               "(ECMP)", c, dir_name(x, r, a, sizeof a));
  if (rc > 0) rc = map_put(&F->img, d, c, r);
  if (rc == 0)
    return why(F, "refused: TP index %u maps two directions onto %s (ECMP)",
               c, dir_name(x, d, a, sizeof a));
  return rc;
}

/* Records that class c uses direction d as the image of class-0 direction
 * r: 1 when consistent with everything recorded, 0 when not, <0 error. */
static int dmap(exec_fold *F, const ts_exec *x, uint32_t d, uint32_t r,
                uint32_t c) {
  char a[600], b[600];
  if (F->live) return dmap_live(F, x, d, r, c);
  if (F->cls[d] && F->cls[d] != c + 1)
    return why(F, "refused: TP indices %u and %u both use %s", F->cls[d] - 1,
               c, dir_name(x, d, a, sizeof a));
  if (F->cls[d] && F->phi[d] != r)
    return why(F, "refused: TP index %u's %s stands for both %s and %s of "
               "index 0 (ECMP)", c, dir_name(x, d, a, sizeof a),
               dir_name(x, F->phi[d], b, sizeof b), dir_name(x, r, b + 300, 300));
  if (F->cls[d]) return 1;
  if (c) {
    if (!same_dir(x, d, r))
      return why(F, "refused: %s (TP index %u) and %s differ in bandwidth or "
                 "latency", dir_name(x, d, a, sizeof a), c, dir_name(x, r, b, sizeof b));
    int rc = map_put(&F->inv, r, c, d);
    if (rc == 0)
      return why(F, "refused: TP index %u maps two directions onto %s (ECMP)",
                 c, dir_name(x, r, a, sizeof a));
    if (rc < 0) return rc;
  }
  F->cls[d] = (uint16_t)(c + 1);
  F->phi[d] = r;
  return 1;
}

/* Everything the executor reads of a transfer, endpoints aside. */
static int same_xfer(const ts_coll_xfer *a, const ts_coll_xfer *b) {
  return a->src_rank == b->src_rank && a->dst_rank == b->dst_rank &&
         a->bytes == b->bytes && a->wire_bytes == b->wire_bytes &&
         a->reduce_bytes == b->reduce_bytes && a->alpha == b->alpha &&
         a->steps == b->steps && a->channel == b->channel &&
         a->flags == b->flags && a->dep_first == b->dep_first &&
         a->ndeps == b->ndeps;
}

/* Live: keeps class-0 path p for the check that no quotient path crosses
 * one orbit twice. 0 or TS_ENOMEM. */
static int keep_path(exec_fold *F, const ts_path *p) {
  if (F->nqp + p->len + 1 > F->capqp) {
    uint32_t cap = F->capqp ? F->capqp : 1024;
    while (cap < F->nqp + p->len + 1) cap *= 2;
    uint32_t *v = realloc(F->qp, (size_t)cap * sizeof *v);
    if (!v) return TS_ENOMEM;
    F->qp = v;
    F->capqp = cap;
  }
  F->qp[F->nqp++] = p->len;
  memcpy(F->qp + F->nqp, p->dir, p->len * sizeof *F->qp);
  F->nqp += p->len;
  return 0;
}

/* Transfer b of class c against its class-0 twin a (fields already
 * compared), on the real routes: 1 isomorphic, 0 not, <0 no memory. */
static int check_paths(exec_fold *F, ts_exec *x, const ts_coll_xfer *a,
                       const ts_coll_xfer *b, uint32_t c) {
  if (a->flags & TS_COLL_XFER_JOIN) return 1;
  ts_diag d;
  uint32_t ka = 0, kb = 0;
  /* A route that fails fails the full run too: let it say so. */
  if (exec_xfer_paths(x, a, &ka, &d)) return why(F, "refused: no route");
  ts_time_ps alpha_a = exec_xfer_alpha(x, a);
  memcpy(F->p0, x->paths, ka * sizeof *F->p0);
  if (exec_xfer_paths(x, b, &kb, &d) || ka != kb ||
      exec_xfer_alpha(x, b) != alpha_a)
    return why(F, "refused: TP index %u's path set differs from index 0's", c);
  for (uint32_t p = 0; p < ka; p++) {
    const ts_path *pa = &F->p0[p], *pb = &x->paths[p];
    if (pa->len != pb->len ||
        exec_path_alpha(ts_exec_topo(x), pa) != exec_path_alpha(ts_exec_topo(x), pb))
      return why(F, "refused: TP index %u's path differs in length or "
                 "overhead from index 0's", c);
    for (uint32_t h = 0; h < pa->len; h++) {
      int rc = dmap(F, x, pa->dir[h], pa->dir[h], 0);
      if (rc > 0) rc = dmap(F, x, pb->dir[h], pa->dir[h], c);
      if (rc <= 0) return rc;
    }
    if (F->live && c == 1 && keep_path(F, pa)) return TS_ENOMEM;
  }
  return 1;
}

static int check_xfer(exec_fold *F, ts_exec *x, const ts_coll_xfer *a,
                      const ts_coll_xfer *b, uint32_t c) {
  if (!same_xfer(a, b)) return why(F, "refused: TP index %u lowers a plan differently", c);
  return check_paths(F, x, a, b, c);
}

static int check_plan(exec_fold *F, ts_exec *x, const ts_coll_plan *a,
                      const ts_coll_plan *b, uint32_t c) {
  uint32_t n = ts_coll_plan_count(a);
  if (ts_coll_plan_count(b) != n)
    return why(F, "refused: TP index %u lowers a plan differently", c);
  const ts_coll_xfer *xa = ts_coll_plan_xfers(a), *xb = ts_coll_plan_xfers(b);
  uint32_t ndeps = 0;
  for (uint32_t i = 0; i < n; i++) {
    int rc = check_xfer(F, x, &xa[i], &xb[i], c);
    if (rc <= 0) return rc;
    if (xa[i].dep_first + xa[i].ndeps > ndeps) ndeps = xa[i].dep_first + xa[i].ndeps;
  }
  if (!ndeps || !memcmp(ts_coll_plan_deps(a), ts_coll_plan_deps(b),
                        (size_t)ndeps * sizeof(uint32_t)))
    return 1;
  return why(F, "refused: TP index %u lowers a plan differently", c);
}

/* 0 when the fold stands, TS_ENOMEM, or TS_EINTERNAL with F->refused set
 * (the caller reruns the step unfolded). */
static int verdict(exec_fold *F, int rc) {
  if (rc > 0) return 0;
  if (rc < 0) return rc;
  F->refused = 1;
  return TS_EINTERNAL;
}

int exec_fold_check_group(exec_fold *F, exec_colls *k, ts_exec *x, ts_group g,
                          uint32_t id, const ts_step_ins *const *ins,
                          const ts_coll_plan *plan, ts_diag *d) {
  const ts_mapping *m = k->m;
  uint32_t r0 = ts_mapping_group_member(m, g, id, 0);
  int rc = F->sealed ? why(F, "refused: a plan first lowered during the run") : 1;
  for (uint32_t c = 1; c < F->T && rc > 0; c++) {
    uint32_t idc = ts_mapping_rank(m, image(m, r0, c))->group[g];
    exec_plan_ent *e = NULL;
    int lrc = exec_colls_plan(k, g, idc, ins, &e, d);
    rc = lrc ? why(F, "refused: a plan of TP index %u cannot be lowered", c)
             : check_plan(F, x, plan, e->plan, c);
  }
  return verdict(F, rc);
}

int exec_fold_check_pp(exec_fold *F, exec_colls *k, ts_exec *x, uint32_t r,
                       uint32_t dir, uint32_t peer, uint64_t bytes,
                       const ts_coll_plan *plan, ts_diag *d) {
  uint8_t *done = &F->pp_checked[(size_t)r * 2 + dir];
  if (*done) return 0;
  *done = 1;
  int rc = F->sealed ? why(F, "refused: a send first lowered during the run") : 1;
  for (uint32_t c = 1; c < F->T && rc > 0; c++) {
    ts_coll_plan *pc = NULL;
    int lrc = exec_colls_pp_plan(k, image(k->m, r, c), dir, image(k->m, peer, c),
                                 bytes, &pc, d);
    rc = lrc ? why(F, "refused: a send of TP index %u cannot be lowered", c)
             : check_plan(F, x, plan, pc, c);
  }
  return verdict(F, rc);
}

/* Transfer b is transfer a with every member index moved up by c. */
static int rotated(const ts_coll_xfer *a, const ts_coll_xfer *b, uint32_t c,
                   uint32_t T) {
  return (uint32_t)b->dst_rank == ((uint32_t)a->dst_rank + c) % T &&
         a->bytes == b->bytes && a->wire_bytes == b->wire_bytes &&
         a->reduce_bytes == b->reduce_bytes && a->alpha == b->alpha &&
         a->steps == b->steps && a->channel == b->channel &&
         a->flags == b->flags && a->ndeps == b->ndeps;
}

/* Checks the plan against its rotations, transfer by transfer: member c's
 * p-th transfer (by[c * m + p]) must be member 0's p-th rotated by c, with
 * dependencies rotated alike, on image paths. 1, 0 (refused) or <0. */
static int tp_rotations(exec_fold *F, ts_exec *x, const ts_coll_plan *pl,
                        const uint32_t *by, const uint32_t *pos, uint32_t m) {
  const ts_coll_xfer *xf = ts_coll_plan_xfers(pl);
  const uint32_t *dp = ts_coll_plan_deps(pl);
  for (uint32_t p = 0; p < m; p++) {
    const ts_coll_xfer *a = &xf[by[p]];
    for (uint32_t c = 1; c < F->T; c++) {
      const ts_coll_xfer *b = &xf[by[(size_t)c * m + p]];
      int ok = rotated(a, b, c, F->T);
      for (uint32_t j = 0; ok && j < a->ndeps; j++) {
        uint32_t ua = dp[a->dep_first + j], ub = dp[b->dep_first + j];
        ok = pos[ua] == pos[ub] &&
             (uint32_t)xf[ub].src_rank == ((uint32_t)xf[ua].src_rank + c) % F->T;
      }
      if (!ok) return why(F, "refused: a TP plan is not the same under "
                          "rotating its members (member %u)", c);
      int rc = check_paths(F, x, a, b, c);
      if (rc <= 0) return rc;
    }
  }
  return 1;
}

int exec_fold_check_tp(exec_fold *F, exec_colls *k, ts_exec *x, uint32_t id,
                       exec_plan_ent *e, ts_diag *d) {
  (void)k;
  (void)id;
  (void)d;
  if (e->fplan) return 0;
  const ts_coll_plan *pl = e->plan;
  uint32_t n = ts_coll_plan_count(pl), T = F->T, m = n / T;
  const ts_coll_xfer *xf = ts_coll_plan_xfers(pl);
  int rc = F->sealed ? why(F, "refused: a TP plan first lowered during the run")
           : n % T ? why(F, "refused: a TP plan of %u transfers over %u "
                         "members", n, T) : 1;
  uint32_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
  uint32_t *by = malloc(((size_t)n + 1) * sizeof *by);
  uint32_t *cnt = calloc(T, sizeof *cnt);
  if (!pos || !by || !cnt) rc = TS_ENOMEM;
  for (uint32_t i = 0; i < n && rc > 0; i++) {
    int32_t s0 = xf[i].src_rank, d0 = xf[i].dst_rank;
    if (s0 < 0 || d0 < 0 || (uint32_t)s0 >= T || (uint32_t)d0 >= T ||
        cnt[s0] == m) {
      rc = why(F, "refused: a TP plan is not one share per member (switch "
               "endpoints or unequal shares)");
      break;
    }
    pos[i] = cnt[s0];
    by[(size_t)s0 * m + cnt[s0]++] = i;
  }
  if (rc > 0) rc = tp_rotations(F, x, pl, by, pos, m);
  if (rc > 0) {
    int src = ts_coll_plan_subset(pl, by, m, pos, &e->fplan);
    if (src == TS_ENOMEM) rc = TS_ENOMEM;
    else if (src) rc = why(F, "refused: member 0's share of a TP plan waits on "
                           "later transfers");
  }
  free(pos);
  free(by);
  free(cnt);
  return verdict(F, rc);
}

/* Every class-0 rank's first pipeline send per direction (the plan the run
 * will cache for it). */
static int check_sends(exec_fold *F, exec_colls *k, ts_exec *x) {
  const ts_mapping *m = k->m;
  for (uint32_t r = 0; r < ts_mapping_ranks(m); r++) {
    if (exec_fold_rep(m, r) != r) continue;
    const ts_step_prog *p = ts_step_progs_rank(k->sp, m, r);
    const ts_rank_label *lb = ts_mapping_rank(m, r);
    for (uint32_t i = 0; i < p->n; i++) {
      const ts_step_ins *in = &p->ins[i];
      if (in->op != TS_SI_SEND || F->pp_checked[(size_t)r * 2 + in->kind]) continue;
      uint32_t peer = ts_mapping_group_member(m, TS_GROUP_PP,
                                              lb->group[TS_GROUP_PP], in->peer);
      ts_coll_plan *plan = NULL;
      ts_diag d;
      /* A send that cannot be lowered fails the run itself: leave it. */
      if (exec_colls_pp_plan(k, r, in->kind, peer, in->val, &plan, &d)) return 0;
      int rc = exec_fold_check_pp(F, k, x, r, in->kind, peer, in->val, plan, &d);
      if (rc) return rc;
    }
  }
  return 0;
}

/* Every collective of every class-0 group (PP aside), lowered as the run
 * will lower it: member i's instruction at each ordinal of stream g, or
 * the batch starting there merged (exec_step_batch.c). */
static int check_groups(exec_fold *F, exec_colls *k, ts_exec *x,
                        const exec_fast *fast) {
  const ts_mapping *m = k->m;
  int rc = 0;
  for (uint32_t g = 0; g < TS_GROUP_COUNT && !rc; g++) {
    uint32_t n = ts_mapping_group_size(m, (ts_group)g);
    if ((g == TS_GROUP_TP && !F->live) || g == TS_GROUP_PP || n < 2) continue;
    const ts_step_ins **ins = malloc((size_t)n * sizeof *ins);
    ts_step_ins *mrg = malloc((size_t)n * sizeof *mrg);
    if (!ins || !mrg) {
      free(ins);
      free(mrg);
      return TS_ENOMEM;
    }
    for (uint32_t id = 0; id < ts_mapping_group_count(m, (ts_group)g) && !rc; id++) {
      uint32_t r0 = ts_mapping_group_member(m, (ts_group)g, id, 0);
      if (exec_fold_rep(m, r0) != r0) continue;
      const ts_step_prog *p0 = ts_step_progs_rank(k->sp, m, r0);
      for (uint32_t j = 0; j < p0->nords[g] && !rc; j++) {
        uint32_t nb = exec_batch_len(k, p0, g, j);
        if (!nb) continue; /* inside a batch: never run alone */
        /* a folded TP group runs on member 0's instructions */
        for (uint32_t i = 0; i < n; i++) {
          const ts_step_prog *p = ts_step_progs_rank(
              k->sp, m, ts_mapping_group_member(m, (ts_group)g, id,
                                                g == TS_GROUP_TP ? 0 : i));
          ins[i] = j + nb <= p->nords[g] ? &p->ins[p->ords[g][j]] : NULL;
          if (ins[i] && nb > 1) {
            exec_batch_merge(p, g, j, nb, &mrg[i]);
            ins[i] = &mrg[i];
          }
        }
        bool all = true;
        for (uint32_t i = 0; i < n; i++) all &= ins[i] != NULL;
        exec_plan_ent *e = NULL;
        ts_diag d;
        /* Unequal streams or a plan that cannot be lowered fail the run
         * itself; its lazy check (exec_step_run.c plan_of) covers the rest. */
        if (!all || exec_colls_plan(k, (ts_group)g, id, ins, &e, &d)) continue;
        if (g == TS_GROUP_TP) {
          if (!fast->excl[g][id]) rc = exec_fold_check_tp(F, k, x, id, e, &d);
          continue;
        }
        if (e->checked) continue;
        e->checked = 1;
        rc = exec_fold_check_group(F, k, x, (ts_group)g, id, ins, e->plan, &d);
      }
    }
    free(ins);
    free(mrg);
  }
  return rc;
}

/* Live: no class-0 path may cross one orbit twice (the network would
 * count one flow twice where the full run has two flows). */
static int quotient_paths(exec_fold *F, const ts_exec *x) {
  char a[600];
  for (uint32_t i = 0; i < F->nqp; i += F->qp[i] + 1)
    for (uint32_t h = 1; h <= F->qp[i]; h++)
      for (uint32_t j = h + 1; j <= F->qp[i]; j++)
        if (F->rep[F->qp[i + h]] == F->rep[F->qp[i + j]])
          return why(F, "refused: a path crosses two directions of one orbit "
                     "(%s)", dir_name(x, F->qp[i + h], a, sizeof a));
  return 1;
}

/* Live: every direction class 0 uses, r, has T distinct images (itself at
 * class 0), and two such image sets are equal or disjoint: they are the
 * orbits, each direction's representative is the lowest class-0 direction
 * of its orbit, and the network sees representatives only (x->dir_rep).
 * 0, TS_ENOMEM, or TS_EINTERNAL with F->refused set. */
static int seal(exec_fold *F, ts_exec *x) {
  char a[600];
  F->rep = malloc(((size_t)F->nd + 1) * sizeof *F->rep);
  uint32_t *stamp = calloc((size_t)F->nd + 1, sizeof *stamp);
  int rc = F->rep && stamp ? 1 : TS_ENOMEM;
  if (F->rep) memset(F->rep, 0xff, ((size_t)F->nd + 1) * sizeof *F->rep);
  for (uint32_t r = 0; r < F->nd && rc > 0; r++) {
    if (!F->cls[r]) continue;
    uint32_t o = F->rep[r];
    for (uint32_t c = 0; c < F->T && rc > 0; c++) {
      uint32_t d = c ? map_get(&F->inv, r, c) : r;
      if (d == UINT32_MAX)
        rc = why(F, "refused: TP index %u has no image of %s", c,
                 dir_name(x, r, a, sizeof a));
      else if (o == UINT32_MAX ? F->rep[d] != UINT32_MAX
                               : F->rep[d] != o || stamp[d] == r + 1)
        rc = why(F, "refused: the images of %s are no orbit of the TP "
                 "rotation", dir_name(x, r, a, sizeof a));
      else if (o == UINT32_MAX) F->rep[d] = r;
      else stamp[d] = r + 1;
    }
  }
  free(stamp);
  if (rc > 0) rc = quotient_paths(F, x);
  F->sealed = 1;
  if (rc > 0) x->dir_rep = F->rep;
  return verdict(F, rc);
}

void exec_fold_mirror_links(const exec_fold *F, ts_exec *x) {
  ts_net *net = ts_exec_net(x);
  for (uint32_t d = 0; d < F->nd; d++) {
    uint32_t r = F->live ? F->rep[d] : F->phi[d];
    if (F->live ? r == UINT32_MAX || r == d : F->cls[d] < 2) continue;
    ts_net_dir_stats st;
    if (ts_net_dir_stats_get(net, r, &st)) continue;
    ts_net_dir_account(net, d, st.bytes, st.busy_ps, st.peak_flows);
  }
  x->transfers *= F->T;
  x->wire_bytes *= F->T;
}
