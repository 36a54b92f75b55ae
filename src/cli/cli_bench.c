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
#include "cli/cli_bench.h"
#include "cli/cli_bench_moe.h"
#include "topsim/ts_coll_run.h"
#include "topsim/ts_p2p.h"

#define BENCH_MIN_PIPELINE_CHUNK 1024u
enum { CLI_OPT_NCCL_P2P = 0x1E01, CLI_OPT_EXACT }; /* long-only (after CLI_OPT_MOE) */

typedef struct bench_opts {
  const char *file, *src, *dst, *pattern, *gpus;
  ts_faults faults;       /* --fail, --degrade, --straggler, --fail-at */
  uint64_t min_bytes, max_bytes, factor, seed;
  uint64_t step_bytes;      /* -i: linear steps (used when -f is not > 1) */
  int factor_set, step_set;
  int json, stats;
  /* nccl-tests flags: -g -n -w -c -d -o -J */
  const char *ngpus;        /* -g N: the first N GPUs */
  uint64_t iters, warmup, check;
  const char *type_name, *redop, *json_file;
  uint32_t type_size;
  int argc;
  char **argv;
  int coll;                 /* a collective (else point-to-point) */
  ts_coll_op op;
  const char *nodes;        /* --nodes N: the first N nodes' GPUs */
  const char *hosts, *fabric; /* NCCL XML: --hosts N --fabric PRESET */
  ts_coll_run_opts cr;
  ts_p2p_opts p2p;
  int moe;                  /* 1 moe_dispatch, 2 moe_combine */
  const char *moe_spec;     /* --moe SPEC (cli_bench_moe.c) */
  int nccl_p2p;             /* --nccl-p2p: NCCL's p2p channel limit */
} bench_opts;

static void bench_help(void) {
  printf(
      "usage: topsim bench TOPO [--src GPU --dst GPU | --pattern P] [options]\n\n"
      "Point-to-point and collective sweeps printed exactly as nccl-tests\n"
      "prints them (a scraper for nccl-tests reads this table unchanged):\n"
      "every transfer of one size starts at time 0; time is when the last\n"
      "one lands.\n\n"
      "traffic:\n"
      "  --op OP              sendrecv (default), all_reduce, all_gather,\n"
      "                       reduce_scatter, all_to_all, broadcast, reduce,\n"
      "                       moe_dispatch, moe_combine (one DeepEP-style\n"
      "                       expert all-to-all; --moe SPEC)\n"
      "  --moe SPEC           tokens=4096,hidden=7168,topk=8,experts=256,\n"
      "                       skew=0,groups=0 (node limit),dtype=bf16|fp8\n"
      "  --src GPU --dst GPU  sendrecv: one transfer (index or name dgx0/gpu3)\n"
      "  --pattern P          sendrecv: permutation | shift:K | incast:K | bisection\n"
      "  --gpus SET           all (default) | node:N | rack:N | su:N | first:N |\n"
      "                       a comma list of GPUs\n"
      "  --nodes N            collectives: the GPUs of the first N nodes\n"
      "  --seed N             permutation seed (default 1)\n"
      "  --hosts N            TOPO is an NCCL topology XML: N copies of it\n"
      "  --fabric PRESET      ... cabled rail-optimized over a technology preset\n"
      "collectives:\n"
      "  --algo A             auto (default) | ring | tree | hd | direct | hier | nvls\n"
      "  --proto P            auto (default) | LL | LL128 | Simple\n"
      "  --channels N         ring channels (default 1)\n"
      "  --pipeline-chunk S   split every step into chunks of S (default: none)\n"
      "  --compact            rings as O(p) long-lived neighbour flows\n"
      "  --exact              simulate a step ring transfer by transfer even\n"
      "                       when each flow runs alone on its links (default:\n"
      "                       such a ring is computed in closed form, the same\n"
      "                       times and link counters)\n"
      "  -r, --root N         broadcast/reduce root rank (default 0)\n"
      "  --reduction-cost     charge each reduction a serial HBM pass (default:\n"
      "                       free, as NCCL fuses reductions into its copies)\n"
      "sizes (K/M/G are powers of 1024):\n"
      "  -b, --minbytes S     smallest message (default 8)\n"
      "  -e, --maxbytes S     largest message (default 128M)\n"
      "  -f, --stepfactor F   multiply the size by F each row (default 2)\n"
      "  -i, --stepbytes S    add S each row instead (used when -f is 1 or\n"
      "                       absent; default 1M)\n"
      "nccl-tests flags:\n"
      "  -g, --ngpus N        the first N GPUs (one process driving N GPUs)\n"
      "  -d, --datatype T     float (default), half, bfloat16, double, int8,\n"
      "                       uint8, int32, uint32, int64, uint64, f8e4m3, f8e5m2\n"
      "  -o R                 reduction shown: sum (default), prod, max, min, avg\n"
      "                       (nccl-tests --op; here --op names the collective)\n"
      "  -n, --iters N        iterations shown in the preamble (default 20)\n"
      "  -w, --warmup_iters N warmup shown in the preamble (default 1)\n"
      "  -c, --check N        accepted; no data moves, #wrong is always N/A\n"
      "  -J, --output_file F  also write nccl-tests' JSON (version 3) to F\n"
      "model:\n"
      "  --fidelity flow|chunk   max-min flows (default) or chunked queues\n"
      "  --chunk-size S       chunk fidelity: chunk size (default 64K)\n"
      "  --port-buffer S      chunk fidelity: bytes per port (default unlimited)\n"
      "  --routing ecmp|spray one path per transfer, each plane choosing as its\n"
      "                       `routing` says (default), or spread\n"
      "  --routing ecmp_hash|dmodk  every plane picks uplinks by a flow hash\n"
      "                       or by destination (D-mod-k), whatever the\n"
      "                       topology says\n"
      "  --spray N            spray over at most N paths (default 64)\n"
      "  --no-pxn             send from the GPU's own NIC (default: PXN)\n"
      "  --nccl-p2p           sendrecv: each send on one host runs on the channels\n"
      "                       NCCL gives a peer among the chosen GPUs, 14 GB/s each,\n"
      "                       after one 512 KiB step fills its pipeline\n"
      "  --alpha TIME         per-message overhead, e.g. 2us; 0us gives a pure\n"
      "                       bandwidth model. sendrecv patterns: per message\n"
      "                       (default: the plane's software overhead, 0 in a\n"
      "                       node); collectives: per algorithm step, every\n"
      "                       protocol, inside and across hosts, replacing\n"
      "                       NCCL's latencies (launch, base, per step)\n");
  fputs(cli_faults_help, stdout);
  printf(
      "output:\n"
      "  --json               JSON instead of the table\n"
      "  --stats              engine and network counters of the largest size\n"
      "  -h, --help           show this help\n\n"
      "Stragglers slow compute only: a bench of communication is unchanged.\n\n"
      "exit status: 0 ok, 64 usage, 65 bad topology or no route, 66 no file,\n"
      "73 -J file cannot be created, 74 write failed\n");
}

static int parse_model_opt(int c, const char *arg, bench_opts *o) {
  uint64_t v;
  switch (c) {
  case 'F':
    if (!strcmp(arg, "flow")) o->p2p.net.fidelity = TS_NET_FLOW;
    else if (!strcmp(arg, "chunk")) o->p2p.net.fidelity = TS_NET_CHUNK;
    else return cli_usage_error("bench", "--fidelity must be flow or chunk");
    return 0;
  case 'C':
    if (cli_parse_bytes("bench", "--chunk-size", arg, &o->p2p.net.chunk_bytes)) return EX_USAGE;
    if (o->p2p.net.chunk_bytes == 0 || o->p2p.net.chunk_bytes > UINT32_MAX)
      return cli_usage_error("bench", "--chunk-size %s: expected 1 byte to 4G-1", arg);
    return 0;
  case 'B': return cli_parse_bytes("bench", "--port-buffer", arg, &o->p2p.net.port_buffer_bytes) ? EX_USAGE : 0;
  case 'R':
    if (!strcmp(arg, "ecmp")) o->p2p.spray = 0;
    else if (!strcmp(arg, "spray")) o->p2p.spray = o->p2p.spray ? o->p2p.spray : 64;
    else if (!strcmp(arg, "ecmp_hash")) o->p2p.route.routing = 1 + TS_ROUTING_ECMP_HASH;
    else if (!strcmp(arg, "dmodk")) o->p2p.route.routing = 1 + TS_ROUTING_DMODK;
    else return cli_usage_error("bench", "--routing must be ecmp, spray, ecmp_hash "
                                "or dmodk");
    return 0;
  case 'S':
    if (cli_parse_uint("bench", "--spray", arg, 1, TS_ROUTE_MAX_PATHS, &v)) return EX_USAGE;
    o->p2p.spray = (uint32_t)v;
    return 0;
  case 'A': {
    ts_time_ps ps;
    if (ts_parse_latency(arg, &ps) || ps > TS_MAX_LATENCY_PS)
      return cli_usage_error("bench", "--alpha '%s' is not a time from 0 to 3600s "
                             "such as 2us", arg);
    o->p2p.alpha_ps = (int64_t)ps;
    /* The user's alpha is the whole latency model: no NCCL launch or
     * base latency on top (a peer's pure alpha-beta configuration). */
    o->cr.params.cost_model = TS_COLL_COST_ALPHA_BETA;
    for (int q = 0; q < TS_COLL_PROTO_COUNT; q++)
      o->cr.params.alpha_intra[q] = o->cr.params.alpha_inter[q] = ps;
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
  o->moe = 0;
  if (!strcmp(arg, "sendrecv")) return 0;
  if (!strcmp(arg, "moe_dispatch") || !strcmp(arg, "moe_combine")) {
    o->coll = 1;
    o->op = TS_COLL_ALL_TO_ALLV;
    o->moe = arg[4] == 'd' ? 1 : 2;
    return 0;
  }
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(arg, ts_coll_op_name(ops[i]))) {
      o->coll = 1;
      o->op = ops[i];
      return 0;
    }
  return cli_usage_error("bench", "--op %s: expected sendrecv, all_reduce, "
                         "all_gather, reduce_scatter, all_to_all, broadcast, "
                         "reduce, moe_dispatch or moe_combine", arg);
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
  case 'Z': o->nodes = arg; return 0;
  case 'L':
    if (cli_parse_uint("bench", "--channels", arg, 1, 64, &v)) return EX_USAGE;
    o->cr.params.channels = (uint32_t)v;
    return 0;
  case 'k':
    if (cli_parse_bytes("bench", "--pipeline-chunk", arg, &o->cr.params.chunk_bytes))
      return EX_USAGE;
    /* Below 1 KiB each chunk costs events without adding fidelity (NCCL's
     * smallest slices are KiBs); 1 byte would mean millions of transfers. */
    if (o->cr.params.chunk_bytes < BENCH_MIN_PIPELINE_CHUNK)
      return cli_usage_error("bench", "--pipeline-chunk %s: expected at least 1K", arg);
    return 0;
  case 'm': o->cr.compact = 1; return 0;
  case CLI_OPT_EXACT: o->cr.exact = 1; return 0;
  case 'N': o->cr.reduction_cost = 1; return 0;
  case 'r':
    if (cli_parse_uint("bench", "--root", arg, 0, 1u << 30, &v)) return EX_USAGE;
    o->cr.params.root = (int)v;
    return 0;
  }
  return parse_model_opt(c, arg, o);
}

/* nccl-tests' -d, -o and the accepted-but-inert -n, -w, -c (a simulated
 * iteration always takes the same time and moves no data to check). */
static int parse_nccltests_opt(int c, const char *arg, bench_opts *o) {
  static const char *const redops[] = {"sum", "prod", "max", "min", "avg", "mulsum"};
  switch (c) {
  case 'g': o->ngpus = arg; return 0;
  case 'n': return cli_parse_uint("bench", "-n", arg, 1, 1u << 30, &o->iters) ? EX_USAGE : 0;
  case 'w': return cli_parse_uint("bench", "-w", arg, 0, 1u << 30, &o->warmup) ? EX_USAGE : 0;
  case 'c': return cli_parse_uint("bench", "-c", arg, 0, 1u << 30, &o->check) ? EX_USAGE : 0;
  case 'J': o->json_file = arg; return 0;
  case 'd':
    if (ts_coll_nccltests_type(arg, &o->type_size))
      return cli_usage_error("bench", "-d %s: expected one of %s", arg,
                             ts_coll_nccltests_type_names());
    o->type_name = arg;
    return 0;
  case 'o':
    for (size_t i = 0; i < sizeof redops / sizeof redops[0]; i++)
      if (!strcmp(arg, redops[i])) return (o->redop = redops[i]), 0;
    return cli_usage_error("bench", "-o %s: expected sum, prod, max, min, avg or mulsum "
                           "(the collective is --op)", arg);
  case 'i':
    o->step_set = 1;
    return cli_parse_bytes("bench", "-i", arg, &o->step_bytes) || !o->step_bytes
               ? cli_usage_error("bench", "-i must be a size above 0") : 0;
  }
  return parse_coll_opt(c, arg, o);
}

static int parse_opt(int c, const char *arg, bench_opts *o) {
  switch (c) {
  case 'O': return parse_op(arg, o);
  case 's': o->src = arg; return 0;
  case 'Y': o->dst = arg; return 0;
  case 'p': o->pattern = arg; return 0;
  case 'G': o->gpus = arg; return 0;
  case 'x': return cli_parse_uint("bench", "--seed", arg, 0, UINT64_MAX, &o->seed) ? EX_USAGE : 0;
  case 'b': return cli_parse_bytes("bench", "-b", arg, &o->min_bytes) ? EX_USAGE : 0;
  case 'e': return cli_parse_bytes("bench", "-e", arg, &o->max_bytes) ? EX_USAGE : 0;
  case 'f':
    o->factor_set = 1;
    return cli_parse_uint("bench", "-f", arg, 1, 1024, &o->factor) ? EX_USAGE : 0;
  case 'P': o->p2p.route.no_pxn = 1; return 0;
  case CLI_OPT_NCCL_P2P: o->nccl_p2p = 1; return 0;
  case 'H': o->hosts = arg; return 0;
  case 'W': o->fabric = arg; return 0;
  case 'j': o->json = 1; return 0;
  case 't': o->stats = 1; return 0;
  case CLI_OPT_MOE: o->moe_spec = arg; return 0;
  }
  int st = 0;
  if (cli_faults_opt("bench", c, arg, &o->faults, &st)) return st;
  return parse_nccltests_opt(c, arg, o);
}

/* Option combinations checked once every option is known. A size sweep
 * starts at 1 byte or more (0 would repeat forever: 0 x F = 0). */
static int check_sizes(const bench_opts *o) {
  if (o->min_bytes == 0)
    return cli_usage_error("bench", "-b 0: the smallest message must be at least 1 byte");
  if (o->p2p.net.port_buffer_bytes &&
      o->p2p.net.port_buffer_bytes < o->p2p.net.chunk_bytes)
    return cli_usage_error("bench", "--port-buffer %llu is smaller than one chunk "
                           "(--chunk-size %llu): no chunk could ever be forwarded",
                           (unsigned long long)o->p2p.net.port_buffer_bytes,
                           (unsigned long long)o->p2p.net.chunk_bytes);
  return 0;
}

static int parse_opts(int argc, char **argv, bench_opts *o) {
  static const struct option longopts[] = {
      {"op", required_argument, NULL, 'O'},       {"src", required_argument, NULL, 's'},
      {"dst", required_argument, NULL, 'Y'},      {"pattern", required_argument, NULL, 'p'},
      {"gpus", required_argument, NULL, 'G'},     {"seed", required_argument, NULL, 'x'},
      {"stepbytes", required_argument, NULL, 'i'}, {"ngpus", required_argument, NULL, 'g'},
      {"iters", required_argument, NULL, 'n'},    {"warmup_iters", required_argument, NULL, 'w'},
      {"check", required_argument, NULL, 'c'},    {"datatype", required_argument, NULL, 'd'},
      {"output_file", required_argument, NULL, 'J'},
      {"minbytes", required_argument, NULL, 'b'}, {"maxbytes", required_argument, NULL, 'e'},
      {"stepfactor", required_argument, NULL, 'f'}, {"fidelity", required_argument, NULL, 'F'},
      {"chunk-size", required_argument, NULL, 'C'}, {"port-buffer", required_argument, NULL, 'B'},
      {"routing", required_argument, NULL, 'R'},  {"spray", required_argument, NULL, 'S'},
      {"no-pxn", no_argument, NULL, 'P'},         {"alpha", required_argument, NULL, 'A'},
      CLI_FAULT_LONGOPTS,
      {"json", no_argument, NULL, 'j'},           {"stats", no_argument, NULL, 't'},
      {"algo", required_argument, NULL, 'a'},     {"proto", required_argument, NULL, 'q'},
      {"nodes", required_argument, NULL, 'Z'},    {"channels", required_argument, NULL, 'L'},
      {"pipeline-chunk", required_argument, NULL, 'k'}, {"compact", no_argument, NULL, 'm'},
      {"root", required_argument, NULL, 'r'},
      {"reduction-cost", no_argument, NULL, 'N'},
      {"hosts", required_argument, NULL, 'H'},    {"fabric", required_argument, NULL, 'W'},
      {"moe", required_argument, NULL, CLI_OPT_MOE},
      {"nccl-p2p", no_argument, NULL, CLI_OPT_NCCL_P2P},
      {"exact", no_argument, NULL, CLI_OPT_EXACT},
      {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":b:e:f:i:g:n:w:c:d:o:r:J:h", longopts, NULL)) != -1) {
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
  if (o->ngpus && (o->gpus || o->nodes))
    return cli_usage_error("bench", "give one of -g, --gpus and --nodes");
  if (o->step_set && !o->factor_set) o->factor = 1; /* -i alone: linear steps */
  if (o->factor == 1 && !o->step_set)
    return cli_usage_error("bench", "-f 1 needs -i (the step in bytes)");
  int rc = check_sizes(o);
  if (rc) return rc;
  if (o->coll) {
    if (o->src || o->dst || o->pattern || o->nccl_p2p)
      return cli_usage_error("bench", "--src/--dst/--pattern/--nccl-p2p are for sendrecv");
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

/* The pairs of a sendrecv run, and the GPU set they span (*set, malloc'ed,
 * the caller frees it) for the device list. */
static int make_pairs(const ts_topo *t, const bench_opts *o, ts_p2p_pairs *pairs,
                      uint32_t **set, uint32_t *n) {
  ts_diag d;
  ts_diag_clear(&d);
  uint32_t k = 0;
  ts_p2p_pattern pat = TS_P2P_SENDRECV;
  int rc = 0;
  *n = 0;
  if (o->src) {
    *set = malloc(2 * sizeof **set);
    if (!*set) return EX_OSERR;
    if (cli_parse_gpu("bench", t, o->src, &(*set)[0]) ||
        cli_parse_gpu("bench", t, o->dst, &(*set)[1]))
      return EX_USAGE;
    *n = 2;
    rc = ts_p2p_make_pairs(pat, *set, 2, 0, 0, pairs, &d);
  } else {
    if (parse_pattern(o->pattern, &pat, &k)) return EX_USAGE;
    if (cli_parse_gpu_set("bench", t, o->gpus ? o->gpus : "all", set, n)) return EX_USAGE;
    rc = ts_p2p_make_pairs(pat, *set, *n, k, o->seed, pairs, &d);
  }
  return rc ? cli_usage_error("bench", "%s", d.msg) : 0;
}

/* nccl-tests prints the reduction for reductions and sendrecv, "none"
 * otherwise, and the root only for rooted ops. */
static int is_reduction(ts_coll_op op) {
  return op == TS_COLL_ALL_REDUCE || op == TS_COLL_REDUCE_SCATTER ||
         op == TS_COLL_REDUCE;
}

static int root_of(const bench_opts *o) {
  return o->coll && (o->op == TS_COLL_BROADCAST || o->op == TS_COLL_REDUCE)
             ? o->cr.params.root : -1;
}

static const char *program_of(const bench_opts *o) {
  if (!o->coll) return "sendrecv_perf";
  switch (o->op) {
  case TS_COLL_ALL_REDUCE: return "all_reduce_perf";
  case TS_COLL_ALL_GATHER: return "all_gather_perf";
  case TS_COLL_REDUCE_SCATTER: return "reduce_scatter_perf";
  case TS_COLL_ALL_TO_ALL: return "alltoall_perf";
  case TS_COLL_BROADCAST: return "broadcast_perf";
  case TS_COLL_REDUCE: return "reduce_perf";
  default: return "topsim_perf";
  }
}

/* The -b/-e/-f/-i sizes, as nccl-tests walks them: times the factor when
 * it is above 1, else plus the step. Returns the count (0 = too many). */
#define MAX_ROWS 100000u
static uint32_t size_list(const bench_opts *o, uint64_t *out) {
  uint32_t n = 0;
  for (uint64_t s = o->min_bytes; s <= o->max_bytes; n++) {
    if (n == MAX_ROWS) return 0;
    if (out) out[n] = s;
    if (o->factor > 1 ? s > o->max_bytes / o->factor : s > o->max_bytes - o->step_bytes) {
      n++;
      break;
    }
    s = o->factor > 1 ? s * o->factor : s + o->step_bytes;
  }
  return n;
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
                                       (json_int_t)rows[i].count, "type",
                                       "float", "time_us", rows[i].time_us,
                                       "algbw_GBps", rows[i].algbw, "busbw_GBps",
                                       rows[i].busbw));
  return a;
}

/* The routing the sweep used: spray, or one path chosen by each plane's
 * `routing` ("ecmp") or by the --routing override for every plane. */
static const char *routing_name(const bench_opts *o) {
  if (o->p2p.spray) return "spray";
  if (o->p2p.route.routing == 1 + TS_ROUTING_DMODK) return "dmodk";
  if (o->p2p.route.routing == 1 + TS_ROUTING_ECMP_HASH) return "ecmp_hash";
  return "ecmp";
}

static int print_json(const ts_topo *t, const bench_opts *o, uint32_t set_size,
                      uint32_t transfers, const bench_row *rows, uint32_t n) {
  json_t *j = json_pack(
      "{s:s,s:s,s:s,s:i,s:i,s:s,s:s,s:b,s:o}", "topology", ts_topo_name(t),
      "op", "sendrecv", "pattern", o->pattern ? o->pattern : "sendrecv", "gpus",
      (int)set_size, "transfers", (int)transfers, "fidelity",
      o->p2p.net.fidelity == TS_NET_CHUNK ? "chunk" : "flow", "routing",
      routing_name(o), "pxn", !o->p2p.route.no_pxn, "rows",
      json_rows(rows, n));
  if (!j) return EX_SOFTWARE;
  int rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(j);
  putchar('\n');
  return rc ? EX_IOERR : 0;
}

/* One run per size; rows[] gets a row per size. */
static int sweep(const ts_topo *t, const bench_opts *o, const ts_p2p_pairs *p,
                 const uint64_t *sizes, uint32_t nsizes, bench_row *rows,
                 ts_p2p_result *last) {
  ts_diag d;
  ts_diag_clear(&d);
  for (uint32_t i = 0; i < nsizes; i++) {
    bench_row *r = &rows[i];
    r->count = sizes[i] / o->type_size;
    r->size = r->count * o->type_size;
    int rc = ts_p2p_run(t, p, r->size, &o->p2p, last, &d);
    if (rc) return cli_fail(&d, rc);
    r->time_us = (double)last->time / 1e6;
    r->algbw = last->time ? (double)r->size / ((double)last->time / 1e12) / 1e9 : 0;
    r->busbw = r->algbw; /* nccl-tests: factor 1 for sendrecv */
  }
  return 0;
}

/* GPU set of a collective: -g N, --nodes N, --gpus SET, or every GPU. */
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
                      uint32_t n, const uint64_t *sizes, uint32_t nsizes,
                      bench_row *rows, ts_coll_run_result *last) {
  ts_diag d;
  ts_diag_clear(&d);
  for (uint32_t i = 0; i < nsizes; i++) {
    bench_row *r = &rows[i];
    r->size = ts_coll_nccltests_size(o->op, (int)n, sizes[i], o->type_size);
    r->count = ts_coll_nccltests_count(o->op, (int)n, sizes[i], o->type_size);
    int rc = ts_coll_run(t, g, n, o->op, r->size, &o->cr, last, &d);
    if (rc == TS_EUSAGE) return cli_usage_error("bench", "%s", d.msg);
    if (rc) return cli_fail(&d, rc);
    double sec = (double)last->time / 1e12;
    r->time_us = (double)last->time / 1e6;
    r->algbw = sec > 0 ? ts_coll_algbw(r->size, sec) / 1e9 : 0;
    r->busbw = sec > 0 ? ts_coll_busbw(o->op, (int)n, r->size, sec) / 1e9 : 0;
    r->algo = last->algo;
    r->proto = last->proto;
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
        o->type_name, "redop", is_reduction(o->op) ? o->redop : "none", "root",
        root_of(o), "time_us", rows[i].time_us, "algbw_GBps", rows[i].algbw,
        "busbw_GBps", rows[i].busbw, "algo", ts_coll_algo_name(rows[i].algo),
        "proto", ts_coll_proto_name(rows[i].proto)));
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

/* The parts of the nccl-tests report every run shares. */
static void report_base(const ts_topo *t, const bench_opts *o, const uint32_t *g,
                        uint32_t n, bench_report *r) {
  memset(r, 0, sizeof *r);
  r->t = t;
  r->program = program_of(o);
  r->type_name = o->type_name;
  r->redop = !o->coll || is_reduction(o->op) ? o->redop : "none";
  r->root = root_of(o);
  r->gpus = g;
  r->ngpus = n;
  r->min_bytes = o->min_bytes;
  r->max_bytes = o->max_bytes;
  r->step_is_factor = o->factor > 1;
  r->step = o->factor > 1 ? o->factor : o->step_bytes;
  r->warmup = (int)o->warmup;
  r->iters = (int)o->iters;
  r->coll = o->coll;
  r->argc = o->argc;
  r->argv = o->argv;
}

/* Table on stdout (unless --json) and the -J file. */
static int emit(const bench_opts *o, bench_report *r) {
  int rc = 0;
  if (o->json_file && !o->json) printf("# Writing JSON output to %s\n", o->json_file);
  if (!o->json && cli_bench_print_nccltests(r, stdout)) rc = EX_IOERR;
  if (!rc && o->json_file) rc = cli_bench_write_json(r, o->json_file);
  return rc;
}

static int run_coll(const ts_topo *t, bench_opts *o, const uint64_t *sizes,
                    uint32_t nsizes, bench_row *rows) {
  uint32_t *g = NULL, n = 0;
  ts_coll_run_result last;
  o->cr.net = o->p2p.net; /* --fidelity, --chunk-size, --port-buffer */
  o->cr.route = o->p2p.route;
  o->cr.faults = o->p2p.faults;
  int rc = coll_gpus(t, o, &g, &n) ? EX_USAGE : 0;
  if (!rc && o->moe) {
    rc = cli_bench_moe(t, g, n, o->moe == 2, o->moe_spec, &o->cr, o->json);
    free(g);
    return rc;
  }
  if (!rc) rc = coll_sweep(t, o, g, n, sizes, nsizes, rows, &last);
  if (!rc && o->json) rc = coll_json(t, o, n, rows, nsizes);
  if (!rc) {
    bench_report r;
    char info[2][400];
    report_base(t, o, g, n, &r);
    snprintf(info[0], sizeof info[0], "topology %s, op %s over %u GPUs, fidelity %s%s",
             ts_topo_name(t), ts_coll_op_name(o->op), n,
             o->cr.net.fidelity == TS_NET_CHUNK ? "chunk" : "flow",
             o->cr.compact ? ", compact rings" : "");
    snprintf(info[1], sizeof info[1], "simulated: every iteration and the in-place "
             "run take the same time; no data moves, so #wrong is N/A");
    r.info[0] = info[0];
    r.info[1] = info[1];
    r.rows = rows;
    r.nrows = nsizes;
    rc = emit(o, &r);
  }
  if (!rc && o->stats && !o->json)
    printf("# stats of the largest size:\n# coll.transfers: %llu\n"
           "# sim.events_processed: %llu\n# sim.wall_s: %.6f\n"
           "# net.flows_started: %llu\n# net.solves: %llu\n"
           "# coll.closed_form: %d\n",
           (unsigned long long)last.transfers,
           (unsigned long long)last.sim.events_processed, last.sim.wall_s,
           (unsigned long long)last.net.flows_started,
           (unsigned long long)last.net.solves, last.closed_form);
  free(g);
  return rc;
}

static int run_p2p(const ts_topo *t, bench_opts *o, const uint64_t *sizes,
                   uint32_t nsizes, bench_row *rows) {
  ts_p2p_pairs pairs = {0};
  uint32_t *set = NULL, n = 0;
  ts_p2p_result last;
  int rc = make_pairs(t, o, &pairs, &set, &n);
  /* --nccl-p2p: NCCL's p2p channels for a communicator of the n GPUs. */
  o->p2p.nccl_ranks = o->nccl_p2p ? (int)n : 0;
  if (!rc) rc = sweep(t, o, &pairs, sizes, nsizes, rows, &last);
  if (!rc && o->json) rc = print_json(t, o, n, pairs.count, rows, nsizes);
  if (!rc) {
    bench_report r;
    char info[2][400];
    report_base(t, o, set, n, &r);
    snprintf(info[0], sizeof info[0], "topology %s, op sendrecv, %s over %u GPUs "
             "(%u transfers)", ts_topo_name(t), o->pattern ? o->pattern : "src->dst",
             n, pairs.count);
    snprintf(info[1], sizeof info[1], "fidelity %s, routing %s, %s; simulated: "
             "in-place = out-of-place, #wrong N/A",
             o->p2p.net.fidelity == TS_NET_CHUNK ? "chunk" : "flow",
             routing_name(o), o->p2p.route.no_pxn ? "no PXN" : "PXN");
    r.info[0] = info[0];
    r.info[1] = info[1];
    r.rows = rows;
    r.nrows = nsizes;
    rc = emit(o, &r);
  }
  if (!rc && o->stats && !o->json) print_stats(&last);
  free(set);
  ts_p2p_pairs_free(&pairs);
  return rc;
}

static int run_bench(const ts_topo *t, bench_opts *o) {
  uint32_t nsizes = size_list(o, NULL);
  if (!nsizes)
    return cli_usage_error("bench", "-b/-e/-f/-i give more than %u sizes", MAX_ROWS);
  int rc = cli_faults_resolve("bench", &o->faults, t);
  if (rc) return rc;
  o->p2p.faults = &o->faults;
  uint64_t *sizes = calloc(nsizes, sizeof *sizes);
  bench_row *rows = calloc(nsizes, sizeof *rows);
  rc = sizes && rows ? 0 : EX_OSERR;
  if (!rc) size_list(o, sizes);
  if (!rc) rc = o->coll ? run_coll(t, o, sizes, nsizes, rows) : run_p2p(t, o, sizes, nsizes, rows);
  free(sizes);
  free(rows);
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
  o.step_bytes = 1ULL << 20; /* nccl-tests' -i default */
  o.seed = 1;
  o.iters = 20; /* nccl-tests' defaults, printed in the preamble */
  o.warmup = 1;
  o.type_name = "float";
  o.type_size = 4;
  o.redop = "sum";
  o.argc = argc;
  o.argv = argv;
  ts_faults_init(&o.faults);
  int rc = parse_opts(argc, argv, &o);
  char first[32];
  if (!rc && o.ngpus) {
    uint64_t v;
    if (cli_parse_uint("bench", "-g", o.ngpus, 1, UINT32_MAX, &v)) {
      rc = EX_USAGE;
    } else {
      snprintf(first, sizeof first, "first:%llu", (unsigned long long)v);
      o.gpus = first;
    }
  }
  ts_topo *t = NULL;
  if (!rc) rc = cli_load_topo_as(o.file, o.hosts, o.fabric, "bench", &t);
  if (!rc) rc = run_bench(t, &o);
  ts_topo_free(t);
  ts_faults_free(&o.faults);
  return rc < 0 ? 0 : rc;
}
