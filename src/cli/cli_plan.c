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
#include "cli/cli_args.h"
#include "cli/cli_faults.h"
#include "cli/cli_jobs.h"
#include "cli/cli_plan_run.h"
#include "cli/cli_plan_compare.h"
#include "cli/cli_plan_whatif.h"
#include "topsim/ts_plan.h"
#include "topsim/ts_report_plan.h"
#include "topsim/ts_units.h"

#define PLAN_MAX_SWEEP 1024u

#define PLAN_MAX_COMPARE 16

typedef struct plan_opts {
  ts_plan_request req;
  int json, csv, print_catalog;
  int diagram;              /* 0 none, 1 DOT, 2 SVG */
  const char *compare[PLAN_MAX_COMPARE];
  uint32_t ncompare;
  const char *emit;
  uint32_t sus_lo, sus_hi;  /* --sus A..B; 0 = no sweep */
  const char *workload;     /* --workload: predict a step per size */
  int what_if;              /* --what-if: blast radius, simulated */
  ts_faults faults;         /* --fail ... applied to --workload steps */
  cli_jobs_opts jobs;       /* --jobs, --quiet for the --workload steps */
  ts_step_opts step;        /* --exact, --bounded for the --workload steps */
  int step_knobs;           /* one of them was given */
  int design;               /* parsing one --compare design's options */
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
      "  --leaves-per-rail K     K leaves per rail per SU: each NIC splits into "
      "K\n"
      "                          ports of speed/K (twin-plane designs)\n"
      "layout, parts and power:\n"
      "  --nodes-per-rack N      nodes per compute rack (presets: RA value)\n"
      "  --rack-power KW         compute rack power budget, e.g. 40kW\n"
      "  --rack-units U          usable rack units (default 42)\n"
      "  --node-units U          rack units per node (space limit)\n"
      "  --leaf-placement P      eor (end of row, default) or mor (middle)\n"
      "  --rack-width M          metres per rack (default 0.6)\n"
      "  --row-pitch M           metres between rows (default 2.4)\n"
      "  --catalog FILE          parts catalog (default: bundled, sourced,\n"
      "                          no prices); --print-catalog writes it\n"
      "  --switch NAME           catalog switch model (default: by radix)\n"
      "  --storage-nics N        storage NICs per node (storage plane)\n"
      "  --storage-servers N     storage servers on the storage plane\n"
      "  --storage-oversub A:B   storage leaf down:up (default 1:1)\n"
      "  --frontend-nics N       frontend NICs per node (frontend plane)\n"
      "  --frontend-oversub A:B  frontend leaf down:up (default 1:1)\n"
      "outputs:\n"
      "  --json                  print JSON\n"
      "  --csv                   print the bill of materials as CSV\n"
      "  --diagram dot|svg       print the tier-level diagram (one box per\n"
      "                          tier group) as DOT or as SVG\n"
      "  --compare SET           a design: quoted options ('--preset X') or a\n"
      "                          YAML file of option: value; repeat to compare\n"
      "                          designs side by side (other options apply to\n"
      "                          all; with --workload, one step each)\n"
      "  --emit-yaml FILE        write the plan as a topology file\n"
      "  --jobs N                with --workload: worker processes (default:\n"
      "                          the cores; MPI ranks under mpirun/srun)\n"
      "  --quiet                 no progress line on standard error\n"
      "  --workload FILE         with --sus: run one training step of FILE on\n"
      "                          each size (dp fills the GPUs) and print step\n"
      "                          time, tokens/s and scaling efficiency\n"
      "  --what-if               with --workload and one size: run the step\n"
      "                          healthy and with one leaf, spine, core and\n"
      "                          node-leaf cable failed; slowdown next to the\n"
      "                          counted impact\n"
      "  --fail, --degrade, --straggler, --fail-at, --faults: what-if faults\n"
      "                          for --workload steps (see topsim run --help)\n"
      "step shortcuts (of the --workload steps: --sus, --compare, --what-if):\n",
      ts_plan_preset_names(), ts_plan_template_names());
  cli_step_shortcuts_help(26);
  printf(
      "  -h, --help              show this help\n\n"
      "exit status: 0 ok, 64 bad option or unbuildable request, 66 missing "
      "file,\n73 --emit-yaml file cannot be created, 74 write failed\n");
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
  O_COPPER, O_JSON, O_EMIT, O_WORKLOAD, O_KLEAF, O_PER_RACK, O_RACK_UNITS,
  O_NODE_UNITS, O_SNICS, O_SSERVERS, O_FNICS, O_RACK_POWER, O_PLACEMENT,
  O_RACK_WIDTH, O_ROW_PITCH, O_CATALOG, O_SWITCH, O_SOVERSUB, O_FOVERSUB,
  O_CSV, O_DIAGRAM, O_COMPARE, O_PRINT_CATALOG, O_WHATIF, O_JOBS, O_QUIET,
  O_EXACT, O_BOUNDED
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
    {"leaves-per-rail", required_argument, NULL, O_KLEAF},
    {"nodes-per-rack", required_argument, NULL, O_PER_RACK},
    {"rack-units", required_argument, NULL, O_RACK_UNITS},
    {"node-units", required_argument, NULL, O_NODE_UNITS},
    {"storage-nics", required_argument, NULL, O_SNICS},
    {"storage-servers", required_argument, NULL, O_SSERVERS},
    {"frontend-nics", required_argument, NULL, O_FNICS},
    {"rack-power", required_argument, NULL, O_RACK_POWER},
    {"leaf-placement", required_argument, NULL, O_PLACEMENT},
    {"rack-width", required_argument, NULL, O_RACK_WIDTH},
    {"row-pitch", required_argument, NULL, O_ROW_PITCH},
    {"catalog", required_argument, NULL, O_CATALOG},
    {"switch", required_argument, NULL, O_SWITCH},
    {"storage-oversub", required_argument, NULL, O_SOVERSUB},
    {"frontend-oversub", required_argument, NULL, O_FOVERSUB},
    {"csv", no_argument, NULL, O_CSV},
    {"diagram", required_argument, NULL, O_DIAGRAM},
    {"compare", required_argument, NULL, O_COMPARE},
    {"print-catalog", no_argument, NULL, O_PRINT_CATALOG},
    {"what-if", no_argument, NULL, O_WHATIF},
    {"jobs", required_argument, NULL, O_JOBS},
    {"quiet", no_argument, NULL, O_QUIET},
    {"exact", no_argument, NULL, O_EXACT},
    {"bounded", optional_argument, NULL, O_BOUNDED},
    CLI_FAULT_LONGOPTS,
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
  case O_KLEAF: return &q->leaves_per_rail;
  case O_PER_RACK: return &q->nodes_per_rack;
  case O_RACK_UNITS: return &q->rack_units;
  case O_NODE_UNITS: return &q->node_units;
  case O_SNICS: return &q->storage_nics;
  case O_SSERVERS: return &q->storage_servers;
  case O_FNICS: return &q->frontend_nics;
  default: return NULL;
  }
}

static const char *opt_name(int c) {
  for (size_t i = 0; longopts[i].name; i++)
    if (longopts[i].val == c) return longopts[i].name;
  return "?";
}

/* A length in metres ("0.6" or "0.6m"), > 0. */
static int parse_metres(const char *s, double *out) {
  char *e;
  double v = strtod(s, &e);
  if (e == s || (*e && strcmp(e, "m")) || !(v > 0) || v > 1e4) return -1;
  *out = v;
  return 0;
}

static int ratio_opt(const char *name, const char *arg, uint32_t r[2]) {
  const char *e;
  if (parse_ratio(arg, r, &e) || *e)
    return cli_usage_error("plan", "--%s '%s' is not DOWN:UP with whole "
                           "numbers > 0", name, arg);
  return 0;
}

/* Layout, parts and output options (second pass). */
static int plan_opt_layout(plan_opts *o, int c, const char *arg) {
  ts_plan_request *q = &o->req;
  switch (c) {
  case O_RACK_POWER:
    if (ts_parse_power(arg, &q->rack_power) || q->rack_power <= 0)
      return cli_usage_error("plan", "--rack-power '%s' is not a power like "
                             "40kW", arg);
    return 0;
  case O_PLACEMENT:
    if (strcmp(arg, "eor") && strcmp(arg, "mor"))
      return cli_usage_error("plan", "--leaf-placement must be eor or mor, "
                             "not '%s'", arg);
    q->leaf_middle_of_row = !strcmp(arg, "mor");
    return 0;
  case O_RACK_WIDTH:
  case O_ROW_PITCH:
    if (parse_metres(arg, c == O_RACK_WIDTH ? &q->rack_width : &q->row_pitch))
      return cli_usage_error("plan", "--%s '%s' is not a length in metres",
                             opt_name(c), arg);
    return 0;
  case O_CATALOG: q->catalog = arg; return 0;
  case O_SWITCH: q->switch_model = arg; return 0;
  case O_SOVERSUB: return ratio_opt("storage-oversub", arg, q->storage_oversub);
  case O_FOVERSUB:
    return ratio_opt("frontend-oversub", arg, q->frontend_oversub);
  case O_CSV: o->csv = 1; return 0;
  case O_PRINT_CATALOG: o->print_catalog = 1; return 0;
  case O_DIAGRAM:
    if (strcmp(arg, "dot") && strcmp(arg, "svg"))
      return cli_usage_error("plan", "--diagram must be dot or svg, not '%s'",
                             arg);
    o->diagram = strcmp(arg, "dot") ? 2 : 1;
    return 0;
  case O_COMPARE:
    if (o->ncompare == PLAN_MAX_COMPARE)
      return cli_usage_error("plan", "at most %d --compare designs",
                             PLAN_MAX_COMPARE);
    o->compare[o->ncompare++] = arg;
    return 0;
  default: return cli_usage_error("plan", "unknown option");
  }
}

/* One option of the second pass; returns 0 or an exit status. */
static int plan_opt(plan_opts *o, int c, const char *arg) {
  uint32_t *u = u32_field(o, c);
  if (u && parse_u32(arg, u))
    return cli_usage_error("plan", "option --%s needs a whole number, not "
                           "'%s'", opt_name(c), arg);
  if (u) return 0;
  if (c >= O_RACK_POWER && c < O_WHATIF) return plan_opt_layout(o, c, arg);
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
  case O_WHATIF: o->what_if = 1; return 0;
  case O_EXACT: o->step.exact = o->step_knobs = 1; return 0;
  case O_BOUNDED:
    o->step_knobs = 1;
    return cli_parse_bounded("plan", arg, &o->step.bounded);
  default: {
    int st = 0;
    if (cli_faults_opt("plan", c, arg, &o->faults, &st)) return st;
    return cli_usage_error("plan", "unknown option");
  }
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

/* Faults given with --compare, at the top or inside one design. */
static const char no_compare_faults[] =
    "faults apply to --sus or --what-if steps, not to --compare";

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
  for (; optind < argc && o->ncompare; optind++) { /* --compare A.yaml B.yaml */
    if (o->ncompare == PLAN_MAX_COMPARE)
      return cli_usage_error("plan", "at most %d --compare designs",
                             PLAN_MAX_COMPARE);
    o->compare[o->ncompare++] = argv[optind];
  }
  if (optind < argc)
    return cli_usage_error("plan", "unexpected argument '%s'", argv[optind]);
  if (o->sus_lo && (o->req.gpus || o->req.nodes || o->emit))
    return cli_usage_error("plan", "--sus sweeps sizes: drop --gpus, --nodes "
                           "and --emit-yaml");
  if (o->json + o->csv + (o->diagram != 0) > 1)
    return cli_usage_error("plan", "give one of --json, --csv, --diagram");
  if ((o->csv || o->diagram) && o->sus_lo)
    return cli_usage_error("plan", "--csv and --diagram describe one plan: "
                           "drop --sus");
  if (o->ncompare && (o->sus_lo || o->emit || o->csv || o->diagram))
    return cli_usage_error("plan", "--compare prints designs side by side: "
                           "drop --sus, --emit-yaml, --csv and --diagram");
  if (o->workload && !o->sus_lo && !o->ncompare && !o->what_if)
    return cli_usage_error("plan", "--workload needs --sus A..B (the sizes to "
                           "predict), --compare or --what-if");
  if (o->what_if && (!o->workload || o->sus_lo || o->ncompare))
    return cli_usage_error("plan", "--what-if needs --workload FILE and one "
                           "size (--gpus, --nodes or a preset), not --sus "
                           "or --compare");
  if (o->design && o->step_knobs)
    return cli_usage_error("plan", "--exact and --bounded apply to the whole "
                           "--compare: give them once, outside the design's "
                           "quotes");
  if (o->design && o->faults.n)
    return cli_usage_error("plan", "%s", no_compare_faults);
  if (o->faults.n && !o->workload)
    return cli_usage_error("plan", "faults apply to --workload steps");
  if (o->step_knobs && !o->workload)
    return cli_usage_error("plan", "--exact and --bounded apply to --workload "
                           "steps");
  return -1;
}

static int fail(const ts_diag *d, int code) {
  if (code == TS_EUSAGE) return cli_usage_error("plan", "%s", d->msg);
  return cli_fail(d, code);
}

static int emit(const ts_plan_result *r, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "topsim plan: cannot write '%s': %s\n", path, strerror(errno));
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
  if (o->what_if) {
    int st = cli_plan_whatif(&r, o->workload, o->faults.n ? &o->faults : NULL,
                             &o->step, o->json);
    ts_plan_free(&r);
    return st;
  }
  if (o->csv) rc = ts_report_plan_csv(&r, stdout);
  else if (o->diagram) rc = ts_report_plan_diagram(&r, o->diagram == 2, stdout);
  else if (o->json) rc = ts_report_plan_json(&r, stdout);
  else rc = ts_report_plan_text(&r, stdout);
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
  /* with --json and --workload one array: each size's plan and its step */
  int steps_json = o->json && o->workload;
  if (!st && !steps_json && ts_report_plan_sweep(rows, n, o->json, stdout))
    st = EX_IOERR;
  if (!st && o->workload) {
    if (!steps_json) putchar('\n');
    st = cli_plan_predict(&o->req, o->sus_lo, o->sus_hi, o->workload,
                          o->faults.n ? &o->faults : NULL, &o->step,
                          &o->jobs, steps_json ? rows : NULL);
  }
  for (uint32_t i = 0; i < n; i++) ts_plan_free(&rows[i]);
  free(rows);
  return st;
}

/* One design of --compare: argv parsed as a whole command line. */
static int parse_request(int argc, char **argv, ts_plan_request *req) {
  plan_opts o;
  memset(&o, 0, sizeof o);
  ts_plan_request_init(&o.req);
  ts_faults_init(&o.faults);
  o.design = 1;
  optind = 0;
  int rc = parse_opts(argc, argv, &o);
  if (rc < 0 && (o.ncompare || o.sus_lo || o.what_if))
    rc = cli_usage_error("plan", "a --compare design cannot hold --compare, "
                         "--sus or --what-if");
  if (rc < 0) *req = o.req;
  ts_faults_free(&o.faults);
  return rc;
}

int cli_plan(int argc, char **argv) {
  plan_opts o;
  memset(&o, 0, sizeof o);
  ts_plan_request_init(&o.req);
  ts_faults_init(&o.faults);
  ts_step_opts_default(&o.step);
  optind = 0;
  int rc = parse_opts(argc, argv, &o);
  if (rc < 0 && o.print_catalog)
    rc = ts_plan_catalog_write(stdout) ? EX_IOERR : 0;
  if (rc < 0 && o.ncompare && o.faults.n)
    rc = cli_usage_error("plan", "%s", no_compare_faults);
  if (rc < 0 && o.ncompare)
    rc = cli_plan_compare(argc, argv, o.compare, o.ncompare, o.json,
                          o.workload, &o.step, parse_request);
  /* under mpirun/srun the --workload steps spread over the ranks */
  if (rc < 0 && o.workload && cli_jobs_init(&argc, &argv)) rc = EX_OSERR;
  if (rc < 0) rc = o.sus_lo ? run_sweep(&o) : run_one(&o);
  cli_jobs_finish();
  ts_faults_free(&o.faults);
  return rc;
}
