/* cli_bench.c - `topsim bench TOPO`: nccl-tests-style sweeps of
 * point-to-point traffic (sendrecv between two GPUs, or a pattern over a
 * GPU set) through routing and the network model. One independent,
 * deterministic run per message size. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "cli/cli_faults.h"
#include "cli/cli_args.h"
#include "topsim/ts_coll_run.h"
#include "topsim/ts_p2p.h"


typedef struct bench_opts {
  const char *file, *src, *dst, *pattern, *gpus;
  ts_faults faults;       /* --fail, --degrade, --straggler, --fail-at */
  uint64_t min_bytes, max_bytes, factor, seed;
  int json, stats;
  int coll;                 /* a collective (else point-to-point) */
  ts_coll_op op;
  const char *nodes;        /* --nodes N: the first N nodes' GPUs */
  ts_coll_run_opts cr;
  ts_p2p_opts p2p;
} bench_opts;

static void bench_help(void) {
  printf(
      "usage: topsim bench TOPO [--src GPU --dst GPU | --pattern P] [options]\n\n"
      "Point-to-point benchmark in the style of nccl-tests: every transfer of\n"
      "one message size starts at time 0; time is when the last one lands.\n\n"
      "traffic:\n"
      "  --op OP              sendrecv (default), all_reduce, all_gather,\n"
      "                       reduce_scatter, all_to_all, broadcast, reduce\n"
      "  --src GPU --dst GPU  sendrecv: one transfer (index or name dgx0/gpu3)\n"
      "  --pattern P          sendrecv: permutation | shift:K | incast:K | bisection\n"
      "  --gpus SET           all (default) | node:N | rack:N | su:N | first:N |\n"
      "                       a comma list of GPUs\n"
      "  --nodes N            collectives: the GPUs of the first N nodes\n"
      "  --seed N             permutation seed (default 1)\n"
      "collectives:\n"
      "  --algo A             auto (default) | ring | tree | hd | direct | hier | nvls\n"
      "  --proto P            auto (default) | LL | LL128 | Simple\n"
      "  --channels N         ring channels (default 1)\n"
      "  --pipeline-chunk S   split every step into chunks of S (default: none)\n"
      "  --compact            rings as O(p) long-lived neighbour flows\n"
      "  --root N             broadcast/reduce root rank (default 0)\n"
      "  --reduction-cost     charge each reduction a serial HBM pass (default:\n"
      "                       free, as NCCL fuses reductions into its copies)\n"
      "sizes (K/M/G are powers of 1024):\n"
      "  -b, --minbytes S     smallest message (default 8)\n"
      "  -e, --maxbytes S     largest message (default 128M)\n"
      "  -f, --stepfactor F   multiply the size by F each row (default 2)\n"
      "model:\n"
      "  --fidelity flow|chunk   max-min flows (default) or chunked queues\n"
      "  --chunk-size S       chunk fidelity: chunk size (default 64K)\n"
      "  --port-buffer S      chunk fidelity: bytes per port (default unlimited)\n"
      "  --routing ecmp|spray one hashed path per transfer (default) or spread\n"
      "  --spray N            spray over at most N paths (default 64)\n"
      "  --no-pxn             send from the GPU's own NIC (default: PXN)\n"
      "  --alpha TIME         per-message overhead, e.g. 2us (default: the\n"
      "                       network plane's software overhead; 0 in a node)\n");
  fputs(cli_faults_help, stdout);
  printf(
      "output:\n"
      "  --json               JSON instead of the table\n"
      "  --stats              engine and network counters of the largest size\n"
      "  -h, --help           show this help\n\n"
      "Stragglers slow compute only: a bench of communication is unchanged.\n\n"
      "exit status: 0 ok, 64 usage, 65 bad topology or no route, 66 no file\n");
}

static int parse_model_opt(int c, const char *arg, bench_opts *o) {
  uint64_t v;
  switch (c) {
  case 'F':
    if (!strcmp(arg, "flow")) o->p2p.net.fidelity = TS_NET_FLOW;
    else if (!strcmp(arg, "chunk")) o->p2p.net.fidelity = TS_NET_CHUNK;
    else return cli_usage_error("bench", "--fidelity must be flow or chunk");
    return 0;
  case 'C': return cli_parse_bytes("bench", "--chunk-size", arg, &o->p2p.net.chunk_bytes) ? EX_USAGE : 0;
  case 'B': return cli_parse_bytes("bench", "--port-buffer", arg, &o->p2p.net.port_buffer_bytes) ? EX_USAGE : 0;
  case 'R':
    if (!strcmp(arg, "ecmp")) o->p2p.spray = 0;
    else if (!strcmp(arg, "spray")) o->p2p.spray = o->p2p.spray ? o->p2p.spray : 64;
    else return cli_usage_error("bench", "--routing must be ecmp or spray");
    return 0;
  case 'S':
    if (cli_parse_uint("bench", "--spray", arg, 1, TS_ROUTE_MAX_PATHS, &v)) return EX_USAGE;
    o->p2p.spray = (uint32_t)v;
    return 0;
  case 'A': {
    ts_time_ps ps;
    if (ts_parse_latency(arg, &ps))
      return cli_usage_error("bench", "--alpha '%s' is not a time such as 2us", arg);
    o->p2p.alpha_ps = (int64_t)ps;
    return 0;
  }
  }
  return cli_usage_error("bench", "unknown option");
}

/* --op: sendrecv, or a collective by its ts_coll name. */
static int parse_op(const char *arg, bench_opts *o) {
  static const ts_coll_op ops[] = {TS_COLL_ALL_REDUCE, TS_COLL_ALL_GATHER,
                                   TS_COLL_REDUCE_SCATTER, TS_COLL_ALL_TO_ALL,
                                   TS_COLL_BROADCAST, TS_COLL_REDUCE};
  o->coll = 0;
  if (!strcmp(arg, "sendrecv")) return 0;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(arg, ts_coll_op_name(ops[i]))) {
      o->coll = 1;
      o->op = ops[i];
      return 0;
    }
  return cli_usage_error("bench", "--op %s: expected sendrecv, all_reduce, "
                         "all_gather, reduce_scatter, all_to_all, broadcast "
                         "or reduce", arg);
}

static int parse_algo(const char *arg, bench_opts *o) {
  for (int a = 0; a < TS_COLL_ALGO_COUNT; a++)
    if (!strcmp(arg, ts_coll_algo_name((ts_coll_algo)a))) {
      o->cr.params.algo = (ts_coll_algo)a;
      return 0;
    }
  return cli_usage_error("bench", "--algo %s: expected auto, ring, tree, hd, "
                         "direct, hier or nvls", arg);
}

static int parse_proto(const char *arg, bench_opts *o) {
  for (int q = 0; q <= TS_COLL_PROTO_AUTO; q++)
    if (!strcasecmp(arg, ts_coll_proto_name((ts_coll_proto)q))) {
      o->cr.params.proto = (ts_coll_proto)q;
      return 0;
    }
  return cli_usage_error("bench", "--proto %s: expected auto, LL, LL128 or Simple", arg);
}

static int parse_coll_opt(int c, const char *arg, bench_opts *o) {
  uint64_t v;
  switch (c) {
  case 'a': return parse_algo(arg, o);
  case 'q': return parse_proto(arg, o);
  case 'n': o->nodes = arg; return 0;
  case 'c':
    if (cli_parse_uint("bench", "--channels", arg, 1, 64, &v)) return EX_USAGE;
    o->cr.params.channels = (uint32_t)v;
    return 0;
  case 'k':
    return cli_parse_bytes("bench", "--pipeline-chunk", arg, &o->cr.params.chunk_bytes)
               ? EX_USAGE : 0;
  case 'm': o->cr.compact = 1; return 0;
  case 'N': o->cr.reduction_cost = 1; return 0;
  case 'r':
    if (cli_parse_uint("bench", "--root", arg, 0, 1u << 30, &v)) return EX_USAGE;
    o->cr.params.root = (int)v;
    return 0;
  }
  return parse_model_opt(c, arg, o);
}

static int parse_opt(int c, const char *arg, bench_opts *o) {
  switch (c) {
  case 'o': return parse_op(arg, o);
  case 's': o->src = arg; return 0;
  case 'd': o->dst = arg; return 0;
  case 'p': o->pattern = arg; return 0;
  case 'g': o->gpus = arg; return 0;
  case 'x': return cli_parse_uint("bench", "--seed", arg, 0, UINT64_MAX, &o->seed) ? EX_USAGE : 0;
  case 'b': return cli_parse_bytes("bench", "-b", arg, &o->min_bytes) ? EX_USAGE : 0;
  case 'e': return cli_parse_bytes("bench", "-e", arg, &o->max_bytes) ? EX_USAGE : 0;
  case 'f': return cli_parse_uint("bench", "-f", arg, 2, 1024, &o->factor) ? EX_USAGE : 0;
  case 'P': o->p2p.route.no_pxn = 1; return 0;
  case 'j': o->json = 1; return 0;
  case 't': o->stats = 1; return 0;
  }
  int st = 0;
  if (cli_faults_opt("bench", c, arg, &o->faults, &st)) return st;
  return parse_coll_opt(c, arg, o);
}

static int parse_opts(int argc, char **argv, bench_opts *o) {
  static const struct option longopts[] = {
      {"op", required_argument, NULL, 'o'},       {"src", required_argument, NULL, 's'},
      {"dst", required_argument, NULL, 'd'},      {"pattern", required_argument, NULL, 'p'},
      {"gpus", required_argument, NULL, 'g'},     {"seed", required_argument, NULL, 'x'},
      {"minbytes", required_argument, NULL, 'b'}, {"maxbytes", required_argument, NULL, 'e'},
      {"stepfactor", required_argument, NULL, 'f'}, {"fidelity", required_argument, NULL, 'F'},
      {"chunk-size", required_argument, NULL, 'C'}, {"port-buffer", required_argument, NULL, 'B'},
      {"routing", required_argument, NULL, 'R'},  {"spray", required_argument, NULL, 'S'},
      {"no-pxn", no_argument, NULL, 'P'},         {"alpha", required_argument, NULL, 'A'},
      CLI_FAULT_LONGOPTS,
      {"json", no_argument, NULL, 'j'},           {"stats", no_argument, NULL, 't'},
      {"algo", required_argument, NULL, 'a'},     {"proto", required_argument, NULL, 'q'},
      {"nodes", required_argument, NULL, 'n'},    {"channels", required_argument, NULL, 'c'},
      {"pipeline-chunk", required_argument, NULL, 'k'}, {"compact", no_argument, NULL, 'm'},
      {"root", required_argument, NULL, 'r'},
      {"reduction-cost", no_argument, NULL, 'N'},
      {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":b:e:f:h", longopts, NULL)) != -1) {
    if (c == 'h') {
      bench_help();
      return -1;
    }
    if (c == ':') return cli_usage_error("bench", "%s needs a value", argv[optind - 1]);
    if (c == '?') return cli_usage_error("bench", "unknown option '%s'", argv[optind - 1]);
    int rc = parse_opt(c, optarg, o);
    if (rc) return rc;
  }
  if (optind != argc - 1) return cli_usage_error("bench", "expected one topology FILE");
  o->file = argv[optind];
  if (o->coll) {
    if (o->src || o->dst || o->pattern)
      return cli_usage_error("bench", "--src/--dst/--pattern are for sendrecv");
    if (o->nodes && o->gpus)
      return cli_usage_error("bench", "give --gpus or --nodes, not both");
    return o->min_bytes > o->max_bytes
               ? cli_usage_error("bench", "-b is larger than -e") : 0;
  }
  if (o->nodes) return cli_usage_error("bench", "--nodes is for collectives");
  if (!o->pattern == !(o->src || o->dst))
    return cli_usage_error("bench", "give either --src and --dst, or --pattern");
  if ((o->src != NULL) != (o->dst != NULL))
    return cli_usage_error("bench", "--src and --dst go together");
  if (o->min_bytes > o->max_bytes)
    return cli_usage_error("bench", "-b is larger than -e");
  return 0;
}

/* Pattern name (and K) from --pattern. */
static int parse_pattern(const char *s, ts_p2p_pattern *p, uint32_t *k) {
  uint64_t v = 0;
  *k = 0;
  if (!strcmp(s, "permutation")) *p = TS_P2P_PERMUTATION;
  else if (!strcmp(s, "bisection")) *p = TS_P2P_BISECTION;
  else if (!strncmp(s, "shift:", 6) || !strncmp(s, "incast:", 7)) {
    *p = s[0] == 's' ? TS_P2P_SHIFT : TS_P2P_INCAST;
    if (cli_parse_uint("bench", "--pattern", strchr(s, ':') + 1, 1, UINT32_MAX, &v))
      return EX_USAGE;
    *k = (uint32_t)v;
  } else {
    return cli_usage_error("bench", "--pattern must be permutation, shift:K, "
                           "incast:K or bisection");
  }
  return 0;
}

static int make_pairs(const ts_topo *t, const bench_opts *o, ts_p2p_pairs *pairs,
                      uint32_t *set_size) {
  ts_diag d;
  ts_diag_clear(&d);
  uint32_t two[2], *set = NULL, n = 0, k = 0;
  ts_p2p_pattern pat = TS_P2P_SENDRECV;
  int rc = 0;
  if (o->src) {
    if (cli_parse_gpu("bench", t, o->src, &two[0]) ||
        cli_parse_gpu("bench", t, o->dst, &two[1]))
      return EX_USAGE;
    *set_size = 2;
    rc = ts_p2p_make_pairs(pat, two, 2, 0, 0, pairs, &d);
  } else {
    if (parse_pattern(o->pattern, &pat, &k)) return EX_USAGE;
    if (cli_parse_gpu_set("bench", t, o->gpus ? o->gpus : "all", &set, &n)) {
      free(set);
      return EX_USAGE;
    }
    *set_size = n;
    rc = ts_p2p_make_pairs(pat, set, n, k, o->seed, pairs, &d);
    free(set);
  }
  return rc ? cli_usage_error("bench", "%s", d.msg) : 0;
}

typedef struct bench_row {
  uint64_t size, count;
  double time_us, algbw, busbw;
  ts_coll_algo algo;
  ts_coll_proto proto;
} bench_row;

static void print_header(const ts_topo *t, const bench_opts *o,
                         const ts_p2p_pairs *p, uint32_t set_size) {
  printf("# topsim bench: %s, op sendrecv, %s over %u GPUs (%u transfers)\n",
         ts_topo_name(t), o->pattern ? o->pattern : "src->dst", set_size, p->count);
  printf("# fidelity %s, routing %s, %s\n",
         o->p2p.net.fidelity == TS_NET_CHUNK ? "chunk" : "flow",
         o->p2p.spray ? "spray" : "ecmp", o->p2p.route.no_pxn ? "no PXN" : "PXN");
  printf("#\n# %10s %12s %8s %6s %6s %12s %8s %8s\n", "size", "count", "type",
         "redop", "root", "time", "algbw", "busbw");
  printf("# %10s %12s %8s %6s %6s %12s %8s %8s\n", "(B)", "(elements)", "", "",
         "", "(us)", "(GB/s)", "(GB/s)");
}

static void print_row(const bench_row *r) {
  printf("  %10llu %12llu %8s %6s %6d %12.2f %8.2f %8.2f\n",
         (unsigned long long)r->size, (unsigned long long)(r->size / 4), "float",
         "none", -1, r->time_us, r->algbw, r->busbw);
}

/* nccl-tests prints "sum" for reductions and the root for rooted ops. */
static int is_reduction(ts_coll_op op) {
  return op == TS_COLL_ALL_REDUCE || op == TS_COLL_REDUCE_SCATTER ||
         op == TS_COLL_REDUCE;
}

static int root_of(const bench_opts *o) {
  return o->op == TS_COLL_BROADCAST || o->op == TS_COLL_REDUCE ? o->cr.params.root : -1;
}

static void print_coll_header(const ts_topo *t, const bench_opts *o, uint32_t n) {
  printf("# topsim bench: %s, op %s over %u GPUs, fidelity %s%s\n", ts_topo_name(t),
         ts_coll_op_name(o->op), n,
         o->cr.net.fidelity == TS_NET_CHUNK ? "chunk" : "flow",
         o->cr.compact ? ", compact rings" : "");
  printf("#\n# %10s %12s %8s %6s %6s %12s %8s %8s  %s\n", "size", "count", "type",
         "redop", "root", "time", "algbw", "busbw", "algorithm");
  printf("# %10s %12s %8s %6s %6s %12s %8s %8s\n", "(B)", "(elements)", "", "",
         "", "(us)", "(GB/s)", "(GB/s)");
}

static void print_coll_row(const bench_opts *o, const bench_row *r) {
  printf("  %10llu %12llu %8s %6s %6d %12.2f %8.2f %8.2f  %s/%s\n",
         (unsigned long long)r->size, (unsigned long long)r->count, "float",
         is_reduction(o->op) ? "sum" : "none", root_of(o), r->time_us, r->algbw,
         r->busbw, ts_coll_algo_name(r->algo), ts_coll_proto_name(r->proto));
}

static void print_stats(const ts_p2p_result *r) {
  printf("# stats of the largest size:\n"
         "# sim.events_processed: %llu\n# sim.peak_pending: %llu\n"
         "# sim.wall_s: %.6f\n# sim.events_per_s: %.0f\n"
         "# net.flows_started: %llu\n# net.bytes_delivered: %llu\n"
         "# net.solves: %llu\n# net.chunks_sent: %llu\n",
         (unsigned long long)r->sim.events_processed,
         (unsigned long long)r->sim.peak_pending, r->sim.wall_s,
         r->sim.events_per_s, (unsigned long long)r->net.flows_started,
         (unsigned long long)r->net.bytes_delivered,
         (unsigned long long)r->net.solves, (unsigned long long)r->net.chunks_sent);
}

static json_t *json_rows(const bench_row *rows, uint32_t n) {
  json_t *a = json_array();
  for (uint32_t i = 0; i < n; i++)
    json_array_append_new(a, json_pack("{s:I,s:I,s:s,s:f,s:f,s:f}", "size",
                                       (json_int_t)rows[i].size, "count",
                                       (json_int_t)(rows[i].size / 4), "type",
                                       "float", "time_us", rows[i].time_us,
                                       "algbw_GBps", rows[i].algbw, "busbw_GBps",
                                       rows[i].busbw));
  return a;
}

static int print_json(const ts_topo *t, const bench_opts *o, uint32_t set_size,
                      uint32_t transfers, const bench_row *rows, uint32_t n) {
  json_t *j = json_pack(
      "{s:s,s:s,s:s,s:i,s:i,s:s,s:s,s:b,s:o}", "topology", ts_topo_name(t),
      "op", "sendrecv", "pattern", o->pattern ? o->pattern : "sendrecv", "gpus",
      (int)set_size, "transfers", (int)transfers, "fidelity",
      o->p2p.net.fidelity == TS_NET_CHUNK ? "chunk" : "flow", "routing",
      o->p2p.spray ? "spray" : "ecmp", "pxn", !o->p2p.route.no_pxn, "rows",
      json_rows(rows, n));
  if (!j) return EX_SOFTWARE;
  int rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(j);
  putchar('\n');
  return rc ? EX_IOERR : 0;
}

/* One run per size; rows[] gets a row per size. */
static int sweep(const ts_topo *t, const bench_opts *o, const ts_p2p_pairs *p,
                 bench_row *rows, uint32_t *nrows, ts_p2p_result *last) {
  ts_diag d;
  ts_diag_clear(&d);
  *nrows = 0;
  for (uint64_t s = o->min_bytes; s <= o->max_bytes; s *= o->factor) {
    int rc = ts_p2p_run(t, p, s, &o->p2p, last, &d);
    if (rc) return cli_fail(&d, rc);
    bench_row *r = &rows[(*nrows)++];
    r->size = s;
    r->time_us = (double)last->time / 1e6;
    r->algbw = last->time ? (double)s / ((double)last->time / 1e12) / 1e9 : 0;
    r->busbw = r->algbw; /* nccl-tests: factor 1 for sendrecv */
    if (s > o->max_bytes / o->factor) break;
  }
  return 0;
}

/* GPU set of a collective: --nodes N, --gpus SET, or every GPU. */
static int coll_gpus(const ts_topo *t, const bench_opts *o, uint32_t **set,
                     uint32_t *n) {
  if (!o->nodes) return cli_parse_gpu_set("bench", t, o->gpus ? o->gpus : "all", set, n);
  uint64_t nodes;
  if (cli_parse_uint("bench", "--nodes", o->nodes, 1, UINT32_MAX, &nodes)) return -1;
  const uint32_t *gpus;
  uint32_t total = ts_topo_gpus(t, &gpus);
  *set = malloc(((size_t)total + 1) * sizeof **set);
  if (!*set) return -1;
  *n = 0;
  for (uint32_t i = 0; i < total; i++)
    if ((uint64_t)ts_topo_node(t, gpus[i])->host < nodes) (*set)[(*n)++] = gpus[i];
  if (*n) return 0;
  cli_usage_error("bench", "--nodes %s selects no GPU", o->nodes);
  return -1;
}

static int coll_sweep(const ts_topo *t, const bench_opts *o, const uint32_t *g,
                      uint32_t n, bench_row *rows, uint32_t *nrows,
                      ts_coll_run_result *last) {
  ts_diag d;
  ts_diag_clear(&d);
  *nrows = 0;
  for (uint64_t s = o->min_bytes; s <= o->max_bytes && *nrows < 80; s *= o->factor) {
    bench_row *r = &rows[*nrows];
    r->size = ts_coll_nccltests_size(o->op, (int)n, s, 4);
    r->count = ts_coll_nccltests_count(o->op, (int)n, s, 4);
    int rc = ts_coll_run(t, g, n, o->op, r->size, &o->cr, last, &d);
    if (rc == TS_EUSAGE) return cli_usage_error("bench", "%s", d.msg);
    if (rc) return cli_fail(&d, rc);
    double sec = (double)last->time / 1e12;
    r->time_us = (double)last->time / 1e6;
    r->algbw = sec > 0 ? ts_coll_algbw(r->size, sec) / 1e9 : 0;
    r->busbw = sec > 0 ? ts_coll_busbw(o->op, (int)n, r->size, sec) / 1e9 : 0;
    r->algo = last->algo;
    r->proto = last->proto;
    (*nrows)++;
    if (s > o->max_bytes / o->factor) break;
  }
  return 0;
}

static int coll_json(const ts_topo *t, const bench_opts *o, uint32_t n,
                     const bench_row *rows, uint32_t nrows) {
  json_t *a = json_array();
  for (uint32_t i = 0; i < nrows; i++)
    json_array_append_new(a, json_pack(
        "{s:I,s:I,s:s,s:s,s:i,s:f,s:f,s:f,s:s,s:s}", "size",
        (json_int_t)rows[i].size, "count", (json_int_t)rows[i].count, "type",
        "float", "redop", is_reduction(o->op) ? "sum" : "none", "root", root_of(o),
        "time_us", rows[i].time_us, "algbw_GBps", rows[i].algbw, "busbw_GBps",
        rows[i].busbw, "algo", ts_coll_algo_name(rows[i].algo), "proto",
        ts_coll_proto_name(rows[i].proto)));
  json_t *j = json_pack("{s:s,s:s,s:i,s:s,s:b,s:o}", "topology", ts_topo_name(t),
                        "op", ts_coll_op_name(o->op), "gpus", (int)n, "fidelity",
                        o->cr.net.fidelity == TS_NET_CHUNK ? "chunk" : "flow",
                        "compact", o->cr.compact, "rows", a);
  if (!j) return EX_SOFTWARE;
  int rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(j);
  putchar('\n');
  return rc ? EX_IOERR : 0;
}

static int run_coll(const ts_topo *t, bench_opts *o) {
  uint32_t *g = NULL, n = 0, nrows = 0;
  bench_row rows[80];
  ts_coll_run_result last;
  o->cr.net = o->p2p.net; /* --fidelity, --chunk-size, --port-buffer */
  o->cr.route = o->p2p.route;
  o->cr.faults = o->p2p.faults;
  int rc = coll_gpus(t, o, &g, &n) ? EX_USAGE : 0;
  if (!rc) rc = coll_sweep(t, o, g, n, rows, &nrows, &last);
  if (!rc && o->json) rc = coll_json(t, o, n, rows, nrows);
  else if (!rc) {
    print_coll_header(t, o, n);
    double sum = 0;
    for (uint32_t i = 0; i < nrows; i++) {
      print_coll_row(o, &rows[i]);
      sum += rows[i].busbw;
    }
    printf("# Avg bus bandwidth    : %g\n", nrows ? sum / nrows : 0.0);
    if (o->stats)
      printf("# stats of the largest size:\n# coll.transfers: %llu\n"
             "# sim.events_processed: %llu\n# sim.wall_s: %.6f\n"
             "# net.flows_started: %llu\n# net.solves: %llu\n",
             (unsigned long long)last.transfers,
             (unsigned long long)last.sim.events_processed, last.sim.wall_s,
             (unsigned long long)last.net.flows_started,
             (unsigned long long)last.net.solves);
  }
  free(g);
  return rc;
}

static int run_bench(const ts_topo *t, bench_opts *o) {
  ts_p2p_pairs pairs = {0};
  uint32_t set_size = 0, nrows = 0;
  bench_row rows[80];
  ts_p2p_result last;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_faults_resolve(&o->faults, t, &d);
  if (rc) return rc == TS_EUSAGE ? cli_usage_error("bench", "%s", d.msg)
                                 : cli_fail(&d, rc);
  o->p2p.faults = &o->faults;
  if (o->coll) return run_coll(t, o);
  if (!rc) rc = make_pairs(t, o, &pairs, &set_size);
  if (!rc) rc = sweep(t, o, &pairs, rows, &nrows, &last);
  if (!rc && o->json) rc = print_json(t, o, set_size, pairs.count, rows, nrows);
  else if (!rc) {
    print_header(t, o, &pairs, set_size);
    double sum = 0;
    for (uint32_t i = 0; i < nrows; i++) {
      print_row(&rows[i]);
      sum += rows[i].busbw;
    }
    printf("# Avg bus bandwidth    : %g\n", nrows ? sum / nrows : 0.0);
    if (o->stats) print_stats(&last);
  }
  ts_p2p_pairs_free(&pairs);
  return rc;
}

int cli_bench(int argc, char **argv) {
  bench_opts o;
  memset(&o, 0, sizeof o);
  ts_p2p_opts_default(&o.p2p);
  ts_coll_run_opts_default(&o.cr);
  o.min_bytes = 8;
  o.max_bytes = 128ULL << 20;
  o.factor = 2;
  o.seed = 1;
  ts_faults_init(&o.faults);
  int rc = parse_opts(argc, argv, &o);
  ts_topo *t = NULL;
  if (!rc) rc = cli_load_topo(o.file, &t);
  if (!rc) rc = run_bench(t, &o);
  ts_topo_free(t);
  ts_faults_free(&o.faults);
  return rc < 0 ? 0 : rc;
}
