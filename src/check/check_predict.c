/* check_predict.c - the predictions a baseline may pin: a collective's busbw
 * (as `topsim bench --op OP -b SIZE -e SIZE` reports it) and a workload's
 * step time (as `topsim run` reports it), both through the library's own
 * entry points (ts_coll_run, ts_step_run) so check and the commands cannot
 * disagree. Cost: one engine run each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "topsim/ts_coll_run.h"
#include "topsim/ts_step.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_work.h"

void check_bench_name(const ck_bench *b, char *buf, size_t len) {
  char nodes[32] = "";
  if (b->nodes) snprintf(nodes, sizeof nodes, " on %u nodes", b->nodes);
  snprintf(buf, len, "bench %s %s%s%s%s busbw", ts_coll_op_name(b->op), b->size_src,
           nodes, b->algo ? " algo " : "", b->algo ? ts_coll_algo_name(b->algo) : "");
}

void check_run_name(const ck_run *r, char *buf, size_t len) {
  const char *base = strrchr(r->workload_src, '/');
  base = base ? base + 1 : r->workload_src;
  int n = snprintf(buf, len, "run %s", base);
  for (uint32_t i = 0; i < r->nsets && n > 0 && (size_t)n < len; i++)
    n += snprintf(buf + n, len - (size_t)n, " %s", r->sets[i]);
  if (n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " step time");
}

/* The GPUs of the first `nodes` hosts, or all of them (nodes 0). */
static int bench_gpus(const ts_topo *t, uint32_t nodes, uint32_t **out, uint32_t *n) {
  const uint32_t *gpus;
  uint32_t total = ts_topo_gpus(t, &gpus);
  *out = malloc(((size_t)total + 1) * sizeof **out);
  if (!*out) return TS_ENOMEM;
  *n = 0;
  for (uint32_t i = 0; i < total; i++)
    if (!nodes || (uint32_t)ts_topo_node(t, gpus[i])->host < nodes) (*out)[(*n)++] = gpus[i];
  return 0;
}

int check_predict_bench(const ts_topo *t, const ck_bench *b, double *busbw, ts_diag *d) {
  uint32_t *g, n;
  if (bench_gpus(t, b->nodes, &g, &n)) return ts_diag_set(d, TS_ENOMEM, "", 0, 0, "out of memory");
  if (n < 2) {
    free(g);
    return ts_diag_set(d, TS_EUSAGE, "", 0, 0, "%u GPU%s: a collective needs at least 2",
                       n, n == 1 ? "" : "s");
  }
  ts_coll_run_opts o;
  ts_coll_run_opts_default(&o);
  o.params.algo = b->algo;
  ts_coll_run_result r;
  uint64_t size = ts_coll_nccltests_size(b->op, (int)n, b->size, 4);
  int rc = ts_coll_run(t, g, n, b->op, size, &o, &r, d);
  if (!rc) {
    double sec = ts_ps_to_s(r.time);
    *busbw = sec > 0 ? ts_coll_busbw(b->op, (int)n, size, sec) : 0;
  }
  free(g);
  return rc;
}

int check_predict_run(const ts_topo *t, const ck_run *c, double *step_s, ts_diag *d) {
  ts_workload *w = NULL;
  ts_mapping *m = NULL;
  int rc = ts_workload_load_file(c->workload, &w, d);
  if (!rc) rc = ts_workload_override_list(w, (const char *const *)c->sets, c->nsets, d);
  if (!rc) rc = ts_work_map(w, t, &m, d);
  if (!rc) {
    ts_step_opts o;
    ts_step_opts_default(&o);
    ts_step_result r;
    rc = ts_step_run(w, t, m, &o, &r, d);
    if (!rc) *step_s = ts_ps_to_s(r.step_time);
    ts_step_result_free(&r);
  }
  ts_mapping_free(m);
  ts_workload_free(w);
  return rc;
}
