/* work_map.c - ranks onto GPUs, process groups, per-rank labels and the
 * checks that refuse layouts which cannot run.
 *
 * Rank r has one coordinate per dimension of the order string, inner to
 * outer (default "tp-cp-ep-dp-pp", Megatron-LM's): r = c0 + n0*(c1 + n1*(...))
 * with sizes tp, cp, ep, dp/ep, pp. The "dp" token is what is left of data
 * parallelism once EP is carved out of it, so the dense DP group (same
 * weights, same CP slice) is EP x (DP/EP) and its rank is ep + ep*edp.
 * Rank r runs on the r-th GPU of the topology order (ts_topo_gpus), or on
 * the r-th name of the placement list.
 *
 * Labels: host/rack/SU/NUMA from the GPU; NVLink domain = connected
 * component over NVLink links (GPUs and NVSwitch chips), by union-find;
 * NIC = the backend NIC under the GPU's PCIe switch (or CPU for C2C-attached
 * GPUs), the k-th NIC there for the k-th GPU there.
 * Cost: O(nodes + links) for domains and NICs, O(ranks * groups) for the
 * rest; memory O(ranks * groups). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "work/work_int.h"

/* Dimensions (WORK_D_*) that vary inside each group kind. */
static const uint8_t group_dims[TS_GROUP_COUNT] = {
    1u << WORK_D_TP, 1u << WORK_D_CP, 1u << WORK_D_EP,
    (1u << WORK_D_EP) | (1u << WORK_D_EDP), 1u << WORK_D_PP,
    (1u << WORK_D_CP) | (1u << WORK_D_EP) | (1u << WORK_D_EDP),
    (1u << WORK_D_CP) | (1u << WORK_D_EDP), 0, 0};

static int warn(ts_mapping *m, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char **v = realloc(m->warnings, (m->nwarnings + 1) * sizeof *v);
  if (!v) return TS_ENOMEM;
  m->warnings = v;
  if (!(v[m->nwarnings] = malloc(strlen(buf) + 1))) return TS_ENOMEM;
  strcpy(v[m->nwarnings++], buf);
  return 0;
}

void ts_mapping_free(ts_mapping *m) {
  if (!m) return;
  for (int g = 0; g < TS_GROUP_COUNT; g++) free(m->members[g]);
  for (uint32_t i = 0; i < m->nwarnings; i++) free(m->warnings[i]);
  free(m->warnings);
  free(m->labels);
  free(m);
}

/* --- union-find over node ids (path halving; no ranks needed at this
 * size: NVLink components are small and flat) --- */
static uint32_t uf_find(uint32_t *p, uint32_t x) {
  while (p[x] != x) x = p[x] = p[p[x]];
  return x;
}

/* Dense NVLink domain id per GPU node (indexed by node id). */
static int nvlink_domains(const ts_topo *t, int32_t *dom) {
  uint32_t nn = ts_topo_node_count(t);
  uint32_t *p = malloc((size_t)nn * sizeof *p);
  if (!p) return TS_ENOMEM;
  for (uint32_t i = 0; i < nn; i++) p[i] = i, dom[i] = TS_NONE;
  for (uint32_t l = 0; l < ts_topo_link_count(t); l++) {
    const ts_link *k = ts_topo_link(t, l);
    if (k->kind == TS_LINK_NVLINK) p[uf_find(p, k->a)] = uf_find(p, k->b);
  }
  const uint32_t *gpus;
  uint32_t ng = ts_topo_gpus(t, &gpus), next = 0;
  int32_t *root_dom = malloc((size_t)nn * sizeof *root_dom);
  if (!root_dom) return free(p), TS_ENOMEM;
  for (uint32_t i = 0; i < nn; i++) root_dom[i] = TS_NONE;
  for (uint32_t i = 0; i < ng; i++) {
    uint32_t r = uf_find(p, gpus[i]);
    if (root_dom[r] == TS_NONE) root_dom[r] = (int32_t)next++;
    dom[gpus[i]] = root_dom[r];
  }
  free(root_dom);
  free(p);
  return 0;
}

static bool backend_nic(const ts_topo *t, uint32_t id) {
  const ts_node *n = ts_topo_node(t, id);
  if (n->kind != TS_NODE_NIC || n->plane == TS_NO_PLANE) return false;
  return ts_topo_plane(t, n->plane)->kind == TS_PLANE_BACKEND;
}

/* The GPU's parent: the PCIe switch or CPU it hangs from. */
static int32_t gpu_parent(const ts_topo *t, uint32_t gpu) {
  const uint32_t *adj = ts_topo_adj(t, gpu);
  for (uint32_t i = 0; i < ts_topo_degree(t, gpu); i++) {
    uint32_t nb = ts_topo_dir_head(t, adj[i]);
    uint8_t k = ts_topo_node(t, nb)->kind;
    if (k == TS_NODE_PCIE_SW || k == TS_NODE_CPU) return (int32_t)nb;
  }
  return TS_NONE;
}

/* k-th GPU under parent gets the k-th backend NIC there (modulo), NICs of
 * the first backend plane seen only. */
static int32_t gpu_nic(const ts_topo *t, uint32_t gpu) {
  int32_t par = gpu_parent(t, gpu);
  if (par < 0) return TS_NONE;
  const uint32_t *adj = ts_topo_adj(t, (uint32_t)par);
  uint32_t deg = ts_topo_degree(t, (uint32_t)par), k = 0, nics = 0;
  int plane = -1;
  for (uint32_t i = 0; i < deg; i++) {
    uint32_t nb = ts_topo_dir_head(t, adj[i]);
    if (ts_topo_node(t, nb)->kind == TS_NODE_GPU && nb < gpu) k++;
    if (backend_nic(t, nb)) {
      if (plane < 0) plane = ts_topo_node(t, nb)->plane;
      nics += ts_topo_node(t, nb)->plane == plane;
    }
  }
  if (!nics) return TS_NONE;
  k %= nics;
  for (uint32_t i = 0; i < deg; i++) {
    uint32_t nb = ts_topo_dir_head(t, adj[i]);
    if (backend_nic(t, nb) && ts_topo_node(t, nb)->plane == plane && !k--)
      return (int32_t)nb;
  }
  return TS_NONE;
}

/* GPU node of every rank: placement names or topology order. */
static int rank_gpus(const ts_workload *w, const ts_topo *t, uint32_t n,
                     uint32_t *gpu, ts_diag *d) {
  const uint32_t *order;
  ts_topo_gpus(t, &order);
  if (!w->placement) {
    memcpy(gpu, order, (size_t)n * sizeof *gpu);
    return 0;
  }
  uint8_t *used = calloc(ts_topo_node_count(t), 1);
  if (!used) return TS_ENOMEM;
  int rc = 0;
  for (uint32_t r = 0; r < n && !rc; r++) {
    const char *name = w->placement[r];
    if (ts_topo_find_node(t, name, &gpu[r]) ||
        ts_topo_node(t, gpu[r])->kind != TS_NODE_GPU)
      rc = work_fail_at(d, TS_ESCHEMA, w, "placement",
                        "placement: rank %u names '%s', which is not a GPU of "
                       "topology '%s'", r, name, ts_topo_name(t));
    else if (used[gpu[r]]++)
      rc = work_fail_at(d, TS_EINVALID, w, "placement",
                        "placement: GPU '%s' is given to two ranks (again at "
                       "rank %u)", name, r);
  }
  free(used);
  return rc;
}

static int check_size(const ts_workload *w, const work_cfg *c,
                      const ts_topo *t, uint32_t *n, ts_diag *d) {
  uint32_t avail = ts_topo_gpus(t, &(const uint32_t *){NULL});
  uint64_t prod = (uint64_t)c->tp * c->cp * c->pp * c->dp;
  uint32_t want = w->placement ? w->nplacement : c->gpus ? c->gpus : avail;
  const char *why = w->placement ? "the placement list names"
                    : c->gpus ? "parallelism.gpus asks for"
                              : "the topology has";
  if (want > avail)
    return work_fail_at(d, TS_EINVALID, w, w->placement ? "placement" : "gpus",
                        "the job asks for %u GPUs but topology '%s' has %u "
                       "(%u short)", want, ts_topo_name(t), avail,
                       want - avail);
  if (prod != want)
    return work_fail_at(d, TS_EINVALID, w, "dp",
                        "tp*cp*pp*dp = %u*%u*%u*%u = %llu but %s %u GPUs (%s "
                       "by %llu)", c->tp, c->cp, c->pp, c->dp,
                       (unsigned long long)prod, why, want,
                       prod > want ? "over" : "under",
                       (unsigned long long)(prod > want ? prod - want
                                                        : want - prod));
  *n = want;
  return 0;
}

/* HSDP groups split each gradient group of G ranks into G/ds shard groups
 * of ds consecutive members and ds replica groups across them. */
static void build_hsdp_groups(ts_mapping *m, const work_cfg *c) {
  uint32_t G = m->size[TS_GROUP_GRAD], ds = c->shard_group;
  if (!ds || G % ds) ds = G;
  m->size[TS_GROUP_SHARD] = ds;
  m->size[TS_GROUP_REPLICA] = G / ds;
  m->count[TS_GROUP_SHARD] = m->ranks / ds;
  m->count[TS_GROUP_REPLICA] = m->ranks / (G / ds);
  for (uint32_t r = 0; r < m->ranks; r++) {
    ts_rank_label *lb = &m->labels[r];
    uint32_t gid = lb->group[TS_GROUP_GRAD], idx = lb->index[TS_GROUP_GRAD];
    lb->group[TS_GROUP_SHARD] = gid * (G / ds) + idx / ds;
    lb->index[TS_GROUP_SHARD] = idx % ds;
    lb->group[TS_GROUP_REPLICA] = gid * ds + idx % ds;
    lb->index[TS_GROUP_REPLICA] = idx / ds;
    m->members[TS_GROUP_SHARD][(size_t)lb->group[TS_GROUP_SHARD] * ds +
                               idx % ds] = r;
    m->members[TS_GROUP_REPLICA][(size_t)lb->group[TS_GROUP_REPLICA] *
                                     (G / ds) + idx / ds] = r;
  }
}

static int build_groups(ts_mapping *m, const work_cfg *c, const int *perm) {
  uint32_t size[WORK_D_COUNT] = {c->tp, c->cp, c->ep, c->dp / c->ep, c->pp};
  uint32_t coord[WORK_D_COUNT];
  for (int g = 0; g < TS_GROUP_COUNT; g++) {
    m->size[g] = 1;
    for (int k = 0; k < WORK_D_COUNT; k++)
      if (group_dims[g] >> k & 1) m->size[g] *= size[k];
    m->count[g] = m->ranks / m->size[g];
    m->members[g] = malloc((size_t)m->ranks * sizeof *m->members[g]);
    if (!m->members[g]) return TS_ENOMEM;
  }
  for (uint32_t r = 0; r < m->ranks; r++) {
    uint32_t x = r;
    for (int i = 0; i < WORK_D_COUNT; i++) {
      coord[perm[i]] = x % size[perm[i]];
      x /= size[perm[i]];
    }
    ts_rank_label *lb = &m->labels[r];
    for (int g = 0; g < TS_GROUP_COUNT; g++) {
      uint32_t id = 0, idx = 0, ids = 1, idxs = 1;
      for (int k = 0; k < WORK_D_COUNT; k++) {
        if (group_dims[g] >> k & 1) idx += coord[k] * idxs, idxs *= size[k];
        else id += coord[k] * ids, ids *= size[k];
      }
      lb->group[g] = id;
      lb->index[g] = idx;
      m->members[g][(size_t)id * m->size[g] + idx] = r;
    }
  }
  build_hsdp_groups(m, c);
  return 0;
}

static int label_ranks(ts_mapping *m, const ts_topo *t, const uint32_t *gpu) {
  int32_t *dom = malloc((size_t)ts_topo_node_count(t) * sizeof *dom);
  if (!dom) return TS_ENOMEM;
  int rc = nvlink_domains(t, dom);
  for (uint32_t r = 0; !rc && r < m->ranks; r++) {
    const ts_node *n = ts_topo_node(t, gpu[r]);
    ts_rank_label *lb = &m->labels[r];
    lb->gpu = gpu[r];
    lb->host = n->host;
    lb->rack = n->rack;
    lb->su = n->su;
    lb->numa = n->numa;
    lb->nvl_domain = dom[gpu[r]];
    lb->nic = gpu_nic(t, gpu[r]);
    lb->rail = TS_NONE;
    if (lb->nic >= 0) { /* no fabric generator: the NIC's index in its host */
      const ts_node *nic = ts_topo_node(t, (uint32_t)lb->nic);
      lb->rail = nic->rail >= 0 ? nic->rail : nic->local;
    }
  }
  free(dom);
  return rc;
}

/* Warns once when TP groups leave their NVLink domain. */
static int check_tp_domain(ts_mapping *m) {
  uint32_t bad = 0, first = 0, sz = m->size[TS_GROUP_TP];
  for (uint32_t g = 0; g < m->count[TS_GROUP_TP]; g++) {
    const uint32_t *mem = &m->members[TS_GROUP_TP][(size_t)g * sz];
    for (uint32_t i = 1; i < sz; i++)
      if (m->labels[mem[i]].nvl_domain != m->labels[mem[0]].nvl_domain ||
          m->labels[mem[0]].nvl_domain < 0) {
        if (!bad++) first = g;
        break;
      }
  }
  if (!bad) return 0;
  return warn(m, "%u of %u TP groups (first: group %u) span more than one "
              "NVLink domain: their all-reduces cross PCIe or the network",
              bad, m->count[TS_GROUP_TP], first);
}

/* Writes why stage s needs more than hbm bytes per GPU (rank r). */
static void memory_over_msg(const ts_mem_breakdown *b, uint64_t hbm,
                            uint32_t s, uint32_t r, const char *gpu,
                            char *msg, size_t len) {
  char tot[32], cap[32], wt[32], gr[32], op[32], ac[32], bu[32], over[32];
  work_gib(b->total, tot, sizeof tot);
  work_gib(hbm, cap, sizeof cap);
  work_gib(b->weights, wt, sizeof wt);
  work_gib(b->grads, gr, sizeof gr);
  work_gib(b->optimizer, op, sizeof op);
  work_gib(b->activations, ac, sizeof ac);
  work_gib(b->buffers, bu, sizeof bu);
  work_gib(b->total - hbm, over, sizeof over);
  snprintf(msg, len, "pipeline stage %u needs %s GiB per GPU, HBM holds %s "
           "GiB (%s) on rank %u: over by %s GiB (weights %s, grads %s, "
           "optimizer %s, activations %s, buffers %s GiB)", s, tot, cap, gpu,
           r, over, wt, gr, op, ac, bu);
}

/* A stage over the HBM of its GPUs: refused (the first such stage), or with
 * training.memory_check warn one warning naming the worst stage (the memory
 * model is an estimate; a published run may fit by means it does not know). */
static int check_memory(const ts_workload *w, ts_mapping *m,
                        const ts_topo *t, ts_diag *d) {
  char msg[400] = "";
  uint32_t over = 0;
  uint64_t worst = 0;
  for (uint32_t s = 0; s < w->cfg.pp; s++) {
    ts_mem_breakdown b;
    if (ts_work_memory(w, s, &b)) return TS_EINVALID;
    uint32_t r = ts_mapping_group_member(m, TS_GROUP_PP, 0, s);
    uint64_t hbm = UINT64_MAX;
    for (uint32_t i = 0; i < m->ranks; i++) /* smallest HBM of the stage */
      if (m->labels[i].index[TS_GROUP_PP] == s) {
        const ts_node *n = ts_topo_node(t, m->labels[i].gpu);
        uint64_t hb = ts_topo_gpu_model(t, n->model)->hbm_bytes;
        if (hb < hbm) hbm = hb, r = i;
      }
    if (b.total <= hbm) continue;
    over++;
    if (b.total - hbm > worst) {
      worst = b.total - hbm;
      memory_over_msg(&b, hbm, s, r,
                      ts_topo_gpu_model(t, ts_topo_node(t, m->labels[r].gpu)->model)->name,
                      msg, sizeof msg);
    }
    if (!w->cfg.memory_check)
      return work_fail_at(d, TS_EINVALID, w, "tp", "%s", msg);
  }
  if (!over) return 0;
  return warn(m, "%u of %u pipeline stages over HBM, run anyway "
              "(training.memory_check: warn); the worst: %s", over, w->cfg.pp,
              msg);
}

int ts_work_map(const ts_workload *w, const ts_topo *t, ts_mapping **out,
                ts_diag *d) {
  *out = NULL;
  work_cfg c;
  work_derive(w, &c);
  int perm[WORK_D_COUNT];
  char why[200];
  if (work_parse_order(w->order, perm, why, sizeof why))
    return work_fail_at(d, TS_ESCHEMA, w, "order", "order: %s", why);
  uint32_t n = 0;
  int rc = work_validate(w, d);
  if (!rc) rc = check_size(w, &c, t, &n, d);
  if (rc) return rc;
  ts_mapping *m = calloc(1, sizeof *m);
  uint32_t *gpu = malloc((size_t)n * sizeof *gpu);
  if (!m || !gpu || !(m->labels = calloc(n, sizeof *m->labels))) {
    rc = TS_ENOMEM;
    goto done;
  }
  m->ranks = n;
  rc = rank_gpus(w, t, n, gpu, d);
  if (!rc) rc = label_ranks(m, t, gpu);
  if (!rc) rc = build_groups(m, &c, perm);
  if (!rc) rc = check_tp_domain(m);
  if (!rc) rc = check_memory(w, m, t, d);
done:
  free(gpu);
  if (rc == TS_ENOMEM) ts_diag_set(d, rc, w->file, 0, 0, "out of memory");
  if (rc) {
    ts_mapping_free(m);
    return rc;
  }
  *out = m;
  return 0;
}

uint32_t ts_mapping_ranks(const ts_mapping *m) { return m->ranks; }
const ts_rank_label *ts_mapping_rank(const ts_mapping *m, uint32_t r) {
  return r < m->ranks ? &m->labels[r] : NULL;
}
uint32_t ts_mapping_group_size(const ts_mapping *m, ts_group g) {
  return m->size[g];
}
uint32_t ts_mapping_group_count(const ts_mapping *m, ts_group g) {
  return m->count[g];
}
uint32_t ts_mapping_group_member(const ts_mapping *m, ts_group g, uint32_t id,
                                 uint32_t index) {
  return m->members[g][(size_t)id * m->size[g] + index];
}
uint32_t ts_mapping_warning_count(const ts_mapping *m) { return m->nwarnings; }
const char *ts_mapping_warning(const ts_mapping *m, uint32_t i) {
  return i < m->nwarnings ? m->warnings[i] : NULL;
}

/* ts_work_host_members: the layout of ts_work_map (same order string, same
 * rank-to-GPU rule) without building it, so the sweep's closed-form bound
 * can afford it on every mapping: group ids as build_groups numbers them,
 * then per group kind the members of each group on each host, counted
 * host by host (the ranks of one host are consecutive: ts_topo_gpus is
 * host-major). O(ranks x group kinds) time and memory. */
static void count_host_members(const int32_t *host, uint32_t n,
                               const uint32_t *id, uint32_t *cnt,
                               uint32_t *out) {
  uint32_t lo = 0, best = 0; /* ranks [lo, r) are on one host */
  for (uint32_t r = 0; r < n; r++) {
    int32_t h = host[r], h0 = host[lo];
    if (h < 0 || h < h0) { /* no host label, or not host-major: unknown */
      best = 0;
      break;
    }
    if (h != h0) {
      for (uint32_t q = lo; q < r; q++) cnt[id[q]] = 0;
      lo = r;
    }
    if (++cnt[id[r]] > best) best = cnt[id[r]];
  }
  memset(cnt, 0, (size_t)n * sizeof *cnt);
  *out = best;
}

/* The shape flags of ts_work_host_layout from the ranks' hosts, their
 * programs (stage and EP rank) and TP group ids (n ranks, host-major). */
static uint32_t host_shape(const int32_t *host, const uint32_t *stage,
                           const uint32_t *tp_id, uint32_t n, uint32_t host_gpus) {
  uint32_t flags = TS_HOST_TP_WHOLE | TS_HOST_ONE_STAGE;
  for (uint32_t lo = 0, r = 0; r <= n; r++) {
    if (r < n && host[r] == host[lo]) {
      if (stage[r] != stage[lo]) flags &= ~(uint32_t)TS_HOST_ONE_STAGE;
      continue;
    }
    if (r - lo != host_gpus) flags &= ~(uint32_t)TS_HOST_ONE_STAGE;
    lo = r;
  }
  /* a TP group's members: the first one's host for every member */
  int32_t *first = malloc((size_t)n * sizeof *first);
  if (!first) return 0;
  for (uint32_t r = 0; r < n; r++) first[r] = -1;
  for (uint32_t r = 0; r < n; r++) {
    if (first[tp_id[r]] < 0) first[tp_id[r]] = host[r];
    else if (first[tp_id[r]] != host[r]) flags &= ~(uint32_t)TS_HOST_TP_WHOLE;
  }
  free(first);
  return flags;
}

int ts_work_host_members(const ts_workload *w, const ts_topo *t,
                         uint32_t out[TS_GROUP_COUNT], uint32_t *host_gpus) {
  uint32_t flags;
  return ts_work_host_layout(w, t, out, host_gpus, &flags);
}

int ts_work_host_layout(const ts_workload *w, const ts_topo *t,
                        uint32_t out[TS_GROUP_COUNT], uint32_t *host_gpus,
                        uint32_t *flags) {
  memset(out, 0, TS_GROUP_COUNT * sizeof *out);
  *host_gpus = 0;
  *flags = 0;
  work_cfg c;
  work_derive(w, &c);
  int perm[WORK_D_COUNT];
  const uint32_t *gpus;
  uint32_t avail = ts_topo_gpus(t, &gpus);
  uint64_t n64 = (uint64_t)c.tp * c.cp * c.pp * c.dp;
  if (w->placement || !w->order || !c.ep || c.dp % c.ep || !n64 ||
      n64 > avail || work_parse_order(w->order, perm, NULL, 0))
    return 0; /* unknown: no host term */
  uint32_t n = (uint32_t)n64;
  uint32_t *cnt = calloc(n, sizeof *cnt);
  uint32_t *id = malloc((size_t)n * TS_GROUP_COUNT * sizeof *id);
  int32_t *host = malloc((size_t)n * sizeof *host);
  uint32_t *stage = malloc((size_t)n * sizeof *stage);
  if (!cnt || !id || !host || !stage) {
    free(cnt), free(id), free(host), free(stage);
    return TS_ENOMEM;
  }
  uint32_t size[WORK_D_COUNT] = {c.tp, c.cp, c.ep, c.dp / c.ep, c.pp};
  for (uint32_t r = 0; r < n; r++) {
    uint32_t coord[WORK_D_COUNT], x = r;
    host[r] = ts_topo_node(t, gpus[r])->host;
    for (int i = 0; i < WORK_D_COUNT; i++) {
      coord[perm[i]] = x % size[perm[i]];
      x /= size[perm[i]];
    }
    /* ranks run one program per (stage, EP rank): ts_work_ops */
    stage[r] = coord[WORK_D_PP] * c.ep + coord[WORK_D_EP];
    for (int g = 0; g < TS_GROUP_COUNT; g++) {
      uint32_t v = 0, vs = 1;
      for (int k = 0; k < WORK_D_COUNT; k++)
        if (!(group_dims[g] >> k & 1)) v += coord[k] * vs, vs *= size[k];
      id[(size_t)g * n + r] = v;
    }
  }
  for (int g = 0; g < TS_GROUP_COUNT; g++)
    if (group_dims[g]) /* HSDP shard/replica (0): left unknown */
      count_host_members(host, n, id + (size_t)g * n, cnt, &out[g]);
  for (uint32_t r = 0; out[TS_GROUP_TP] && r < n; r++) /* known layout */
    *host_gpus += host[r] == host[0];
  if (*host_gpus) *flags = host_shape(host, stage, id + (size_t)TS_GROUP_TP * n, n, *host_gpus);
  free(cnt);
  free(id);
  free(host);
  free(stage);
  return 0;
}
