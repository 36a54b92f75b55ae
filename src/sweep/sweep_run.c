/* sweep_run.c - one simulated step per mapping, ranking and the Pareto
 * front. A mapping's row depends only on (workload file, overrides,
 * topology, options), never on which process ran it or what ran before,
 * so any split of the job list over workers gives the same rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"
#include "topsim/ts_step_prog.h"

void ts_sweep_simulate(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                       uint32_t gpus, const ts_step_opts *o, ts_sweep_row *row) {
  uint32_t index = row->index;
  memset(row, 0, sizeof *row);
  row->index = index;
  row->map = *m;
  ts_diag d;
  ts_diag_clear(&d);
  ts_mapping *map = NULL;
  ts_step_result r;
  memset(&r, 0, sizeof r);
  int rc = ts_sweep_apply(w, m, gpus, &d);
  if (!rc) rc = ts_work_map(w, t, &map, &d);
  if (!rc) rc = ts_step_run(w, t, map, o, &r, &d);
  if (rc && r.horizon_passed) {
    /* early stop: the step is longer than the horizon, which is its bound */
    row->bounded = 1;
    row->bound_s = (double)o->horizon / 1e12;
  } else if (rc) {
    row->status = rc;
    snprintf(row->error, sizeof row->error, "%.511s", d.msg[0] ? d.msg : ts_strerror(rc));
  } else {
    row->step_s = (double)r.step_time / 1e12;
    row->tokens_s = r.tokens_per_s;
    row->mfu = r.mfu;
    row->compute_s = (double)r.critical.compute / 1e12;
    row->bubble_s = (double)r.critical.bubble / 1e12;
    for (int k = 0; k < TS_DIM_COUNT; k++)
      row->exposed_s[k] = (double)r.critical.exposed[k] / 1e12;
  }
  ts_step_result_free(&r);
  ts_mapping_free(map);
}

static ts_sweep_sort sort_by;

/* simulated 0, failed 1, bounded 2 */
static int row_class(const ts_sweep_row *r) { return r->bounded ? 2 : r->status ? 1 : 0; }

static int cmp_rows(const void *pa, const void *pb) {
  const ts_sweep_row *a = pa, *b = pb;
  int ca = row_class(a), cb = row_class(b);
  if (ca != cb) return ca < cb ? -1 : 1;
  if (ca == 2 && a->bound_s != b->bound_s) return a->bound_s < b->bound_s ? -1 : 1;
  if (!ca) {
    double x = 0, y = 0;
    switch (sort_by) {
    case TS_SORT_TOKENS: x = b->tokens_s, y = a->tokens_s; break;
    case TS_SORT_STEP: x = a->step_s, y = b->step_s; break;
    case TS_SORT_MEMORY: x = (double)a->map.mem_bytes, y = (double)b->map.mem_bytes; break;
    }
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return a->index < b->index ? -1 : a->index > b->index;
}

void ts_sweep_rank(ts_sweep_row *rows, uint32_t n, ts_sweep_sort by) {
  sort_by = by; /* qsort has no context argument in C11 */
  qsort(rows, n, sizeof *rows, cmp_rows);
}

void ts_sweep_pareto(const ts_sweep_row *rows, uint32_t n, uint8_t *front) {
  for (uint32_t i = 0; i < n; i++) {
    front[i] = rows[i].status == 0 && !rows[i].bounded;
    for (uint32_t j = 0; front[i] && j < n; j++) {
      if (j == i || rows[j].status || rows[j].bounded) continue;
      const ts_sweep_row *a = &rows[j], *b = &rows[i];
      int ge = a->tokens_s >= b->tokens_s && a->map.mem_bytes <= b->map.mem_bytes;
      int gt = a->tokens_s > b->tokens_s || a->map.mem_bytes < b->map.mem_bytes;
      /* equal points: the earlier index stays on the front */
      if (ge && (gt || j < i)) front[i] = 0;
    }
  }
}

/* ---- lower bounds ------------------------------------------------------- */

double ts_sweep_ingress(const ts_topo *t, uint32_t gpus) {
  const uint32_t *ids;
  uint32_t ng = ts_topo_gpus(t, &ids);
  double worst = 0;
  for (uint32_t i = 0; i < ng && i < gpus; i++) {
    /* every direction entering the GPU at its link's bandwidth, and the
     * NVSwitch links once more: the network model gives one of them the
     * sum of the bundle (net.c, bundle_nvswitch), so this is never less
     * than what the network lets in */
    double sum = 0;
    const uint32_t *adj = ts_topo_adj(t, ids[i]);
    for (uint32_t k = 0; k < ts_topo_degree(t, ids[i]); k++) {
      const ts_link *l = ts_topo_link(t, adj[k] >> 1);
      sum += l->bandwidth;
      if (l->kind == TS_LINK_NVLINK &&
          ts_topo_node(t, ts_topo_dir_head(t, adj[k]))->kind == TS_NODE_NVSWITCH)
        sum += l->bandwidth;
    }
    if (sum > worst) worst = sum;
  }
  return worst;
}

double ts_sweep_host_ingress(const ts_topo *t, uint32_t gpus) {
  const uint32_t *ids;
  uint32_t ng = ts_topo_gpus(t, &ids), nh = ts_topo_host_count(t);
  double *in = calloc((size_t)nh + 1, sizeof *in), worst = 0;
  uint8_t *used = calloc((size_t)nh + 1, 1);
  if (!in || !used) { /* no host term: 0 is always allowed */
    free(in), free(used);
    return 0;
  }
  for (uint32_t i = 0; i < ng && i < gpus; i++) {
    int32_t h = ts_topo_node(t, ids[i])->host;
    if (h < 0 || (uint32_t)h >= nh) {
      free(in), free(used);
      return 0;
    }
    used[h] = 1;
  }
  /* every direction whose head is in a host and tail is not, NVSwitch
   * links once more as in ts_sweep_ingress (a bundle's flow may get the
   * sum of its links) */
  for (uint32_t k = 0; k < ts_topo_link_count(t); k++) {
    const ts_link *l = ts_topo_link(t, k);
    const ts_node *a = ts_topo_node(t, l->a), *b = ts_topo_node(t, l->b);
    if (a->host == b->host) continue;
    double bw = l->bandwidth;
    if (l->kind == TS_LINK_NVLINK &&
        (a->kind == TS_NODE_NVSWITCH || b->kind == TS_NODE_NVSWITCH))
      bw *= 2;
    if (b->host >= 0 && (uint32_t)b->host < nh) in[b->host] += bw;
    if (a->host >= 0 && (uint32_t)a->host < nh) in[a->host] += bw;
  }
  for (uint32_t h = 0; h < nh; h++)
    if (used[h] && in[h] > worst) worst = in[h];
  free(in), free(used);
  return worst;
}

/* Two 64-bit FNV-1a streams (different offsets, and the second over the
 * bytes in reverse word order) over what decides a simulation: a collision
 * of both for two different mappings of one sweep is not a practical
 * concern (about 2^-100 for 50,000 mappings). */
typedef struct hash2 {
  uint64_t a, b;
} hash2;

static void h_u64(hash2 *h, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    h->a = (h->a ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    h->b = (h->b ^ ((v >> (56 - 8 * i)) & 0xff)) * 0x100000001b3ull;
  }
}

static void h_prog(hash2 *h, const ts_step_prog *p) {
  h_u64(h, p->n);
  for (int g = 0; g < TS_GROUP_COUNT; g++) h_u64(h, p->nords[g]);
  for (uint32_t i = 0; i < p->n; i++) {
    const ts_step_ins *in = &p->ins[i];
    h_u64(h, (uint64_t)in->op | (uint64_t)in->group << 8 |
                 (uint64_t)in->kind << 16 | (uint64_t)in->flags << 24 |
                 (uint64_t)in->chunk << 32 | (uint64_t)in->peer << 48);
    h_u64(h, (uint64_t)(uint32_t)in->layer | (uint64_t)(uint32_t)in->micro << 32);
    h_u64(h, in->ord);
    h_u64(h, in->val);
    h_u64(h, in->sent);
    h_u64(h, in->cross);
  }
}

static uint64_t dbits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* The programs, the facts a run reports and the rank layout: two mappings
 * with equal keys give the same simulated row (bar the mapping's own keys
 * and its memory, which the row takes from the mapping). */
static void sim_key(const ts_step_progs *P, const ts_sweep_map *m, uint64_t key[2]) {
  hash2 h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  h_u64(&h, (uint64_t)m->tp | (uint64_t)m->cp << 16 | (uint64_t)m->pp << 32 |
                (uint64_t)m->ep << 48);
  h_u64(&h, (uint64_t)m->dp | (uint64_t)m->topo << 32);
  for (size_t i = 0; i < sizeof m->order && m->order[i]; i++) h_u64(&h, (uint8_t)m->order[i]);
  h_u64(&h, P->nprogs), h_u64(&h, P->chunks), h_u64(&h, P->microbatches);
  h_u64(&h, dbits(P->tokens_per_step)), h_u64(&h, dbits(P->model_flops));
  h_u64(&h, dbits(P->hw_flops)), h_u64(&h, dbits(P->peak_flops));
  for (uint32_t i = 0; i < P->ep; i++) h_u64(&h, dbits(P->ep_share[i]));
  for (uint32_t i = 0; i < P->nprogs; i++) h_prog(&h, &P->prog[i]);
  key[0] = h.a, key[1] = h.b;
}

/* The GPU model every rank of the first gpus GPUs has, or NULL when they
 * differ (the quick bound then stays out of it). */
static const ts_gpu_model *one_model(const ts_topo *t, uint32_t gpus) {
  const uint32_t *ids;
  uint32_t ng = ts_topo_gpus(t, &ids);
  if (!ng) return NULL;
  uint32_t model = ts_topo_node(t, ids[0])->model;
  for (uint32_t i = 1; i < ng && i < gpus; i++)
    if (ts_topo_node(t, ids[i])->model != model) return NULL;
  return ts_topo_gpu_model(t, model);
}

/* The bound parameters of f (group sizes and layout facts are the
 * caller's). */
static void fabric_params(const ts_sweep_fabric *f, ts_step_bound_params *bp) {
  memset(bp, 0, sizeof *bp);
  bp->ingress_bps = f->ingress_bps;
  bp->host_in_bps = f->host_in_bps;
  bp->tp_out_bps = f->tp_out_bps;
  bp->tp_nvls = f->nvls;
  bp->tp_startup_ps = f->tp_startup_ps;
}

int ts_sweep_bound(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                   uint32_t gpus, const ts_sweep_fabric *f, ts_time_ps *out,
                   uint64_t key[2], ts_diag *d) {
  ts_mapping *map = NULL;
  ts_step_progs P;
  memset(&P, 0, sizeof P);
  *out = 0;
  int rc = ts_sweep_apply(w, m, gpus, d);
  if (!rc) rc = ts_work_map(w, t, &map, d);
  if (!rc) rc = ts_step_compile(w, t, map, &P, d);
  if (!rc) {
    ts_step_bound_params bp;
    fabric_params(f, &bp);
    for (int g = 0; g < TS_GROUP_COUNT; g++)
      bp.group_size[g] = ts_mapping_group_size(map, (ts_group)g);
    rc = ts_work_host_layout(w, t, bp.host_members, &bp.host_gpus, &bp.host_flags);
    if (getenv("TOPSIM_SWEEP_NO_FLUID")) bp.host_flags = 0; /* measured in docs */
    if (!rc) rc = ts_step_bound(&P, &bp, out);
    const ts_gpu_model *g = one_model(t, gpus);
    ts_time_ps vol = rc || !g ? 0 : ts_work_step_bound_volume(w, g, &bp);
    if (vol > *out) *out = vol;
    sim_key(&P, m, key);
  }
  ts_step_progs_free(&P);
  ts_mapping_free(map);
  return rc;
}

int ts_sweep_bound_quick(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                         uint32_t gpus, const ts_sweep_fabric *f, ts_time_ps *out,
                         ts_diag *d) {
  return ts_sweep_guess_quick(w, t, m, gpus, f, out, NULL, d);
}

int ts_sweep_guess_quick(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                         uint32_t gpus, const ts_sweep_fabric *f, ts_time_ps *out,
                         ts_time_ps *guess, ts_diag *d) {
  *out = 0;
  if (guess) *guess = 0;
  const ts_gpu_model *g = one_model(t, gpus);
  if (!g) return 0;
  int rc = ts_sweep_apply(w, m, gpus, d);
  if (!rc && ts_work_validate(w, d)) return 0; /* the replay will say why */
  ts_step_bound_params bp;
  fabric_params(f, &bp);
  /* the layout's flags decide the TP egress term, as in ts_sweep_bound */
  if (!rc && (f->tp_out_bps > 0 || f->host_in_bps > 0))
    rc = ts_work_host_layout(w, t, bp.host_members, &bp.host_gpus, &bp.host_flags);
  if (!rc) rc = ts_work_step_bound_quick(w, g, &bp, out);
  if (rc) *out = 0;
  if (guess) *guess = rc ? 0 : *out + ts_work_step_bound_volume(w, g, &bp);
  return 0;
}
