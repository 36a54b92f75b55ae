/* cli_plan.c - `topsim plan`: size a rail-optimized backend fabric from
 * design rules, print it (text or JSON), optionally write it as a topology
 * file, or sweep a range of SU counts.
 *
 * Options are read in two passes: the first applies --preset, the second
 * lets every other option override it, whatever the order on the command
 * line. Bad options and requests the rules cannot build exit 64 with one
 * message; a missing template file exits 66. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "cli/cli_jobs.h"
#include "cli/cli_plan_run.h"
#include "topsim/ts_plan.h"
#include "topsim/ts_report_plan.h"
#include "topsim/ts_units.h"

#define PLAN_MAX_SWEEP 1024u

typedef struct plan_opts {
  ts_plan_request req;
  int json;
  const char *emit;
  uint32_t sus_lo, sus_hi;  /* --sus A..B; 0 = no sweep */
  const char *workload;     /* --workload: predict a step per size */
  cli_jobs_opts jobs;       /* --jobs, --quiet for the --workload steps */
} plan_opts;

static void plan_help(void) {
  printf(
      "usage: topsim plan (--gpus N | --nodes N | --sus A..B) [options]\n\n"
      "Size a rail-optimized leaf/spine/core backend fabric from design rules\n"
      "(docs/planning.md): switches, ports, cables, transceivers per tier,\n"
      "oversubscription, bisection, worst-case hops, one-switch failures.\n\n"
      "options:\n"
      "  --gpus N                GPUs wanted (rounded up to whole nodes)\n"
      "  --nodes N               nodes wanted\n"
      "  --sus A..B              sweep: one row per SU count A..B\n"
      "  --preset NAME           %s\n"
      "  --template NAME         %s, or FILE:NAME\n"
      "  --radix N               switch ports (default 40)\n"
      "  --port-speed BW         e.g. 400Gb/s (default: the template's NIC)\n"
      "  --rails N               NICs per node on the fabric (default: "
      "template)\n"
      "  --nodes-per-su N        SU size (default: the leaf's down ports)\n"
      "  --oversub L[,S]         down:up of leaves[,spines], e.g. 1:1,1:1\n"
      "  --min-tiers N           fewest tiers to consider (default 1; presets "
      "2)\n"
      "  --max-tiers N           most tiers to consider (default 3)\n"
      "  --reserved-ports N      ports per leaf kept for management (UFM)\n"
      "  --transceivers-per-cable N   optical cable ends (default 2)\n"
      "  --copper-node-leaf      node-leaf cables are DAC: no transceivers\n"
      "  --json                  print JSON\n"
      "  --emit-yaml FILE        write the plan as a topology file\n"
      "  --jobs N                with --workload: worker processes (default:\n"
      "                          the cores; MPI ranks under mpirun/srun)\n"
      "  --quiet                 no progress line on standard error\n"
      "  --workload FILE         with --sus: run one training step of FILE on\n"
      "                          each size (dp fills the GPUs) and print step\n"
      "                          time, tokens/s and scaling efficiency\n"
      "  -h, --help              show this help\n\n"
      "exit status: 0 ok, 64 bad option or unbuildable request, 66 missing "
      "file\n",
      ts_plan_preset_names(), ts_plan_template_names());
}

static int parse_u32(const char *s, uint32_t *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || end == s || *end || *s == '-' || v > UINT32_MAX) return -1;
  *out = (uint32_t)v;
  return 0;
}

/* "A:B" -> {A, B}, both > 0; *end gets the rest. */
static int parse_ratio(const char *s, uint32_t r[2], const char **end) {
  char *e;
  unsigned long a = strtoul(s, &e, 10);
  if (e == s || *e != ':' || *s == '-') return -1;
  const char *b0 = e + 1;
  unsigned long b = strtoul(b0, &e, 10);
  if (e == b0 || *b0 == '-' || !a || !b || a > 65535 || b > 65535) return -1;
  r[0] = (uint32_t)a;
  r[1] = (uint32_t)b;
  *end = e;
  return 0;
}

static int parse_oversub(const char *s, uint32_t r[2][2]) {
  const char *e;
  if (parse_ratio(s, r[0], &e)) return -1;
  if (!*e) return 0;
  if (*e != ',' || parse_ratio(e + 1, r[1], &e) || *e) return -1;
  return 0;
}

static int parse_sus(const char *s, plan_opts *o) {
  const char *dots = strstr(s, "..");
  char lo[32];
  if (!dots || dots - s >= (long)sizeof lo) return -1;
  snprintf(lo, sizeof lo, "%.*s", (int)(dots - s), s);
  if (parse_u32(lo, &o->sus_lo) || parse_u32(dots + 2, &o->sus_hi)) return -1;
  return o->sus_lo && o->sus_lo <= o->sus_hi ? 0 : -1;
}

enum {
  O_GPUS = 256, O_NODES, O_SUS, O_PRESET, O_TEMPLATE, O_RADIX, O_SPEED,
  O_RAILS, O_PER_SU, O_OVERSUB, O_MIN_TIERS, O_MAX_TIERS, O_RESERVED, O_TPC,
  O_COPPER, O_JSON, O_EMIT, O_WORKLOAD, O_JOBS, O_QUIET
};

static const struct option longopts[] = {
    {"gpus", required_argument, NULL, O_GPUS},
    {"nodes", required_argument, NULL, O_NODES},
    {"sus", required_argument, NULL, O_SUS},
    {"preset", required_argument, NULL, O_PRESET},
    {"template", required_argument, NULL, O_TEMPLATE},
    {"radix", required_argument, NULL, O_RADIX},
    {"port-speed", required_argument, NULL, O_SPEED},
    {"rails", required_argument, NULL, O_RAILS},
    {"nodes-per-su", required_argument, NULL, O_PER_SU},
    {"oversub", required_argument, NULL, O_OVERSUB},
    {"min-tiers", required_argument, NULL, O_MIN_TIERS},
    {"max-tiers", required_argument, NULL, O_MAX_TIERS},
    {"reserved-ports", required_argument, NULL, O_RESERVED},
    {"transceivers-per-cable", required_argument, NULL, O_TPC},
    {"copper-node-leaf", no_argument, NULL, O_COPPER},
    {"json", no_argument, NULL, O_JSON},
    {"emit-yaml", required_argument, NULL, O_EMIT},
    {"workload", required_argument, NULL, O_WORKLOAD},
    {"jobs", required_argument, NULL, O_JOBS},
    {"quiet", no_argument, NULL, O_QUIET},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

static uint32_t *u32_field(plan_opts *o, int c) {
  ts_plan_request *q = &o->req;
  switch (c) {
  case O_GPUS: return &q->gpus;
  case O_NODES: return &q->nodes;
  case O_RADIX: return &q->radix;
  case O_RAILS: return &q->rails;
  case O_PER_SU: return &q->nodes_per_su;
  case O_MIN_TIERS: return &q->min_tiers;
  case O_MAX_TIERS: return &q->max_tiers;
  case O_RESERVED: return &q->reserved_ports;
  case O_TPC: return &q->transceivers_per_cable;
  default: return NULL;
  }
}

/* One option of the second pass; returns 0 or an exit status. */
static int plan_opt(plan_opts *o, int c, const char *arg) {
  uint32_t *u = u32_field(o, c);
  if (u && parse_u32(arg, u))
    return cli_usage_error("plan", "option --%s needs a whole number, not "
                           "'%s'", longopts[c - O_GPUS].name, arg);
  if (u) return 0;
  switch (c) {
  case O_PRESET: return 0;
  case O_TEMPLATE: o->req.template_name = arg; return 0;
  case O_COPPER: o->req.copper_node_leaf = 1; return 0;
  case O_JSON: o->json = 1; return 0;
  case O_EMIT: o->emit = arg; return 0;
  case O_SPEED:
    if (ts_parse_bandwidth(arg, &o->req.port_speed) || o->req.port_speed <= 0)
      return cli_usage_error("plan", "--port-speed '%s' is not a bandwidth "
                             "like 400Gb/s", arg);
    return 0;
  case O_OVERSUB:
    if (parse_oversub(arg, o->req.oversub))
      return cli_usage_error("plan", "--oversub '%s' is not DOWN:UP[,DOWN:UP] "
                             "with whole numbers > 0, e.g. 1:1 or 3:1,1:1", arg);
    return 0;
  case O_SUS:
    if (parse_sus(arg, o))
      return cli_usage_error("plan", "--sus '%s' is not A..B with 1 <= A <= "
                             "B", arg);
    return 0;
  case O_WORKLOAD:
    o->workload = arg;
    return 0;
  case O_JOBS: return cli_jobs_parse("plan", arg, &o->jobs.jobs);
  case O_QUIET: o->jobs.quiet = 1; return 0;
  default: return cli_usage_error("plan", "unknown option");
  }
}

/* Pass 1: --help and --preset. Returns -1 to go on, else an exit status. */
static int first_pass(int argc, char **argv, plan_opts *o) {
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    if (c == 'h') {
      plan_help();
      return 0;
    }
    if (c != O_PRESET) continue;
    ts_diag d;
    ts_diag_clear(&d);
    if (ts_plan_preset(optarg, &o->req, &d))
      return cli_usage_error("plan", "%s", d.msg);
  }
  return -1;
}

static int parse_opts(int argc, char **argv, plan_opts *o) {
  int rc = first_pass(argc, argv, o);
  if (rc >= 0) return rc;
  optind = 0;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    if (c == '?' || c == ':')
      return cli_usage_error("plan", "unknown option or missing value: '%s'",
                             argv[optind - 1]);
    rc = plan_opt(o, c, optarg);
    if (rc) return rc;
  }
  if (optind < argc)
    return cli_usage_error("plan", "unexpected argument '%s'", argv[optind]);
  if (o->workload && !o->sus_lo)
    return cli_usage_error("plan", "--workload needs --sus A..B (the sizes to "
                           "predict)");
  if (o->sus_lo && (o->req.gpus || o->req.nodes || o->emit))
    return cli_usage_error("plan", "--sus sweeps sizes: drop --gpus, --nodes "
                           "and --emit-yaml");
  return -1;
}

static int fail(const ts_diag *d, int code) {
  if (code == TS_EUSAGE) return cli_usage_error("plan", "%s", d->msg);
  return cli_fail(d, code);
}

static int emit(const ts_plan_result *r, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "topsim plan: cannot write '%s'\n", path);
    return EX_CANTCREAT;
  }
  int rc = ts_plan_emit_yaml(r, f);
  if (fclose(f) || rc) {
    fprintf(stderr, "topsim plan: write to '%s' failed\n", path);
    return EX_IOERR;
  }
  return 0;
}

static int run_one(plan_opts *o) {
  ts_plan_result r;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_plan_compute(&o->req, &r, &d);
  if (rc) return fail(&d, rc);
  rc = o->json ? ts_report_plan_json(&r, stdout) : ts_report_plan_text(&r, stdout);
  int st = rc ? EX_IOERR : 0;
  if (!st && o->emit) st = emit(&r, o->emit);
  ts_plan_free(&r);
  return st;
}

static int run_sweep(plan_opts *o) {
  uint32_t n = o->sus_hi - o->sus_lo + 1;
  if (n > PLAN_MAX_SWEEP)
    return cli_usage_error("plan", "--sus covers %u sizes; at most %u", n,
                           PLAN_MAX_SWEEP);
  if (!o->req.nodes_per_su)
    return cli_usage_error("plan", "--sus needs --nodes-per-su or --preset");
  ts_plan_result *rows = calloc(n, sizeof *rows);
  if (!rows) return EX_OSERR;
  int st = 0;
  uint32_t done = 0;
  for (; done < n && !st; done++) {
    ts_diag d;
    ts_diag_clear(&d);
    o->req.nodes = (o->sus_lo + done) * o->req.nodes_per_su;
    int rc = ts_plan_compute(&o->req, &rows[done], &d);
    if (rc) st = fail(&d, rc);
  }
  if (!st && ts_report_plan_sweep(rows, n, o->json, stdout)) st = EX_IOERR;
  if (!st && o->workload) {
    putchar('\n');
    st = cli_plan_predict(&o->req, o->sus_lo, o->sus_hi, o->workload,
                          &o->jobs);
  }
  for (uint32_t i = 0; i < n; i++) ts_plan_free(&rows[i]);
  free(rows);
  return st;
}

int cli_plan(int argc, char **argv) {
  plan_opts o;
  memset(&o, 0, sizeof o);
  ts_plan_request_init(&o.req);
  int rc = parse_opts(argc, argv, &o);
  if (rc >= 0) return rc;
  /* under mpirun/srun the --workload steps spread over the ranks */
  if (o.workload && cli_jobs_init(&argc, &argv)) return EX_OSERR;
  rc = o.sus_lo ? run_sweep(&o) : run_one(&o);
  cli_jobs_finish();
  return rc;
}
