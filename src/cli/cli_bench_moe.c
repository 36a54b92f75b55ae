/* cli_bench_moe.c - `topsim bench --op moe_dispatch|moe_combine [--moe
 * SPEC]`: the all-to-allv matrix of one MoE dispatch or combine
 * (ts_moe_matrix: top-k routing, skew, node-limited groups, FP8 dispatch)
 * run once on the fresh network, reported the way DeepEP's tables do:
 * bytes per rank over NVLink (same node) and RDMA (other nodes), the time,
 * and each as effective GB/s per rank; the bottleneck is RDMA whenever
 * tokens leave the node, else NVLink. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_bench_moe.h"
#include "topsim/ts_work.h"

static int parse_key(ts_moe_route *r, const char *k, const char *v) {
  uint64_t x;
  if (!strcmp(k, "skew")) {
    char *end;
    r->skew = strtod(v, &end);
    return *end || r->skew < 0 || r->skew > 10 ? -1 : 0;
  }
  if (!strcmp(k, "dtype")) {
    if (strcmp(v, "fp8") && strcmp(v, "bf16")) return -1;
    r->fp8 = !strcmp(v, "fp8");
    return 0;
  }
  static const char *const keys[] = {"tokens", "hidden", "topk", "experts",
                                     "groups"};
  uint32_t *dst[] = {&r->tokens, &r->hidden, &r->top_k, &r->experts,
                     &r->node_limit};
  for (int i = 0; i < 5; i++)
    if (!strcmp(k, keys[i])) {
      char opt[32];
      snprintf(opt, sizeof opt, "--moe %s", k);
      if (cli_parse_uint("bench", opt, v, i == 4 ? 0 : 1, 1u << 30, &x))
        return -2;
      *dst[i] = (uint32_t)x;
      return 0;
    }
  return -1;
}

static int parse_spec(const char *spec, ts_moe_route *r) {
  *r = (ts_moe_route){4096, 7168, 8, 256, 0, 0, 0}; /* DeepEP's tests */
  if (!spec) return 0;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv;
       kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    int rc = eq ? (*eq = 0, parse_key(r, kv, eq + 1)) : -1;
    if (rc == -2) return EX_USAGE;
    if (rc)
      return cli_usage_error("bench", "--moe: '%s' is not one of tokens=N, "
                             "hidden=N, topk=N, experts=N, skew=X, groups=M, "
                             "dtype=fp8|bf16", kv);
  }
  return 0;
}

typedef struct moe_sum {
  double nvl, rdma, max_rank; /* bytes: mean per rank, and the largest */
} moe_sum;

static moe_sum summarize(const uint64_t *mx, const int32_t *host, uint32_t n) {
  moe_sum s = {0, 0, 0};
  for (uint32_t i = 0; i < n; i++) {
    double mine = 0;
    for (uint32_t j = 0; j < n; j++) {
      double b = (double)mx[(size_t)i * n + j];
      mine += b;
      if (host[i] == host[j]) s.nvl += b;
      else s.rdma += b;
    }
    if (mine > s.max_rank) s.max_rank = mine;
  }
  s.nvl /= n;
  s.rdma /= n;
  return s;
}

static int report(const ts_topo *t, const ts_moe_route *r, uint32_t n,
                  uint32_t nodes, int combine, const moe_sum *s, double sec,
                  int json) {
  double nvl = sec > 0 ? s->nvl / sec / 1e9 : 0;
  double rdma = sec > 0 ? s->rdma / sec / 1e9 : 0;
  const char *neck = s->rdma > 0 ? "rdma" : "nvl";
  const char *op = combine ? "moe_combine" : "moe_dispatch";
  const char *dt = combine || !r->fp8 ? "bf16" : "fp8";
  if (json) {
    json_t *j = json_pack(
        "{s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:i,s:s,s:f,s:f,s:f,s:f,s:f,"
        "s:f,s:s}",
        "topology", ts_topo_name(t), "op", op, "gpus", (int)n, "nodes",
        (int)nodes, "tokens", (int)r->tokens, "hidden", (int)r->hidden, "top_k",
        (int)r->top_k, "experts", (int)r->experts, "skew", r->skew,
        "node_limit", (int)r->node_limit, "dtype", dt, "nvl_bytes_per_rank",
        s->nvl, "rdma_bytes_per_rank", s->rdma, "max_bytes_rank", s->max_rank,
        "time_us", sec * 1e6, "nvl_GBps", nvl, "rdma_GBps", rdma, "bottleneck",
        neck);
    if (!j) return EX_SOFTWARE;
    int rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                       JSON_REAL_PRECISION(10));
    json_decref(j);
    putchar('\n');
    return rc ? EX_IOERR : 0;
  }
  printf("# topsim bench: %s on %s, %u GPUs over %u nodes\n", op,
         ts_topo_name(t), n, nodes);
  printf("# %u tokens per rank, hidden %u, top-%u of %u experts, skew %g, "
         "node limit %u, %s\n", r->tokens, r->hidden, r->top_k, r->experts,
         r->skew, r->node_limit, dt);
  printf("#  nvl_bytes/rank  rdma_bytes/rank  max_bytes/rank    time(us)  "
         "nvl(GB/s)  rdma(GB/s)  bottleneck\n");
  printf("%17.0f %16.0f %15.0f %11.2f %10.2f %11.2f  %s\n", s->nvl, s->rdma,
         s->max_rank, sec * 1e6, nvl, rdma, neck);
  return 0;
}

int cli_bench_moe(const ts_topo *t, const uint32_t *g, uint32_t n,
                  int combine, const char *spec, ts_coll_run_opts *cr,
                  int json) {
  ts_moe_route r;
  int rc = parse_spec(spec, &r);
  if (rc) return rc;
  if (r.experts % n || r.top_k > r.experts)
    return cli_usage_error("bench", "--moe: experts = %u must be a multiple "
                           "of the %u GPUs and at least topk = %u", r.experts,
                           n, r.top_k);
  int32_t *host = malloc((size_t)n * sizeof *host);
  uint64_t *mx = malloc((size_t)n * n * sizeof *mx);
  if (!host || !mx) {
    free(host);
    free(mx);
    return EX_OSERR;
  }
  uint32_t nodes = 0;
  for (uint32_t i = 0; i < n; i++) {
    host[i] = ts_topo_node(t, g[i])->host;
    uint32_t j = 0;
    while (j < i && host[j] != host[i]) j++;
    nodes += j == i;
  }
  rc = ts_moe_matrix(&r, host, n, combine, mx);
  ts_coll_run_result res;
  ts_diag d;
  ts_diag_clear(&d);
  cr->params.algo = TS_COLL_DIRECT;
  cr->params.matrix = mx;
  if (!rc) rc = ts_coll_run(t, g, n, TS_COLL_ALL_TO_ALLV, 0, cr, &res, &d);
  cr->params.matrix = NULL;
  if (rc == TS_EUSAGE) rc = cli_usage_error("bench", "%s", d.msg);
  else if (rc) rc = cli_fail(&d, rc);
  else {
    moe_sum s = summarize(mx, host, n);
    rc = report(t, &r, n, nodes, combine, &s, (double)res.time / 1e12, json);
  }
  free(host);
  free(mx);
  return rc;
}
