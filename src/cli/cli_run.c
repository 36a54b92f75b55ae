/* cli_run.c - `topsim run WORKLOAD`: predict one training step by running
 * every rank's operation graph on the engine (ts_step.h), then print the
 * breakdown (text or --json), optionally a Chrome/Perfetto trace, or just
 * the placement of every rank (--placement). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_faults.h"
#include "cli/cli_progress.h"
#include "topsim/ts_report_step.h"
#include "topsim/ts_step.h"

#define MAX_SETS 128

typedef struct run_opts {
  const char *file, *topology, *trace, *trace_ranks;
  char *sets[MAX_SETS]; /* "key=value", in command-line order (owned) */
  uint32_t nsets;
  int json, stats, placement;
  int progress;         /* CLI_PROGRESS_* */
  ts_step_opts step;
  ts_faults faults;     /* what-if: --fail, --straggler, --faults, ... */
} run_opts;

static void run_help(void) {
  printf(
      "usage: topsim run WORKLOAD [options]\n\n"
      "Predicts one training step: every rank's forward, backward and\n"
      "optimizer work on a compute stream, TP/CP/EP/DP collectives and\n"
      "pipeline sends on communication streams, all over the shared fabric.\n\n"
      "workload overrides (same keys as the file, docs/workload-format.md):\n"
      "  --tp N --cp N --pp N --dp N --ep N\n"
      "  --micro-batch N --global-batch N\n"
      "  --schedule gpipe|1f1b|interleaved   --virtual-stages N\n"
      "  --recompute none|selective|full     --zero 0..3\n"
      "  --set KEY=VALUE      any workload key; repeatable\n"
      "  --topology FILE      topology (default: the workload's)\n"
      "model:\n"
      "  --fidelity flow|chunk   max-min flows (default) or chunked queues\n"
      "  --no-pxn             send from the GPU's own NIC (default: PXN)\n"
      "  --routing ecmp_hash|dmodk   uplinks by flow hash or by destination\n"
      "                       (D-mod-k) on every plane (default: each plane's\n"
      "                       `routing` in the topology)\n"
      "  --free-comm          every collective and send takes zero time\n"
      "  --alpha TIME         per-step latency of every collective and send,\n"
      "                       e.g. 0us for a pure bandwidth model; replaces\n"
      "                       NCCL's launch, base and per-step latencies\n"
      "  --exact              no shortcuts: every collective through the\n"
      "                       network model, the full simulation (slower;\n"
      "                       docs/performance.md). The default is not exact:\n"
      "                       back-to-back gradient buckets run as one\n"
      "                       (batch) and crossed TP / CP / EP replays stand\n"
      "                       (cross): within 1%% of --exact on the cases\n"
      "                       measured bar one, +2.04%% (docs/model.md)\n"
      "  --bounded[=LIST]     the shortcuts that are not exact: LIST is\n"
      "                       batch, beside (TP / CP collectives inside a\n"
      "                       host replayed beside flows that keep their\n"
      "                       rates; up to 2.9%% under --exact), compact\n"
      "                       (rings of 2-7 ranks on one host compact; 1.02%%\n"
      "                       under --exact), steady (a step of many\n"
      "                       micro-batches: its steady phase extrapolated\n"
      "                       from two runs of fewer, 2 x pp and 4 x pp\n"
      "                       under 1F1B; up to 0.8%% off), cross (a TP /\n"
      "                       CP / EP replay stands when a later transfer\n"
      "                       crosses its window; up to 0.5%% off), all or\n"
      "                       none, comma-separated; exactly those run\n"
      "                       (none: only exact shortcuts, the same step as\n"
      "                       --exact). Without LIST: all\n");
  fputs(cli_faults_help, stdout);
  printf(
      "output:\n"
      "  --placement          print every rank's placement and groups, exit\n"
      "                       (with --json: as a JSON array)\n"
      "  --json               JSON instead of the text summary\n"
      "  --trace FILE         Chrome/Perfetto trace-event JSON\n"
      "  --trace-ranks LIST   ranks in the trace, e.g. 0-7,64 (default: all\n"
      "                       up to 64 ranks, else the first TP group of\n"
      "                       each pipeline stage)\n"
      "  --stats              engine and network counters\n"
      "  --progress           progress line on stderr even when it is not a\n"
      "                       terminal (default: only on a terminal, after 1 s)\n"
      "  --quiet              no progress line\n"
      "  -h, --help           show this help\n\n"
      "exit status: 0 ok, 64 usage, 65 bad workload or layout (mapping\n"
      "refused, out of memory on a GPU), 66 no file, 73 trace file cannot be\n"
      "created, 74 trace not written\n");
}

static int add_set(run_opts *o, const char *key, const char *val) {
  if (o->nsets == MAX_SETS) return cli_usage_error("run", "too many overrides");
  size_t n = strlen(key) + strlen(val) + 2;
  char *s = malloc(n);
  if (!s) return EX_OSERR;
  snprintf(s, n, "%s=%s", key, val);
  o->sets[o->nsets++] = s;
  return 0;
}

static const struct option longopts[] = {
    {"tp", required_argument, NULL, 1},          {"cp", required_argument, NULL, 2},
    {"pp", required_argument, NULL, 3},          {"dp", required_argument, NULL, 4},
    {"ep", required_argument, NULL, 5},          {"micro-batch", required_argument, NULL, 6},
    {"global-batch", required_argument, NULL, 7}, {"schedule", required_argument, NULL, 8},
    {"recompute", required_argument, NULL, 9},   {"zero", required_argument, NULL, 10},
    {"virtual-stages", required_argument, NULL, 11},
    {"set", required_argument, NULL, 's'},       {"topology", required_argument, NULL, 'T'},
    {"fidelity", required_argument, NULL, 'F'},  {"no-pxn", no_argument, NULL, 'P'},
    {"free-comm", no_argument, NULL, 'Z'},       {"placement", no_argument, NULL, 'p'},
    {"json", no_argument, NULL, 'j'},            {"trace", required_argument, NULL, 't'},
    {"trace-ranks", required_argument, NULL, 'r'}, {"stats", no_argument, NULL, 'S'},
    {"exact", no_argument, NULL, 'X'},          {"alpha", required_argument, NULL, 'A'},
    {"progress", no_argument, NULL, 'G'},       {"quiet", no_argument, NULL, 'q'},
    {"routing", required_argument, NULL, 'R'},
    {"bounded", optional_argument, NULL, 'B'},
    CLI_FAULT_LONGOPTS,
    {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0}};

static const char *const set_keys[] = {
    NULL, "tp", "cp", "pp", "dp", "ep", "micro_batch", "global_batch",
    "schedule", "recompute", "zero_stage", "virtual_stages"};

static int parse_opt(int c, const char *arg, run_opts *o) {
  if (c >= 1 && c <= 11) return add_set(o, set_keys[c], arg);
  switch (c) {
  case 's': {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) return cli_usage_error("run", "--set takes KEY=VALUE");
    if (o->nsets == MAX_SETS) return cli_usage_error("run", "too many overrides");
    o->sets[o->nsets] = strdup(arg);
    return o->sets[o->nsets++] ? 0 : EX_OSERR;
  }
  case 'T': o->topology = arg; return 0;
  case 'F':
    if (!strcmp(arg, "flow")) o->step.net.fidelity = TS_NET_FLOW;
    else if (!strcmp(arg, "chunk")) o->step.net.fidelity = TS_NET_CHUNK;
    else return cli_usage_error("run", "--fidelity must be flow or chunk");
    return 0;
  case 'P': o->step.route.no_pxn = 1; return 0;
  case 'R':
    if (!strcmp(arg, "ecmp_hash")) o->step.route.routing = 1 + TS_ROUTING_ECMP_HASH;
    else if (!strcmp(arg, "dmodk")) o->step.route.routing = 1 + TS_ROUTING_DMODK;
    else return cli_usage_error("run", "--routing must be ecmp_hash or dmodk");
    return 0;
  case 'Z': o->step.free_comm = 1; return 0;
  case 'X': o->step.exact = 1; return 0;
  case 'B': return cli_parse_bounded("run", arg, &o->step.bounded);
  case 'G': o->progress = CLI_PROGRESS_ON; return 0;
  case 'q': o->progress = CLI_PROGRESS_OFF; return 0;
  case 'A': {
    ts_time_ps ps;
    if (ts_parse_latency(arg, &ps))
      return cli_usage_error("run", "--alpha '%s' is not a time such as 2us", arg);
    o->step.alpha_ps = (int64_t)ps;
    return 0;
  }
  case 'p': o->placement = 1; return 0;
  case 'j': o->json = 1; return 0;
  case 't': o->trace = arg; return 0;
  case 'r': o->trace_ranks = arg; return 0;
  case 'S': o->stats = 1; return 0;
  }
  int st = 0;
  if (cli_faults_opt("run", c, arg, &o->faults, &st)) return st;
  return cli_usage_error("run", "unknown option");
}

static int parse_opts(int argc, char **argv, run_opts *o) {
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    if (c == 'h') {
      run_help();
      return -1;
    }
    if (c == ':') return cli_usage_error("run", "%s needs a value", argv[optind - 1]);
    if (c == '?') return cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
    int rc = parse_opt(c, optarg, o);
    if (rc) return rc;
  }
  if (optind != argc - 1) return cli_usage_error("run", "expected one WORKLOAD file");
  o->file = argv[optind];
  if (o->trace_ranks && !o->trace)
    return cli_usage_error("run", "--trace-ranks needs --trace FILE");
  return 0;
}

/* Loads the workload, applies overrides, loads the topology. */
static int load(run_opts *o, ts_workload **w, ts_topo **t) {
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_workload_load_file(o->file, w, &d);
  if (rc) return cli_fail(&d, rc);
  rc = ts_workload_override_list(*w, (const char *const *)o->sets, o->nsets, &d);
  if (rc) return cli_fail(&d, rc);
  const char *topo = o->topology ? o->topology : ts_workload_topology(*w);
  if (!topo)
    return cli_usage_error("run", "%s names no topology: give --topology FILE",
                           o->file);
  if (o->topology) return cli_load_topo(topo, t);
  /* The file's `topology:` names it: a missing file is an error of the
   * workload, at that line; an error inside the topology keeps its own
   * position (that is where it is) and says who referred to it. */
  rc = ts_topo_load_file(topo, t, &d);
  if (!rc) return 0;
  int line, col;
  ts_workload_key_pos(*w, "topology", &line, &col);
  char msg[sizeof d.msg], file[sizeof d.file];
  snprintf(msg, sizeof msg, "%s", d.msg); /* ts_diag_set rewrites d */
  snprintf(file, sizeof file, "%s", d.file);
  if (rc == TS_ENOINPUT && !d.line)
    ts_diag_set(&d, rc, o->file, line, col, "topology '%s': %s", topo, msg);
  else
    ts_diag_set(&d, rc, file, d.line, d.col, "%s (in the topology named at "
                "%s:%d:%d)", msg, o->file, line, col);
  return cli_fail(&d, rc);
}

static void print_placement(const ts_mapping *m, const ts_topo *t) {
  printf("%-6s %-20s %5s %5s %4s %4s %4s %-20s %5s  %-8s %-8s %-8s %-8s %-8s\n",
         "rank", "gpu", "host", "rack", "su", "nvl", "numa", "nic", "rail",
         "tp", "cp", "pp", "dp", "ep");
  static const ts_group order[] = {TS_GROUP_TP, TS_GROUP_CP, TS_GROUP_PP,
                                   TS_GROUP_DP, TS_GROUP_EP};
  for (uint32_t r = 0; r < ts_mapping_ranks(m); r++) {
    const ts_rank_label *lb = ts_mapping_rank(m, r);
    printf("%-6u %-20s %5d %5d %4d %4d %4d %-20s %5d ", r,
           ts_topo_node_name(t, lb->gpu), lb->host, lb->rack, lb->su,
           lb->nvl_domain, lb->numa,
           lb->nic >= 0 ? ts_topo_node_name(t, (uint32_t)lb->nic) : "-", lb->rail);
    for (int i = 0; i < 5; i++) {
      char cell[24];
      snprintf(cell, sizeof cell, "%u.%u", lb->group[order[i]], lb->index[order[i]]);
      printf(" %-8s", cell);
    }
    printf("\n");
  }
}

/* --placement --json: the same table as an array of rank objects (the
 * machine twin; groups as {"group": g, "index": i} per dimension).
 * Returns 0, or EX_OSERR when out of memory / EX_IOERR on a write error. */
static int json_placement(const ts_mapping *m, const ts_topo *t) {
  static const ts_group order[] = {TS_GROUP_TP, TS_GROUP_CP, TS_GROUP_PP,
                                   TS_GROUP_DP, TS_GROUP_EP};
  static const char *const dims[] = {"tp", "cp", "pp", "dp", "ep"};
  json_t *a = json_array();
  for (uint32_t r = 0; a && r < ts_mapping_ranks(m); r++) {
    const ts_rank_label *lb = ts_mapping_rank(m, r);
    json_t *o = json_pack(
        "{s:I s:s s:i s:i s:i s:i s:i s:s* s:i}", "rank", (json_int_t)r,
        "gpu", ts_topo_node_name(t, lb->gpu), "host", lb->host, "rack",
        lb->rack, "su", lb->su, "nvl_domain", lb->nvl_domain, "numa", lb->numa,
        "nic", lb->nic >= 0 ? ts_topo_node_name(t, (uint32_t)lb->nic) : NULL,
        "rail", lb->rail);
    for (int i = 0; o && i < 5; i++)
      if (json_object_set_new(o, dims[i],
                              json_pack("{s:I s:I}", "group",
                                        (json_int_t)lb->group[order[i]], "index",
                                        (json_int_t)lb->index[order[i]])))
        json_decref(o), o = NULL;
    if (!o || json_array_append_new(a, o)) json_decref(a), a = NULL;
  }
  if (!a) return EX_OSERR;
  int rc = json_dumpf(a, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(a);
  return rc || fputc('\n', stdout) == EOF ? EX_IOERR : 0;
}

/* "0-7,64" -> rank list (ranks past the end are refused). */
static int parse_ranks(const char *s, uint32_t n, uint32_t **out, uint32_t *cnt) {
  uint32_t cap = 64;
  *out = malloc(cap * sizeof **out);
  *cnt = 0;
  while (*out && *s) {
    char *end;
    unsigned long a = strtoul(s, &end, 10), b = a;
    if (end == s) return -1;
    if (*end == '-') {
      s = end + 1;
      b = strtoul(s, &end, 10);
      if (end == s) return -1;
    }
    if (a > b || b >= n) return -1;
    for (unsigned long i = a; i <= b; i++) {
      if (*cnt == cap) {
        uint32_t *v = realloc(*out, 2 * cap * sizeof *v);
        if (!v) return -1;
        *out = v;
        cap *= 2;
      }
      (*out)[(*cnt)++] = (uint32_t)i;
    }
    s = end;
    if (*s == ',') s++;
    else if (*s) return -1;
  }
  return *out ? 0 : -1;
}

/* Default trace ranks: all up to 64, else the first TP group of each
 * pipeline stage (stage s: the TP group of PP group 0's member s). */
static int default_ranks(const ts_mapping *m, uint32_t **out, uint32_t *cnt) {
  uint32_t n = ts_mapping_ranks(m), tp = ts_mapping_group_size(m, TS_GROUP_TP);
  uint32_t pp = ts_mapping_group_size(m, TS_GROUP_PP);
  *out = malloc((size_t)(n <= 64 ? n : tp * pp) * sizeof **out + 1);
  if (!*out) return -1;
  *cnt = 0;
  if (n <= 64) {
    for (uint32_t r = 0; r < n; r++) (*out)[(*cnt)++] = r;
    return 0;
  }
  for (uint32_t s = 0; s < pp; s++) {
    uint32_t r = ts_mapping_group_member(m, TS_GROUP_PP, 0, s);
    uint32_t g = ts_mapping_rank(m, r)->group[TS_GROUP_TP];
    for (uint32_t i = 0; i < tp; i++)
      (*out)[(*cnt)++] = ts_mapping_group_member(m, TS_GROUP_TP, g, i);
  }
  return 0;
}

static void print_stats(const ts_step_result *r, FILE *o) {
  fprintf(o, "\nstats\n  sim.events_processed: %llu\n  sim.peak_pending: %llu\n"
             "  sim.wall_s: %.3f\n  collectives: %llu\n  transfers: %llu\n"
             "  net.flows_started: %llu\n  net.bytes_sent: %llu\n"
             "  net.bytes_delivered: %llu\n  net.solves: %llu\n",
          (unsigned long long)r->sim.events_processed,
          (unsigned long long)r->sim.peak_pending, r->sim.wall_s,
          (unsigned long long)r->collectives, (unsigned long long)r->transfers,
          (unsigned long long)r->net.flows_started,
          (unsigned long long)r->net.bytes_sent,
          (unsigned long long)r->net.bytes_delivered,
          (unsigned long long)r->net.solves);
  fprintf(o, "  ranks_simulated: %u\n  fold: %s\n", r->ranks_simulated, r->fold);
  fprintf(o, "  replayed: %llu\n  replayed_beside: %llu\n  replayed_dp: %llu\n"
             "  crossed_kept: %llu\n  attempts: %u\n  isolated_runs: %llu\n"
             "  isolated_shared: %llu\n",
          (unsigned long long)r->replayed,
          (unsigned long long)r->replayed_beside,
          (unsigned long long)r->replayed_dp,
          (unsigned long long)r->crossed_kept, r->attempts,
          (unsigned long long)r->memo_runs, (unsigned long long)r->memo_shared);
}

/* The trace file is opened before simulating (open_trace), so a bad path
 * fails at once instead of after the whole run; written and closed here. */
static FILE *open_trace(const run_opts *o) {
  FILE *f = fopen(o->trace, "w");
  if (!f) fprintf(stderr, "topsim run: cannot write '%s': %s\n", o->trace,
                  strerror(errno));
  return f;
}

static int write_trace(const run_opts *o, FILE *f, const ts_step_result *r,
                       const ts_mapping *m, const ts_topo *t) {
  int rc = ts_report_step_trace(r, m, t, f);
  if (fflush(f) || ferror(f)) rc = -1;
  if (fclose(f) || rc) {
    fprintf(stderr, "topsim run: writing '%s' failed\n", o->trace);
    return EX_IOERR;
  }
  return 0;
}

static int simulate(run_opts *o, const ts_workload *w, const ts_mapping *m,
                    const ts_topo *t) {
  uint32_t *ranks = NULL, n = 0;
  if (o->trace) {
    int bad = o->trace_ranks ? parse_ranks(o->trace_ranks, ts_mapping_ranks(m), &ranks, &n)
                             : default_ranks(m, &ranks, &n);
    if (bad) {
      free(ranks);
      return cli_usage_error("run", "--trace-ranks takes ranks below %u like "
                             "0-7,64", ts_mapping_ranks(m));
    }
  }
  o->step.trace_ranks = ranks;
  o->step.ntrace_ranks = n;
  FILE *tf = o->trace ? open_trace(o) : NULL;
  if (o->trace && !tf) {
    free(ranks);
    return EX_CANTCREAT; /* as every command's unopenable output file */
  }
  ts_step_result r;
  ts_diag d;
  ts_diag_clear(&d);
  cli_progress line;
  cli_progress_attach(&line, o->progress, &o->step);
  int rc = ts_step_run(w, t, m, &o->step, &r, &d);
  cli_progress_done(&line);
  free(ranks);
  if (rc) {
    if (tf) fclose(tf);
    return cli_fail(&d, rc);
  }
  int st = o->json ? ts_report_step_json(&r, w, m, t, stdout)
                   : ts_report_step_text(&r, w, m, t, stdout);
  if (!st && o->stats) print_stats(&r, o->json ? stderr : stdout);
  int ex = st ? EX_IOERR : 0;
  if (!ex && tf) ex = write_trace(o, tf, &r, m, t);
  else if (tf) fclose(tf);
  ts_step_result_free(&r);
  return ex;
}

int cli_run(int argc, char **argv) {
  run_opts o;
  memset(&o, 0, sizeof o);
  ts_step_opts_default(&o.step);
  int rc = parse_opts(argc, argv, &o);
  ts_workload *w = NULL;
  ts_topo *t = NULL;
  ts_mapping *m = NULL;
  if (!rc) rc = load(&o, &w, &t);
  if (!rc) rc = cli_faults_resolve("run", &o.faults, t);
  o.step.faults = &o.faults;
  if (!rc) {
    ts_diag d;
    ts_diag_clear(&d);
    int e = ts_work_map(w, t, &m, &d);
    if (e) rc = cli_fail(&d, e);
  }
  for (uint32_t i = 0; !rc && i < ts_mapping_warning_count(m); i++)
    fprintf(stderr, "topsim run: warning: %s\n", ts_mapping_warning(m, i));
  if (!rc && o.placement && o.json) rc = json_placement(m, t);
  else if (!rc && o.placement) print_placement(m, t);
  else if (!rc) rc = simulate(&o, w, m, t);
  for (uint32_t i = 0; i < o.nsets; i++) free(o.sets[i]);
  ts_faults_free(&o.faults);
  ts_mapping_free(m);
  ts_topo_free(t);
  ts_workload_free(w);
  return rc < 0 ? 0 : rc;
}
