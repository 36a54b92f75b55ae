/* test_sweep.c - mapping enumeration (exact candidate and pruning counts
 * derived by hand), order strings against NVLink domains, memory refusal,
 * ranking, the Pareto front, and the SVG of a real sweep parsed with
 * libxml2: one circle per simulated CSV row. */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "topsim/ts_faults.h"
#include "topsim/ts_step_prog.h"
#include "topsim/ts_sweep.h"

#define TINY "tests/data/workloads/tiny-dense.yaml"
#define SU "topologies/superpod-a100-1su.yaml"
/* The bounds' fabric facts with the TP egress term off (tp_out 0): the
 * checks of the host terms predate it. */
#define FAB(in, hin) (&(ts_sweep_fabric){.ingress_bps = (in), .host_in_bps = (hin)})

static ts_workload *load_w(const char *rel) {
  ts_workload *w = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_workload_load_file(tu_path(rel), &w, &d);
  if (rc) fprintf(stderr, "%s\n", d.msg);
  assert_int_equal(rc, 0);
  return w;
}

static void enumerate(const char *wl, const char *topo, ts_sweep_spec *s,
                      ts_sweep_set *z) {
  ts_workload *w = load_w(wl);
  ts_topo *t = tu_load(topo);
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_sweep_enumerate(w, t, s, z, &d), 0);
  ts_workload_free(w);
  ts_topo_free(t);
}

/* tiny-dense (8 layers, 16 heads, global batch 40, mb 1) on 16 GPUs of
 * DGX A100 nodes (8 GPUs per NVLink domain), varying tp and pp only.
 * Candidates: sum over tp | 16 of d(16/tp) = 5+4+3+2+1 = 15. Pruned:
 * tp 16 leaves the node (1), pp 16 does not divide 8 layers (1), tp1 pp1
 * gives dp 16, which does not divide 40 (1). Valid 12. */
static void test_counts_tp_pp(void **state) {
  (void)state;
  ts_sweep_spec s;
  ts_sweep_spec_default(&s);
  s.vary = 1u << TS_SWEEP_TP | 1u << TS_SWEEP_PP;
  s.gpus = 16;
  ts_sweep_set z;
  enumerate(TINY, SU, &s, &z);
  assert_int_equal(z.candidates, 15);
  assert_int_equal(z.n, 12);
  assert_int_equal(z.pruned[TS_PRUNE_TP_DOMAIN], 1);
  assert_int_equal(z.pruned[TS_PRUNE_PP_LAYERS], 1);
  assert_int_equal(z.pruned[TS_PRUNE_BATCH], 1);
  uint64_t sum = z.n;
  for (int p = 0; p < TS_PRUNE_COUNT; p++) sum += z.pruned[p];
  assert_int_equal(sum, z.candidates);
  for (uint32_t i = 0; i < z.n; i++) {
    assert_int_equal(z.maps[i].tp * z.maps[i].pp * z.maps[i].dp, 16);
    assert_true(z.maps[i].tp <= 8);
  }
  ts_sweep_set_free(&z);
  /* allowing cross-node TP brings tp 16 pp 1 dp 1 back: 13 */
  s.allow_cross_node_tp = 1;
  enumerate(TINY, SU, &s, &z);
  assert_int_equal(z.n, 13);
  ts_sweep_set_free(&z);
}

/* tp 2, pp 2, dp 4 on 16 GPUs, varying only the order: 3 dimensions of
 * size > 1 give 3! = 6 orders. TP neighbours sit `stride` ranks apart
 * (product of the sizes inside tp): tp innermost 1 (2 orders), dp-tp-pp 4,
 * pp-tp-dp 2 (groups within 8 ranks = one node), dp-pp-tp and pp-dp-tp 8
 * (a group spans two nodes): 4 valid, 2 pruned by the domain. */
static void test_orders(void **state) {
  (void)state;
  ts_sweep_spec s;
  ts_sweep_spec_default(&s);
  s.vary = 1u << TS_SWEEP_ORDER;
  s.gpus = 16;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_sweep_spec_fix(&s, TS_SWEEP_TP, "2", &d), 0);
  assert_int_equal(ts_sweep_spec_fix(&s, TS_SWEEP_PP, "2", &d), 0);
  ts_sweep_set z;
  enumerate(TINY, SU, &s, &z);
  assert_int_equal(z.candidates, 6);
  assert_int_equal(z.n, 4);
  assert_int_equal(z.pruned[TS_PRUNE_TP_DOMAIN], 2);
  for (uint32_t i = 0; i < z.n; i++) {
    assert_int_equal(z.maps[i].dp, 4);
    assert_null(strstr(z.maps[i].order, "pp-dp-tp"));
    assert_null(strstr(z.maps[i].order, "dp-pp-tp"));
  }
  ts_sweep_set_free(&z);
}

/* GPT-3 175B on one DGX A100 (8 x 80 GB): 16 bytes per parameter of
 * weights, gradients and Adam state are 2.8 TB even before activations;
 * ZeRO 3 over 8 GPUs still leaves 350 GB per GPU. Nothing fits. */
static void test_memory_refusal(void **state) {
  (void)state;
  ts_sweep_spec s;
  ts_sweep_spec_default(&s);
  s.gpus = 8;
  ts_sweep_set z;
  enumerate("examples/gpt3-175b-1024-a100.yaml", "topologies/dgx-a100.yaml", &s, &z);
  assert_int_equal(z.n, 0);
  assert_true(z.pruned[TS_PRUNE_MEMORY] > 0);
  assert_non_null(strstr(z.min_memory, "GiB per GPU"));
  ts_sweep_set_free(&z);
}

static ts_sweep_row row(uint32_t idx, double tok, double mem_gib, int status) {
  ts_sweep_row r;
  memset(&r, 0, sizeof r);
  r.index = idx;
  r.tokens_s = tok;
  r.step_s = tok > 0 ? 1 / tok : 0;
  r.map.mem_bytes = (uint64_t)(mem_gib * 1073741824.0);
  r.status = status;
  return r;
}

/* (mem, tokens): (1,10) (2,20) (3,15) (2,5) (4,20) failed(1,100). Front:
 * (1,10) and (2,20); (3,15) and (4,20) are dominated by (2,20), (2,5) by
 * both; a failed row is never on it. */
static void test_pareto_and_rank(void **state) {
  (void)state;
  ts_sweep_row r[6] = {row(0, 10, 1, 0), row(1, 20, 2, 0), row(2, 15, 3, 0),
                       row(3, 5, 2, 0),  row(4, 20, 4, 0), row(5, 100, 1, 4)};
  uint8_t f[6];
  ts_sweep_pareto(r, 6, f);
  uint8_t want[6] = {1, 1, 0, 0, 0, 0};
  assert_memory_equal(f, want, 6);
  ts_sweep_rank(r, 6, TS_SORT_TOKENS);
  /* 20 (index 1 before 4), 15, 10, 5, then the failed row */
  uint32_t order[6] = {1, 4, 2, 0, 3, 5};
  for (int i = 0; i < 6; i++) assert_int_equal(r[i].index, order[i]);
  ts_sweep_rank(r, 6, TS_SORT_MEMORY);
  assert_int_equal(r[0].index, 0);
  assert_int_equal(r[5].index, 5);
}

static uint32_t count_circles(xmlNode *n) {
  uint32_t c = 0;
  for (; n; n = n->next) {
    if (n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, BAD_CAST "circle")) c++;
    c += count_circles(n->children);
  }
  return c;
}

/* A real sweep (12 mappings, see test_counts_tp_pp): the SVG parses as XML
 * and holds one circle per simulated CSV row. */
static void test_cli_svg(void **state) {
  (void)state;
  const char *bin = getenv("TOPSIM_BIN");
  if (!bin) skip();
  char dir[] = "/tmp/topsim-sweep-XXXXXX", cmd[4096], svg[256], csv[256];
  assert_non_null(mkdtemp(dir));
  snprintf(svg, sizeof svg, "%s/s.svg", dir);
  snprintf(csv, sizeof csv, "%s/s.csv", dir);
  snprintf(cmd, sizeof cmd, "'%s' sweep '%s' --topology '%s' --gpus 16 "
           "--vary tp,pp --jobs 2 --quiet --svg '%s' --csv '%s' >/dev/null",
           bin, tu_path(TINY), tu_path(SU), svg, csv);
  int st = system(cmd);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  FILE *f = fopen(csv, "r");
  assert_non_null(f);
  char line[2048];
  uint32_t ok = 0, lines = 0;
  while (fgets(line, sizeof line, f)) lines++, ok += strstr(line, ",ok,") != NULL;
  fclose(f);
  assert_int_equal(lines, 13); /* header + 12 */
  /* the top 10 at least; the rest only if their bound could reach the
   * table or the Pareto front (--svg) */
  assert_true(ok >= 10 && ok <= 12);
  xmlDoc *doc = xmlReadFile(svg, NULL, XML_PARSE_NONET);
  assert_non_null(doc);
  xmlNode *root = xmlDocGetRootElement(doc);
  assert_string_equal((const char *)root->name, "svg");
  assert_int_equal(count_circles(root), ok);
  xmlFreeDoc(doc);
  xmlCleanupParser();
  unlink(svg);
  unlink(csv);
  rmdir(dir);
}

static const ts_gpu_model *gpu_of(const ts_topo *t) {
  const uint32_t *ids;
  ts_topo_gpus(t, &ids);
  return ts_topo_gpu_model(t, ts_topo_node(t, ids[0])->model);
}

/* The host term of the closed form, to the ps, on a ZeRO 3 mapping with
 * one stage (no fill or drain: the bound is m (F + B) + O, and each
 * micro-batch's forward and backward unit waits for every weight
 * all-gather of the gradient group): with the per-GPU ingress 0, the
 * bound with host_in minus the bound without is the sum, over the
 * program's all-gathers of the gradient group, of
 * floor(S (p - K) / p / host_in) ps, K the most members one gradient
 * group has on one host, counted here from ts_work_map's labels. A term
 * counted twice, or with p - 1 for p - K, fails. */
static void check_host_term(ts_workload *w, const ts_topo *t,
                            const ts_sweep_map *m, double host_in,
                            uint32_t *verified) {
  ts_diag d;
  ts_diag_clear(&d);
  ts_time_ps q0, qh;
  assert_int_equal(ts_sweep_bound_quick(w, t, m, 16, FAB(0, 0), &q0, &d), 0);
  assert_int_equal(ts_sweep_bound_quick(w, t, m, 16, FAB(0, host_in), &qh, &d), 0);
  ts_mapping *map = NULL;
  assert_int_equal(ts_sweep_apply(w, m, 16, &d), 0);
  assert_int_equal(ts_work_map(w, t, &map, &d), 0);
  uint32_t p = ts_mapping_group_size(map, TS_GROUP_GRAD), K = 0;
  for (uint32_t a = 0; a < ts_mapping_ranks(map); a++) {
    const ts_rank_label *la = ts_mapping_rank(map, a);
    uint32_t k = 0;
    for (uint32_t b = 0; b < ts_mapping_ranks(map); b++) {
      const ts_rank_label *lb = ts_mapping_rank(map, b);
      k += lb->host == la->host && lb->group[TS_GROUP_GRAD] == la->group[TS_GROUP_GRAD];
    }
    if (k > K) K = k;
  }
  ts_step_progs P;
  assert_int_equal(ts_step_compile(w, t, map, &P, &d), 0);
  ts_time_ps want = 0;
  const ts_step_prog *pr = &P.prog[0];
  for (uint32_t k = 0; K < p && k < pr->n; k++)
    if (pr->ins[k].op == TS_SI_COLL && pr->ins[k].group == TS_GROUP_GRAD &&
        pr->ins[k].kind == TS_COLL_ALL_GATHER)
      want += (ts_time_ps)((double)pr->ins[k].val * (p - K) / p / host_in * 1e12);
  /* unless the host volume term (check_volume_term) is larger */
  ts_step_bound_params bp;
  memset(&bp, 0, sizeof bp);
  bp.host_in_bps = host_in;
  assert_int_equal(ts_work_host_members(w, t, bp.host_members, &bp.host_gpus), 0);
  assert_int_equal(bp.host_members[TS_GROUP_GRAD], K);
  ts_time_ps vol = ts_work_step_bound_volume(w, gpu_of(t), &bp);
  if (qh != (q0 + want > vol ? q0 + want : vol))
    fail_msg("tp %u dp %u (K %u of %u): host term %llu ps, expected %llu ps "
             "(volume %llu ps)", m->tp, m->dp, K, p, (unsigned long long)(qh - q0),
             (unsigned long long)want, (unsigned long long)vol);
  *verified += want > 0 && q0 + want > vol;
  ts_step_progs_free(&P);
  ts_mapping_free(map);
}

/* The host volume term (ts_work_step_bound_volume) on a mapping with one
 * stage whose gradient or CP groups leave their host, recomputed from the
 * compiled program and ts_work_map's labels: over the gradient and CP
 * groups with k < p members on rank 0's host, every instance the program
 * issues on such a group must move, through that host's links, at least (egress /
 * ingress) all-reduce S / S, reduce-scatter S (p-k)/p / S k/p, all-gather
 * S k/p / S (p-k)/p; the term is the larger sum / host_in. Doubling any
 * part of it fails (2 ps of rounding allowed). */
static void check_volume_term(ts_workload *w, const ts_topo *t,
                              const ts_sweep_map *m, double host_in,
                              uint32_t *verified) {
  ts_diag d;
  ts_diag_clear(&d);
  ts_mapping *map = NULL;
  assert_int_equal(ts_sweep_apply(w, m, 16, &d), 0);
  assert_int_equal(ts_work_map(w, t, &map, &d), 0);
  ts_step_bound_params bp;
  memset(&bp, 0, sizeof bp);
  bp.host_in_bps = host_in;
  uint32_t n = ts_mapping_ranks(map);
  int32_t h0 = ts_mapping_rank(map, 0)->host;
  uint32_t *k = calloc(2 * (size_t)n, sizeof *k); /* on host 0, per group */
  assert_non_null(k);
  static const ts_group kinds[2] = {TS_GROUP_GRAD, TS_GROUP_CP};
  for (uint32_t r = 0; r < n; r++) {
    const ts_rank_label *lb = ts_mapping_rank(map, r);
    bp.host_gpus += lb->host == h0;
    for (int q = 0; q < 2; q++) k[q * n + lb->group[kinds[q]]] += lb->host == h0;
  }
  ts_step_progs P;
  assert_int_equal(ts_step_compile(w, t, map, &P, &d), 0);
  const ts_step_prog *pr = &P.prog[0];
  double eg = 0, in = 0;
  for (int q = 0; q < 2; q++) {
    uint32_t p = ts_mapping_group_size(map, kinds[q]), *kq = k + q * n;
    for (uint32_t g = 0; g < n; g++) {
      if (kq[g] > bp.host_members[kinds[q]]) bp.host_members[kinds[q]] = kq[g];
      for (uint32_t i = 0; kq[g] && kq[g] < p && i < pr->n; i++) {
        const ts_step_ins *x = &pr->ins[i];
        if (x->op != TS_SI_COLL || x->group != kinds[q]) continue;
        double S = (double)x->val, on = S * kq[g] / p, off = S - on;
        eg += x->kind == TS_COLL_ALL_REDUCE ? S : x->kind == TS_COLL_REDUCE_SCATTER ? off : on;
        in += x->kind == TS_COLL_ALL_REDUCE ? S : x->kind == TS_COLL_REDUCE_SCATTER ? on : off;
      }
    }
  }
  double want = (eg > in ? eg : in) / host_in * 1e12;
  ts_time_ps got = ts_work_step_bound_volume(w, gpu_of(t), &bp);
  if (!(fabs((double)got - want) <= 2 + 1e-12 * want))
    fail_msg("tp %u cp %u dp %u z%u: volume term %llu ps, expected %.0f ps",
             m->tp, m->cp, m->dp, m->zero, (unsigned long long)got, want);
  *verified += got > 0;
  free(k);
  ts_step_progs_free(&P);
  ts_mapping_free(map);
}

/* The program replay's host terms, to the ps, on a one-stage mapping (one
 * program, no pipeline) whose gradient groups leave their host: replayed
 * here in max-plus (compute adds its time; a collective starts at the
 * later of the rank's time and its stream's previous end and lasts its
 * host term; a wait takes the max with that end) with the GPU term off
 * (ingress 0) and, per instance of size S over p members, K at most on
 * one host (counted from ts_work_map's labels), K < p: all-reduce S,
 * all-gather and reduce-scatter S (p-K)/p, over host_in. The bound is
 * the larger of that and the volume term. A reduce-scatter counted at its
 * own shard S/p (the bound before), or p - 1 for p - K, fails.
 *
 * The host fluid terms too (docs/model.md "Host fluid"), with the layout
 * facts also read from the labels: when every TP group sits on one host,
 * the TP group's instances of each non-TP stream go through one fluid
 * server of host_in per direction (tp S (p-K)/p in the major direction,
 * tp S/p in the other, all-reduce tp S each way), released at the issue
 * time; hi, the latest member's time, takes a stream's server time at a
 * wait, gains compute, and starts a TP instance; when every host holds n
 * ranks of one stage, the host's instances (ceil(n/K) groups) up to the
 * last one waited for per stream go through one server per direction
 * whose end bounds the step. *fluid counts mappings the fluid lifts. */
static void check_replay_host(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                              double host_in, double tp_out, ts_time_ps startup,
                              uint32_t *verified, uint32_t *fluid) {
  ts_diag d;
  ts_diag_clear(&d);
  ts_mapping *map = NULL;
  assert_int_equal(ts_sweep_apply(w, m, 16, &d), 0);
  assert_int_equal(ts_work_map(w, t, &map, &d), 0);
  uint32_t p[TS_GROUP_COUNT], K[TS_GROUP_COUNT], R = ts_mapping_ranks(map), n = 0;
  bool tp_whole = true, one_stage = true;
  for (int g = 0; g < TS_GROUP_COUNT; g++) {
    p[g] = ts_mapping_group_size(map, (ts_group)g);
    K[g] = 0;
    for (uint32_t a = 0; a < R; a++) {
      const ts_rank_label *la = ts_mapping_rank(map, a);
      uint32_t k = 0, on = 0;
      for (uint32_t b = 0; b < R; b++) {
        const ts_rank_label *lb = ts_mapping_rank(map, b);
        k += lb->host == la->host && lb->group[g] == la->group[g];
        on += lb->host == la->host;
        if (lb->host == la->host && lb->index[TS_GROUP_PP] != la->index[TS_GROUP_PP])
          one_stage = false;
        if (lb->group[TS_GROUP_TP] == la->group[TS_GROUP_TP] && lb->host != la->host)
          tp_whole = false;
      }
      if (k > K[g]) K[g] = k;
      if (!a) n = on;
      if (on != n) one_stage = false;
    }
  }
  ts_step_progs P;
  assert_int_equal(ts_step_compile(w, t, map, &P, &d), 0);
  assert_int_equal(P.nprogs, 1);
  const ts_step_prog *pr = &P.prog[0];
  ts_time_ps now = 0, hi = 0, free_at[TS_GROUP_COUNT] = {0}, *end[TS_GROUP_COUNT];
  ts_time_ps *tpend[TS_GROUP_COUNT], tpe[TS_GROUP_COUNT][2] = {{0}}, he[2] = {0, 0};
  uint32_t rs = 0, last[TS_GROUP_COUNT] = {0}, tp = p[TS_GROUP_TP];
  for (int g = 0; g < TS_GROUP_COUNT; g++) {
    assert_non_null(end[g] = calloc(pr->nords[g] + 1, sizeof *end[g]));
    assert_non_null(tpend[g] = calloc(pr->nords[g] + 1, sizeof *tpend[g]));
  }
  for (uint32_t i = 0; i < pr->n; i++)
    if (pr->ins[i].op == TS_SI_WAIT && pr->ins[i].ord + 1 > last[pr->ins[i].group])
      last[pr->ins[i].group] = pr->ins[i].ord + 1;
  for (uint32_t i = 0; i < pr->n; i++) {
    const ts_step_ins *in = &pr->ins[i];
    uint32_t g = in->group;
    if (in->op == TS_SI_COMP) now += in->val, hi += in->val;
    if (in->op == TS_SI_COLL) {
      double bytes = 0, S = (double)in->val;
      bool ar = in->kind == TS_COLL_ALL_REDUCE, ag = in->kind == TS_COLL_ALL_GATHER;
      bool rsc = in->kind == TS_COLL_REDUCE_SCATTER, span = p[g] > 1 && K[g] && K[g] < p[g];
      if (ar) bytes = S;
      if (ag || rsc) bytes = S * (p[g] - K[g]) / p[g];
      ts_time_ps lb = span ? (ts_time_ps)(bytes / host_in * 1e12) : 0;
      /* the TP egress term: a TP group inside one host moves, summed over
       * its p members, 2 (p-1) S for an all-reduce and (p-1) S for an
       * all-gather or a reduce-scatter through its members' NVLinks (no
       * NVLS on an A100), tp_out at most out of each member, none of it
       * before the operation's startup latency */
      if (tp_whole && g == TS_GROUP_TP && tp_out > 0 && p[g] > 1) {
        double out = S * (p[g] - 1) / p[g];
        if (ar) out = 2 * out;
        if (ar || ag || rsc) lb = (ts_time_ps)(((double)startup / 1e12 + out / tp_out) * 1e12);
      }
      ts_time_ps st = now > free_at[g] ? now : free_at[g];
      if (tp_whole && g == TS_GROUP_TP && hi > st) st = hi;
      end[g][in->ord] = free_at[g] = st + lb;
      rs += rsc && g == TS_GROUP_GRAD && lb > 0;
      /* in (0) and out (1) of the TP group's groups, then of the host's */
      double x[2][2] = {{0, 0}, {0, 0}}, c[2] = {tp, (double)((n + K[g] - 1) / (K[g] ? K[g] : 1))};
      double major[2] = {tp * (double)(p[g] - K[g]) / p[g], c[1] - (double)n / p[g]};
      double minor[2] = {(double)tp / p[g], (double)n / p[g]};
      for (int v = 0; v < 2; v++) {
        if (ar) x[v][0] = x[v][1] = S * c[v];
        if (ag) x[v][0] = S * major[v], x[v][1] = S * minor[v];
        if (rsc) x[v][1] = S * major[v], x[v][0] = S * minor[v];
      }
      bool fix = g == TS_GROUP_CP || g == TS_GROUP_EP || g == TS_GROUP_DP ||
                 g == TS_GROUP_GRAD || g == TS_GROUP_EXPERT_GRAD;
      for (int dir = 0; span && dir < 2; dir++) {
        if (tp_whole && tp > 1 && fix && x[0][dir] > 0) {
          if (now > tpe[g][dir]) tpe[g][dir] = now;
          tpe[g][dir] += (ts_time_ps)(x[0][dir] / host_in * 1e12);
        }
        if (one_stage && in->ord < last[g] && x[1][dir] > 0) {
          if (now > he[dir]) he[dir] = now;
          he[dir] += (ts_time_ps)(x[1][dir] / host_in * 1e12);
        }
      }
      tpend[g][in->ord] = tpe[g][0] > tpe[g][1] ? tpe[g][0] : tpe[g][1];
    }
    if (in->op == TS_SI_WAIT && end[g][in->ord] > now) now = end[g][in->ord];
    if (in->op == TS_SI_WAIT && tpend[g][in->ord] > hi) hi = tpend[g][in->ord];
    if (now > hi) hi = now;
  }
  ts_time_ps plain = now, all = now;
  if (hi > all) all = hi;
  if (he[0] > all) all = he[0];
  if (he[1] > all) all = he[1];
  ts_step_bound_params bp;
  memset(&bp, 0, sizeof bp);
  bp.host_in_bps = host_in;
  assert_int_equal(ts_work_host_members(w, t, bp.host_members, &bp.host_gpus), 0);
  ts_time_ps vol = ts_work_step_bound_volume(w, gpu_of(t), &bp), b;
  uint64_t key[2];
  ts_sweep_fabric f = {.host_in_bps = host_in, .tp_out_bps = tp_out, .tp_startup_ps = startup};
  assert_int_equal(ts_sweep_bound(w, t, m, 16, &f, &b, key, &d), 0);
  if (b != (all > vol ? all : vol))
    fail_msg("tp %u cp %u dp %u z%u: replay bound %llu ps, recomputed %llu ps "
             "(volume %llu ps, without the fluid %llu ps)", m->tp, m->cp, m->dp,
             m->zero, (unsigned long long)b, (unsigned long long)all,
             (unsigned long long)vol, (unsigned long long)plain);
  *verified += rs > 0 && now > vol;
  *fluid += all > plain && all > vol;
  for (int g = 0; g < TS_GROUP_COUNT; g++) free(end[g]), free(tpend[g]);
  ts_step_progs_free(&P);
  ts_mapping_free(map);
}

/* The sweep's early stop (ts_step_opts.horizon) against the full run r
 * of mapping m under o: a horizon 1 ps short of the step stops it (the
 * row is bounded, its bound the horizon, below the step), one equal to
 * the step does not (the same row to the bit: every event up to the
 * horizon runs, and the run then goes on as without it). */
static void check_horizon(ts_workload *w, const ts_topo *t, const ts_sweep_map *m,
                          const ts_step_opts *o, const ts_sweep_row *r,
                          uint32_t *checked) {
  ts_time_ps step = (ts_time_ps)llround(r->step_s * 1e12);
  ts_step_opts h = *o;
  ts_sweep_row a, e;
  memset(&a, 0, sizeof a);
  memset(&e, 0, sizeof e);
  h.horizon = step - 1;
  ts_sweep_simulate(w, t, m, 16, &h, &a);
  h.horizon = step;
  ts_sweep_simulate(w, t, m, 16, &h, &e);
  if (!(a.bounded && a.status == 0 && a.bound_s == (double)(step - 1) / 1e12 &&
        a.bound_s < r->step_s && a.step_s == 0))
    fail_msg("tp %u pp %u: horizon 1 ps short of the step %.12f s: bounded %d, "
             "status %d, bound %.12f s", m->tp, m->pp, r->step_s, a.bounded,
             a.status, a.bound_s);
  if (!(!e.bounded && e.status == 0 && e.step_s == r->step_s &&
        e.tokens_s == r->tokens_s && e.bubble_s == r->bubble_s &&
        !memcmp(e.exposed_s, r->exposed_s, sizeof e.exposed_s)))
    fail_msg("tp %u pp %u: horizon at the step %.12f s: bounded %d, step %.12f s",
             m->tp, m->pp, r->step_s, e.bounded, e.step_s);
  ++*checked;
}

/* ts_sweep_bound on every mapping of tiny-dense (global batch 8) over
 * 16 GPUs varying tp, pp, virtual stages, schedule and ZeRO stage:
 *  - the closed form (ts_sweep_bound_quick) is positive and below the
 *    program replay with free collectives; with the fabric's ingress it
 *    stays below the replay with that ingress and the simulated steps,
 *    and its blocking-TP term is > 0 on every tp > 1 mapping;
 *  - with ingress 0 (collectives free) the bound replays the schedule
 *    exactly as --free-comm runs it, for dense programs where every
 *    member of a group runs the same program: equal to the ps;
 *  - with the fabric's ingress it stays <= the simulated step on the
 *    plain fabric, with a leaf switch failed (traffic rerouted onto the
 *    other rails, contended), with one GPU's links degraded to 0.3 and
 *    with a 1.5x straggler: every time the runner adds is >= the bound's;
 *  - it is positive and above the free-comm step when TP > 1 (the TP
 *    all-reduces are blocking: tp_comm_overlap is off), so it is not
 *    vacuous. */
/* The four fault modes the bounds are checked under, on t (a 1-SU DGX
 * A100 fabric): none, a failed leaf, a GPU link at 0.3, a 1.5x straggler
 * (what[k][0] names mode k, NULL for none). */
static const char *const what[4][2] = {
    {NULL, NULL}, {"fail", "compute/leaf-su0-r0"},
    {"degrade", "dgx1/gpu0=0.3"}, {"straggler", "dgx0/gpu3=1.5"}};
static void four_fault_modes(const ts_topo *t, ts_faults f[4]) {
  static const ts_fault_kind kinds[4] = {TS_FAULT_FAIL, TS_FAULT_FAIL,
                                         TS_FAULT_DEGRADE, TS_FAULT_STRAGGLER};
  ts_diag d;
  ts_diag_clear(&d);
  for (int k = 0; k < 4; k++) {
    ts_faults_init(&f[k]);
    if (!what[k][0]) continue;
    assert_int_equal(ts_faults_add(&f[k], kinds[k], what[k][1], "--x", &d), 0);
    assert_int_equal(ts_faults_resolve(&f[k], t, &d), 0);
  }
}

static void test_bound_below_step(void **state) {
  (void)state;
  ts_workload *w = load_w(TINY);
  ts_topo *t = tu_load(SU);
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_workload_override(w, "global_batch", "8", &d), 0);
  ts_sweep_spec s;
  ts_sweep_spec_default(&s);
  s.vary = 1u << TS_SWEEP_TP | 1u << TS_SWEEP_PP | 1u << TS_SWEEP_VP |
           1u << TS_SWEEP_SCHEDULE | 1u << TS_SWEEP_ZERO;
  s.gpus = 16;
  ts_sweep_set z;
  assert_int_equal(ts_sweep_enumerate(w, t, &s, &z, &d), 0);
  assert_true(z.n >= 20);
  const uint32_t *ids;
  double ingress = ts_sweep_ingress(t, ts_topo_gpus(t, &ids));
  /* a DGX A100 GPU: 12 NVLinks of 25 GB/s at efficiency 0.8 = 240 GB/s,
   * counted twice (the bundle), plus its PCIe switch link */
  if (!(ingress > 480e9 && ingress < 600e9)) fail_msg("ingress %g", ingress);
  /* into a DGX A100 host of this SU: 8 compute NICs of 200 Gb/s (25 GB/s
   * each, 200 GB/s), two storage ports of 200 Gb/s, frontend and
   * management ports: above the compute NICs, far below one GPU's 507 */
  double host_in = ts_sweep_host_ingress(t, 16);
  if (!(host_in > 200e9 && host_in < 300e9)) fail_msg("host ingress %g", host_in);
  /* the TP egress capacity: GPU 0's NVLink bandwidths summed here (12
   * links of 25 GB/s at efficiency 0.8: 240 GB/s, the bundle once); the
   * A100's NVSwitches do not reduce (no NVLS) */
  ts_sweep_fabric fab;
  ts_sweep_fabric_of(t, 16, NULL, &fab);
  double nv = 0;
  for (uint32_t k = 0; k < ts_topo_degree(t, ids[0]); k++) {
    const ts_link *l = ts_topo_link(t, ts_topo_adj(t, ids[0])[k] >> 1);
    nv += l->kind == TS_LINK_NVLINK ? l->bandwidth : 0;
  }
  if (!(fab.tp_out_bps == nv && nv > 239e9 && nv < 241e9 && fab.nvls == 0 &&
        fab.ingress_bps == ingress && fab.host_in_bps == host_in))
    fail_msg("TP egress %g (NVLinks %g), nvls %u", fab.tp_out_bps, nv, fab.nvls);
  /* the least startup: NCCL's launch (4 us) and its least base latency
   * on Ampere (ring and tree LL 6.6 / 6.8 us, LL128 14, Simple 8.4; NVLS
   * 0 but 25 us of NVLS latency): 10.6 us */
  assert_int_equal(fab.tp_startup_ps, 10600000);
  /* the TP egress term counted three times over (tiny-dense's TP
   * collectives are small, so their rings pay latencies the term leaves
   * out: counted twice it still stays below every step) */
  ts_sweep_fabric thrice = fab;
  thrice.tp_out_bps /= 3;
  ts_faults f[4];
  four_fault_modes(t, f);
  uint32_t above_free = 0, quick_tp = 0, quick_z3 = 0, quick_host = 0;
  uint32_t quick_host_exact = 0, volume_exact = 0, horizons = 0, replay_rs = 0;
  uint32_t fluid = 0, replay_tp = 0, fluid_tp = 0, lift_tp = 0, quick_lift_tp = 0;
  uint32_t thrice_over = 0, exact_tp = 0;
  for (uint32_t i = 0; i < z.n; i++) {
    ts_time_ps b0, b;
    uint64_t key[2];
    ts_time_ps bg;
    assert_int_equal(ts_sweep_bound(w, t, &z.maps[i], 16, FAB(0, 0), &b0, key, &d), 0);
    assert_int_equal(ts_sweep_bound(w, t, &z.maps[i], 16, FAB(ingress, 0), &bg, key, &d), 0);
    assert_int_equal(ts_sweep_bound(w, t, &z.maps[i], 16, FAB(ingress, host_in), &b, key, &d), 0);
    assert_true(b >= bg && bg >= b0 && b0 > 0);
    /* the closed form (fill and drain along chunk 0) is below the replay
     * of the same compute and positive for every schedule here */
    ts_time_ps q, qc;
    assert_int_equal(ts_sweep_bound_quick(w, t, &z.maps[i], 16, FAB(0, 0), &q, &d), 0);
    if (!(q > 0 && q <= b0))
      fail_msg("mapping %u: quick bound %llu ps, replay %llu ps", i,
               (unsigned long long)q, (unsigned long long)b0);
    /* with the fabric's ingress the blocking TP collectives and ZeRO 3
     * weight all-gathers join it: still below the replay with the same
     * ingress, and above compute alone exactly when tp > 1 or ZeRO 3
     * over dp > 1 */
    bool comm = z.maps[i].tp > 1 || (z.maps[i].zero >= 3 && z.maps[i].dp > 1);
    ts_time_ps qg;
    assert_int_equal(ts_sweep_bound_quick(w, t, &z.maps[i], 16, FAB(ingress, 0), &qg, &d), 0);
    if (!(qg <= bg && (comm ? qg > q : qg == q)))
      fail_msg("mapping %u (tp %u): quick %llu ps, with TP %llu ps, replay %llu ps",
               i, z.maps[i].tp, (unsigned long long)q, (unsigned long long)qg,
               (unsigned long long)bg);
    /* the host term (ZeRO 3 gathers over a group spanning hosts) only
     * lifts it, and stays below the replay with the same terms */
    assert_int_equal(ts_sweep_bound_quick(w, t, &z.maps[i], 16, FAB(ingress, host_in), &qc, &d), 0);
    if (!(qc >= qg && qc <= b))
      fail_msg("mapping %u: quick %llu ps with the host term, %llu without, "
               "replay %llu ps", i, (unsigned long long)qc,
               (unsigned long long)qg, (unsigned long long)b);
    quick_host += qc > qg;
    if (z.maps[i].zero >= 3 && z.maps[i].pp == 1 && z.maps[i].dp > 1)
      check_host_term(w, t, &z.maps[i], host_in, &quick_host_exact);
    if (z.maps[i].pp == 1 && z.maps[i].dp > 1 && z.maps[i].tp * z.maps[i].dp > 8) {
      check_volume_term(w, t, &z.maps[i], host_in, &volume_exact);
      check_replay_host(w, t, &z.maps[i], host_in, 0, 0, &replay_rs, &fluid);
      check_replay_host(w, t, &z.maps[i], host_in, fab.tp_out_bps, fab.tp_startup_ps,
                        &replay_tp, &fluid_tp);
      exact_tp += z.maps[i].tp > 1;
    }
    /* the TP egress term (fab) only lifts both bounds, the closed form
     * staying below the replay, and lifts both on every tp > 1 mapping */
    ts_time_ps bt, qt, b2;
    assert_int_equal(ts_sweep_bound(w, t, &z.maps[i], 16, &fab, &bt, key, &d), 0);
    assert_int_equal(ts_sweep_bound_quick(w, t, &z.maps[i], 16, &fab, &qt, &d), 0);
    assert_int_equal(ts_sweep_bound(w, t, &z.maps[i], 16, &thrice, &b2, key, &d), 0);
    if (!(bt >= b && qt >= qc && qt <= bt && b2 >= bt))
      fail_msg("mapping %u: with the TP egress term replay %llu ps (%llu without), "
               "closed form %llu ps (%llu without)", i, (unsigned long long)bt,
               (unsigned long long)b, (unsigned long long)qt, (unsigned long long)qc);
    lift_tp += z.maps[i].tp > 1 && bt > b;
    quick_lift_tp += z.maps[i].tp > 1 && qt > qc;
    if (z.maps[i].tp == 1) assert_true(bt == b && qt == qc);
    quick_tp += z.maps[i].tp > 1 && qc > q;
    quick_z3 += z.maps[i].tp == 1 && z.maps[i].zero >= 3 && qc > q;
    ts_step_opts o;
    ts_step_opts_default(&o);
    o.free_comm = 1;
    ts_sweep_row r;
    memset(&r, 0, sizeof r);
    ts_sweep_simulate(w, t, &z.maps[i], 16, &o, &r);
    assert_int_equal(r.status, 0);
    assert_true(fabs(r.step_s - (double)b0 / 1e12) <= 1e-12 * r.step_s + 1e-12);
    above_free += z.maps[i].tp > 1 && b > b0;
    for (int k = 0; k < 4; k++) {
      ts_step_opts_default(&o);
      o.faults = what[k][0] ? &f[k] : NULL;
      ts_sweep_simulate(w, t, &z.maps[i], 16, &o, &r);
      assert_int_equal(r.status, 0);
      if (!((double)bt / 1e12 <= r.step_s && (double)qt / 1e12 <= r.step_s))
        fail_msg("mapping %u (%s): bound %.9f s > step %.9f s", i,
                 what[k][0] ? what[k][0] : "plain", (double)bt / 1e12, r.step_s);
      thrice_over += k == 0 && (double)b2 / 1e12 > r.step_s;
      if (i % 6 == 0) check_horizon(w, t, &z.maps[i], &o, &r, &horizons);
    }
  }
  /* the early stop, at the ps on both sides, on a sixth of the mappings
   * under every fault mode */
  assert_int_equal(horizons, 4 * ((z.n + 5) / 6));
  /* every mapping with tp > 1 has blocking TP collectives (sequence
   * parallel: all-gather and reduce-scatter) */
  uint32_t tp_gt1 = 0;
  for (uint32_t i = 0; i < z.n; i++) tp_gt1 += z.maps[i].tp > 1;
  assert_int_equal(above_free, tp_gt1);
  assert_int_equal(quick_tp, tp_gt1);
  assert_true(tp_gt1 > 0);
  /* ZeRO 3 alone lifts it on the tp 1 mappings that have it */
  uint32_t z3_tp1 = 0;
  for (uint32_t i = 0; i < z.n; i++)
    z3_tp1 += z.maps[i].tp == 1 && z.maps[i].zero >= 3 && z.maps[i].dp > 1;
  assert_int_equal(quick_z3, z3_tp1);
  assert_true(z3_tp1 > 0);
  /* the host term lifts exactly the ZeRO 3 mappings whose gradient group
   * spans hosts: order tp-cp-ep-dp-pp with cp 1 on hosts of 8 GPUs puts
   * the tp x dp ranks of a stage on consecutive GPUs, so a gradient group
   * leaves its host exactly when tp dp > 8 (check_host_term verified those
   * of pp 1 to the ps) */
  uint32_t z3_span = 0;
  for (uint32_t i = 0; i < z.n; i++)
    z3_span += z.maps[i].zero >= 3 && z.maps[i].dp > 1 && z.maps[i].tp * z.maps[i].dp > 8;
  assert_int_equal(quick_host, z3_span);
  assert_true(quick_host_exact > 0 && quick_host_exact <= z3_span);
  /* the volume term, to the ps, on every one-stage mapping whose gradient
   * groups leave their host, each ZeRO stage (0-3) among them */
  uint32_t vol_span = 0;
  for (uint32_t i = 0; i < z.n; i++)
    vol_span += z.maps[i].pp == 1 && z.maps[i].dp > 1 && z.maps[i].tp * z.maps[i].dp > 8;
  assert_int_equal(volume_exact, vol_span);
  assert_true(vol_span >= 4);
  /* the replay's host terms to the ps on the same mappings, decided by a
   * ZeRO 1 or 2 gradient reduce-scatter's egress on some of them */
  assert_true(replay_rs > 0);
  /* the host fluid lifts some of them (ZeRO 2's reduce-scatter every
   * micro-batch through the TP group's or the host's NICs) */
  assert_true(fluid > 0);
  /* the TP egress term lifts the replay and the closed form of every
   * tp > 1 mapping (blocking TP collectives, each longer than at the
   * GPU's ingress), the replay to the ps on the one-stage ones with it
   * (check_replay_host with tp_out), and counted three times over it
   * passes the simulated step of some mapping: the check above can fail */
  assert_int_equal(lift_tp, tp_gt1);
  assert_int_equal(quick_lift_tp, tp_gt1);
  assert_true(exact_tp >= 2);
  if (!(thrice_over > 0)) fail_msg("the TP egress term tripled stays below every step");
  for (int k = 0; k < 4; k++) ts_faults_free(&f[k]);
  ts_sweep_set_free(&z);
  ts_topo_free(t);
  ts_workload_free(w);
}

/* The CP part of the host volume term: tiny-dense on 16 GPUs (2 hosts),
 * pp 1, tp, cp and ZeRO varied. On every mapping whose CP or gradient
 * groups leave their host (tp cp > 8, or tp cp dp > 8 with dp > 1), the
 * term equals the bytes recomputed from the program (check_volume_term),
 * the replay with the host fluid terms equals its recomputation to the ps
 * (check_replay_host; the fluid lifts it above the other terms on some,
 * the CP all-gathers of a TP group that fills a host sharing its NICs),
 * and the closed form and the replay stay below the simulated step,
 * healthy, with a leaf switch failed, one GPU's links degraded to 0.3 and
 * a 1.5x straggler. */
static void test_volume_cp(void **state) {
  (void)state;
  ts_workload *w = load_w(TINY);
  ts_topo *t = tu_load(SU);
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_workload_override(w, "global_batch", "8", &d), 0);
  ts_sweep_spec s;
  ts_sweep_spec_default(&s);
  s.vary = 1u << TS_SWEEP_TP | 1u << TS_SWEEP_CP | 1u << TS_SWEEP_ZERO;
  assert_int_equal(ts_sweep_spec_fix(&s, TS_SWEEP_PP, "1", &d), 0);
  s.gpus = 16;
  ts_sweep_set z;
  assert_int_equal(ts_sweep_enumerate(w, t, &s, &z, &d), 0);
  double host_in = ts_sweep_host_ingress(t, 16);
  ts_sweep_fabric fab;
  ts_sweep_fabric_of(t, 16, NULL, &fab);
  ts_faults f[4];
  four_fault_modes(t, f);
  uint32_t cp_span = 0, verified = 0, rs = 0, fluid = 0, fluid_cp = 0, rs_tp = 0;
  uint32_t fluid_tp = 0;
  for (uint32_t i = 0; i < z.n; i++) {
    const ts_sweep_map *m = &z.maps[i];
    bool cp = m->cp > 1 && m->tp * m->cp > 8, grad = m->dp * m->cp > 1 && m->tp * m->cp * m->dp > 8;
    if (!cp && !grad) continue;
    cp_span += cp;
    uint32_t before = verified, fl = fluid;
    check_volume_term(w, t, m, host_in, &verified);
    assert_int_equal(verified, before + 1); /* > 0 on each of them */
    check_replay_host(w, t, m, host_in, 0, 0, &rs, &fluid);
    check_replay_host(w, t, m, host_in, fab.tp_out_bps, fab.tp_startup_ps, &rs_tp, &fluid_tp);
    fluid_cp += cp && fluid > fl;
    ts_time_ps q, b;
    uint64_t key[2];
    assert_int_equal(ts_sweep_bound_quick(w, t, m, 16, &fab, &q, &d), 0);
    assert_int_equal(ts_sweep_bound(w, t, m, 16, &fab, &b, key, &d), 0);
    assert_true(q <= b);
    for (int k = 0; k < 4; k++) {
      ts_step_opts o;
      ts_step_opts_default(&o);
      o.faults = what[k][0] ? &f[k] : NULL;
      ts_sweep_row r;
      memset(&r, 0, sizeof r);
      ts_sweep_simulate(w, t, m, 16, &o, &r);
      assert_int_equal(r.status, 0);
      if (!((double)b / 1e12 <= r.step_s))
        fail_msg("tp %u cp %u dp %u z%u (%s): bound %.9f s > step %.9f s", m->tp,
                 m->cp, m->dp, m->zero, what[k][0] ? what[k][0] : "plain",
                 (double)b / 1e12, r.step_s);
    }
  }
  assert_true(cp_span >= 3);
  assert_true(fluid_cp > 0);
  for (int k = 0; k < 4; k++) ts_faults_free(&f[k]);
  ts_sweep_set_free(&z);
  ts_topo_free(t);
  ts_workload_free(w);
}

/* Sum of GPU g's NVLink bandwidths, the TP egress capacity when it
 * applies. */
static double nvlinks_of(const ts_topo *t, uint32_t g) {
  double nv = 0;
  for (uint32_t k = 0; k < ts_topo_degree(t, g); k++) {
    const ts_link *l = ts_topo_link(t, ts_topo_adj(t, g)[k] >> 1);
    nv += l->kind == TS_LINK_NVLINK ? l->bandwidth : 0;
  }
  return nv;
}

/* ts_sweep_tp_egress on the A100 SU under faults of kind k on name (or
 * none), and *nvls. */
static double egress_with(const ts_topo *t, ts_fault_kind k, const char *name,
                          uint32_t *nvls) {
  ts_faults f;
  ts_faults_init(&f);
  ts_step_opts o;
  ts_step_opts_default(&o);
  ts_diag d;
  ts_diag_clear(&d);
  if (name) {
    assert_int_equal(ts_faults_add(&f, k, name, "--x", &d), 0);
    assert_int_equal(ts_faults_resolve(&f, t, &d), 0);
    o.faults = &f;
  }
  double e = ts_sweep_tp_egress(t, 16, &o, nvls);
  ts_faults_free(&f);
  return e;
}

/* When the TP egress term may be used (src/sweep/sweep_fabric.c): on a
 * healthy DGX A100 SU, a GPU's NVLinks (240 GB/s), also with a leaf
 * switch failed or NVLinks degraded (routes stay on NVLink, at most at
 * their bandwidth); 0 once an NVLink is down or fails during the run
 * (a route could leave NVLink for PCIe), and on a server whose GPUs pair
 * up over NVLink bridges but reach the others over PCIe. A DGX H100 has
 * NVLS switches: *nvls 1 (an all-reduce member then sends only S). */
static void test_tp_egress(void **state) {
  (void)state;
  ts_topo *t = tu_load(SU);
  const uint32_t *ids;
  ts_topo_gpus(t, &ids);
  double nv = nvlinks_of(t, ids[0]);
  uint32_t nvls = 9;
  assert_true(nv > 239e9 && nv < 241e9);
  assert_true(egress_with(t, TS_FAULT_FAIL, NULL, &nvls) == nv && nvls == 0);
  assert_true(ts_sweep_tp_egress(t, 16, NULL, &nvls) == nv);
  assert_true(egress_with(t, TS_FAULT_FAIL, "compute/leaf-su0-r0", &nvls) == nv);
  assert_true(egress_with(t, TS_FAULT_DEGRADE, "dgx1/gpu0=0.3", &nvls) == nv);
  assert_true(egress_with(t, TS_FAULT_STRAGGLER, "dgx0/gpu3=1.5", &nvls) == nv);
  assert_true(egress_with(t, TS_FAULT_FAIL, "dgx0/nvsw2", &nvls) == 0);
  assert_true(egress_with(t, TS_FAULT_FAIL, "dgx1/gpu3--dgx1/nvsw0", &nvls) == 0);
  assert_true(egress_with(t, TS_FAULT_FAIL_AT, "1ms:dgx0/nvsw5", &nvls) == 0);
  ts_topo_free(t);
  t = tu_load("topologies/a100-pcie-nvlink-bridge.yaml");
  assert_true(ts_sweep_tp_egress(t, UINT32_MAX, NULL, &nvls) == 0);
  ts_topo_free(t);
  t = tu_load("topologies/dgx-h100.yaml");
  ts_topo_gpus(t, &ids);
  nv = nvlinks_of(t, ids[0]);
  assert_true(nv > 0 && ts_sweep_tp_egress(t, UINT32_MAX, NULL, &nvls) == nv);
  assert_int_equal(nvls, 1);
  /* the least startup on Hopper: launch 4 us + ring LL 6.6 us, below NVLS
   * (no base latency, 25 us of NVLS latency); 0 under --alpha (the
   * alpha-beta model has none) and with free collectives (no term) */
  assert_int_equal(ts_sweep_tp_startup(t, UINT32_MAX, NULL), 10600000);
  ts_step_opts o;
  ts_step_opts_default(&o);
  o.alpha_ps = 0;
  assert_int_equal(ts_sweep_tp_startup(t, UINT32_MAX, &o), 0);
  ts_step_opts_default(&o);
  o.free_comm = 1;
  assert_true(ts_sweep_tp_startup(t, UINT32_MAX, &o) == 0 &&
              ts_sweep_tp_egress(t, UINT32_MAX, &o, &nvls) == 0);
  ts_topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts_tp_pp),
      cmocka_unit_test(test_orders),
      cmocka_unit_test(test_memory_refusal),
      cmocka_unit_test(test_pareto_and_rank),
      cmocka_unit_test(test_cli_svg),
      cmocka_unit_test(test_bound_below_step),
      cmocka_unit_test(test_volume_cp),
      cmocka_unit_test(test_tp_egress),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
