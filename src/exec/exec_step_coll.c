/* exec_step_coll.c - communicators and plans for the step model.
 *
 * One communicator per process group (members in group-index order, host
 * labels from the mapping), made on first use. Plans are cached per group by
 * (op, size, orientation): a TP group runs the same four all-reduces every
 * layer of every micro-batch, so it lowers each once. ts_coll_exec only
 * borrows plans, so one cached plan serves every instance of its group.
 *
 * Algorithm: ts_coll's chooser picks it for every group (ring, tree,
 * hierarchical, and NVLS where the topology declares it), with bandwidths
 * read from the built network. A ring (or the rings of the hierarchical
 * algorithm) over at least compact_min ranks (default 8) is then
 * represented compactly (TS_COLL_COMPACT: one long flow per neighbour pair,
 * O(p) transfers, the same time on dedicated links), since a step ring over
 * DP = 128 would cost O(p^2) transfers per bucket. Compact is a
 * representation, not an algorithm decision. With compact_host (the
 * bounded shortcut TS_STEP_COMPACT_SMALL) smaller rings compact too, but
 * only on one host: there every edge crosses the NVSwitch alike, and a
 * compact ring of equal edges takes the step ring's time in isolation
 * (2(p-1)(alpha + hops + S/(pB)) for an all-reduce). A ring of unequal
 * edges (CP 4 as two GPUs on each of two hosts: NVLink and NIC edges)
 * does not: its step ring keeps NCCL's 8 steps in flight, so the slow
 * edge's per-step latencies overlap its transfers, while the compact
 * flow pays them one after the other before its bytes (4 ranks of a
 * DGX A100 SuperPOD, 2 per host: all-gather of 16 MiB 302 us as a step
 * ring, 315 us compact, +4.3%; all-reduce +6.4%; `topsim bench --op
 * all_gather --algo ring --gpus dgx0/gpu0,dgx0/gpu4,dgx1/gpu0,dgx1/gpu4
 * [--compact]`), and on the worst GPT-3 mapping that put the step 1.7%
 * over --exact. All-to-all is always
 * all_to_allv (direct).
 * Communicators come from the topology (ts_coll_comm_from_topo) and
 * cost-model bandwidths from the built network (ts_exec_coll_params), so the
 * chooser sees failed and degraded links as the solver does.
 *
 * All-to-all matrix of an EP group (dispatch orientation): member i sends
 * bytes_i * share_j to j on its host; its cross-host entries are scaled so
 * they sum to the descriptor's sent_cross_node (node-limited routing
 * deduplicates cross-node copies). Combine is the transpose.
 * Cost: lowering O(transfers) once per (group, op, size); a matrix O(p^2). */
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

int exec_colls_init(exec_colls *k, const ts_exec *x, const ts_mapping *m,
                    const ts_step_progs *sp, uint32_t compact_min,
                    int64_t alpha_ps) {
  memset(k, 0, sizeof *k);
  k->t = ts_exec_topo(x);
  k->m = m;
  k->sp = sp;
  k->compact_min = compact_min ? compact_min : 8;
  ts_coll_params_default(&k->params);
  if (ts_mapping_ranks(m)) ts_exec_coll_params(x, ts_mapping_rank(m, 0)->gpu, &k->params);
  /* --alpha is the whole latency model: NCCL's launch and base latency
   * are dropped with its per-step latencies. */
  if (alpha_ps >= 0) k->params.cost_model = TS_COLL_COST_ALPHA_BETA;
  for (int q = 0; alpha_ps >= 0 && q < TS_COLL_PROTO_COUNT; q++)
    k->params.alpha_intra[q] = k->params.alpha_inter[q] = (ts_time_ps)alpha_ps;
  for (int g = 0; g < TS_GROUP_COUNT; g++) {
    k->groups[g] = calloc(ts_mapping_group_count(m, (ts_group)g) + 1,
                          sizeof *k->groups[g]);
    if (!k->groups[g]) return TS_ENOMEM;
  }
  k->pp_plan = calloc((size_t)ts_mapping_ranks(m) * 2 + 1, sizeof *k->pp_plan);
  if (!k->pp_plan) return TS_ENOMEM;
  return 0;
}

static void group_free(exec_group *G) {
  ts_coll_comm_free(G->comm);
  for (exec_plan_ent *e = G->plans, *n; e; e = n) {
    n = e->next;
    ts_coll_plan_free(e->plan);
    ts_coll_plan_free(e->fplan);
    free(e->q);
    exec_memo_free(e->memo);
    free(e);
  }
}

void exec_colls_free(exec_colls *k) {
  for (int g = 0; g < TS_GROUP_COUNT; g++) {
    if (!k->groups[g]) continue;
    uint32_t n = ts_mapping_group_count(k->m, (ts_group)g);
    for (uint32_t i = 0; i < n; i++) group_free(&k->groups[g][i]);
    free(k->groups[g]);
  }
  if (k->pp_plan)
    for (uint32_t i = 0; i < ts_mapping_ranks(k->m) * 2; i++)
      ts_coll_plan_free(k->pp_plan[i]);
  free(k->pp_plan);
  exec_batch_free(k);
  memset(k, 0, sizeof *k);
}

void exec_colls_apply_kind(exec_colls *k, ts_exec *x, uint32_t g) {
  for (uint32_t i = 0; k->groups[g] && i < ts_mapping_group_count(k->m, (ts_group)g); i++)
    for (const exec_plan_ent *e = k->groups[g][i].plans; e; e = e->next)
      if (e->memo)
        exec_fast_apply(x, e->memo, g == TS_GROUP_TP ? NULL : x->dir_rep);
}

void exec_colls_apply_memos(exec_colls *k, ts_exec *x) {
  for (uint32_t g = 0; g < TS_GROUP_COUNT; g++) exec_colls_apply_kind(k, x, g);
}

/* Communicator of `n` ranks given by rank ids: host labels and NVLS
 * capability come from the topology (ts_coll_comm_from_topo). */
static int comm_of(const exec_colls *k, const uint32_t *ranks, uint32_t n,
                   ts_coll_comm **out) {
  uint32_t *gpus = malloc((size_t)(n ? n : 1) * sizeof *gpus);
  if (!gpus) return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++) gpus[i] = ts_mapping_rank(k->m, ranks[i])->gpu;
  int rc = ts_coll_comm_from_topo(k->t, gpus, n, out);
  free(gpus);
  return rc;
}

static int group_comm(exec_colls *k, ts_group g, uint32_t id,
                      exec_group *G) {
  if (G->comm) return 0;
  uint32_t n = ts_mapping_group_size(k->m, g);
  uint32_t *ranks = malloc((size_t)n * sizeof *ranks);
  if (!ranks) return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++)
    ranks[i] = ts_mapping_group_member(k->m, g, id, i);
  int rc = comm_of(k, ranks, n, &G->comm);
  free(ranks);
  return rc;
}

/* Dispatch-orientation matrix of an EP group; transposed for combine. */
static uint64_t *a2a_matrix(const exec_colls *k, ts_group g, uint32_t id,
                            const ts_step_ins *const *ins, uint32_t p,
                            bool combine) {
  uint64_t *mx = calloc((size_t)p * p, sizeof *mx);
  int32_t *host = malloc((size_t)p * sizeof *host);
  if (!mx || !host) {
    free(mx);
    free(host);
    return NULL;
  }
  for (uint32_t i = 0; i < p; i++)
    host[i] = ts_mapping_rank(k->m, ts_mapping_group_member(k->m, g, id, i))->host;
  for (uint32_t i = 0; i < p; i++) {
    double cross = 0, base = (double)ins[i]->val;
    for (uint32_t j = 0; j < p; j++)
      if (host[j] != host[i]) cross += base * k->sp->ep_share[j];
    double scale = cross > 0 ? (double)ins[i]->cross / cross : 1;
    for (uint32_t j = 0; j < p; j++) {
      if (j == i) continue;
      double b = base * k->sp->ep_share[j] * (host[j] != host[i] ? scale : 1);
      mx[combine ? (size_t)j * p + i : (size_t)i * p + j] = (uint64_t)(b + 0.5);
    }
  }
  free(host);
  return mx;
}

static int lower(exec_colls *k, exec_group *G, ts_group g, uint32_t id,
                 const ts_step_ins *const *ins, ts_coll_plan **out, ts_diag *d) {
  uint32_t p = ts_mapping_group_size(k->m, g);
  ts_coll_params prm = k->params;
  ts_coll_op op = (ts_coll_op)ins[0]->kind;
  unsigned flags = 0;
  uint64_t *mx = NULL;
  if (op == TS_COLL_ALL_TO_ALLV) {
    mx = a2a_matrix(k, g, id, ins, p, ins[0]->flags & TS_SI_F_COMBINE);
    if (!mx) return TS_ENOMEM;
    prm.matrix = mx;
  } else {
    /* The chooser picks the algorithm for every group size; compact is
     * only how a ring is represented once chosen (hierarchical included:
     * its three phases are rings). */
    double sec;
    ts_coll_algo algo;
    ts_coll_proto proto;
    /* a DP ring over several nodes leaves each through all its NICs, as
     * ts_coll_run's rings do (one channel would funnel a node's share of
     * every gradient bucket through a single NIC); the chooser costs the
     * ring with those channels, the ones it will run with */
    ts_coll_params rings = prm;
    exec_multi_host_rings(G->comm, &rings);
    /* a batch (exec_step_batch.c) runs as its members would: chosen for
     * their mean size */
    uint64_t unit = ins[0]->count > 1 ? ins[0]->val / ins[0]->count : ins[0]->val;
    int rc = ts_coll_choose(G->comm, op, unit, &rings, &algo, &proto, &sec);
    if (rc)
      return ts_diag_set(d, rc, NULL, 0, 0, "no algorithm can run %s on a "
                         "%s group of %u ranks", ts_coll_op_name(op),
                         ts_group_name(g), p);
    if (algo == TS_COLL_RING) prm = rings;
    prm.algo = algo;
    prm.proto = proto;
    if ((prm.algo == TS_COLL_RING || prm.algo == TS_COLL_HIER) &&
        (p >= k->compact_min ||
         (k->compact_host && ts_coll_comm_nhosts(G->comm) == 1)))
      flags = TS_COLL_COMPACT;
  }
  int rc = ts_coll_lower(G->comm, op, ins[0]->val, &prm, flags, out, d);
  free(mx);
  return rc;
}

int exec_colls_plan(exec_colls *k, ts_group g, uint32_t id,
                    const ts_step_ins *const *ins, exec_plan_ent **out,
                    ts_diag *d) {
  exec_group *G = &k->groups[g][id];
  const ts_step_ins *x = ins[0];
  uint8_t fl = x->flags;
  uint32_t count = x->count > 1 ? x->count : 1;
  for (exec_plan_ent **p = &G->plans, *e; (e = *p) != NULL; p = &e->next)
    if (e->op == x->kind && e->bytes == x->val && e->sent == x->sent &&
        e->flags == fl && e->count == count) {
      /* to the front: a group runs the same few plans over and over
       * (counters applied from the list are sums, in any order) */
      *p = e->next;
      e->next = G->plans;
      G->plans = e;
      *out = e;
      return 0;
    }
  exec_plan_ent *e = calloc(1, sizeof *e);
  if (!e) return TS_ENOMEM;
  int rc = group_comm(k, g, id, G);
  if (!rc) rc = lower(k, G, g, id, ins, &e->plan, d);
  if (rc) {
    free(e);
    return rc;
  }
  e->op = x->kind;
  e->count = count;
  e->bytes = x->val;
  e->sent = x->sent;
  e->flags = fl;
  e->next = G->plans;
  G->plans = e;
  *out = e;
  return 0;
}

int exec_colls_pp_plan(exec_colls *k, uint32_t r, uint32_t dir,
                       uint32_t peer, uint64_t bytes, ts_coll_plan **out,
                       ts_diag *d) {
  ts_coll_plan **slot = &k->pp_plan[(size_t)r * 2 + dir];
  if (*slot) {
    *out = *slot;
    return 0;
  }
  uint32_t ranks[2] = {r, peer};
  ts_coll_comm *comm = NULL;
  int rc = comm_of(k, ranks, 2, &comm);
  ts_coll_params prm = k->params;
  prm.root = 0;
  prm.peer = 1;
  if (!rc) rc = ts_coll_lower(comm, TS_COLL_SEND_RECV, bytes, &prm, 0, slot, d);
  ts_coll_comm_free(comm);
  *out = *slot;
  return rc;
}
